"""End to end: the official neo4j driver -> in-process Bolt server -> Session -> ExtensionPlanner
-> embedded FalkorDB, with the stand-in `ts_avg` from tests/unit/test_planner_support.py."""

from __future__ import annotations

import neo4j
import pytest

from extensions.planner.planner import ExtensionPlanner
from proxy.bolt.server import start_bolt_server
from proxy.demo import SEED_QUERY as SEED
from proxy.session import Session
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_planner_support import (
    GRAPH,
    registry,
    seed_expected,
    ts_avg_value,
)

AUTH = ("neo4j", "password")


@pytest.fixture(scope="module")
async def driver(embedded):
    backend = embedded
    planner = ExtensionPlanner(registry(), dialect=FALKORDB)
    server = await start_bolt_server("127.0.0.1", 0, lambda: Session(backend, planner))
    port = server.sockets[0].getsockname()[1]
    drv = neo4j.AsyncGraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=AUTH)
    await drv.execute_query(GRAPH)
    yield drv
    await drv.close()
    server.close()
    await server.wait_closed()


async def test_seed_query_through_bolt_matches_python(driver):
    records, _, keys = await driver.execute_query(SEED)
    assert keys == ["mean_ratio", "std_ratio", "n_years", "mean_reduction"]
    expected = seed_expected()
    assert records[0]["n_years"] == expected["n_years"]
    assert list(records[0].values()) == pytest.approx(list(expected.values()), rel=1e-12)


async def test_explain_of_seed_query_succeeds_with_query_type_r(driver):
    async with driver.session() as session:
        result = await session.run("EXPLAIN " + SEED)
        summary = await result.consume()
    assert summary.query_type == "r"
    assert summary.plan is not None


async def test_extension_in_explicit_transaction_sees_uncommitted_writes(driver):
    query = ("MATCH (:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile) "
             "RETURN sum(ts_avg(p.prd_oe_net, '2020')) AS s")
    async with driver.session() as session:
        tx = await session.begin_transaction()
        await tx.run("MATCH (f:Field {title: 'TROLL'}) CREATE (:ProductionProfile {id: 'P3'})-[:OF_FIELD]->(f)")
        record = await (await tx.run(query)).single()
        await tx.rollback()
        after = await (await session.run(query)).single()
    two = sum(ts_avg_value(k, "prd_oe_net", "2020", single=True) for k in ("P1", "P2"))
    assert record["s"] == pytest.approx(two + 7.0, rel=1e-12)
    assert after["s"] == pytest.approx(two, rel=1e-12)


async def test_errors_reach_the_driver_as_client_errors(driver):
    with pytest.raises(neo4j.exceptions.ClientError) as info:
        await driver.execute_query("MATCH (p:ProductionProfile) RETURN ts_avg(p.prd_oe_net, 1, 2, 3)")
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
    assert "ts_avg(n.channel, start?, end?)" in info.value.message


async def test_elementid_round_trip_through_the_driver(driver):
    records, _, _ = await driver.execute_query("MATCH (f:Field {title: 'TROLL'}) RETURN f")
    element_id = records[0]["f"].element_id
    records, _, _ = await driver.execute_query(
        "MATCH (n) WHERE elementId(n) = $id RETURN n.title AS t, elementId(n) AS e", id=element_id)
    assert [(r["t"], r["e"]) for r in records] == [("TROLL", element_id)]


async def test_virtual_procedure_sees_user_and_transaction_metadata(driver):
    async with driver.session() as session:
        tx = await session.begin_transaction(metadata={"app": "e2e", "n": 1})
        inside = await (await tx.run("MATCH (f:Field {title: 'TROLL'}) CALL test.numbers(1) "
                                     "YIELD user, metadata RETURN f.title AS f, user, metadata")).data()
        await tx.commit()
        alone = await (await session.run(neo4j.Query("CALL test.numbers(1) YIELD metadata",
                                                      metadata={"app": "auto"}))).data()
    assert inside == [{"f": "TROLL", "user": "neo4j", "metadata": {"app": "e2e", "n": 1}}]
    assert alone == [{"metadata": {"app": "auto"}}]


async def test_lone_virtual_call_needs_no_graph(driver):
    async with driver.session(database="system") as session:
        result = await session.run("CALL test.numbers(2) YIELD name")
        names = [record["name"] async for record in result]
        summary = await result.consume()
    assert names == ["n1", "n2"] and summary.query_type == "r"


async def test_system_database_runs_bound_virtual_rows_and_refuses_graph_work(driver):
    records, _, _ = await driver.execute_query(
        "CALL test.numbers(3) YIELD value WHERE value > 1 RETURN value ORDER BY value", database_="system")
    assert [r["value"] for r in records] == [2, 3]
    with pytest.raises(neo4j.exceptions.ClientError) as info:
        await driver.execute_query("CREATE (:NotHere)", database_="system")
    assert info.value.code == "Neo.ClientError.Statement.UnsupportedAdministrationCommand"
    records, _, _ = await driver.execute_query("MATCH (n) RETURN count(n) AS c", database_="system")
    assert records[0]["c"] == 0
