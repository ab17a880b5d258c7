"""The TCK classification's comparison: values printed as Neo4j prints them, Gherkin escapes,
side effects from graph states, and the five classes (conformance.values, .classify, .tck)."""

from __future__ import annotations

import re

import neo4j.time
import pytest
import pytz
from hypothesis import given
from hypothesis import strategies as st

from conformance.classify import (
    ACCEPTS_INVALID,
    LOUD,
    MATCH,
    OTHER_ERROR,
    SILENT_WRONG,
    GraphState,
    Outcome,
    classify,
    side_effects,
)
from conformance.literals import parse_literal
from conformance.tally import Tally, over_ceilings, read_ceilings, under_ceilings
from conformance.tck import Check, Expected, Scenario, read_feature, table_cells
from conformance.values import cypher_text, duration_text, neo4j_text, normalise
from tests.harness import TCK_DIR, TCK_MISSING

Time, DateTime, Date, Duration = neo4j.time.Time, neo4j.time.DateTime, neo4j.time.Date, neo4j.time.Duration


@pytest.mark.parametrize("value, text", [
    (Time(12, 31), "12:31"),                                           # no seconds: none printed
    (Time(12, 31, 14, 645876123), "12:31:14.645876123"),
    (Time(12, 31, 14, 645876000), "12:31:14.645876"),                  # groups of three digits
    (Time(12, 31, 14, 645000000, tzinfo=pytz.FixedOffset(60)), "12:31:14.645+01:00"),
    (Time(0, 0, 0, 1, tzinfo=pytz.utc), "00:00:00.000000001Z"),
    (DateTime(1984, 10, 11, 12, 0), "1984-10-11T12:00"),
    (pytz.timezone("Europe/Stockholm").localize(DateTime(2015, 7, 21, 21, 40, 32, 142000000)),
     "2015-07-21T21:40:32.142+02:00[Europe/Stockholm]"),
    (Date(1, 1, 1), "0001-01-01"),
    (Duration(), "PT0S"),
])
def test_temporals_print_as_neo4j_does(value, text):
    assert neo4j_text(value) == text


@pytest.mark.parametrize("parts, text", [      # all written so in the TCK
    ((150, 0, 32 * 3600 + 2 * 60 + 20, 1), "P12Y6MT32H2M20.000000001S"),
    ((-148, -28, -1440, -1), "P-12Y-4M-28DT-24M-0.000000001S"),
    ((0, 0, 0, -1_000_000), "PT-0.001S"),
    ((0, 1, 0, -1_000_000), "P1DT-0.001S"),
    ((0, 0, -60, -1_000_000), "PT-1M-0.001S"),
    ((0, 22, 19 * 3600 + 51 * 60 + 49, 500_000_000), "P22DT19H51M49.5S"),
])
def test_durations_print_as_neo4j_does(parts, text):
    assert duration_text(*parts) == text


_DURATION = re.compile(r"P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?)?")


@given(st.integers(-10**6, 10**6), st.integers(-10**6, 10**6), st.integers(-10**10, 10**10),
       st.integers(-10**9 + 1, 10**9 - 1))
def test_duration_text_reads_back_to_the_same_amounts(months, days, seconds, nanos):
    text = duration_text(months, days, seconds, nanos)
    years, month, day, hours, minutes, secs = _DURATION.fullmatch(text).groups()
    number = [int(x or 0) for x in (years, month, day, hours, minutes)]
    whole, _, fraction = (secs or "0").partition(".")
    sign = -1 if whole.startswith("-") else 1
    total_nanos = (int(whole) * 10**9 + sign * int(fraction.ljust(9, "0") or 0)
                   + (number[3] * 3600 + number[4] * 60) * 10**9)
    assert (number[0] * 12 + number[1], number[2], total_nanos) == \
        (months, days, seconds * 10**9 + nanos)


def test_negative_zero_equals_zero():
    assert normalise(-0.0) == normalise(0.0)


def test_gherkin_cell_escapes():
    assert table_cells(r"| a\|b | \\ | it\'s | x\n |") == ["a|b", "\\", "it\\'s", "x\n"]


@pytest.mark.skipif(not TCK_DIR.is_dir(), reason=TCK_MISSING)
def test_escaped_backslashes_in_a_tck_cell_mean_the_query_s_value():
    feature = TCK_DIR / "expressions" / "literals" / "Literals6.feature"
    scenario = next(s for s in read_feature(feature) if s.name.startswith("[5]"))
    cell = parse_literal(scenario.expected.rows[0][0])
    assert cell == parse_literal(scenario.query.split("RETURN ", 1)[1].split(" AS")[0])
    assert cell == "a\\bcn5t'\"\\//\\\"'"


def test_cypher_text_writes_tck_syntax():
    assert cypher_text([parse_literal("(:A {k: 'v'})"), parse_literal("({n: 1})"), None, 1.5,
                        Duration(days=1), Date(2015, 7, 21)]) == \
        "[(:A {k: 'v'}), ({n: 1}), null, 1.5, 'P1D', '2015-07-21']"


def _rows(*cells: str, effects: dict | None = None) -> Expected:
    return Expected("rows", header=["x"], rows=[[c] for c in cells], side_effects=effects)


CREATE = Check("CREATE (n:N) RETURN n LIMIT 0", Expected("rows", header=["n"], side_effects={
    "+nodes": 1, "+labels": 1}))


@pytest.mark.parametrize("check, outcome, kind", [
    (CREATE, Outcome(keys=("n",), effects={"+nodes": 1, "+labels": 1}), MATCH),
    (CREATE, Outcome(keys=("n",), effects={}), SILENT_WRONG),                  # the lost write
    (Check("RETURN 1 AS x", _rows("1")), Outcome(keys=("x",), rows=((1.0,),)), SILENT_WRONG),
    (Check("RETURN 1 AS x", _rows("1")), Outcome(keys=("y",), rows=((1,),)), SILENT_WRONG),
    (Check("RETURN 1 AS x", _rows("1")), Outcome(error="Neo.ClientError.Statement.TypeError: no"), LOUD),
    (Check("RETURN 1 AS x", _rows("1")), Outcome(error="boom", setup_step=0), LOUD),
    (Check("RETURN t AS x", _rows("'12:31'")), Outcome(keys=("x",), rows=((Time(12, 31),),)), MATCH),
    (Check("q", Expected("error", error="SyntaxError", phase="compile time")),
     Outcome(keys=("x",), rows=((1,),)), ACCEPTS_INVALID),
    (Check("q", Expected("error", error="TypeError", phase="compile time")),
     Outcome(error="Neo.ClientError.Statement.SyntaxError: Type mismatch"), MATCH),
    (Check("q", Expected("error", error="SyntaxError", phase="compile time")),
     Outcome(error="Neo.ClientError.Statement.TypeError: Type mismatch"), OTHER_ERROR),
    (Check("q", Expected("error", error="TypeError", phase="runtime")),
     Outcome(error="Neo.DatabaseError.General.UnknownError: backend text"), OTHER_ERROR),
])
def test_classes(check, outcome, kind):
    assert classify(check, outcome).kind == kind


def test_side_effects_from_states():
    before = GraphState(frozenset({0, 1}), frozenset(), frozenset({"A"}),
                        frozenset({("n", 0, "k", 1), ("n", 1, "k", 2)}))
    after = GraphState(frozenset({0, 1, 2}), frozenset({0}), frozenset({"A", "B"}),
                       frozenset({("n", 0, "k", 5), ("n", 1, "k", 2)}))
    assert side_effects(before, after) == {"+nodes": 1, "+relationships": 1, "+labels": 1,
                                           "+properties": 1, "-properties": 1}


def test_reused_ids_are_counted_by_the_query_s_counters():
    """FalkorDB gives a node created after a delete the deleted node's id."""
    before = GraphState(nodes=frozenset({0, 1}), shapes=frozenset({("n", 0, ("A",)), ("n", 1, ("A",))}))
    after = GraphState(nodes=frozenset({0}), shapes=frozenset({("n", 0, ("B",))}))
    assert side_effects(before, after, {"nodes": (1, 2)}) == {"+nodes": 1, "-nodes": 2}
    # counters that disagree with the states on the net change do not hide a lost write
    assert side_effects(before, after, {"nodes": (2, 2)}) == {"-nodes": 1}


def test_an_entity_created_and_deleted_in_the_query_is_no_side_effect():
    """`MATCH () CREATE (n) DELETE n`: the TCK compares graphs, which show nothing."""
    state = GraphState(nodes=frozenset({0}), shapes=frozenset({("n", 0, ())}))
    assert side_effects(state, state, {"nodes": (1, 1)}) == {}


def test_tally_counts_per_folder_lists_the_silent_wrong_and_checks_the_ceilings(tmp_path):
    root = tmp_path / "features"
    match = Scenario("[1] m", root / "clauses" / "match" / "Match1.feature", 3, checks=[CREATE])
    temporal = Scenario("[2] t", root / "expressions" / "temporal" / "Temporal1.feature", 9,
                        checks=[Check("RETURN time() AS x", _rows("'12:31'"))])
    tally = Tally(root)
    tally.add(match, CREATE, classify(CREATE, Outcome(keys=("n",), effects={})))
    tally.add(temporal, temporal.checks[0],
              classify(temporal.checks[0], Outcome(error="Neo.ClientError.Statement.SyntaxError: no")))
    assert tally.counts() == {SILENT_WRONG: 1, LOUD: 1}
    assert tally.by_folder() == {"clauses/match": {SILENT_WRONG: 1},
                                 "expressions/temporal": {LOUD: 1}}
    listing = tally.listing()
    assert "-- clauses/match/Match1.feature:3 [1] m\n   CREATE (n:N) RETURN n LIMIT 0" in listing
    assert "got:      columns ['n'], rows (none); no side effects" in listing
    assert "RETURN time()" not in listing                    # loud checks are counted, not listed
    assert over_ceilings(tally.counts(), {SILENT_WRONG: 0, ACCEPTS_INVALID: 0}) == \
        [f"{SILENT_WRONG}: 1 > ceiling 0 in tck_ceilings.json"]
    assert under_ceilings(tally.counts(), {SILENT_WRONG: 3}) == \
        [f"{SILENT_WRONG}: 1 < ceiling 3: lower it in tck_ceilings.json"]


def test_the_kept_ceilings_name_the_two_counted_classes():
    assert set(read_ceilings()) == {SILENT_WRONG, ACCEPTS_INVALID}
    assert all(isinstance(n, int) and n >= 0 for n in read_ceilings().values())


class _RefusingTarget:
    """A target that refuses CREATE and would answer any other query with no rows."""

    def __init__(self):
        self.ran = []

    def clear(self):
        pass

    def run(self, query, params):
        self.ran.append(query)
        return Outcome(error="Neo.ClientError.Statement.UnsupportedOperationError: no") \
            if query.startswith("CREATE") else Outcome(keys=("x",))


def test_a_control_query_after_a_refused_write_is_loud_not_silent_wrong(tmp_path):
    """Temporal4 [5]: the CREATE is refused, so the control query's empty answer says nothing."""
    from conformance.differential import play
    scenario = Scenario("[5] store", tmp_path / "T.feature", 1, checks=[
        Check("CREATE ({x: 1})", Expected("empty", side_effects={"+nodes": 1})),
        Check("MATCH (n) RETURN n.x AS x", _rows("1"), control=True)])
    target = _RefusingTarget()
    outcomes = play(target, scenario, {}, tmp_path)
    assert target.ran == ["CREATE ({x: 1})"]
    verdicts = [classify(check, outcome) for check, outcome in zip(scenario.checks, outcomes)]
    assert [v.kind for v in verdicts] == [LOUD, LOUD]
    assert verdicts[1].got == "query 1: Neo.ClientError.Statement.UnsupportedOperationError: no"
    # a check the TCK expects to fail does not stop the scenario
    scenario.checks[0].expected = Expected("error", error="TypeError", phase="runtime")
    target.ran.clear()
    assert classify(scenario.checks[1], play(target, scenario, {}, tmp_path)[1]).kind == SILENT_WRONG
    assert len(target.ran) == 2
