"""The planner over a real embedded FalkorDB: pass-through, probe -> compute -> bind, errors.

A `RecordingRunner` wraps the real backend so the tests can assert on exactly what text
reached the database and how many round trips were made.
"""

from __future__ import annotations

import pytest

from extensions.planner.planner import ExtensionPlanner
from core.backend import TxConfig
from proxy.demo import SEED_QUERY as SEED
from core.errors import CypherError
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_planner_support import (
    CALLS,
    GRAPH,
    RecordingRunner,
    registry,
    rows,
    seed_expected,
    ts_avg_value,
)

AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}


@pytest.fixture(scope="module")
async def backend(embedded):
    db = embedded
    creds = await db.authenticate(AUTH)
    runner = RecordingRunner(db, creds)
    await (await runner.run(GRAPH, {})).consume()
    return db, creds


@pytest.fixture
def planner():
    return ExtensionPlanner(registry(), dialect=FALKORDB)


@pytest.fixture
def runner(backend):
    db, creds = backend
    return RecordingRunner(db, creds)


async def test_no_extension_passes_through_unchanged_in_one_call(planner, runner):
    query = "MATCH (p:ProductionProfile)  // ts_avg(p.x) in a comment\nRETURN count(p) AS n"
    assert await rows(await planner.execute(query, {}, runner)) == [[3]]
    assert runner.queries == [(query, {})]


async def test_std_is_spliced_to_stdev_without_probes(planner, runner):
    result = await planner.execute("UNWIND [1, 2, 3] AS x RETURN std(x) AS s", {}, runner)
    assert await rows(result) == [[1.0]]
    assert [q for q, _ in runner.queries] == ["UNWIND [1, 2, 3] AS x RETURN stDev(x) AS s"]


async def test_seed_query_matches_python(planner, runner):
    CALLS.clear()
    result = await planner.execute(SEED, {}, runner)
    assert result.keys == ["mean_ratio", "std_ratio", "n_years", "mean_reduction"]
    [record] = await rows(result)
    expected = seed_expected()
    assert record[2] == expected["n_years"]
    assert record == pytest.approx(list(expected.values()), rel=1e-12)
    # One probe for both calls of the clause, separated (the profiles, the years), then the query.
    assert len(runner.queries) == 3
    assert "WITH DISTINCT p WHERE p IS NOT NULL\nRETURN labels(p) AS __c1, collect([p.id, id(p)])" in runner.queries[0][0]
    assert "WITH DISTINCT y\nRETURN DISTINCT y AS __c3, toString(y) AS __c4" in runner.queries[1][0]
    assert len(CALLS) == 2                   # each extension evaluated once, with all its tuples


@pytest.mark.parametrize("query, expected", [
    # WHERE of a MATCH, a bare argument, a parameter argument
    ("MATCH (p:ProductionProfile) WHERE ts_avg(p.prd_oe_net, $y) > 60 RETURN p.id AS id ORDER BY id",
     [["P1"]]),
    # ORDER BY, nested in arithmetic, unaliased column keeps its name
    (("MATCH (p:ProductionProfile) RETURN p.id AS id, round(ts_avg(p.prd_oe_net, '2020') * 10) / 10 AS v "
     "ORDER BY ts_avg(p.prd_oe_net, '2020') DESC"),
     [["P1", round(ts_avg_value("P1", "prd_oe_net", "2020", single=True) * 10) / 10],
      ["P2", round(ts_avg_value("P2", "prd_oe_net", "2020", single=True) * 10) / 10],
      ["P3", 7.0]]),
    # inside CASE and a list comprehension over a local variable
    (("MATCH (p:ProductionProfile {id: 'P2'}) RETURN [y IN range(2018, 2020) WHERE y <> 2019 | "
     "ts_avg(p.prd_oe_net, toString(y))] AS l, CASE WHEN p.id = 'P2' THEN ts_avg(p.prd_oe_net) ELSE 0 END AS c"),
     [[[ts_avg_value("P2", "prd_oe_net", "2018", single=True), ts_avg_value("P2", "prd_oe_net", "2020", single=True)],
       ts_avg_value("P2", "prd_oe_net", single=True)]]),
    # WITH ... WHERE on a projected extension value, then aggregation by the database
    (("MATCH (p:ProductionProfile) WITH p.id AS id, ts_avg(p.prd_oe_net, '2020') AS v WHERE v > 10 "
     "RETURN collect(id) AS ids"),
     [[["P1", "P2"]]]),
    # an extension's result feeding another extension (the year comes from ts_avg of P3 = 7.0)
    (("MATCH (p:ProductionProfile {id: 'P1'}), (q:ProductionProfile {id: 'P3'}) "
     "RETURN ts_avg(p.prd_oe_net, toString(toInteger(ts_avg(q.prd_oe_net)) + 2013)) AS v"),
     [[ts_avg_value("P1", "prd_oe_net", "2020", single=True)]]),
    # NODE_OR_VALUE: a node and a plain value; null argument; no node at all
    ("MATCH (p:ProductionProfile {id: 'P3'}) RETURN tag(p) AS a, tag(p.id) AS b, tag(null) AS c",
     [["ProductionProfile:P3", "v:P3", "v:None"]]),
    # ORDER BY on a projected alias
    (("UNWIND ['2020', '2021'] AS y MATCH (p:ProductionProfile {id: 'P1'}) WITH y AS year, p "
     "RETURN year ORDER BY ts_avg(p.prd_oe_net, year) DESC"),
     [["2021"], ["2020"]]),
])
async def test_extension_positions(planner, runner, query, expected):
    got = await rows(await planner.execute(query, {"y": "2021"}, runner))
    assert len(got) == len(expected)
    for row, want in zip(got, expected):
        assert row == pytest.approx(want, rel=1e-12) if _numeric(want) else row == want


def _numeric(values):
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


async def test_extension_values_in_unwind_and_set(planner, runner):
    query = ("MATCH (p:ProductionProfile {id: 'P3'}) UNWIND [ts_avg(p.prd_oe_net), 1.0] AS v "
             "WITH p, sum(v) AS s SET p.tmp = ts_avg(p.prd_oe_net, '2020') + s RETURN p.tmp AS t")
    assert await rows(await planner.execute(query, {}, runner)) == [[15.0]]
    await rows(await planner.execute("MATCH (p) REMOVE p.tmp", {}, runner))


async def test_write_to_a_matched_node_does_not_block_extension(planner, runner):
    query = ("MATCH (f:Field {title: 'OSEBERG'})<-[:OF_FIELD]-(p) CREATE (f)-[:TMP]->(:Tmp) "
             "WITH p RETURN ts_avg(p.prd_oe_net, '2020') AS v")
    assert await rows(await planner.execute(query, {}, runner)) == [[7.0]]
    await rows(await planner.execute("MATCH (t:Tmp) DETACH DELETE t", {}, runner))


async def test_optional_match_where_with_extension(planner, runner):
    query = ("MATCH (f:Field) OPTIONAL MATCH (f)<-[:OF_FIELD]-(p) WHERE ts_avg(p.prd_oe_net, '2020') < 10 "
             "RETURN f.title AS f, p.id AS p ORDER BY f")
    assert await rows(await planner.execute(query, {}, runner)) == [["OSEBERG", "P3"], ["TROLL", None]]


async def test_union_parts_are_planned_separately(planner, runner):
    query = ("MATCH (p:ProductionProfile {id: 'P1'}) RETURN ts_avg(p.prd_oe_net, '2016') AS v "
             "UNION ALL MATCH (p:ProductionProfile {id: 'P2'}) RETURN ts_avg(p.prd_oe_net, '2020') AS v")
    got = [r[0] for r in await rows(await planner.execute(query, {}, runner))]
    assert got == pytest.approx([ts_avg_value("P1", "prd_oe_net", "2016", single=True),
                                 ts_avg_value("P2", "prd_oe_net", "2020", single=True)], rel=1e-12)


async def test_unaliased_return_keeps_its_column_name(planner, runner):
    result = await planner.execute("MATCH (p:ProductionProfile {id: 'P3'}) RETURN ts_avg(p.prd_oe_net)", {}, runner)
    assert result.keys == ["ts_avg(p.prd_oe_net)"]
    assert await rows(result) == [[7.0]]


async def test_explain_runs_no_probe(planner, runner):
    result = await planner.execute("EXPLAIN " + SEED, {}, runner)
    summary = await result.consume()
    assert summary.query_type == "r"
    assert len(runner.queries) == 1 and runner.queries[0][0].startswith("EXPLAIN ")
    assert "$__ext0[id(p) - $__ext0_base]" in runner.queries[0][0]


async def test_profile_runs_probes_and_profiles(planner, runner):
    result = await planner.execute("PROFILE " + SEED, {}, runner)
    summary = await result.consume()
    assert summary.profile is not None
    assert [q.split(None, 1)[0] for q, _ in runner.queries] == ["MATCH", "MATCH", "PROFILE"]   # nodes, values


async def test_algorithm_call_scans_candidates_and_keeps_scope(planner, runner):
    query = ("MATCH (f:Field {title: 'TROLL'}) CALL test_degree({scale: 2.0}) YIELD node, score "
             "WHERE (node)-[:OF_FIELD]->(f) RETURN f.title AS f, node.id AS id, score ORDER BY id")
    got = await rows(await planner.execute(query, {}, runner))
    assert got == [["TROLL", "P1", 2.0], ["TROLL", "P2", 2.0]]
    assert "UNWIND" not in runner.queries[-1][0]


async def test_standalone_algorithm_call(planner, runner):
    got = await rows(await planner.execute("CALL test_degree({min: 1})", {}, runner))
    assert sorted(score for _, score in got) == [1.0, 1.0, 1.0]


async def test_lone_virtual_call_is_answered_without_the_database(planner, runner):
    result = await planner.execute("CALL test.numbers(2) YIELD name, value AS v", {}, runner)
    assert result.keys == ["name", "v"]
    assert await rows(result) == [["n1", 1], ["n2", 2]]
    assert runner.queries == []
    result = await planner.execute("call `test.numbers`", {}, runner)          # no parentheses
    assert result.keys == ["value", "name", "user", "metadata"]
    assert await rows(result) == [[i, f"n{i}", "tester", {"app": "tests"}] for i in (1, 2, 3)]


async def test_virtual_call_rows_are_bound_for_the_database(planner, runner):
    query = ("MATCH (f:Field) CALL test.numbers($n) YIELD value WHERE value > 1 "
             "RETURN f.title AS f, value ORDER BY f, value")
    got = await rows(await planner.execute(query, {"n": 3}, runner))
    assert got == [["OSEBERG", 2], ["OSEBERG", 3], ["TROLL", 2], ["TROLL", 3]]
    assert len(runner.queries) == 1 and "UNWIND $__v0" in runner.queries[0][0]


async def test_explain_of_virtual_call(planner, runner):
    summary = await (await planner.execute("EXPLAIN CALL test.numbers()", {}, runner)).consume()
    assert summary.plan["operatorType"] == "ProcedureCall" and summary.query_type == "r"
    query = "EXPLAIN CALL test.numbers() YIELD value RETURN sum(value) AS s"
    summary = await (await planner.execute(query, {}, runner)).consume()
    assert summary.plan is not None and runner.queries[0][0].startswith("EXPLAIN UNWIND")


@pytest.mark.parametrize("query, message", [
    ("CALL test.numbers() YIELD nope", "Unknown procedure output: `nope`"),
    ("MATCH (f:Field) CALL test.numbers(size(f.title)) YIELD value RETURN value", "literals or query parameters"),
    ("MATCH (p) RETURN ts_avg(p.prd_oe_net, '2020', '2021', '2022')", "ts_avg(n.channel, start?, end?)"),
    ("MATCH (p) RETURN ts_avg(p, '2020')", "must be a property of a node"),
    ("CALL test_degree({scal: 2})", "Did you mean 'scale'?"),
    ("MATCH (p) RETURN ts_avg(p.prd_oe_net, toString(max(p.year)))", "aggregation"),
    ("CREATE (p:ProductionProfile {id: 'P1'}) RETURN ts_avg(p.prd_oe_net)", "Split it into two queries"),
    (("MATCH (p:ProductionProfile {id: 'P1'}) SET p.year = 2020 WITH p "
     "RETURN ts_avg(p.prd_oe_net, toString(p.year))"), "Split it into two queries"),
    ("MATCH (p:ProductionProfile) RETURN ts_avg(p.nope)", "Unknown channel 'nope'"),
])
async def test_errors_teach(planner, runner, query, message):
    with pytest.raises(CypherError) as info:
        await rows(await planner.execute(query, {}, runner))
    assert message in info.value.message
    assert info.value.code in ("Neo.ClientError.Statement.ArgumentError", "Neo.ClientError.Statement.SyntaxError")


async def test_write_after_extension_is_supported(planner, runner):
    query = ("MATCH (p:ProductionProfile {id: 'P3'}) SET p.tmp = 1 "
             "WITH p RETURN ts_avg(p.prd_oe_net, '2020') AS v")
    assert await rows(await planner.execute(query, {}, runner)) == [[7.0]]
    assert "SET" not in runner.queries[0][0]     # the probe left the write out
    await rows(await planner.execute("MATCH (p) REMOVE p.tmp", {}, runner))


async def test_extension_inside_transaction_sees_uncommitted_writes(backend, planner):
    db, creds = backend
    tx = await db.begin(TxConfig(), creds)
    try:
        runner = RecordingRunner(db, creds, tx)
        await rows(await runner.run("MATCH (f:Field {title: 'TROLL'}) "
                                    "CREATE (:ProductionProfile {id: 'P3'})-[:OF_FIELD]->(f)", {}))
        got = await rows(await planner.execute(
            "MATCH (:Field {title: 'TROLL'})<-[:OF_FIELD]-(p) RETURN sum(ts_avg(p.prd_oe_net, '2020')) AS s",
            {}, runner))
        expected = sum(ts_avg_value(k, "prd_oe_net", "2020", single=True) for k in ("P1", "P2", "P3"))
        assert got[0][0] == pytest.approx(expected, rel=1e-12)
    finally:
        await tx.rollback()


async def test_big_batches_are_computed_off_the_event_loop(runner):
    import dataclasses
    import threading

    from extensions.registry import Registry
    seen = []
    base = registry().get("ts_avg")

    def evaluate(rows_):
        seen.append(threading.current_thread() is threading.main_thread())
        return base.evaluate(rows_)
    offloaded = dataclasses.replace(base, evaluate=evaluate, offload_above=0)
    planner = ExtensionPlanner(Registry([offloaded]), dialect=FALKORDB)
    got = await rows(await planner.execute(
        "MATCH (p:ProductionProfile {id: 'P3'}) RETURN ts_avg(p.prd_oe_net) AS v", {}, runner))
    assert got == [[7.0]] and seen == [False]


def test_plans_are_cached(planner):
    assert planner.plan(SEED) is planner.plan(SEED)
    assert planner.plan("MATCH (n) RETURN n") is None
