"""Binding forms against the real embedded database, on random graphs and argument values.

A test extension `val(n, x, y)` answers `"<node id>:<x!r>:<y!r>"`, so every value a query
reads can be checked against the row it was read for. Three query shapes cover the forms of
`extensions/planner/bind.py`: arguments independent of the node (a separated probe, bound as a grid),
arguments read from the node's own list (the combined probe: sparse maps, or a grid when
dense), a second call whose probe reads the first call's values (the sparse rewrite reaches
probes too), and a call without a node (nested maps). Each shape is also run the way the
planner bound values before grids (per-node maps keyed `coalesce('s' + toString(x), 'n')`,
`old_form` below), which must read the same rows.

Argument values are drawn so that FalkorDB's `toString` tells them apart (its floats have six
decimals, and `1` and `'1'` share a text): keys are the database's own text of a value.
"""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extensions.planner.planner import ExtensionPlanner
from extensions.registry import ArgKind, Extension, NodeRef, Registry
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_planner_support import RecordingRunner, rows

AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}


def _val(rows_):
    return [f"{n.id if isinstance(n, NodeRef) else n!r}:{x!r}:{y!r}" for n, x, y in rows_]


REGISTRY = Registry([Extension("val", (ArgKind.NODE_OR_VALUE, ArgKind.VALUE, ArgKind.VALUE), 3, _val)])

values = st.one_of(st.integers(-4, 4), st.sampled_from([0.25, -1.5, 2.75]), st.text(alphabet="ab é", max_size=3),
                   st.booleans())
nullable = st.none() | values


@pytest.fixture(scope="module")
async def database(embedded):
    return RecordingRunner(embedded, await embedded.authenticate(AUTH))


async def _graph(db, node_lists: list[list]) -> None:
    await (await db.run("MATCH (n) DELETE n", {})).consume()
    await (await db.run("UNWIND $lists AS xs CREATE (:T {xs: xs})", {"lists": node_lists})).consume()


async def _answer(db, query: str, params: dict) -> Counter:
    result = await ExtensionPlanner(REGISTRY, dialect=FALKORDB).execute(query, params, db)
    return Counter(tuple(_freeze(v) for v in row) for row in await rows(result))


def _freeze(value):
    return tuple(value) if isinstance(value, list) else value


async def old_form(db, probe: str, lookup: str, query: str, params: dict, node_col: bool) -> Counter:
    """`query` with `$old` bound as before grids: per node id a map of `coalesce('s' + toString(k), 'n')`
    keys (`probe` returns node id or null, key x, key y, x, y), read by `lookup`."""
    found = await rows(await db.run(probe, params))
    by_id: dict = {}
    for node_id, kx, ky, x, y in found:
        by_id.setdefault(node_id, {}).setdefault(kx, {})[ky] = _val([(node_id if node_col else x, x, y)])[0]
    if node_col:
        base = min(by_id, default=0)
        window = [by_id.get(i) for i in range(base, max(by_id, default=-1) + 1)]
        params = {**params, "old": window, "old_base": base}
    else:
        params = {**params, "old": by_id.get(None, {})}
    result = await db.run(query.replace("val(n, x, y)", lookup).replace("val(x, x, y)", lookup), params)
    return Counter(tuple(_freeze(v) for v in row) for row in await rows(result))


def _expected(answer: Counter, node_col: bool) -> None:
    for row in answer:
        node, x, y, v = row[:4]
        assert v == f"{node if node_col else repr(x)}:{x!r}:{y!r}", row


OLD_KEY = "coalesce('s' + toString({}), 'n')"
OLD_INDEXED = "(CASE WHEN id(n) >= $old_base THEN $old[id(n) - $old_base] END)"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(values, max_size=4), min_size=1, max_size=8),
       st.lists(nullable, min_size=1, max_size=5, unique_by=repr), st.lists(nullable, min_size=1, max_size=3, unique_by=repr))
async def test_independent_arguments_read_through_the_grid(database, node_lists, xs, ys):
    await _graph(database, node_lists)
    params = {"xs": xs, "ys": ys}
    query = "MATCH (n:T) UNWIND $xs AS x UNWIND $ys AS y RETURN id(n) AS id, x, y, val(n, x, y) AS v"
    answer = await _answer(database, query, params)
    assert sum(answer.values()) == len(node_lists) * len(xs) * len(ys)
    _expected(answer, node_col=True)
    probe = (f"MATCH (n:T) UNWIND $xs AS x UNWIND $ys AS y "
             f"RETURN DISTINCT id(n), {OLD_KEY.format('x')}, {OLD_KEY.format('y')}, x, y")
    old = await old_form(database, probe, OLD_INDEXED + f"[{OLD_KEY.format('x')}][{OLD_KEY.format('y')}]",
                         query, params, node_col=True)
    assert answer == old


def _own(node_lists: list[list]) -> list[list]:
    """Each node's values made its own: a sparse grid once there are more than a few nodes."""
    return [[f"{i}/{v!r}" for v in values_] for i, values_ in enumerate(node_lists)]


#: An argument that reads the node itself: planned with the combined probe (no separated one).
FROM_NODE = "MATCH (n:T) UNWIND range(0, size(n.xs) - 1) AS i WITH n, i, n.xs[i] AS x, $y AS y "


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(values, max_size=6), min_size=1, max_size=10), nullable, st.booleans())
async def test_arguments_read_from_the_node_read_through_maps_or_a_grid(database, node_lists, y, own):
    node_lists = _own(node_lists) if own else node_lists
    await _graph(database, node_lists)
    params = {"y": y}
    query = FROM_NODE + "RETURN id(n) AS id, x, y, val(n, n.xs[i], y) AS v"
    answer = await _answer(database, query, params)
    assert sum(answer.values()) == sum(map(len, node_lists))
    _expected(answer, node_col=True)
    probe = FROM_NODE + f"RETURN DISTINCT id(n), {OLD_KEY.format('n.xs[i]')}, {OLD_KEY.format('y')}, x, y"
    old = await old_form(database, probe, OLD_INDEXED + f"[{OLD_KEY.format('n.xs[i]')}][{OLD_KEY.format('y')}]",
                         query.replace("n.xs[i], y)", "x, y)"), params, node_col=True)
    assert answer == old


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.lists(values, min_size=1, max_size=5), min_size=5, max_size=10))
async def test_a_call_reading_a_sparse_call_sees_its_values(database, node_lists):
    """Each node its own values: the first call is bound sparse, and the second call's probes,
    which read the first call's values, are rewritten to read them too."""
    await _graph(database, _own(node_lists))
    query = FROM_NODE + "WITH n, x, val(n, n.xs[i], 1) AS a RETURN id(n) AS id, x, a, val(n, a, 2) AS b"
    answer = await _answer(database, query, {"y": None})
    assert sum(answer.values()) == sum(map(len, node_lists))
    for node, x, a, b in answer:
        assert (a, b) == (f"{node}:{x!r}:1", f"{node}:{a!r}:2")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(nullable, min_size=1, max_size=6, unique_by=repr), nullable)
async def test_calls_without_a_node_read_nested_maps(database, xs, y):
    params = {"xs": xs, "y": y}
    query = "UNWIND $xs AS x WITH x, $y AS y RETURN x AS id, x, y, val(x, x, y) AS v"
    answer = await _answer(database, query, params)
    assert sum(answer.values()) == len(xs)
    _expected(answer, node_col=False)
    probe = (f"UNWIND $xs AS x WITH x, $y AS y "
             f"RETURN DISTINCT null, {OLD_KEY.format('x')}, {OLD_KEY.format('y')}, x, y")
    old = await old_form(database, probe, f"$old[{OLD_KEY.format('x')}][{OLD_KEY.format('y')}]", query, params,
                         node_col=False)
    assert answer == old
