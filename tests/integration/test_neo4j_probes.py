"""Extension queries behind the Neo4j backend: the separated probes are sent upstream together.

A front proxy (`--upstream`, the Neo4j backend) stands in front of the demo proxy, which plays
Neo4j; the front reads the demo's timeseries store from the same data directory. The front sends
a separated probe's node probe and value probe in one write (`Backend.read_together`): its
answers, in auto-commit and in an explicit transaction that wrote first, and its errors must be
the demo proxy's own for the same query (differential). What an upstream that fails or goes away
mid-pipeline does to the client is in `test_neo4j_stub_upstream.py` (Neo4j's recorded replies).
"""

from __future__ import annotations

import neo4j
import pytest
from neo4j.exceptions import ClientError

from proxy.demo import SEED_QUERY
from tests.harness import PASSWORD, USER, ProxyProcess

#: The seed query's field, renamed in a transaction: only a probe that runs in it finds the field.
RENAMED = "TROLL (renamed in a transaction)"
#: A seed-shaped query whose prefix fails at run time, in both probes (FalkorDB: integer division by zero).
FAILING = """\
MATCH (f:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile)
UNWIND [2015, 0] AS d
WITH p, toString(2015 / d) AS y
RETURN y, ts_avg(p.prd_oe_net, y) AS v"""


@pytest.fixture(scope="module")
def front(demo):
    with ProxyProcess(args=["--upstream", demo.uri, "--workers", "1"], data_dir=demo.data_dir) as process:
        yield process


@pytest.fixture(scope="module")
def via_front(front):
    with neo4j.GraphDatabase.driver(front.uri, auth=(USER, PASSWORD)) as driver:
        yield driver


@pytest.fixture(scope="module")
def direct(demo):
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        yield driver


def answer(driver, query: str) -> list[list]:
    return [record.values() for record in driver.execute_query(query).records]


def test_the_seed_query_is_answered_as_by_the_upstream(via_front, direct):
    expected = answer(direct, SEED_QUERY)
    assert expected[0][2] == 10                       # ten years of TROLL production: values were bound
    for _ in range(3):                               # the front's pooled connection serves every repeat
        assert answer(via_front, SEED_QUERY) == expected


def test_probes_in_a_transaction_see_its_writes(via_front, direct):
    expected = answer(direct, SEED_QUERY)
    renamed_query = SEED_QUERY.replace("'TROLL'", repr(RENAMED))
    with via_front.session() as session, session.begin_transaction() as tx:
        tx.run("MATCH (f:Field {title: 'TROLL'}) SET f.title = $title", title=RENAMED).consume()
        assert [record.values() for record in tx.run(renamed_query)] == expected
        assert [record.values() for record in tx.run(SEED_QUERY)] == answer(direct, renamed_query)
        tx.rollback()
    assert answer(via_front, SEED_QUERY) == expected


def test_a_failing_probe_gives_the_upstreams_error_and_the_next_query_its_answer(via_front, direct):
    with pytest.raises(ClientError) as upstream:
        answer(direct, FAILING)
    for _ in range(2):
        with pytest.raises(ClientError) as front:
            answer(via_front, FAILING)
        assert (front.value.code, front.value.message) == (upstream.value.code, upstream.value.message)
        assert answer(via_front, SEED_QUERY) == answer(direct, SEED_QUERY)


def test_a_failing_probe_in_a_transaction_fails_it_as_the_upstream_does(via_front, direct):
    outcomes = []
    for driver in (direct, via_front):
        with driver.session() as session, session.begin_transaction() as tx:
            tx.run("MATCH (f:Field {title: 'TROLL'}) SET f.title = $title", title=RENAMED).consume()
            with pytest.raises(ClientError) as raised:
                list(tx.run(FAILING.replace("'TROLL'", repr(RENAMED))))
            outcomes.append((raised.value.code, raised.value.message))
            tx.close()                                # a failed transaction is rolled back
        assert answer(driver, SEED_QUERY)[0][2] == 10   # rolled back: TROLL is TROLL again
    assert outcomes[0] == outcomes[1]


def test_a_write_the_front_did_not_see_changes_its_answer(via_front, direct):
    """Behind a Neo4j the front sees no other client's writes: it probes every time, and computes
    again when the probes find other rows (its values kept by probe-row content are never stale)."""
    expected = answer(direct, SEED_QUERY)
    renamed_query = SEED_QUERY.replace("'TROLL'", repr(RENAMED))
    assert answer(via_front, SEED_QUERY) == expected
    direct.execute_query("MATCH (f:Field {title: 'TROLL'}) SET f.title = $title", title=RENAMED)
    try:
        assert answer(via_front, SEED_QUERY) == answer(direct, SEED_QUERY) != expected
        assert answer(via_front, renamed_query) == expected
    finally:
        direct.execute_query("MATCH (f:Field {title: $title}) SET f.title = 'TROLL'", title=RENAMED)
    assert answer(via_front, SEED_QUERY) == expected
