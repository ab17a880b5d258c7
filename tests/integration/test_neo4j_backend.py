"""The Neo4j backend against a real Bolt server: proxy B (`--upstream bolt://A`) -> proxy A -> FalkorDB.

Neo4j itself cannot run here, so proxy A (FalkorDB backend) plays the upstream Neo4j. The
official driver talks to B; the same queries sent to A directly are the reference
(differential): whatever B adds or loses is the Neo4j backend's doing.
"""

from __future__ import annotations

import datetime as dt
import uuid
import warnings

import neo4j
import pytest
from neo4j.exceptions import AuthError, ClientError, CypherSyntaxError
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import CartesianPoint, WGS84Point

from core.backend import TxConfig
from proxy.backends.neo4j import DATABASE_UNAVAILABLE, Neo4jBackend
from core.errors import CypherError
from tests.harness import PASSWORD, THROUGH_NEO4J_BACKEND, USER, free_port, run_driver_suite

BASIC = {"scheme": "basic", "principal": USER, "credentials": PASSWORD}


@pytest.fixture(scope="module")
def via_b(chained):
    with neo4j.GraphDatabase.driver(chained.uri, auth=(USER, PASSWORD)) as drv:
        yield drv


@pytest.fixture
def graph(driver):
    """A clean graph in A (where B's writes land); `driver` talks to A directly."""
    driver.execute_query("MATCH (n) DETACH DELETE n")
    yield driver
    driver.execute_query("MATCH (n) DETACH DELETE n")


@pytest.fixture
async def backend(proxy):
    """The backend in-process, for what the wire cannot show (laziness, database list)."""
    instance = Neo4jBackend(proxy.uri)
    await instance.start()
    yield instance
    await instance.stop()


def plain(value):
    """A driver value as plain data, so results from A and B compare by content, not by graph identity."""
    with warnings.catch_warnings():          # the legacy `.id` is deprecated, but the proxy must pass it on
        warnings.simplefilter("ignore", DeprecationWarning)
        if isinstance(value, Node):
            return ("node", value.id, value.element_id, sorted(value.labels), plain(dict(value)))
        if isinstance(value, Relationship):
            return ("rel", value.id, value.element_id, value.type, value.start_node.element_id,
                    value.end_node.element_id, plain(dict(value)))
    if isinstance(value, Path):
        return ("path", [plain(n) for n in value.nodes], [plain(r) for r in value.relationships])
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return (type(value).__name__, value)


def rows(drv, query, **params):
    records, _, keys = drv.execute_query(query, params)
    return keys, [plain(r.values()) for r in records]


# --- through proxy B with the official driver ------------------------------------------------

def test_auto_commit_and_counters(graph, via_b):
    with via_b.session() as session:
        summary = session.run("CREATE (a:P {name: 'a'})-[:KNOWS {since: 2020}]->(b:P {name: 'b'})").consume()
        assert summary.query_type == "w"
        counters = summary.counters
        assert (counters.nodes_created, counters.relationships_created, counters.properties_set) == (2, 1, 3)
        assert counters.contains_updates
        assert session.run("MATCH (n:P) RETURN count(n) AS c").single()["c"] == 2
    # The write reached the upstream.
    assert graph.execute_query("MATCH (n:P) RETURN count(n) AS c").records[0]["c"] == 2


def test_counters_equal_the_upstreams(graph, via_b):
    # A fresh label for each side: FalkorDB counts a label as added only the first time it exists.
    query = "UNWIND range(1, 3) AS i CREATE (:{label} {{i: i, j: i * 2}})-[:R]->(:{label})"
    tag = uuid.uuid4().hex[:8]
    direct = graph.execute_query(query.format(label=f"Direct{tag}")).summary.counters
    chained = via_b.execute_query(query.format(label=f"Chained{tag}")).summary.counters
    assert vars(chained) == vars(direct)
    assert chained.nodes_created == 6 and chained.relationships_created == 3


def test_driver_suite_through_the_neo4j_backend():
    """Every driver test of test_driver_python.py, through proxy -> proxy -> FalkorDB."""
    done = run_driver_suite(**{THROUGH_NEO4J_BACKEND: "1"})
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


def test_bookmarks_flow_through(graph, via_b):
    with via_b.session() as session:
        session.run("CREATE (:B {v: 1})").consume()
        after_auto_commit = session.last_bookmarks()
        with session.begin_transaction() as tx:
            tx.run("CREATE (:B {v: 2})").consume()
            tx.commit()
        after_commit = session.last_bookmarks()
    assert after_auto_commit.raw_values and after_commit.raw_values
    with via_b.session(bookmarks=after_commit) as session:
        assert session.run("MATCH (b:B) RETURN count(b) AS c").single()["c"] == 2


def test_wrong_password_is_the_upstreams_unauthorized(proxy, chained):
    errors = []
    for uri in (proxy.uri, chained.uri):
        with neo4j.GraphDatabase.driver(uri, auth=(USER, "wrong")) as drv, pytest.raises(AuthError) as info:
            drv.verify_connectivity()
        errors.append((info.value.code, info.value.message))
    assert errors[1] == errors[0]
    assert errors[0][0] == "Neo.ClientError.Security.Unauthorized"


def test_transaction_config_passes_through(via_b):
    query = neo4j.Query("RETURN $x AS x", timeout=5.0, metadata={"app": "test"})
    with via_b.session(default_access_mode=neo4j.READ_ACCESS, fetch_size=2) as session:
        assert [r["x"] for r in session.run(query, x=1)] == [1]
        with session.begin_transaction(timeout=5.0, metadata={"app": "test"}) as tx:
            assert tx.run("UNWIND range(1, 5) AS i RETURN i").value() == [1, 2, 3, 4, 5]


@pytest.mark.timeout(45)
def test_abandoned_results_release_their_upstream_connections(via_b):
    # More abandoned results than B's driver pool holds (100): a leaked upstream session would hang.
    for _ in range(110):
        with via_b.session(fetch_size=10) as session:
            result = session.run("UNWIND range(1, 100) AS i RETURN i")
            assert result.fetch(2)[1]["i"] == 2
        # closing the session discards the rest: B consumes its upstream result
    assert via_b.execute_query("RETURN 3 AS three").records[0]["three"] == 3


def test_syntax_error_keeps_code_and_message(driver, via_b):
    errors = []
    for drv in (driver, via_b):
        with drv.session() as session:
            with pytest.raises(CypherSyntaxError) as info:
                session.run("MATCH (n RETURN n").consume()
            errors.append((info.value.code, info.value.message))
            assert session.run("RETURN 2 AS two").single()["two"] == 2     # the connection recovers
    assert errors[0] == errors[1]
    assert errors[0][0] == "Neo.ClientError.Statement.SyntaxError"


def test_error_inside_transaction(graph, via_b):
    with via_b.session() as session:
        tx = session.begin_transaction()
        tx.run("CREATE (:E {v: 1})").consume()
        with pytest.raises(ClientError):
            tx.run("RETURN nosuchfunction(1)").consume()
        tx.close()
        assert session.run("MATCH (e:E) RETURN count(e) AS c").single()["c"] == 0


def test_graph_values_equal_the_upstreams(graph, via_b):
    graph.execute_query("CREATE (a:Person:Agent {name: 'Ann', age: 41, tags: ['x', 'y']})"
                        "-[:KNOWS {w: 0.5}]->(b:Person {name: 'Bob'})<-[:LIKES]-(c:Cat {name: 'Cy'})")
    query = ("MATCH p = (a:Person {name: 'Ann'})-[r:KNOWS]->(b)<-[l:LIKES]-(c) "
             "RETURN a, r, b, p, [a, b] AS both, {who: a, how: r} AS m, l")
    direct = rows(graph, query)
    assert direct[1], "the upstream found the pattern"
    assert rows(via_b, query) == direct


def test_temporal_and_spatial_values_equal_the_upstreams(driver, via_b):
    query = ("RETURN date('2024-02-29') AS d, localdatetime('2024-02-29T10:11:12') AS ldt, "
             "localtime('10:11:12') AS lt, duration({months: 14, days: 3, seconds: 5}) AS dur, "
             "point({latitude: 60.5, longitude: 3.25}) AS pt")
    direct = rows(driver, query)
    assert rows(via_b, query) == direct


def test_parameters_round_trip_like_the_upstream(driver, via_b):
    params = {"nested": {"list": [1, 2.5, "three", None, True, [4, {"deep": ["x"]}]], "ünï": {"k": -7}},
              "big": "ø" * 100_000, "n": -2**63, "f": 0.1 + 0.2}
    query = "RETURN " + ", ".join(f"${name} AS {name}" for name in params)
    direct = rows(driver, query, **params)
    assert rows(via_b, query, **params) == direct


@pytest.mark.parametrize("value", [dt.date(2021, 3, 4), dt.datetime(2021, 3, 4, 5, 6, 7), b"\x00\xff",
                                   WGS84Point((10.75, 59.91)), CartesianPoint((1.5, -2.0))])
def test_parameter_outcome_equals_the_upstreams(driver, via_b, value):
    """Values FalkorDB may refuse: B answers exactly what A answers, record or error."""
    outcomes = []
    for drv in (driver, via_b):
        try:
            outcomes.append(rows(drv, "RETURN $v AS v", v=value))
        except neo4j.exceptions.Neo4jError as error:
            outcomes.append((error.code, error.message))
    assert outcomes[1] == outcomes[0]


def test_large_result_streams(via_b):
    with via_b.session(fetch_size=1000) as session:
        total = sum(r["i"] for r in session.run("UNWIND range(1, 20000) AS i RETURN i"))
    assert total == 20000 * 20001 // 2


def test_explain_passes_through(graph, via_b):
    query = "EXPLAIN MATCH (n:Person) RETURN n.name"
    direct = graph.execute_query(query).summary
    chained = via_b.execute_query(query).summary
    assert chained.plan == direct.plan and chained.plan is not None
    assert chained.query_type == direct.query_type


# --- the backend in-process ------------------------------------------------------------------

async def test_fetch_pulls_only_what_is_asked(backend):
    credentials = await backend.authenticate(BASIC)
    result = await backend.run("UNWIND range(1, 200000) AS i RETURN i", {}, TxConfig(), credentials)
    assert result.keys == ["i"]
    assert await result.fetch(3) == [[1], [2], [3]]
    assert await result.fetch(2) == [[4], [5]]
    # Only the first PULL (sent with the RUN) has been asked for: the rest is discarded upstream.
    assert result._pulling and not result._has_more
    summary = await result.consume()
    assert summary.query_type == "r"
    assert await result.fetch(5) == []


async def test_a_finished_result_hands_its_connection_to_the_next_query(backend, graph):
    """Auto-commit queries of one client reuse one upstream connection; causal chaining is the
    bookmarks' job (sent with each RUN), so a read given the write's bookmark sees the write."""
    credentials = await backend.authenticate(BASIC)
    write = await backend.run("CREATE (:Chain {v: 1})", {}, TxConfig(), credentials)
    first = write._connection
    summary = await write.consume()
    assert summary.bookmark and summary.stats == {"nodes-created": 1, "properties-set": 1, "labels-added": 1}
    read = await backend.run("MATCH (c:Chain) RETURN count(c)", {}, TxConfig(bookmarks=(summary.bookmark,)),
                             credentials)
    assert read._connection is first and await read.fetch(-1) == [[1]]
    await read.consume()
    # A client logging in again is checked by the server again (LOGOFF + LOGON), on the same connection.
    again = await backend.authenticate(BASIC)
    result = await backend.run("RETURN 1", {}, TxConfig(), again)
    assert result._connection is first and await result.fetch(-1) == [[1]]
    await result.consume()
    other = await backend.authenticate(dict(BASIC, realm="elsewhere"))     # other credentials: not shared
    result = await backend.run("RETURN 1", {}, TxConfig(), other)
    assert result._connection is not first
    await result.consume()


async def test_transaction_sees_its_own_writes(backend, graph):
    credentials = await backend.authenticate(BASIC)
    tx = await backend.begin(TxConfig(), credentials)
    await (await tx.run("CREATE (:X {v: $v})", {"v": 7})).consume()
    result = await tx.run("MATCH (x:X) RETURN x.v AS v", {})
    assert await result.fetch(-1) == [[7]]
    unread = await tx.run("MATCH (x:X) RETURN x", {})
    assert await tx.commit()
    assert (await unread.consume()).database       # the commit discarded it; its summary is still there
    assert graph.execute_query("MATCH (x:X) RETURN x.v AS v").records[0]["v"] == 7


async def test_authenticate_rejects_a_wrong_password(backend):
    with pytest.raises(CypherError) as info:
        await backend.authenticate(dict(BASIC, credentials="wrong"))
    assert info.value.code == "Neo.ClientError.Security.Unauthorized"


async def test_databases_include_the_default(backend):
    credentials = await backend.authenticate(BASIC)
    assert backend.default_database in await backend.databases(credentials)


async def test_unreachable_upstream_names_the_uri():
    uri = f"bolt://127.0.0.1:{free_port()}"
    backend = Neo4jBackend(uri)
    await backend.start()                            # starts anyway: the upstream may come up later
    try:
        assert backend.default_database == "neo4j"
        with pytest.raises(CypherError) as info:
            await backend.authenticate(BASIC)
        assert info.value.code == DATABASE_UNAVAILABLE
        assert uri.removeprefix("bolt://") in info.value.message      # the server it tried
    finally:
        await backend.stop()
