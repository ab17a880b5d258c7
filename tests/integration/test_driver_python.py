"""The official neo4j Python driver against a real proxy process in front of FalkorDB."""

from __future__ import annotations

import datetime as dt
import os

import neo4j
import pytest
from neo4j.exceptions import ClientError, CypherSyntaxError
from neo4j.graph import Node, Path, Relationship
from neo4j.spatial import WGS84Point
from neo4j.time import Date, DateTime, Time

from tests.harness import DRIVER_OVER_HTTP, PASSWORD, USER

OVER_HTTP = bool(os.environ.get(DRIVER_OVER_HTTP))
#: Over http:// the driver resolves no home database: it must be named.
HTTP_CONFIG = {"database": "neo4j"} if OVER_HTTP else {}


def test_expected_driver_and_protocol(driver):
    """Run under neo4j 5.x here and under 6.x (Bolt and http://) by test_driver_neo4j6.py."""
    major = int(os.environ.get("EXPECT_NEO4J_MAJOR", "5"))
    assert int(neo4j.__version__.split(".")[0]) == major
    with driver.session() as session:
        server = session.run("RETURN 1").consume().server
    if OVER_HTTP:        # the Query API reports no Bolt version; the agent comes from discovery
        assert (server.protocol_version, server.agent) == ((0, 0), "Neo4j/5.26.0")
    else:
        assert server.protocol_version == ((6, 0) if major == 6 else (5, 8))


@pytest.mark.parametrize("scheme", ["bolt", "neo4j", *(["http"] if OVER_HTTP else [])])
def test_connects_with_both_schemes(proxy, scheme):
    uri = proxy.http_uri if scheme == "http" else proxy.uri.replace("bolt://", f"{scheme}://")
    with neo4j.GraphDatabase.driver(uri, auth=(USER, PASSWORD), **HTTP_CONFIG) as drv:
        drv.verify_connectivity()
        records, summary, keys = drv.execute_query("RETURN 1 AS one, 'x' AS s")
        assert keys == ["one", "s"]
        assert [r.values() for r in records] == [[1, "x"]]
        assert summary.server.agent.startswith("Neo4j/5")


def test_wrong_password_is_rejected(proxy):
    uri = proxy.http_uri if OVER_HTTP else proxy.uri
    with neo4j.GraphDatabase.driver(uri, auth=(USER, "nope"), **HTTP_CONFIG) as drv:
        with pytest.raises(neo4j.exceptions.AuthError):
            drv.verify_connectivity()


def test_auto_commit_write_and_counters(clean_graph):
    with clean_graph.session() as session:
        summary = session.run("CREATE (a:P {name: 'a'})-[:KNOWS {since: 2020}]->(b:P {name: 'b'})").consume()
        counters = summary.counters
        # labels_added is left out: FalkorDB counts labels new to the graph, Neo4j counts per node
        assert (counters.nodes_created, counters.relationships_created) == (2, 1)
        assert counters.properties_set == 3
        assert counters.contains_updates
        assert summary.query_type == "w"
        assert session.run("MATCH (n:P) RETURN count(n) AS c").single()["c"] == 2


def test_explicit_transaction_commit_and_rollback(clean_graph):
    with clean_graph.session() as session:
        with session.begin_transaction() as tx:
            tx.run("CREATE (:T {v: 1})").consume()
            assert tx.run("MATCH (t:T) RETURN count(t) AS c").single()["c"] == 1
            tx.commit()
        with session.begin_transaction() as tx:
            tx.run("CREATE (:T {v: 2})").consume()
            tx.run("MATCH (t:T {v: 1}) SET t.v = 100").consume()
            tx.rollback()
        values = sorted(r["v"] for r in session.run("MATCH (t:T) RETURN t.v AS v"))
        assert values == [1]


def test_managed_transactions(clean_graph):
    def create(tx, name):
        return tx.run("CREATE (p:M {name: $name}) RETURN p.name AS name", name=name).single()["name"]

    def count(tx):
        return tx.run("MATCH (p:M) RETURN count(p) AS c").single()["c"]

    with clean_graph.session() as session:
        assert session.execute_write(create, "x") == "x"
        assert session.execute_write(create, "y") == "y"
        assert session.execute_read(count) == 2


def test_multiple_open_results_in_one_transaction(clean_graph):
    with clean_graph.session() as session, session.begin_transaction() as tx:
        first = tx.run("UNWIND range(1, 5) AS i RETURN i")
        second = tx.run("UNWIND range(10, 12) AS j RETURN j")
        assert [r["j"] for r in second] == [10, 11, 12]
        assert [r["i"] for r in first] == [1, 2, 3, 4, 5]
        tx.commit()


def test_large_result_streams_in_batches(driver):
    with driver.session(fetch_size=1000) as session:
        total = sum(r["i"] for r in session.run("UNWIND range(1, 50000) AS i RETURN i"))
    assert total == 50000 * 50001 // 2


def test_graph_values(clean_graph):
    clean_graph.execute_query(
        "CREATE (a:Person:Agent {name: 'Ann', age: 41})-[:KNOWS {w: 0.5}]->(b:Person {name: 'Bob'})")
    records, _, _ = clean_graph.execute_query(
        "MATCH p = (a:Person {name: 'Ann'})-[r:KNOWS]->(b) RETURN a, r, b, p")
    a, r, b, p = records[0].values()
    assert isinstance(a, Node) and a.labels == {"Person", "Agent"} and dict(a) == {"name": "Ann", "age": 41}
    assert isinstance(r, Relationship) and r.type == "KNOWS" and r["w"] == 0.5
    assert r.start_node.element_id == a.element_id and r.end_node.element_id == b.element_id
    assert isinstance(p, Path) and [n["name"] for n in p.nodes] == ["Ann", "Bob"]
    assert p.relationships[0].type == "KNOWS"
    # elementId round trip: the element id a client got back finds the same node
    found, _, _ = clean_graph.execute_query(
        "MATCH (n) WHERE elementId(n) = $id RETURN n.name AS name, elementId(n) AS eid", id=a.element_id)
    assert [(r["name"], r["eid"]) for r in found] == [("Ann", a.element_id)]


def test_temporal_and_spatial_values(driver):
    records, _, _ = driver.execute_query(
        "RETURN date('2024-02-29') AS d, localdatetime('2024-02-29T10:11:12') AS ldt, "
        "localtime('10:11:12') AS lt, duration({months: 14, days: 3, seconds: 5}) AS dur, "
        "point({latitude: 60.5, longitude: 3.25}) AS pt")
    row = records[0]
    assert row["d"] == Date(2024, 2, 29)
    assert row["ldt"] == DateTime(2024, 2, 29, 10, 11, 12) and row["ldt"].tzinfo is None
    assert row["lt"] == Time(10, 11, 12)
    assert (row["dur"].months, row["dur"].days, row["dur"].seconds) == (14, 3, 5)
    assert isinstance(row["pt"], WGS84Point)
    assert (row["pt"].longitude, row["pt"].latitude) == (3.25, 60.5)


def test_temporal_parameters_round_trip(driver):
    records, _, _ = driver.execute_query(
        "RETURN $d AS d, $ldt AS ldt, $p AS p",
        d=dt.date(2021, 3, 4), ldt=dt.datetime(2021, 3, 4, 5, 6, 7),
        p=WGS84Point((10.75, 59.91)))
    row = records[0]
    assert row["d"] == Date(2021, 3, 4)
    assert row["ldt"] == DateTime(2021, 3, 4, 5, 6, 7)
    # FalkorDB keeps point coordinates in single precision (~1e-6 degrees, under 1 m)
    assert row["p"].longitude == pytest.approx(10.75, abs=1e-5)
    assert row["p"].latitude == pytest.approx(59.91, abs=1e-5)


def test_nested_unicode_and_large_strings(driver):
    big = "ø" * 1_000_000
    nested = {"list": [1, 2.5, "three", None, True, [4, {"deep": ["x"]}]], "ünï": {"k": -7}}
    records, _, _ = driver.execute_query(
        "RETURN $big AS big, $nested AS nested, 'Ærøskøbing 東京 🚀' AS u", big=big, nested=nested)
    row = records[0]
    assert row["big"] == big
    assert row["nested"] == nested
    assert row["u"] == "Ærøskøbing 東京 🚀"


def test_syntax_error_then_connection_recovers(driver):
    with driver.session() as session:
        with pytest.raises(CypherSyntaxError) as info:
            session.run("MATCH (n RETURN n").consume()
        assert info.value.code == "Neo.ClientError.Statement.SyntaxError"
        assert session.run("RETURN 2 AS two").single()["two"] == 2


def test_error_inside_transaction_rolls_back(clean_graph):
    with clean_graph.session() as session:
        tx = session.begin_transaction()
        tx.run("CREATE (:E {v: 1})").consume()
        with pytest.raises(ClientError):
            tx.run("RETURN nosuchfunction(1)").consume()
        tx.close()
        assert session.run("MATCH (e:E) RETURN count(e) AS c").single()["c"] == 0


def test_explain_does_not_execute(clean_graph):
    with clean_graph.session() as session:
        summary = session.run("EXPLAIN CREATE (:X)").consume()
        assert summary.plan is not None
        assert summary.query_type in ("w", "rw")
        assert session.run("MATCH (x:X) RETURN count(x) AS c").single()["c"] == 0
