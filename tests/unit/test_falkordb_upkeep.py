"""What the proxy reads off a write to keep FalkorDB's bookkeeping straight (falkordb/upkeep.py):
the names a write may add (never fewer than it adds), and the label-matrix touch."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from proxy.backends.falkordb.upkeep import (
    MAX_SCANNED_CHARS, MAX_SCANNED_ITEMS, sweep_query, touch_query, written_names,
)

NAMES = st.text(st.characters(exclude_characters="`", exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)


@pytest.mark.parametrize("query, params, added", [
    ("CREATE (n:Person {name: row.name})-[:KNOWS|LIKES]->(m:`Odd one`)", {},
     {"Person", "name", "KNOWS", "LIKES", "Odd one"}),
    ("MATCH (n) SET n.ghost = null, n:Extra REMOVE n.gone", {}, {"ghost", "Extra", "gone"}),
    ("MATCH (a:A) MERGE (a)-[r:T {numbers: [42, 43]}]->(b)", {}, {"A", "T", "numbers"}),
    ("UNWIND $rows AS r CREATE (n) SET n = r", {"rows": [{"k1": 1}, {"k2": {"inner": 2}}]}, {"k1", "k2", "inner"}),
    ("CALL db.idx.fulltext.createNodeIndex('Doc', 'body')", {}, {"Doc", "body"}),
    ("CREATE (n) // :NotThis\nSET n.`with space` = 1 /* :NorThis */", {}, {"with space"}),
    ("CREATE (n {key /* a comment */ : 1, `quoted key`: $v})", {"v": 2}, {"key", "quoted key"}),
])
def test_the_names_a_write_may_add_are_found(query, params, added):
    assert added <= written_names(query, params)


@pytest.mark.parametrize("query, not_names", [
    ("CREATE (n:Person {name: row.name, age: $age})", {"n", "row"}),          # variables
    ("WITH [x IN [1, 2] | x * 2] AS l CREATE (m {v: 1.5e3})", {"x", "l", "m", "e3"}),
    ("CREATE (n {s: 'n.looks_like_a_key'})", {"looks_like_a_key", "n"}),       # strings, outside CALL
])
def test_variables_and_values_are_not_names(query, not_names):
    assert not (written_names(query, {}) & not_names)


def test_what_cannot_be_scanned_is_unknown():
    assert written_names("LOAD CSV WITH HEADERS FROM 'file:///x.csv' AS row CREATE (n) SET n = row", {}) is None
    assert written_names("CREATE (n {a: 1})" + " " * MAX_SCANNED_CHARS, {}) is None
    assert written_names("CREATE (n $p)", {"p": {f"k{i}": i for i in range(MAX_SCANNED_ITEMS + 1)}}) is None


@given(label=NAMES, key=NAMES, other=NAMES, param_key=NAMES)
def test_every_written_name_is_found_whatever_it_is_called(label, key, other, param_key):
    query = f"MERGE (n:`{label}` {{`{key}`: 1}}) SET n.`{other}` = $p.x, n += $m"
    assert {label, key, other, param_key} <= written_names(query, {"m": {param_key: 1}, "p": {"x": 2}})


def test_the_touch_carries_every_label_and_the_constrained_keys():
    query = touch_query(["A", "Odd one", "no`way"], ["id", "name"], ["other"])
    assert re.fullmatch(r"CREATE \(t:`A`:`Odd one` \{`id`: '(cypher-proxy:\w+)', `name`: '\1'\}\) DELETE t", query)
    assert re.fullmatch(r"CREATE \(t:`A` \{`k`: 'cypher-proxy:\w+'\}\) DELETE t", touch_query(["A"], [], ["k", "j"]))
    assert touch_query(["A"], [], []) == "CREATE (t:`A`) DELETE t"
    assert touch_query([], ["id"], ["id"]) is None


def test_the_sweep_matches_only_nodes_whose_every_property_is_a_touch_mark():
    query = sweep_query(["A", "B", "no`way"])
    assert query.startswith("MATCH (t:`A`:`B`) ") and "size(values) > 0" in query and "'cypher-proxy:'" in query
    assert sweep_query(["no`way"]) is None
