"""The CASE, subquery-write and SKIP/LIMIT bridges as text rewrites (run on FalkorDB in
tests/integration/test_clause_semantics.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extensions import bridges
from extensions.bridges import constants
from extensions.bridges.limits import MAX_COUNT
from extensions.cypher.parser import parse
from extensions.planner.planner import ExtensionPlanner
from extensions.registry import Registry
from core.errors import CypherError
from proxy.backends.falkordb.dialect import FALKORDB


@pytest.fixture(scope="module")
def planner():
    return ExtensionPlanner(Registry([]), dialect=FALKORDB)


def derived(planner, query, **params):
    plan = planner.plan(query)
    return plan.body, bridges.derive(plan.derived, params)


def test_safe_case_and_plain_limits_are_left_alone(planner):
    for query in ("MATCH (n) RETURN CASE WHEN n.x IS NULL THEN 0 ELSE n.x END",
                  "MATCH (n) RETURN CASE n.k WHEN 1 THEN 'a' ELSE -1 END",
                  "MATCH (n) RETURN n LIMIT 0", "CREATE (n) RETURN n LIMIT 5",
                  "MATCH (n) RETURN CASE WHEN count(n) = 0 THEN 0 ELSE 10 / count(n) END"):
        assert planner.plan(query) is None


def test_case_branches_become_comprehensions(planner):
    body = planner.plan("RETURN CASE WHEN $n = 0 THEN 0 ELSE 100 / $n END AS v").body
    assert body == ("RETURN [__case0 IN [CASE WHEN $n = 0 THEN 0 ELSE 1 END] | ([__branch1 IN [1] WHERE "
                    "__case0 = 0 | 0] + [__branch1 IN [1] WHERE __case0 = 1 | 100 / $n])[0]][0] AS v")


def test_case_with_a_risky_later_condition_is_chained(planner):
    body = planner.plan("RETURN CASE $x WHEN 0 THEN 0 WHEN 100 / $x THEN 1 END AS v").body
    assert body.startswith("RETURN [__subject0 IN [$x] | [__taken")
    assert "coalesce(__subject0 = (100 / $x), false)" in body and body.count("WHERE NOT") == 2


def test_nested_case_and_other_edits_inside_survive(planner):
    body = planner.plan("MATCH (n) RETURN CASE WHEN elementId(n) = $id THEN 0 "
                        "ELSE CASE WHEN n.x = 0 THEN 0 ELSE 1 / n.x END END").body
    assert "id(n) = toInteger($id)" in body and body.count("[__case") == 2
    parse(body)


@pytest.mark.parametrize("query, expected", [
    ("UNWIND $r AS row CALL { WITH row MERGE (:I {k: row.k}) } RETURN 1",
     "UNWIND $r AS row FOREACH (__u0 IN [1] | MERGE (:I {k: row.k})) RETURN 1"),
    ("MATCH (a) CALL (a) { DELETE a }", "MATCH (a) FOREACH (__u0 IN [1] | DELETE a)"),
    ("UNWIND $r AS row CALL { WITH row MERGE (a:A {k: row.a}) MERGE (b:A {k: row.b}) MERGE (a)-[:R]->(b) "
     "RETURN b.k AS k } RETURN k",
     "UNWIND $r AS row MERGE (a:A {k: row.a}) MERGE (b:A {k: row.b}) MERGE (a)-[:R]->(b)  WITH row, b.k AS k RETURN k"),
    ("UNWIND $r AS row CALL { WITH row MERGE (i:I {k: row.k}) RETURN i } RETURN i",
     "UNWIND $r AS row MERGE (i:I {k: row.k})  WITH row, i RETURN i"),
    ("MATCH (x) CALL { MERGE (:I {k: [x IN $ks | x * 2]}) }",        # x in the list is the body's own
     "MATCH (x) FOREACH (__u0 IN [1] | MERGE (:I {k: [x IN $ks | x * 2]}))"),
    ("MATCH (a) CALL { WITH a MATCH (a)-[r]->(b) WHERE b.x > 1 DELETE r } RETURN a",
     "MATCH (a) WITH *, [(a)-[r]->(b) WHERE r IS NOT NULL AND (b.x > 1) | [r, b]] AS __ms0 FOREACH (__m1 IN __ms0 | "
     "FOREACH (r IN [__m1[0]] | FOREACH (b IN [__m1[1]] | DELETE r))) WITH a RETURN a"),
    ("UNWIND $r AS row CALL (row) { MATCH (a {id: row.a}) MERGE (a)-[:R]->(:B) }",
     "UNWIND $r AS row WITH row MATCH (a {id: row.a}) MERGE (a)-[:R]->(:B)"),
])
def test_subquery_writes(planner, query, expected):
    assert planner.plan(query).body == expected


@pytest.mark.parametrize("query, message", [
    ("MATCH (a) CALL { WITH a MATCH (b:B) DELETE b } RETURN 1", "first row only"),
    ("UNWIND $r AS row CALL { WITH row MERGE (a:A {k: row.a}) ON CREATE SET a.n = 1 MERGE (b:B {k: row.b}) "
     "RETURN a, b } RETURN a", "first row only"),
    ("MATCH (a) CALL { WITH a MATCH (a)-->(b) MERGE (b)-[:S]->(:C) DELETE b } RETURN 1", "first row only"),
    ("MATCH (a), (b) CALL { WITH a MERGE (a)-[:R]->(b) } RETURN 1", "Rename `b`"),
    ("MATCH (a), (b) CALL { WITH a SET a.x = b.x MERGE (:C) } RETURN 1", "Variable `b` not defined"),
    ("UNWIND $r AS row CALL { WITH row MERGE (i:I {k: row.k}) RETURN count(i) AS c } RETURN c", "first row only"),
])
def test_subquery_writes_refused(planner, query, message):
    with pytest.raises(CypherError, match=message):
        planner.plan(query)


def test_limit_zero_after_a_write(planner):
    body, values = derived(planner, "CREATE (n) RETURN n LIMIT 0")
    assert body == "CREATE (n) RETURN n SKIP $__skip0 LIMIT $__limit1"
    assert values == {"__skip0": MAX_COUNT, "__limit1": 1}
    _, values = derived(planner, "CREATE (n) RETURN n SKIP $s LIMIT $l", s=2, l=3)
    assert values == {"__skip0": 2, "__limit1": 3}


def test_counts_clamped_and_computed(planner):
    _, values = derived(planner, "MATCH (n) RETURN n SKIP 4294967296 LIMIT toInteger($l) + 1", l="4")
    assert values == {"__skip0": MAX_COUNT, "__limit1": 5}
    with pytest.raises(CypherError, match="Expected parameter"):
        derived(planner, "MATCH (n) RETURN n LIMIT toInteger($missing)")


def _integer_reference(op, a, b):
    """Java's long arithmetic, which Neo4j uses."""
    if op == "/":
        return abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    if op == "%":
        return abs(a) % abs(b) * (1 if a >= 0 else -1)
    return {"+": a + b, "-": a - b, "*": a * b}[op]


@given(st.sampled_from("+-*/%"), st.integers(-10**6, 10**6), st.integers(-10**6, 10**6).filter(bool))
def test_integer_arithmetic_as_neo4j(op, a, b):
    expr = parse(f"RETURN $a {op} $b").clauses[0].items[0].expr
    assert constants.evaluator(expr)({"a": a, "b": b}) == _integer_reference(op, a, b)


def test_safe_nested_case_is_left_alone_and_too_deep_stays_eager(planner):
    assert planner.plan("RETURN " + "CASE WHEN NOT false THEN " * 5 + "7" + " END" * 5 + " AS x") is None
    deep = "RETURN " + "CASE WHEN $a = 0 THEN 0 ELSE 1 / (" * 5 + "7" + ") END" * 5 + " AS x"
    assert planner.plan(deep).body == deep        # lazy, it would nest past FalkorDB's parse guard
