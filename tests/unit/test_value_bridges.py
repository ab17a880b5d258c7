"""The value bridges' rewrites (extensions/bridges: precedence, aggregates, temporal values) as
text, without a database; tests/integration/test_value_semantics.py runs them on FalkorDB."""

from __future__ import annotations

from fractions import Fraction

import pytest

from extensions.bridges import durations
from extensions.planner.planner import ExtensionPlanner
from core.errors import CypherError
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_planner_support import registry

PLANNER = ExtensionPlanner(registry(), dialect=FALKORDB)


def sent(query: str) -> str | None:
    """The text the planner sends to FalkorDB, None when the query goes unchanged. (A query on no
    graph is answered in Python, extensions/temporal/query.py; its database path, taken when
    Python does not compute it, is what a query on the graph gets.)"""
    plan = PLANNER.plan(query)
    if plan is not None and plan.constant is not None:
        plan = plan.constant[1]
        if isinstance(plan, CypherError):
            raise plan
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


@pytest.mark.parametrize("query, rewritten", [
    ("RETURN date('2015-202') AS d", "RETURN date('2015-07-21') AS d"),
    ("RETURN date('2015W302') AS d", "RETURN date('2015-07-21') AS d"),
    ("RETURN localdatetime('2015-W30-2T214032') AS d", "RETURN localdatetime('2015-07-21T21:40:32') AS d"),
    ("RETURN localdatetime('20150721T21:40') AS d", "RETURN localdatetime('2015-07-21T21:40:00') AS d"),
    ("RETURN localtime('214032.000') AS d", "RETURN localtime('21:40:32') AS d"),
    ("RETURN datetime('2015-W30T2140Z') AS d", "RETURN localdatetime('2015-07-20T21:40:00') AS d"),
    ("RETURN date('2015-07-21') AS d", None),
])
def test_temporal_strings_reach_falkordb_in_the_form_it_reads(query, rewritten):
    assert sent(query) == rewritten


@pytest.mark.parametrize("query", [
    "RETURN localtime('21:40:32.142') AS t",
    "RETURN localdatetime('2015-07-21T21:40:32,5') AS t",
    "RETURN datetime('2015-07-21T21:40:32.000000001Z') AS t",
    "RETURN localdatetime({year: 1984, second: 14, millisecond: 645}) AS t",
    "WITH 5 AS n RETURN localtime({hour: 12, nanosecond: n}) AS t",
])
def test_fractions_of_a_second_are_refused_with_the_way_to_store_them(query):
    with pytest.raises(CypherError) as info:
        sent(query)
    assert info.value.code == "Neo.ClientError.Statement.UnsupportedOperationError"
    assert "fraction of a second" in info.value.message and "epoch milliseconds" in info.value.message


def test_unreadable_temporal_strings_are_refused_not_misread():
    with pytest.raises(CypherError, match="cannot read '2015-13-01' as a date"):
        sent("RETURN date('2015-13-01') AS d")
    assert sent("RETURN localtime({hour: 12, nanosecond: 0}) AS t") is None


def test_temporal_comparisons_are_decided_by_year_and_numbers_are_left_alone():
    body = sent("MATCH (n) WHERE n.born < date('2000-01-01') RETURN n")
    assert body.startswith("MATCH (n) WHERE [__v0 IN [[n.born, date('2000-01-01')]] | CASE WHEN typeOf(__v0[0])")
    assert sent("MATCH (n) WHERE n.age > 30 AND count(n) < 2 RETURN n") is None
    assert "typeOf" not in sent("MATCH (a)-->(b)<-[:R]-(c) WHERE a.x <> b.x RETURN a")   # (uniqueness only)


def test_a_comparison_with_a_parameter_is_rewritten_only_for_a_date():
    from extensions import bridges
    plan = PLANNER.plan("MATCH (n:P) WHERE n.age > $m RETURN n")
    assert plan.body == "MATCH (n:P) WHERE n.age > $m RETURN n"           # keeps the index seek
    query, start, edits, conditional, _ = plan.variants
    assert bridges.variant_edits(conditional, {"m": 5}) == []
    assert bridges.variant_edits(conditional, {"m": __import__("datetime").date(2000, 1, 1)})


def test_order_by_ranks_by_year_unless_the_key_cannot_be_a_date():
    assert sent("MATCH (n) RETURN n ORDER BY n.born DESC").endswith(".year, 10000) END DESC, n.born DESC")
    assert ".year" not in sent("MATCH (n) RETURN n.x * 2 AS k ORDER BY k, count(n)")   # only NaN's rank
    assert sent("MATCH (n) RETURN n ORDER BY n.name + 'x'") is not None     # + may be date arithmetic



@pytest.mark.parametrize("text, parts", [
    ("P5M1.5D", (5, 1, 43200, 0)), ("P0.75M", (0, 22, 71509, Fraction(1, 2))), ("PT0.75M", (0, 0, 45, 0)),
    ("P2.5W", (0, 17, 43200, 0)), ("P1Y2M3DT4H5M6S", (14, 3, 14706, 0)), ("-P1D", (0, -1, 0, 0)),
    ("P2012-02-02T14:37:21.545", (24146, 2, 52641, Fraction(109, 200))),
])
def test_duration_strings_are_read_as_neo4j_reads_them(text, parts):
    assert durations.parts(durations.read(text)) == parts


def test_only_durations_falkordb_keeps_reach_it():
    assert sent("RETURN duration({days: 3}) AS d") is None
    assert sent("RETURN duration('P1.5D') AS d") == "RETURN duration({months: 0, days: 1, seconds: 43200}) AS d"
    with pytest.raises(CypherError, match="PT50H as P2DT2H"):
        sent("RETURN duration({hours: 50}) AS d")


def test_copies_of_expressions_carry_the_dialects_edits():
    body = sent("RETURN datetime('2015-W30-2T21:40:32Z').epochSeconds AS s")
    assert "datetime(" not in body.replace("localdatetime(", "") and "'2015-07-21T21:40:32'" in body
    assert sent("RETURN localdatetime($t).epochSeconds AS s").endswith(").epochSeconds AS s")   # not copied


def test_tostring_of_a_float_is_refused_while_the_query_runs_when_it_cannot_be_written():
    plan = PLANNER.plan("RETURN toString(n.score) AS s")
    assert "range(0, 0, CASE WHEN" in plan.body and "E notation" in plan.refusals[0]
    assert sent("RETURN toString(id(n)) AS s, toString('x') AS t") is None


def test_a_comparison_holding_an_aggregate_is_left_to_falkordb():
    """FalkorDB cannot aggregate inside the list comprehension the comparison is written in."""
    assert "[__v" not in sent("MATCH (n) RETURN max(n.d) < date('2070-01-01') AS x")


def test_tostring_of_a_range_variable_is_left_alone():
    assert sent("UNWIND range(2015, 2024) AS year WITH year, toString(year) AS y RETURN y") is None
    assert sent("UNWIND range(1, 3) AS x WITH x * 0.5 AS x RETURN toString(x) AS s") is not None


def test_order_by_keys_bound_to_numbers_are_left_alone():
    assert sent("UNWIND range(1, 9) AS i RETURN i ORDER BY i DESC") is None
    assert sent("MATCH (n) WITH n, count(*) AS c RETURN n ORDER BY c") is None


def test_a_comprehension_variable_is_not_taken_for_a_numeric_alias_of_the_same_name():
    body = sent("UNWIND $values AS value WITH size([x IN $values WHERE x < value]) AS x, value RETURN x")
    assert "WHERE [__v0 IN [[x, value]] | CASE" in body
