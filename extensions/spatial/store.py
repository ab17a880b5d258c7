"""The geometry store: node geometries parsed once into shapely, one STRtree per layer.

A *layer* is the geometries of one (database, label, source). The source says where a node's
geometry is: a property key (`f.geometry` written in a query reads key 'geometry'), or `NODE`,
the node itself, whose geometry is the first present of its label's configured properties
(`SpatialConfig`; by default location, geometry, wkt, geojson, lat/lon, latitude/longitude).

Layers are read from the graph with `GraphContext.read_all` (where the client's query runs, in
batches that leave the event loop free between them: a million points take seconds to decode)
and cached under the graph's state token, which every write passing through the proxy changes:
the next query after a write reloads the layers it uses, so it sees the new shapes. Inside a
transaction that wrote (state None) layers are read afresh and not cached. Nodes without a
label are read by id, uncached.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import shapely

from extensions.cypher.render import name as quote_name
from extensions.registry import GraphContext, NodeRef, PropertyRef
from core.errors import argument_error

from .geometry import parse_column

#: The source of a node's own geometry (a node passed as an argument).
NODE = "<node>"
#: Where a node's geometry is found, first present wins: a property (point, WKT, GeoJSON) or
#: a (latitude, longitude) pair of number properties.
DEFAULT_SOURCES: tuple = ("location", "geometry", "wkt", "geojson", ("lat", "lon"), ("latitude", "longitude"))
CONFIG_FILE = "spatial.json"
#: Above this many values a layer is parsed in a worker thread.
_PARSE_INLINE = 2_000


@dataclass(frozen=True)
class SpatialConfig:
    """Which properties hold a node's geometry, per label (`default` for unlisted labels)."""

    default: tuple = DEFAULT_SOURCES
    labels: dict[str, tuple] = field(default_factory=dict)

    def sources(self, label: str | None) -> tuple:
        return self.labels.get(label, self.default) if label is not None else self.default

    @classmethod
    def load(cls, data_dir: str | Path) -> "SpatialConfig":
        """`<data_dir>/spatial.json` if present: {"labels": {"Site": ["outline", ["y", "x"]]},
        "default": [...]}; a list entry is a (latitude, longitude) pair of properties."""
        path = Path(data_dir) / CONFIG_FILE
        if not path.exists():
            return cls()
        data = json.loads(path.read_text())

        def sources(items) -> tuple:
            return tuple(item if isinstance(item, str) else (item[0], item[1]) for item in items)

        return cls(sources(data.get("default", DEFAULT_SOURCES)),
                   {label: sources(items) for label, items in data.get("labels", {}).items()})


def geometry_expr(var: str, sources: tuple) -> str:
    """Cypher for the first present source of `var` (a lat/lon pair as [longitude, latitude])."""
    parts = []
    for source in sources:
        if isinstance(source, str):
            parts.append(f"{var}.{quote_name(source)}")
        else:
            lat, lon = (f"{var}.{quote_name(p)}" for p in source)
            parts.append(f"CASE WHEN {lat} IS NOT NULL AND {lon} IS NOT NULL THEN [{lon}, {lat}] END")
    return parts[0] if len(parts) == 1 else f"coalesce({', '.join(parts)})"


@dataclass(eq=False)
class Layer:
    """Geometries of one (label, source): node ids (sorted), their non-empty geometries, and why
    the values that are not geometries cannot be read."""

    name: str                     # 'Field.geometry', or 'Field' for the nodes' own geometry
    ids: np.ndarray               # int64, sorted
    geoms: np.ndarray             # shapely geometries, aligned with ids
    errors: dict[int, str]        # node id -> why its stored value cannot be read
    _tree: shapely.STRtree | None = None

    @classmethod
    def from_rows(cls, name: str, rows: Sequence[Sequence]) -> "Layer":
        """A layer from (node id, stored value) rows."""
        ids = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
        geoms, bad = parse_column([row[1] for row in rows], name)
        keep = np.ones(len(rows), dtype=bool)
        keep[list(bad)] = False
        keep &= ~(shapely.is_missing(geoms) | shapely.is_empty(geoms))      # neither is a geometry
        order = np.argsort(ids[keep], kind="stable")
        errors = {int(ids[i]): message for i, message in bad.items()}
        return cls(name, ids[keep][order], geoms[keep][order], errors)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def tree(self) -> shapely.STRtree:
        """STRtree over `geoms` (positions are indexes into `ids`), built on first use."""
        if self._tree is None:
            self._tree = shapely.STRtree(self.geoms)
        return self._tree

    def positions(self, ids: np.ndarray) -> np.ndarray:
        """Index of each node id in this layer, -1 where the node has no geometry."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(self.ids):
            return np.full(len(ids), -1)
        pos = np.minimum(np.searchsorted(self.ids, ids), len(self.ids) - 1)
        return np.where(self.ids[pos] == ids, pos, -1)

    def check(self, ids) -> None:
        """ArgumentError if any of these nodes holds a value that is not a geometry."""
        for node_id in ids if self.errors else ():
            message = self.errors.get(int(node_id))
            if message is not None:
                raise argument_error(f"Node {node_id}: {message}")

    def take(self, ids) -> np.ndarray:
        """Geometries of these nodes (None where a node has none)."""
        self.check(ids)
        pos = self.positions(ids)
        out = np.empty(len(pos), dtype=object)
        hit = pos >= 0
        out[hit] = self.geoms[pos[hit]]
        return out


def ref_source(ref: NodeRef | PropertyRef) -> tuple[str | None, str]:
    """(label whose layer holds the node, source) of a node argument; label None if it has none."""
    node, source = (ref.node, ref.key) if isinstance(ref, PropertyRef) else (ref, NODE)
    return (node.labels[0] if node.labels else None), source


class GeometryStore:
    """Layers by (database, label, source), cached under the graph state they were read at."""

    def __init__(self, config: SpatialConfig | None = None):
        self.config = config or SpatialConfig()
        self._cache: dict[tuple, tuple[Hashable, Layer]] = {}
        self._locks: dict[tuple, asyncio.Lock] = defaultdict(asyncio.Lock)

    async def layer(self, graph: GraphContext, label: str, source: str) -> Layer:
        """Every node of `label` with a geometry in `source` (cached while the graph is unchanged)."""
        if graph.state is None:
            return await self._read(graph, label, source)
        key = (graph.database, label, source)
        async with self._locks[key]:
            cached = self._cache.get(key)
            if cached is not None and cached[0] == graph.state:
                return cached[1]
            layer = await self._read(graph, label, source)
            self._cache[key] = (graph.state, layer)
            return layer

    async def layers(self, graph: GraphContext, refs) -> dict[tuple, Layer]:
        """The layers holding these node arguments, by (label, source); nodes without a label
        are read by id into (None, source) layers."""
        needed: dict[tuple, list[int]] = defaultdict(list)
        for ref in refs:
            label, source = ref_source(ref)
            needed[(label, source)].append(ref.node.id if isinstance(ref, PropertyRef) else ref.id)
        found = {}
        for (label, source), ids in needed.items():
            if label is None:
                found[(label, source)] = await self._read(graph, None, source, ids)
            else:
                found[(label, source)] = await self.layer(graph, label, source)
        return found

    async def _read(self, graph: GraphContext, label: str | None, source: str,
                    ids: list[int] | None = None) -> Layer:
        sources = self.config.sources(label) if source == NODE else (source,)
        expr = geometry_expr("n", sources)
        if label is None:
            match, params = "MATCH (n) WHERE id(n) IN $ids", {"ids": list(ids or ())}
        else:
            match, params = f"MATCH (n:{quote_name(label)})", {}
        rows = await graph.read_all(f"{match} WITH n, {expr} AS g WHERE g IS NOT NULL RETURN id(n), g", params)
        name = (label or "node") + ("" if source == NODE else f".{source}")
        if len(rows) > _PARSE_INLINE:
            return await asyncio.to_thread(Layer.from_rows, name, rows)
        return Layer.from_rows(name, rows)


def lookup(layers: dict[tuple, Layer], refs: Sequence) -> np.ndarray:
    """Geometries of node arguments (None where a node has none), from `GeometryStore.layers`."""
    out = np.empty(len(refs), dtype=object)
    groups: dict[tuple, list[int]] = defaultdict(list)
    for i, ref in enumerate(refs):
        groups[ref_source(ref)].append(i)
    for key, rows in groups.items():
        ids = [refs[i].node.id if isinstance(refs[i], PropertyRef) else refs[i].id for i in rows]
        out[rows] = layers[key].take(ids)
    return out
