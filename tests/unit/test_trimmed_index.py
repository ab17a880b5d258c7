"""The rewrite of statements on indexed strings (extensions/trimmed_index.py), without a server:
which values count as untrimmed, and the shapes chosen per run. The answers themselves are
checked on the real database in tests/integration/test_trimmed_index.py."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from extensions.trimmed_index import WHITESPACE, Schema, holds_untrimmed, rewrite_for, untrimmed
from core.errors import CypherError

SCHEMA = Schema(frozenset({("NODE", "S", "k"), ("NODE", "U", "k")}), frozenset({("NODE", "U", "k")}))


@given(st.text(alphabet=" \t\n\r\x0b\x0c\u00a0a", max_size=4))
def test_untrimmed_is_what_the_index_cannot_find(value):
    assert untrimmed(value) == (value.strip(WHITESPACE) != value or value == "")
    assert holds_untrimmed([1, {"x": [value]}]) == untrimmed(value)


def test_an_ordinary_value_keeps_the_index_and_is_also_compared_exactly():
    text = rewrite_for("MATCH (n:S {k: $v}) RETURN n", {"v": "a"}, SCHEMA)[0]
    assert text == "MATCH (n:S {k: $v}) WHERE [n.k][0] = $v RETURN n"


def test_an_untrimmed_value_leaves_the_map_and_is_compared_exactly():
    text = rewrite_for("MATCH (n:S {k: $v, x: 1}) WHERE n.k = $v RETURN n", {"v": " a"}, SCHEMA)[0]
    assert text == "MATCH (n:S {x: 1}) WHERE ([n.k][0] = $v) AND [n.k][0] = $v RETURN n"


def test_string_ranges_are_exact_and_numeric_ones_keep_the_index():
    assert rewrite_for("MATCH (n:S) WHERE n.k < $v RETURN n", {"v": "b"}, SCHEMA)[0] == \
        "MATCH (n:S) WHERE [n.k][0] < $v RETURN n"
    assert rewrite_for("MATCH (n:S) WHERE n.k < $v RETURN n", {"v": 3}, SCHEMA)[0] == \
        "MATCH (n:S) WHERE n.k < $v RETURN n"


CLEAN = Schema(SCHEMA.ranged, SCHEMA.unique, frozenset({("NODE", "S", "k")}))


@pytest.mark.parametrize("query", ["UNWIND $rows AS r MATCH (n:S {k: r.k}) RETURN n",
                                   "UNWIND $rows AS r MATCH (n:S) WHERE n.k = r.k RETURN n",
                                   "MATCH (n:S) WHERE n.k IN $vs RETURN n"])
def test_a_clean_property_keeps_the_index_for_any_value(query):
    params = {"rows": [{"k": " a"}], "vs": [" a"]}
    assert rewrite_for(query, params, CLEAN)[0] == query
    assert rewrite_for(query, params, SCHEMA)[0] != query


def test_a_clean_property_still_compares_string_ranges_exactly():
    assert rewrite_for("MATCH (n:S) WHERE n.k < $v RETURN n", {"v": "b"}, CLEAN)[0] == \
        "MATCH (n:S) WHERE [n.k][0] < $v RETURN n"


@pytest.mark.parametrize("write", ["CREATE (:S {k: ' a'})", "MERGE (:T {k: 'x'})", "MATCH (m) SET m.k = ' a'",
                                   "MATCH (m) SET m = $map", "CREATE (:S $map)"])
def test_a_statement_that_writes_the_property_is_compared_exactly(write):
    query = f"{write} WITH 1 AS one UNWIND $rows AS r MATCH (n:S {{k: r.k}}) RETURN n"
    assert "[n.k][0] = r.k" in rewrite_for(query, {"rows": [], "map": {}}, CLEAN)[0]


def test_unindexed_properties_are_left_alone():
    query = "MATCH (n:T {k: ''}) WHERE n.name = $v MERGE (m:T {k: ''}) RETURN n"
    assert rewrite_for(query, {"v": ""}, SCHEMA) == (query, {}, [])


@pytest.mark.parametrize("query, params", [("MERGE (n:S {k: $v})", {"v": ""}), ("CREATE (:U {k: ' x'})", {}),
                                           ("CREATE (n:U $p)", {"p": {"k": "x\n"}})])
def test_what_cannot_be_written_faithfully_is_refused_before_it_runs(query, params):
    with pytest.raises(CypherError, match="trims strings"):
        rewrite_for(query, params, SCHEMA)
