"""A generated knowledge graph shaped like the describe() design's "complex graph": many node
types with dozens of properties each, Zipf-distributed sizes, a few types with `location`
points, `geometry` outlines, long texts and timeseries. Used by the describe() token-budget
tests and benchmarks; deterministic for a given seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from proxy.demo.sodir import GraphTables, RelTable

_WORDS = (
    "Well Bore Field Licence Company Person Reservoir Facility Pipeline Survey Seismic Discovery "
    "Production Profile Stratigraphy Operator History Platform Vessel Contract Permit Block Basin "
    "Formation Sample Core Log Test Report Document Asset Equipment Sensor Meter Inspection Incident "
    "Project Budget Invoice Supplier Employee Department Region Country Area Zone Site Terminal Tanker "
    "Cargo Market Price Forecast Plan Study Model Emission Campaign Rig Crew Shift Valve Pump Compressor "
    "Tank Cable Route Buoy Anchor Mooring Riser Template Manifold Flowline Umbilical Station Harbour"
).split()
_PROPERTY_WORDS = (
    "status kind name code area region depth length width height pressure rate volume weight cost "
    "start end updated created owner operator supplier country basin zone level grade class group "
    "phase stage version capacity diameter temperature flow quality risk priority score rank"
).split()
_RELATIONSHIP_WORDS = (
    "OPERATED_BY OWNED_BY PART_OF LOCATED_IN CONNECTED_TO SUPPLIED_BY MEASURES INSPECTED_BY "
    "REPORTS_ON BELONGS_TO DRILLED_BY PRODUCES_TO FEEDS HAS_MEMBER CONTAINS MANAGED_BY"
).split()
#: Property kinds and how often a type has one of each (the rest are short strings).
_KINDS = ("category", "text", "int", "float", "date", "bool")


@dataclass
class SyntheticGraph:
    tables: GraphTables
    #: {label: (key property, channel names)} for the types with timeseries.
    timeseries: dict[str, tuple[str, list[str]]]


def type_names(count: int, rng: np.random.Generator) -> list[str]:
    """`count` distinct CamelCase type names (single words first, then two-word compounds)."""
    names = list(_WORDS)
    rng.shuffle(names)
    while len(names) < count:
        candidate = "".join(rng.choice(_WORDS, 2, replace=False))
        if candidate not in names:
            names.append(candidate)
    return names[:count]


def _sizes(types: int, nodes: int) -> np.ndarray:
    """Zipf-like sizes summing to about `nodes`, at least 3 each."""
    weights = 1.0 / np.arange(1, types + 1) ** 1.1
    return np.maximum(3, np.round(weights / weights.sum() * nodes)).astype(int)


def _property_names(count: int, rng: np.random.Generator) -> list[str]:
    names: list[str] = []
    while len(names) < count:
        words = rng.choice(_PROPERTY_WORDS, 2, replace=False)
        candidate = f"{words[0]}_{words[1]}"
        if candidate not in names:
            names.append(candidate)
    return names


def _column(kind: str, n: int, rng: np.random.Generator) -> pd.Series:
    if kind == "category":
        values = pd.Series(rng.choice(["Active", "Closed", "Planned", "Suspended", "Unknown"], n))
    elif kind == "text":
        values = pd.Series([f"T{i:05d}" for i in rng.integers(0, 100_000, n)])
    elif kind == "int":
        values = pd.Series(rng.integers(0, 5000, n))
    elif kind == "float":
        values = pd.Series(np.round(rng.random(n) * 1000, 2))
    elif kind == "date":
        days = rng.integers(0, 365 * 40, n)
        values = pd.Series((np.datetime64("1980-01-01") + days).astype(str))
    else:
        values = pd.Series(rng.random(n) < 0.5)
    values = values.astype(object)
    values[rng.random(n) < 0.1] = None           # 10% missing
    return values


def synthetic_graph(types: int = 100, nodes: int = 200_000, properties: int = 50,
                    seed: int = 7) -> SyntheticGraph:
    """The graph as node and relationship tables (see `proxy.demo.loader.load_tables`)."""
    rng = np.random.default_rng(seed)
    labels = type_names(types, rng)
    sizes = _sizes(types, nodes)
    tables: dict[str, pd.DataFrame] = {}
    timeseries: dict[str, tuple[str, list[str]]] = {}
    for index, (label, size) in enumerate(zip(labels, sizes)):
        frame = pd.DataFrame({"id": [f"{label[:3].lower()}{index}-{i}" for i in range(size)],
                              "title": [f"{label} {i}" for i in range(size)]})
        for name in _property_names(properties, rng):
            frame[name] = _column(rng.choice(_KINDS, p=[0.3, 0.2, 0.15, 0.15, 0.1, 0.1]), size, rng)
        if index % 7 == 1:                       # point locations (the loader makes `location`)
            frame["lat"], frame["lon"] = 56 + rng.random(size) * 15, 2 + rng.random(size) * 20
        if index % 11 == 2:                      # outlines
            x, y = 2 + rng.random(size) * 20, 56 + rng.random(size) * 15
            frame["geometry"] = [f"POLYGON (({a:.4f} {b:.4f}, {a + .1:.4f} {b:.4f}, {a + .1:.4f} {b + .1:.4f}, "
                                 f"{a:.4f} {b:.4f}))" for a, b in zip(x, y)]
        if index % 13 == 3:                      # long descriptions
            frame["description"] = [" ".join(rng.choice(_PROPERTY_WORDS, 60)) for _ in range(size)]
        if index % 17 == 4:
            timeseries[label] = ("id", ["rate", "volume", "pressure"])
        tables[label] = frame
    return SyntheticGraph(GraphTables(tables, _relationships(labels, tables, rng)), timeseries)


def _relationships(labels: list[str], tables: dict[str, pd.DataFrame],
                   rng: np.random.Generator) -> list[RelTable]:
    """About 1.5 patterns per type; each links every start node to a random end node."""
    patterns: set[tuple[str, str, str]] = set()
    while len(patterns) < int(len(labels) * 1.5):
        # ends favour the big types, like real hubs (Company, Field)
        start = labels[int(rng.integers(0, len(labels)))]
        end = labels[min(int(rng.pareto(1.0) * 3), len(labels) - 1)]
        if start != end:
            patterns.add((start, str(rng.choice(_RELATIONSHIP_WORDS)), end))
    rels = []
    for start, rel_type, end in sorted(patterns):
        starts = tables[start]["id"]
        ends = tables[end]["id"].to_numpy()[rng.integers(0, len(tables[end]), len(starts))]
        rels.append(RelTable(rel_type, start, end, pd.DataFrame({"start": starts, "end": ends})))
    return rels


def timeseries_frame(graph: SyntheticGraph, label: str, months: int = 24, seed: int = 7) -> pd.DataFrame:
    """Monthly values for every node of a timeseries type (columns key, time, channels)."""
    rng = np.random.default_rng(seed)
    keys = graph.tables.nodes[label]["id"].to_numpy()
    times = pd.period_range("2020-01", periods=months, freq="M").to_timestamp()
    frame = pd.DataFrame({"key": np.repeat(keys, months), "time": np.tile(times, len(keys))})
    for channel in graph.timeseries[label][1]:
        frame[channel] = rng.random(len(frame)) * 100
    return frame
