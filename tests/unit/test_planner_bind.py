"""Binding forms (bind.py) and the plans' text per backend, without a database."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from extensions import bind
from extensions.planner import ExtensionPlanner
from proxy.demo import SEED_QUERY as SEED
from tests.unit.test_planner_support import registry


def _lookup(params, index, keys, param="__ext0"):
    """What the database does with `bind.lookup(...)`: null for anything absent."""
    value = params[param]
    if index is not None and bind.base_param(param) in params:     # FalkorDB id window
        index -= params[bind.base_param(param)]
        if index < 0:
            return None
    for step in ([index] if index is not None else []) + list(keys):
        if value is None:
            return None
        if isinstance(value, list):
            value = value[step] if 0 <= step < len(value) else None
        else:
            value = value.get(step)
    return value


entries_strategy = st.dictionaries(
    st.tuples(st.integers(0, 300), st.tuples(st.text(max_size=3), st.text(max_size=3))),
    st.floats(allow_nan=False) | st.none(), max_size=40)


@given(entries_strategy, st.sampled_from(["falkordb", "neo4j"]))
def test_every_bound_value_reads_back(entries, kind):
    def index_of(i):
        return i if kind == "falkordb" else str(i)
    value = bind.build(kind, "__ext0", True, [(index_of(i), keys, v) for (i, keys), v in entries.items()])
    for (i, keys), v in entries.items():
        assert _lookup(value, index_of(i), keys) == v
    assert _lookup(value, index_of(301), ("a", "b")) is None
    if kind == "falkordb" and entries:      # the window spans only the ids computed
        ids = [i for i, _ in entries]
        assert value["__ext0_base"] == min(ids) and len(value["__ext0"]) == max(ids) - min(ids) + 1
        assert _lookup(value, min(ids) - 1, ()) is None


@given(st.dictionaries(st.tuples(st.text(max_size=4)), st.integers(), min_size=1, max_size=20))
def test_unindexed_calls_bind_a_map_of_keys(entries):
    value = bind.build("falkordb", "__ext0", False, [(None, keys, v) for keys, v in entries.items()])
    for keys, v in entries.items():
        assert _lookup(value, None, keys) == v


def test_constant_call_binds_a_scalar():
    assert bind.build("falkordb", "__ext0", False, [(None, (), 42.0)]) == {"__ext0": 42.0}
    assert bind.lookup("falkordb", "__ext0", None, []) == "$__ext0"


def test_key_expressions_distinguish_null_from_strings():
    assert bind.key_expr("neo4j", "y", False) == "coalesce('s' + toString(y), 'n')"
    assert bind.key_expr("neo4j", "n", True) == "elementId(n)"
    assert bind.key_expr("falkordb", "n", True) == "toString(id(n))"


def test_neo4j_plan_uses_element_id_maps_and_no_bridges():
    plan = ExtensionPlanner(registry(), backend_kind="neo4j").plan(SEED)
    assert "$__ext0[elementId(p)][coalesce('s' + toString(y), 'n')]" in plan.body
    assert "stDev(ratio)" in plan.body
    assert "elementId(p) AS" in plan.steps[0].text
    assert plan.placeholders == {"__ext0": {}, "__ext1": {}}


def test_falkordb_plan_uses_lists_indexed_by_id():
    plan = ExtensionPlanner(registry(), backend_kind="falkordb").plan(SEED)
    assert ("(CASE WHEN id(p) >= $__ext1_base THEN $__ext1[id(p) - $__ext1_base] END)"
            "[coalesce('s' + toString(y + '-6'), 'n')][coalesce('s' + toString(y + '-8'), 'n')]") in plan.body
    assert plan.placeholders == {"__ext0": [], "__ext0_base": 0, "__ext1": [], "__ext1_base": 0}
    assert len(plan.steps) == 1 and plan.steps[0].text.endswith("__c8")


def test_algorithm_rewrite_is_a_scan_not_an_unwind_join():
    plan = ExtensionPlanner(registry(), backend_kind="falkordb").plan(
        "MATCH (f:Field) CALL test_degree({}) YIELD node AS n, score RETURN f, n, score")
    assert ("MATCH (n) WITH f, n, (CASE WHEN id(n) >= $__alg0_base THEN $__alg0[id(n) - $__alg0_base] END)"
            " AS __r0 WHERE __r0 IS NOT NULL WITH f, n, __r0 AS score") in plan.body
    assert "UNWIND" not in plan.body
