"""The openCypher TCK, check by check through a proxy on the embedded database, classified
against Neo4j's answers (conformance/classify.py): silent-wrong and accepts-invalid checks must
not rise above the ceilings kept in conformance/tck_ceilings.json.

The same run as `python -m conformance --only tck` without the FalkorDB-direct differential;
that command also writes the full list (conformance/tck-report.txt).
"""

from __future__ import annotations

import neo4j
import pytest

from conformance.classify import ACCEPTS_INVALID, SILENT_WRONG, side_effects
from conformance.differential import EndpointTarget, FalkorTarget, classify_tck
from conformance.tally import over_ceilings, read_ceilings
from proxy.backends.falkordb.roles import primary_address
from tests.harness import PASSWORD, TCK_DIR, TCK_MISSING, USER, ProxyProcess, wait_until

pytestmark = pytest.mark.skipif(not TCK_DIR.is_dir(), reason=TCK_MISSING)

SHOWN = 25


@pytest.fixture(scope="module")
def tck_proxy():
    """A proxy of this module's own: the TCK run empties its default graph before every
    scenario, so it shares none."""
    with ProxyProcess() as proxy:
        yield proxy


@pytest.fixture(scope="module")
def endpoint(tck_proxy):
    target = EndpointTarget(tck_proxy.uri, (USER, PASSWORD))
    yield target
    target.close()


@pytest.fixture(scope="module")
def tally(endpoint):
    """The whole TCK classified through the proxy."""
    return classify_tck(TCK_DIR, endpoint)


def test_side_effects_are_read_through_the_proxy(endpoint):
    endpoint.clear()
    endpoint.run("CREATE (:A {k: 1})-[:T {w: 2}]->(:A)", {})
    before = endpoint.state()
    changed = endpoint.run("MATCH (a:A {k: 1}) SET a.k = 5, a:B", {})
    assert side_effects(before, endpoint.state(), changed.counters) == \
        {"+labels": 1, "+properties": 1, "-properties": 1}


def test_nodes_on_reused_ids_still_count_as_created_and_deleted(endpoint):
    """FalkorDB hands the ids of nodes deleted by a query to the nodes the query creates."""
    endpoint.clear()
    endpoint.run("CREATE (:A), (:A)", {})
    before = endpoint.state()
    swapped = endpoint.run("MATCH (a:A) DETACH DELETE a CREATE (:B)", {})
    after = endpoint.state()
    assert side_effects(before, after, swapped.counters) == \
        {"+nodes": 2, "-nodes": 2, "+labels": 1, "-labels": 1}   # one :B per matched row


def test_the_differential_follows_the_primary_when_roles_swap(tck_proxy):
    """A rolled-back transaction promotes the replica; FalkorDB direct must not stay on the
    old primary, now a read-only replica."""
    root = tck_proxy.data_dir / "falkordb"
    first = primary_address(root)
    falkor = FalkorTarget(lambda: primary_address(root))
    try:
        falkor.clear()
        with neo4j.GraphDatabase.driver(tck_proxy.uri, auth=(USER, PASSWORD)) as driver, \
                driver.session() as session:
            tx = session.begin_transaction()
            tx.run("CREATE (:Undone)").consume()
            tx.rollback()
        assert wait_until(lambda: primary_address(root) != first)
        falkor.clear()
        assert falkor.run("CREATE (:Direct) RETURN 1 AS one", {}).rows == ((1,),)
        falkor.clear()
    finally:
        falkor.close()


def test_every_runnable_check_is_classified(tally):
    assert not tally.unparsed
    assert len(tally.entries) > 3800       # 3,879 checks in the TCK this suite was written on


@pytest.mark.parametrize("kind", [SILENT_WRONG, ACCEPTS_INVALID])
def test_no_more_than_the_ceiling(tally, kind):
    counts, ceilings = tally.counts(), read_ceilings()
    over = over_ceilings(counts, {kind: ceilings[kind]})
    listed = [f"{e.folder}/{e.scenario.id}\n    {e.check.query!r}\n    expected: "
              f"{e.verdict.expected}\n    got:      {e.verdict.got}"
              for e in tally.entries if e.verdict.kind == kind][:SHOWN]
    assert not over, "\n".join([tally.summary(), *over, f"first {SHOWN}:", *listed])
