"""The spatial functions: argument handling around the vectorised kernels of geometry.py.

`prepare` awaits the store layers the node arguments live in; `evaluate` (in a worker thread
for big batches) turns each argument column into geometries (node arguments from the layers,
values parsed) and runs one kernel over the rows where every argument has one. A null argument
or a node without a location/geometry gives null.
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Sequence

import numpy as np
import shapely

from extensions.registry import ArgKind, Extension, GraphContext, IndexJoin, NodeRef, PropertyRef

from .geometry import area_perimeter, centroid_points, distances, to_geometry
from .index import SpatialJoins
from .store import GeometryStore, lookup


def _floats(values: np.ndarray) -> list:
    return [None if v != v else v for v in values.tolist()]


#: name -> (number of arguments, kernel: geometry arrays -> one value per row, signature)
_FUNCTIONS: dict[str, tuple[int, Callable, str]] = {
    "distance": (2, lambda a, b: _floats(distances(a, b)), "distance(a, b)"),
    "contains": (2, lambda a, b: shapely.contains(a, b).tolist(), "contains(geometry, x)"),
    "intersects": (2, lambda a, b: shapely.intersects(a, b).tolist(), "intersects(a, b)"),
    "centroid": (1, centroid_points, "centroid(g)"),
    "area": (1, lambda g: [area_perimeter(x)[0] for x in g], "area(g)"),
    "perimeter": (1, lambda g: [area_perimeter(x)[1] for x in g], "perimeter(g)"),
}


class _Evaluator:
    def __init__(self, store: GeometryStore):
        self.store = store

    async def prepare(self, graph: GraphContext, rows: Sequence[tuple]) -> dict:
        """The layers holding every node argument of `rows`."""
        return await self.store.layers(graph, [v for row in rows for v in row if _is_ref(v)])

    def evaluate(self, name: str, rows: Sequence[tuple], layers: dict) -> list:
        _, kernel, _ = _FUNCTIONS[name]
        columns = [_geometries([row[j] for row in rows], layers, f"{name}()") for j in range(len(rows[0]))]
        present = np.logical_and.reduce([~shapely.is_missing(c) for c in columns])
        out: list = [None] * len(rows)
        if present.any():
            for i, value in zip(np.flatnonzero(present).tolist(), kernel(*(c[present] for c in columns))):
                out[i] = value
        return out


def _is_ref(value) -> bool:
    return isinstance(value, (NodeRef, PropertyRef))


def _geometries(values: list, layers: dict, function: str) -> np.ndarray:
    """One argument column as geometries: node arguments from their layers, values parsed."""
    out = np.empty(len(values), dtype=object)
    refs = [i for i, v in enumerate(values) if _is_ref(v)]
    if refs:
        out[refs] = lookup(layers, [values[i] for i in refs])
    for i, value in enumerate(values):
        if value is not None and not _is_ref(value):
            out[i] = to_geometry(value, function)
    return out


def spatial_extensions(store: GeometryStore) -> list[Extension]:
    """distance, contains, intersects, centroid, area, perimeter over the geometry store."""
    evaluator = _Evaluator(store)
    joins = SpatialJoins(store)
    index_joins = {
        "distance": IndexJoin(frozenset({"within", "nearest"}), joins.distance_pairs),
        "contains": IndexJoin(frozenset({"predicate"}), partial(joins.predicate_pairs, "contains")),
        "intersects": IndexJoin(frozenset({"predicate"}), partial(joins.predicate_pairs, "intersects")),
    }
    arg = ArgKind.NODE_PROPERTY_OR_VALUE
    return [Extension(name=name, arg_kinds=(arg,) * arity, min_args=arity, evaluate=partial(evaluator.evaluate, name),
                      signature=signature, prepare=evaluator.prepare, index_join=index_joins.get(name))
            for name, (arity, _, signature) in _FUNCTIONS.items()]
