"""The value bridges' rewrites (extensions/bridges: precedence, aggregates, temporal values) as
text, without a database; tests/integration/test_value_semantics.py runs them on FalkorDB."""

from __future__ import annotations

import pytest

from extensions.planner import ExtensionPlanner
from proxy.errors import CypherError
from tests.unit.test_planner_support import registry

PLANNER = ExtensionPlanner(registry(), backend_kind="falkordb")


def sent(query: str) -> str | None:
    """The text the planner sends to FalkorDB, None when the query goes unchanged."""
    plan = PLANNER.plan(query)
    return None if plan is None else plan.body


@pytest.mark.parametrize("query, rewritten", [
    ("RETURN 2^3^2 AS x", "RETURN (2^3)^2 AS x"),
    ("RETURN 2^(3^2) AS x", None),
    ("RETURN [1]+2 IN [3]+4 AS x", "RETURN ([1]+2) IN ([3]+4) AS x"),
    ("RETURN 1 + 2 IS NULL AS x", "RETURN (1 + 2) IS NULL AS x"),
    ("RETURN 1 + (2 IN [3]) AS x", "RETURN 1 + ((2 IN [3])) AS x"),
    ("MATCH (n) WHERE n.x IN $xs AND n.name STARTS WITH 'a' RETURN n", None),
])
def test_precedence_parentheses(query, rewritten):
    assert sent(query) == rewritten


def test_sum_keeps_integers_and_leaves_other_functions_alone():
    body = sent("MATCH (n) RETURN sum(n.x) AS s")
    assert body.startswith("MATCH (n) RETURN CASE WHEN max(CASE typeOf((n.x)) WHEN 'Float'")
    assert "toInteger(sum(((n.x) - (n.x) % 2097152) / 2097152 % 2097152)) * 2097152" in body
    assert sent("MATCH (n) RETURN my_sum(n.x) AS s") is None           # not sum()
    assert sent("MATCH (n) RETURN count(n) AS c") is None
