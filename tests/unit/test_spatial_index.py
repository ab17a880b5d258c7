"""Spatial index answers (extensions/spatial/index.py) against brute force over every pair, and
the geometry store's cache (extensions/spatial/store.py)."""

from __future__ import annotations

import numpy as np
import pytest
import shapely
from hypothesis import given, settings
from hypothesis import strategies as st
from neo4j.spatial import WGS84Point
from pyproj import Geod

from extensions.registry import GraphContext, NodeRef
from extensions.spatial.index import _nearest, _Nodes, _predicate, _within
from extensions.spatial.store import NODE, GeometryStore, Layer, SpatialConfig, geometry_expr, lookup
from core.errors import CypherError

WGS84 = Geod(ellps="WGS84")


def _points(lon, lat, first_id=0) -> _Nodes:
    geoms = shapely.points(np.asarray(lon, float), np.asarray(lat, float))
    return _Nodes(np.arange(first_id, first_id + len(geoms), dtype=np.int64), geoms)


def _all_distances(a: _Nodes, b: _Nodes) -> np.ndarray:
    ax, ay = shapely.get_x(a.geoms), shapely.get_y(a.geoms)
    bx, by = shapely.get_x(b.geoms), shapely.get_y(b.geoms)
    n, m = len(ax), len(bx)
    return np.asarray(WGS84.inv(np.repeat(ax, m), np.repeat(ay, m), np.tile(bx, n), np.tile(by, n))[2]).reshape(n, m)


def _pairs(result) -> set:
    return set(zip(result[0].tolist(), result[1].tolist()))


cloud = st.tuples(st.floats(-179.9, 179.9), st.floats(-85.0, 85.0), st.floats(0.001, 20.0), st.integers(0, 2**32 - 1))


def _cloud(centre_lon, centre_lat, spread, seed, n, first_id=0) -> _Nodes:
    rng = np.random.default_rng(seed)
    lon = (centre_lon + rng.uniform(-spread, spread, n) + 180) % 360 - 180
    lat = np.clip(centre_lat + rng.uniform(-spread, spread, n) / 2, -89.9, 89.9)
    return _points(lon, lat, first_id)


@settings(max_examples=60, deadline=None)
@given(where=cloud, n_a=st.integers(1, 12), n_b=st.integers(1, 150), k=st.integers(1, 12))
def test_nearest_keeps_exactly_the_k_nearest_with_ties(where, n_a, n_b, k):
    a, b = _cloud(*where, n_a), _cloud(*where[:2], where[2] * 3, where[3] + 1, n_b, first_id=1000)
    got = _pairs(_nearest(a, b, k))
    if n_b < k:
        assert got == set()                  # the caller keeps every pair then
        return
    d = _all_distances(a, b)
    kth = np.sort(d, axis=1)[:, k - 1]
    expected = {(int(a.ids[i]), int(b.ids[j])) for i in range(n_a) for j in range(n_b) if d[i, j] <= kth[i]}
    assert got == expected


def test_nearest_counts_ties_at_the_kth_distance():
    a = _points([5.0], [60.0])
    b = _points([5.1, 4.9, 5.0, 5.0, 7.0], [60.0, 60.0, 60.2, 59.8, 60.0], first_id=10)   # two equal pairs
    north, south = WGS84.inv([5.0, 5.0], [60.0, 60.0], [5.0, 5.0], [60.2, 59.8])[2]
    assert north != south
    assert _pairs(_nearest(a, b, 1)) == {(0, 10), (0, 11)}
    assert _pairs(_nearest(a, b, 3)) == {(0, 10), (0, 11), (0, 12 if north < south else 13)}


@settings(max_examples=60, deadline=None)
@given(where=cloud, n_a=st.integers(1, 30), n_b=st.integers(1, 80), fraction=st.floats(0.0, 1.5),
       inclusive=st.booleans(), cached_left=st.booleans())
def test_within_keeps_exactly_the_pairs_closer_than_r(where, n_a, n_b, fraction, inclusive, cached_left):
    a, b = _cloud(*where, n_a), _cloud(*where[:2], where[2], where[3] + 7, n_b, first_id=500)
    d = _all_distances(a, b)
    r = float(np.quantile(d, min(fraction, 1.0))) * (fraction if fraction > 1 else 1.0)
    if cached_left:                           # query from the other side's tree
        a.layer = Layer("A", a.ids, a.geoms, {})
    close = d <= r if inclusive else d < r
    expected = {(int(a.ids[i]), int(b.ids[j])) for i, j in zip(*np.nonzero(close))}
    assert _pairs(_within(a, b, r, inclusive)) == expected


@pytest.mark.parametrize("name", ["contains", "intersects"])
@pytest.mark.parametrize("tree_left", [False, True])
def test_predicate_pairs_match_shapely_on_every_pair(name, tree_left):
    rng = np.random.default_rng(3)
    centres = rng.uniform(0, 10, (40, 2))
    polygons = shapely.buffer(shapely.points(centres), rng.uniform(0.1, 1.5, 40))
    shapes = _Nodes(np.arange(40, dtype=np.int64), polygons)
    things = np.concatenate([shapely.points(rng.uniform(0, 10, (300, 2))),
                             shapely.buffer(shapely.points(rng.uniform(0, 10, (30, 2))), 0.2)])
    other = _Nodes(np.arange(100, 100 + len(things), dtype=np.int64), things)
    if tree_left:
        shapes.layer = Layer("S", shapes.ids, shapes.geoms, {})
    test = getattr(shapely, name)
    expected = {(i, 100 + j) for i in range(40) for j in range(len(things)) if test(polygons[i], things[j])}
    assert _pairs(_predicate(name, shapes, other)) == expected
    assert expected                            # the data has matches


# ---------------------------------------------------------------- the store

class _Graph:
    """A stand-in for the graph as the store sees it: counts reads, answers with fixed rows."""

    def __init__(self, rows):
        self.rows, self.queries = rows, []

    def context(self, state) -> GraphContext:
        return GraphContext("neo4j", state, self.read)

    async def read(self, query, params):
        self.queries.append(query)
        return self.rows


async def test_layers_are_cached_per_graph_state_and_never_inside_a_writing_transaction():
    graph = _Graph([[3, WGS84Point((5.0, 60.0))], [1, "POINT (6 61)"], [2, "POLYGON ((0 0"]])
    store = GeometryStore()
    first = await store.layer(graph.context(1), "Site", NODE)
    assert await store.layer(graph.context(1), "Site", NODE) is first and len(graph.queries) == 1
    assert await store.layer(graph.context(2), "Site", NODE) is not first and len(graph.queries) == 2
    await store.layer(graph.context(None), "Site", NODE)
    await store.layer(graph.context(None), "Site", NODE)
    assert len(graph.queries) == 4
    assert first.ids.tolist() == [1, 3] and first.errors.keys() == {2}
    assert graph.queries[0].startswith("MATCH (n:Site) WITH n, coalesce(n.location, n.geometry, n.wkt, n.geojson")


async def test_lookup_gives_none_for_nodes_without_geometry_and_names_unreadable_ones():
    graph = _Graph([[3, WGS84Point((5.0, 60.0))], [2, "POLYGON ((0 0"]])
    store = GeometryStore()
    refs = [NodeRef(3, "3", ("Site",)), NodeRef(4, "4", ("Site",))]
    layers = await store.layers(graph.context(1), refs)
    assert [g.wkt if g else None for g in lookup(layers, refs)] == ["POINT (5 60)", None]
    with pytest.raises(CypherError, match="Node 2: Site: Invalid WKT 'POLYGON \\(\\(0 0'"):
        lookup(layers, [NodeRef(2, "2", ("Site",))])


def test_config_file_sets_sources_per_label(tmp_path):
    (tmp_path / "spatial.json").write_text('{"labels": {"Site": ["outline", ["y", "x"]]}}')
    config = SpatialConfig.load(tmp_path)
    assert config.sources("Site") == ("outline", ("y", "x"))
    assert config.sources("Other") == SpatialConfig().default
    assert geometry_expr("n", config.sources("Site")) == \
        "coalesce(n.outline, CASE WHEN n.y IS NOT NULL AND n.x IS NOT NULL THEN [n.x, n.y] END)"
    assert SpatialConfig.load(tmp_path / "missing") == SpatialConfig()
