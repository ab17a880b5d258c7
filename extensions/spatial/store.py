"""The geometry store: node geometries parsed once into shapely, one STRtree per layer.

A *layer* is the geometries of one (database, label, source). The source says where a node's
geometry is: a property key (`f.geometry` written in a query reads key 'geometry'), or `NODE`,
the node itself, whose geometry is the first present of its label's configured properties
(`SpatialConfig`; by default location, geometry, wkt, geojson, lat/lon, latitude/longitude).

Layers are read from the graph where the client's query runs. On FalkorDB a label's layer is
read in windows of node ids (`extensions/windows.py`): per window, the ids and coordinates of
its points as JSON lists of numbers parsed in numpy, and the other values (texts, maps,
lat/lon pairs) as rows; a million points: ~1 s of FalkorDB and ~0.2 s of parsing, against
~6 s as a million rows decoded one by one. Elsewhere (Neo4j, nodes without a label) the rows
stream with `GraphContext.read_all`, in batches that leave the event loop free between them.
Layers are cached under the graph's state token, which every write passing through the proxy changes:
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
from extensions.describe.sample import falkordb_id_bound
from extensions.registry import GraphContext, NodeRef, PropertyRef
from extensions.windows import in_windows, joined, json_numbers
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
#: Nodes of the label per window of the FalkorDB read (~7 MB of JSON text for points).
WINDOW_NODES = 200_000


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
        return cls.from_points(name, np.empty(0, dtype=np.int64), np.empty(0), np.empty(0), rows)

    @classmethod
    def from_points(cls, name: str, point_ids: np.ndarray, longitudes: np.ndarray, latitudes: np.ndarray,
                    rows: Sequence[Sequence]) -> "Layer":
        """A layer from its points as arrays and its other (node id, stored value) rows."""
        ids = np.concatenate([point_ids, np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))])
        parsed, bad = parse_column([row[1] for row in rows], name)
        geoms = np.concatenate([shapely.points(longitudes, latitudes), parsed])
        bad = {len(point_ids) + i: message for i, message in bad.items()}
        keep = np.ones(len(ids), dtype=bool)
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
        name = (label or "node") + ("" if source == NODE else f".{source}")
        if graph.integer_ids and label is not None:
            return await _read_windows(graph, label, await _used_sources(graph, sources), name)
        expr = geometry_expr("n", sources)
        if label is None:
            match, params = "MATCH (n) WHERE id(n) IN $ids", {"ids": list(ids or ())}
        else:
            match, params = f"MATCH (n:{quote_name(label)})", {}
        rows = await graph.read_all(f"{match} WITH n, {expr} AS g WHERE g IS NOT NULL RETURN id(n), g", params)
        if len(rows) > _PARSE_INLINE:
            return await asyncio.to_thread(Layer.from_rows, name, rows)
        return Layer.from_rows(name, rows)


async def _used_sources(graph: GraphContext, sources: tuple) -> tuple:
    """The sources whose property keys the graph has (FalkorDB's key table: constant time). The
    sources are a coalesce FalkorDB evaluates whole on every node (a million: 0.75 s for the
    six default ones, 0.1 s for `location` alone), so the ones no node can hold are left out."""
    keys = {row[0] for row in await graph.read("CALL db.propertyKeys()", {})}
    return tuple(s for s in sources if all(k in keys for k in ((s,) if isinstance(s, str) else s)))


async def _read_windows(graph: GraphContext, label: str, sources: tuple, name: str) -> Layer:
    """A label's layer from FalkorDB, a window of node ids at a time (the module docstring)."""
    if not sources:
        return Layer.from_rows(name, [])
    expr = geometry_expr("n", sources)
    [[nodes]] = await graph.read("MATCH (n) RETURN count(n)", {})
    [[labelled]] = await graph.read(f"MATCH (n:{quote_name(label)}) RETURN count(n)", {})
    span = await falkordb_id_bound(graph.read, nodes)
    width = max(1, -(-span * WINDOW_NODES // max(labelled, 1)))      # ids holding ~WINDOW_NODES of the label
    # FalkorDB evaluates both branches of a CASE: `g.longitude` is read from `pt`, null unless a point.
    query = (f"MATCH (n:{quote_name(label)}) WHERE id(n) >= $lo AND id(n) < $hi "
             f"WITH id(n) AS i, {expr} AS g WHERE g IS NOT NULL WITH i, g, typeOf(g) = 'Point' AS p "
             "WITH i, CASE WHEN p THEN g END AS pt, CASE WHEN p THEN null ELSE g END AS other "
             "RETURN toJSON(collect(CASE WHEN pt IS NOT NULL THEN i END)), toJSON(collect(pt.longitude)), "
             "toJSON(collect(pt.latitude)), collect(CASE WHEN other IS NOT NULL THEN [i, other] END)")

    async def read_window(low: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
        [[ids, longitudes, latitudes, others]] = await graph.read(query, {"lo": low, "hi": low + width})
        return json_numbers(ids, np.int64), json_numbers(longitudes), json_numbers(latitudes), others

    windows = await in_windows(read_window, range(0, span, width))
    columns = (joined([w[0] for w in windows]), *(joined([w[k] for w in windows], np.float64) for k in (1, 2)))
    rows = [row for w in windows for row in w[3]]
    if len(columns[0]) + len(rows) > _PARSE_INLINE:
        return await asyncio.to_thread(Layer.from_points, name, *columns, rows)
    return Layer.from_points(name, *columns, rows)


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
