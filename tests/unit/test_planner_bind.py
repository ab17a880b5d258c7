"""Binding forms (bind.py) and the plans' text per backend, without a database."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from extensions.planner import bind
from extensions.planner.planner import ExtensionPlanner
from proxy.demo import SEED_QUERY as SEED
from core.dialect import Dialect
from proxy.backends.falkordb.dialect import FALKORDB
from proxy.backends.neo4j.dialect import NEO4J
from tests.unit.test_planner_support import registry


def read(lookup: bind.Lookup, params: dict, index, keys) -> object:
    """What the database does with `lookup.text` (`lookup.sparse` when bound sparse) for a row
    whose index and key expressions are `index` and `keys` (None: null): null for anything absent."""
    def at(container, step):
        if isinstance(container, list):
            return container[step] if isinstance(step, int) and 0 <= step < len(container) else None
        return container.get(step) if isinstance(container, dict) else None

    p = lookup.param
    keys = [params[bind.null_param(p)] if key is None else key for key in keys]
    value = params[p]
    if index is not None:
        if lookup.dialect.integer_ids:
            index -= params[bind.base_param(p)]
            if index < 0:
                return None
        value = at(value, index)
    if lookup.grid and not lookup.is_sparse(params):
        column = params[bind.columns_param(p)]
        for key in keys:
            column = at(column, key)
        return at(value, column)
    for key in keys:
        value = at(value, key)
    return value


def lookup(dialect: Dialect, indexed: bool = True, n_keys: int = 2) -> bind.Lookup:
    return bind.Lookup(dialect, "__ext0", dialect.node_index("n") if indexed else None,
                       tuple(f"toString(k{i})" for i in range(n_keys)))


keys_strategy = st.tuples(st.none() | st.text(max_size=3), st.none() | st.text(max_size=3))
entries_strategy = st.dictionaries(st.tuples(st.integers(0, 300), keys_strategy),
                                   st.floats(allow_nan=False) | st.none(), max_size=40)


@given(entries_strategy, st.sampled_from([FALKORDB, NEO4J]))
def test_every_bound_value_reads_back(entries, dialect):
    def index_of(i):
        return i if dialect.integer_ids else str(i)
    call = lookup(dialect)
    value = call.bind([(index_of(i), keys, v) for (i, keys), v in entries.items()])
    for (i, keys), v in entries.items():
        assert read(call, value, index_of(i), keys) == v
    assert read(call, value, index_of(301), ("a", "b")) is None
    assert read(call, value, index_of(0), ("a\x00", None)) is None
    if dialect.integer_ids and entries:      # the window spans only the ids computed
        ids = [i for i, _ in entries]
        assert value["__ext0_base"] == min(ids) and len(value["__ext0"]) == max(ids) - min(ids) + 1
        assert read(call, value, min(ids) - 1, next(iter(entries))[1]) is None


@given(st.lists(st.integers(0, 300), unique=True, max_size=30), st.lists(keys_strategy, unique=True, max_size=6),
       st.sampled_from([FALKORDB, NEO4J]), st.data())
def test_a_grid_reads_back_like_its_entries(nodes, key_tuples, dialect, data):
    """Every node with every key tuple (a separated probe's product): bound as a grid, it reads
    what the same entries bound one by one read."""
    rows = [data.draw(st.lists(st.floats(allow_nan=False) | st.none(), min_size=len(key_tuples),
                               max_size=len(key_tuples))) for _ in nodes]
    call = lookup(dialect)
    grid = call.bind_grid(nodes, key_tuples, rows)
    entries = call.bind([(n, k, row[j]) for n, row in zip(nodes, rows) for j, k in enumerate(key_tuples)])
    assert not call.is_sparse(grid)
    for n in nodes + [301]:
        for keys in key_tuples + [("zz", None)]:
            assert read(call, grid, n, keys) == read(call, entries, n, keys)


def test_entries_filling_little_of_their_grid_bind_sparse():
    call = lookup(FALKORDB, n_keys=1)
    entries = [(i, (str(1000 + i),), float(i)) for i in range(50)]      # each node its own key
    params = call.bind(entries)
    assert call.is_sparse(params) and params["__ext0_cols"] is None
    assert bind.sparse_edits([call], params) == [(call.text, call.sparse)]
    assert call.sparse == ("(CASE WHEN id(n) >= $__ext0_base THEN $__ext0[id(n) - $__ext0_base] END)"
                           "[coalesce(toString(k0), $__ext0_null)]")
    for i, keys, v in entries:
        assert read(call, params, i, keys) == v
    dense = call.bind([(i, (k,), 1.0) for i in range(10) for k in ("a", "b")])
    assert not call.is_sparse(dense) and bind.sparse_edits([call], dense) == []


@given(st.dictionaries(st.tuples(st.none() | st.text(max_size=4)), st.integers(), min_size=1, max_size=20))
def test_unindexed_calls_bind_a_map_of_keys(entries):
    call = lookup(FALKORDB, indexed=False, n_keys=1)
    value = call.bind([(None, keys, v) for keys, v in entries.items()])
    for keys, v in entries.items():
        assert read(call, value, None, keys) == v


def test_null_key_is_no_key_of_a_value():
    call = lookup(FALKORDB, n_keys=1)
    params = call.bind([(1, ("null",), 1.0), (1, ("null1",), 2.0), (1, (None,), 3.0)])
    assert params["__ext0_null"] == "null2"
    assert [read(call, params, 1, k) for k in (("null",), ("null1",), (None,))] == [1.0, 2.0, 3.0]


def test_constant_call_binds_a_scalar():
    call = lookup(FALKORDB, indexed=False, n_keys=0)
    assert call.bind([(None, (), 42.0)]) == {"__ext0": 42.0}
    assert call.text == "$__ext0"


def test_key_expressions_are_the_database_text_of_the_value():
    assert bind.key_expr(NEO4J, "y", False) == "toString(y)"
    assert bind.key_expr(NEO4J, "n", True) == "elementId(n)"
    assert bind.key_expr(FALKORDB, "n", True) == "toString(id(n))"


def test_neo4j_plan_uses_element_id_maps_and_no_bridges():
    plan = ExtensionPlanner(registry(), dialect=NEO4J).plan(SEED)
    assert "$__ext0[elementId(p)][coalesce(toString(y), $__ext0_null)]" in plan.body
    assert "stDev(ratio)" in plan.body
    assert "elementId(p) AS" in plan.steps[0].text
    assert plan.placeholders == {"__ext0": {}, "__ext0_null": "", "__ext1": {}, "__ext1_null": ""}


def test_falkordb_plan_reads_a_grid_indexed_by_id():
    plan = ExtensionPlanner(registry(), dialect=FALKORDB).plan(SEED)
    assert ("(CASE WHEN id(p) >= $__ext1_base THEN $__ext1[id(p) - $__ext1_base] END)"
            "[$__ext1_cols[coalesce(toString(y + '-6'), $__ext1_null)][coalesce(toString(y + '-8'), $__ext1_null)]]"
            ) in plan.body
    assert plan.placeholders == {f"__ext{i}{suffix}": value for i in (0, 1)
                                 for suffix, value in (("", []), ("_base", 0), ("_null", ""), ("_cols", {}))}
    assert len(plan.steps) == 1 and plan.steps[0].text.endswith("__c8")


def test_algorithm_rewrite_is_a_scan_not_an_unwind_join():
    plan = ExtensionPlanner(registry(), dialect=FALKORDB).plan(
        "MATCH (f:Field) CALL test_degree({}) YIELD node AS n, score RETURN f, n, score")
    assert ("MATCH (n) WITH f, n, (CASE WHEN id(n) >= $__alg0_base THEN $__alg0[id(n) - $__alg0_base] END)"
            " AS __r0 WHERE __r0 IS NOT NULL WITH f, n, __r0 AS score") in plan.body
    assert "UNWIND" not in plan.body
