"""Algorithm rows a query needs (extensions/planner/reduce.py): which queries are reduced, and that the
rows kept give the database the same answer as every row, whatever order it puts ties in; and
which WITH/RETURN projections of a per-node extension call are cut (`plan_projection`)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from extensions.planner import reduce
from extensions.cypher import ast as A
from extensions.planner.planner import ExtensionPlanner
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_planner_support import registry

CALL = "CALL test_degree({label: 'X'}) YIELD node, score "


def reduction(query: str) -> reduce.Reduction | None:
    [step] = ExtensionPlanner(registry(), dialect=FALKORDB).plan(query).steps
    return step.reduction


@pytest.mark.parametrize("tail, top, bounds", [
    ("RETURN node, score ORDER BY score DESC LIMIT 10", (True, None, 10), 0),
    ("RETURN node.id AS id, score AS s ORDER BY s LIMIT $k", (False, None, "k"), 0),
    ("WITH node, score ORDER BY score DESC, node.id SKIP 5 LIMIT 3 RETURN node", (True, 5, 3), 0),
    ("WHERE score > 0.5 AND $min <= score RETURN node ORDER BY score DESC LIMIT 1", (True, None, 1), 2),
    ("WHERE score >= 2 RETURN node", None, 1),
    ("WHERE score >= 2 AND node.x = 1 RETURN node ORDER BY score DESC LIMIT 1", None, 1),   # unknown filter
    ("RETURN node ORDER BY node.id, score DESC LIMIT 10", None, None),       # another key first
    ("RETURN DISTINCT score ORDER BY score DESC LIMIT 10", None, None),
    ("RETURN count(node) AS score ORDER BY score DESC LIMIT 10", None, None),
    ("RETURN node.id AS score ORDER BY score DESC LIMIT 10", None, None),    # a column named score
    ("MATCH (node)-->(m) RETURN m ORDER BY score DESC LIMIT 10", None, None),
    ("RETURN node ORDER BY score DESC LIMIT 2 + 1", None, None),
    ("RETURN node, score", None, None),
])
def test_which_queries_are_reduced(tail, top, bounds):
    found = reduction(CALL + tail)
    if top is None and bounds is None:
        assert found is None
        return
    assert len(found.bounds) == bounds
    if top is None:
        assert found.top is None
        return
    descending, skip, limit = top
    assert found.top.descending == descending
    assert (found.top.skip.value if found.top.skip else None) == skip
    limit_expr = found.top.limit
    assert (limit_expr.name if isinstance(limit_expr, A.Parameter) else limit_expr.value) == limit


def database(values: np.ndarray, ties: np.ndarray, rows: np.ndarray, threshold, descending: bool,
             skip: int, limit: int, nulls_first: bool) -> list[int]:
    """What `WHERE score > threshold ... ORDER BY score [DESC] SKIP skip LIMIT limit` returns of
    `rows`, ties broken by the database's own order (`ties`), NaN standing for null (no
    threshold holds for it; first or last as the database orders nulls)."""
    rows = [r for r in rows if threshold is None or values[r] > threshold]
    null_rank = 0 if nulls_first else 1
    rows.sort(key=lambda r: ((null_rank, 0) if np.isnan(values[r]) else
                             (1 - null_rank, -values[r] if descending else values[r]), ties[r]))
    return rows[skip:skip + limit]


@given(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 3.5, np.nan]), min_size=0, max_size=60),
       st.integers(0, 70), st.integers(0, 5), st.booleans(), st.sampled_from([None, 0.25, 1.0]),
       st.randoms(use_true_random=False))
def test_kept_rows_give_the_same_answer_as_all(values, limit, skip, descending, threshold, rng):
    tail = (f"{'WHERE score > $t ' if threshold is not None else ''}RETURN node, score "
            f"ORDER BY score {'DESC' if descending else ''} SKIP $s LIMIT $l")
    found = reduction(CALL + tail)
    array = np.array(values, dtype=float)
    params = {"t": threshold, "s": skip, "l": limit}
    keep = found.keep(array, params)
    kept = np.arange(len(array)) if keep is None else np.flatnonzero(keep)
    ties = np.array([rng.random() for _ in values])
    cuts = []                                                   # per null order: the last number returned
    for nulls_first in (descending, not descending):           # Neo4j's order, and the other one
        everything = database(array, ties, np.arange(len(array)), threshold, descending, skip, limit, nulls_first)
        assert database(array, ties, kept, threshold, descending, skip, limit, nulls_first) == everything
        numbers = [r for r in everything if not np.isnan(array[r])]
        if numbers and len(numbers) == len(everything):
            cuts.append(array[numbers[-1]])
    # nothing kept that no tie or null order could return, but nulls
    if keep is not None and len(cuts) == 2:
        kept_numbers = array[kept][~np.isnan(array[kept])]
        assert all((kept_numbers >= min(cuts)) if descending else (kept_numbers <= max(cuts)))


def test_limits_of_other_types_and_missing_parameters_keep_everything():
    found = reduction(CALL + "RETURN node ORDER BY score DESC LIMIT $l")
    values = np.array([1.0, 2.0, 3.0])
    assert found.keep(values, {"l": 1}).tolist() == [False, False, True]
    assert found.keep(np.array([1.0, np.nan, 3.0]), {"l": 1}).tolist() == [False, True, True]   # null: kept
    assert found.keep(values, {"l": -1}) is None
    assert found.keep(values, {"l": 1.5}) is None
    assert found.keep(values, {"l": True}) is None
    assert found.keep(values, {}) is None
    assert found.keep(values, {"l": 0}).tolist() == [False, False, False]


def projection_cut(query: str) -> reduce.Reduction | None:
    plan = ExtensionPlanner(registry(), dialect=FALKORDB).plan(query)
    [site] = [site for step in plan.steps for site in getattr(step, "sites", ())]
    assert (site.reduction is not None) == bool(site.marker) and (not site.marker or site.marker in plan.body)
    return site.reduction


@pytest.mark.parametrize("tail, top, bounds", [
    ("RETURN n, tag(n) AS s ORDER BY s DESC LIMIT 10", (True, None, 10), 0),
    ("WITH n, tag(n) AS s ORDER BY s, n.id SKIP $s LIMIT 3 RETURN n", (False, "s", 3), 0),
    ("WITH n, tag(n) AS s WHERE s > 0.5 AND n.x = 1 AND $m <= s RETURN n", None, 2),
    ("WITH n, tag(n) AS s ORDER BY s DESC WHERE s > 0.5 RETURN n", None, 1),          # ordering cuts no row
    ("WITH n, tag(n) AS s ORDER BY s DESC LIMIT 3 WHERE s > 0.5 RETURN n", None, None),  # LIMIT before WHERE
    ("WITH n, tag(n) AS s WHERE s > 0.5 OR n.x = 1 RETURN n", None, None),
    ("RETURN n, tag(n) AS s ORDER BY n.id, s DESC LIMIT 10", None, None),             # another key first
    ("RETURN DISTINCT tag(n) AS s ORDER BY s DESC LIMIT 10", None, None),
    ("RETURN n.x AS x, tag(n) AS s, count(*) AS c ORDER BY s DESC LIMIT 10", None, None),
    ("RETURN n, tag(n) + 1 AS s ORDER BY s DESC LIMIT 10", None, None),               # not the whole item
    ("RETURN n, tag(n) AS s ORDER BY s DESC LIMIT 2 + 1", None, None),
    ("RETURN n, tag(n) AS s ORDER BY s DESC", None, None),
])
def test_which_projections_are_cut(tail, top, bounds):
    found = projection_cut("MATCH (n:X) " + tail)
    if top is None and bounds is None:
        assert found is None
        return
    assert len(found.bounds) == bounds
    if top is None:
        assert found.top is None
    else:
        descending, skip, limit = top
        assert found.top.descending is descending
        assert (None if found.top.skip is None else getattr(found.top.skip, "name", None)) == skip
        assert getattr(found.top.limit, "value", None) == limit
