"""Index answers for joins on the spatial functions (the planning is extensions/planner/joins.py's).

Each side of a join is a set of nodes: every node of a label (a cached store layer and its
STRtree) or the candidates a probe found (geometries looked up in the layers; an STRtree is
built for the query when that side is the one to index). Pairs are decided by the kernels the
functions use, so a join keeps exactly the pairs the function would accept:
- contains / intersects: `STRtree.query(geoms, predicate=...)`, from whichever side has the tree
  (contains seen from the other side is within);
- distance < r: candidate pairs whose search boxes meet, then exact geodesic distances;
- nearest k: per left node, a search box grown until it holds k right nodes bounds the k-th
  distance; one exact pass over the box of that radius keeps the k nearest, ties included.
  A left node without a geometry, or fewer than k right nodes with one, keeps every right node
  (their distances are null, which ORDER BY puts last but a LIMIT may still reach).
Joins over many nodes run in a worker thread.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from numbers import Real

import numpy as np
import shapely

from extensions.cypher.render import name as quote_name
from extensions.registry import GraphContext, JoinSide, PropertyRef
from core.errors import argument_error

from .geometry import distances, search_boxes
from .store import NODE, GeometryStore, Layer, lookup

_CONVERSE = {"contains": "within", "intersects": "intersects"}
_INLINE = 2_000                     # nodes on both sides above which pairs are computed in a thread
_GROWTH = 4.0                       # nearest: search radius factor per round
_EARTH = 4e7                        # metres: more than any geodesic distance on the ellipsoid


@dataclass(eq=False)
class _Nodes:
    """A join side: its nodes with a geometry, and the candidates without one."""

    ids: np.ndarray
    geoms: np.ndarray
    layer: Layer | None = None            # every node of a label: the layer's cached tree
    missing: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=np.int64))
    _tree: shapely.STRtree | None = None

    @property
    def cached_tree(self) -> bool:
        return self.layer is not None

    @property
    def tree(self) -> shapely.STRtree:
        if self.layer is not None:
            return self.layer.tree
        if self._tree is None:
            self._tree = shapely.STRtree(self.geoms)
        return self._tree


class SpatialJoins:
    """`IndexJoin.pairs` for contains/intersects (predicate) and distance (within, nearest)."""

    def __init__(self, store: GeometryStore):
        self.store = store

    async def predicate_pairs(self, name: str, graph: GraphContext, mode: str, left: JoinSide,
                              right: JoinSide, bound) -> list[tuple[int, int]]:
        a, b = await self._nodes(graph, left), await self._nodes(graph, right)
        return await _run(_predicate, name, a, b)

    async def distance_pairs(self, graph: GraphContext, mode: str, left: JoinSide, right: JoinSide,
                             bound) -> list[tuple[int, int]]:
        a, b = await self._nodes(graph, left), await self._nodes(graph, right)
        if mode == "within":
            metres, inclusive = bound
            if metres is None or (isinstance(metres, float) and metres != metres):
                return []
            if not isinstance(metres, Real) or isinstance(metres, bool):
                raise argument_error(f"distance(a, b) < r needs r in metres (a number), got {metres!r}")
            return await _run(_within, a, b, float(metres), inclusive)
        if len(b.ids) < bound or len(a.missing):
            everyone = await self._all_ids(graph, right, b)
            if len(b.ids) < bound:
                return [(x, y) for x in [*a.ids.tolist(), *a.missing.tolist()] for y in everyone]
            pairs = [(x, y) for x in a.missing.tolist() for y in everyone]
        else:
            pairs = []
        return pairs + await _run(_nearest, a, b, bound)

    async def _nodes(self, graph: GraphContext, side: JoinSide) -> _Nodes:
        if side.refs is None:
            layer = await self.store.layer(graph, side.label, side.key or NODE)
            layer.check(layer.errors)
            return _Nodes(layer.ids, layer.geoms, layer)
        refs = side.refs
        geoms = lookup(await self.store.layers(graph, refs), refs)
        ids = np.array([r.node.id if isinstance(r, PropertyRef) else r.id for r in refs], dtype=np.int64)
        present = ~shapely.is_missing(geoms)
        return _Nodes(ids[present], geoms[present], missing=ids[~present])

    async def _all_ids(self, graph: GraphContext, side: JoinSide, nodes: _Nodes) -> list[int]:
        """Every node of a side, with a geometry or not."""
        if side.refs is not None:
            return [*nodes.ids.tolist(), *nodes.missing.tolist()]
        rows = await graph.read(f"MATCH (n:{quote_name(side.label)}) RETURN id(n)", {})
        return [row[0] for row in rows]


async def _run(compute, *args) -> list[tuple[int, int]]:
    sides = [x for x in args if isinstance(x, _Nodes)]
    if sum(len(s.ids) for s in sides) > _INLINE:
        left, right = await asyncio.to_thread(compute, *args)
    else:
        left, right = compute(*args)
    return list(zip(left.tolist(), right.tolist()))


def _tree_on_right(a: _Nodes, b: _Nodes) -> bool:
    """Query the right side's tree (else the left's): a cached tree first, else the bigger side."""
    if a.cached_tree != b.cached_tree:
        return b.cached_tree
    return len(b.ids) >= len(a.ids)


def _predicate(name: str, a: _Nodes, b: _Nodes) -> tuple[np.ndarray, np.ndarray]:
    """(left ids, right ids) where name(left, right) holds."""
    if not len(a.ids) or not len(b.ids):
        return a.ids[:0], b.ids[:0]
    if _tree_on_right(a, b):
        ia, ib = b.tree.query(a.geoms, predicate=name)
    else:
        ib, ia = a.tree.query(b.geoms, predicate=_CONVERSE[name])
    return a.ids[ia], b.ids[ib]


def _within(a: _Nodes, b: _Nodes, metres: float, inclusive: bool) -> tuple[np.ndarray, np.ndarray]:
    """(left ids, right ids) at most (inclusive) or less than `metres` apart."""
    if not len(a.ids) or not len(b.ids) or metres < 0:
        return a.ids[:0], b.ids[:0]
    if _tree_on_right(a, b):
        ia, ib = b.tree.query(search_boxes(a.geoms, np.full(len(a.ids), metres)))
    else:
        ib, ia = a.tree.query(search_boxes(b.geoms, np.full(len(b.ids), metres)))
    d = distances(a.geoms[ia], b.geoms[ib])
    keep = d <= metres if inclusive else d < metres
    return a.ids[ia[keep]], b.ids[ib[keep]]


def _nearest(a: _Nodes, b: _Nodes, k: int) -> tuple[np.ndarray, np.ndarray]:
    """For each node of a, its k nearest nodes of b (ties at the k-th distance kept)."""
    if not k or not len(a.ids) or len(b.ids) < k:
        return a.ids[:0], b.ids[:0]
    radius = np.full(len(a.ids), _initial_radius(b, k))
    bound = np.empty(len(a.ids))
    pending = np.arange(len(a.ids))
    while pending.size:
        ia, ib = b.tree.query(search_boxes(a.geoms[pending], radius[pending]))
        enough = np.bincount(ia, minlength=len(pending)) >= k
        mine = enough[ia]
        if mine.any():
            d = distances(a.geoms[pending[ia[mine]]], b.geoms[ib[mine]])
            bound[pending[enough]] = _kth_smallest(ia[mine], d, k, len(pending))[enough]
        pending = pending[~enough]
        radius[pending] *= _GROWTH
        if pending.size and radius[pending].min() > _EARTH:   # boxes cover the world: all there is
            bound[pending] = np.inf
            break
    ia, ib = b.tree.query(search_boxes(a.geoms, bound))
    d = distances(a.geoms[ia], b.geoms[ib])
    keep = d <= _kth_smallest(ia, d, k, len(a.ids))[ia]
    return a.ids[ia[keep]], b.ids[ib[keep]]


def _kth_smallest(group: np.ndarray, values: np.ndarray, k: int, n_groups: int) -> np.ndarray:
    """The k-th smallest value per group (inf where a group has fewer than k values)."""
    order = np.lexsort((values, group))
    groups, ordered = group[order], values[order]
    rank = np.arange(len(groups)) - np.searchsorted(groups, groups, side="left")
    out = np.full(n_groups, np.inf)
    at_k = rank == k - 1
    out[groups[at_k]] = ordered[at_k]
    return out


def _initial_radius(b: _Nodes, k: int) -> float:
    """A first search radius (metres) expected to hold about 4k nodes of b if spread evenly."""
    west, south, east, north = shapely.total_bounds(b.geoms)
    width = (east - west) * 111_320 * np.cos(np.radians((south + north) / 2))
    area = max(width * (north - south) * 110_574, 1.0)
    return float(max(np.sqrt(4 * k * area / (np.pi * len(b.ids))), 1.0))
