"""Load the Sodir demo graph into a graph database and its production into the timeseries store.

Backend-agnostic: every statement goes through `run(query, params)` and uses Cypher that both
FalkorDB and Neo4j accept (`UNWIND $rows ... MERGE ... SET n += map`, `point({latitude, longitude})`,
`CREATE INDEX FOR (n:L) ON (n.id)`). Idempotent: nodes and relationships are MERGEd on ids, so a
second load leaves the same graph.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pandas as pd

from extensions.timeseries.store import TimeseriesStore
from proxy.demo.sodir import (DEFAULT_SOURCE, POINT_COLUMNS, PRODUCTION_UNITS, GraphTables, RelTable,
                              build_graph, production_frame)

Run = Callable[[str, dict], Awaitable[object]]

BATCH_ROWS = 2000
PROFILE_LABEL = "ProductionProfile"

_NODE_MERGE = "UNWIND $rows AS r MERGE (n:`{label}` {{id: r.id}}) SET n += r.props"
_WITH_LOCATION = ", n.location = point({latitude: r.lat, longitude: r.lon})"
_REL_MERGE = ("UNWIND $rows AS r MATCH (a:`{start}` {{id: r.start}}) MATCH (b:`{end}` {{id: r.end}}) "
              "MERGE (a)-[e:`{type}`]->(b) SET e += r.props")


def _present(value: object) -> bool:
    return not (value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)))


def _props(frame: pd.DataFrame) -> list[dict]:
    """One property map per row, missing values left out (Cypher has no NULL properties)."""
    return [{k: v for k, v in record.items() if _present(v)} for record in frame.to_dict("records")]


def _batches(query: str, rows: list[dict]) -> Iterator[tuple[str, list[dict]]]:
    for i in range(0, len(rows), BATCH_ROWS):
        yield query, rows[i:i + BATCH_ROWS]


def _node_statements(label: str, frame: pd.DataFrame) -> list[tuple[str, list[dict]]]:
    """MERGE batches for one label; rows with coordinates also set the `location` point."""
    query = _NODE_MERGE.format(label=label)
    props = _props(frame.drop(columns=["id", *POINT_COLUMNS], errors="ignore"))
    if not set(POINT_COLUMNS) <= set(frame.columns):
        return list(_batches(query, [{"id": i, "props": p} for i, p in zip(frame["id"], props)]))
    located, plain = [], []
    for i, p, lat, lon in zip(frame["id"], props, frame["lat"], frame["lon"]):
        if _present(lat) and _present(lon):
            located.append({"id": i, "props": p, "lat": float(lat), "lon": float(lon)})
        else:
            plain.append({"id": i, "props": p})
    return [*_batches(query + _WITH_LOCATION, located), *_batches(query, plain)]


def _rel_statements(rel: RelTable) -> list[tuple[str, list[dict]]]:
    query = _REL_MERGE.format(start=rel.start_label, end=rel.end_label, type=rel.type)
    props = _props(rel.frame.drop(columns=["start", "end"]))
    rows = [{"start": s, "end": e, "props": p} for s, e, p in zip(rel.frame["start"], rel.frame["end"], props)]
    return list(_batches(query, rows))


def _rel_name(rel: RelTable) -> str:
    return f"({rel.start_label})-[:{rel.type}]->({rel.end_label})"


def _statements(tables: GraphTables) -> tuple[list, list]:
    """Blocking part (row maps): run in a worker thread."""
    nodes = [(label, len(frame), _node_statements(label, frame)) for label, frame in tables.nodes.items()]
    rels = [(_rel_name(rel), len(rel.frame), _rel_statements(rel)) for rel in tables.relationships]
    return nodes, rels


async def _ensure_index(run: Run, label: str) -> None:
    """Index `:label(id)`; FalkorDB has no IF NOT EXISTS, and both databases say 'already' on a repeat."""
    try:
        await run(f"CREATE INDEX FOR (n:`{label}`) ON (n.id)", {})
    except Exception as exc:  # the backend's own error type; only "exists already" is expected
        if "already" not in str(exc).lower():
            raise


def _write_timeseries(ts_root: Path, source_dir: Path) -> int:
    frame = production_frame(source_dir)
    TimeseriesStore(Path(ts_root)).write(PROFILE_LABEL, frame, key_property="id", resolution="month",
                                         units=PRODUCTION_UNITS)
    return len(frame)


async def load_tables(run: Run, tables: GraphTables, *, progress: Callable[[str], None] = print) -> dict:
    """MERGE `tables` through `run` (an index on `id` per label first).

    Returns counts: {'nodes': {label: n}, 'relationships': {'(A)-[:T]->(B)': n}}.
    """
    started = time.perf_counter()
    node_statements, rel_statements = await asyncio.to_thread(_statements, tables)
    for label in tables.nodes:
        await _ensure_index(run, label)
    counts: dict = {"nodes": {}, "relationships": {}}
    for kind, groups in (("nodes", node_statements), ("relationships", rel_statements)):
        for name, total, statements in groups:
            for query, rows in statements:
                await run(query, {"rows": rows})
            counts[kind][name] = total
            progress(f"{name}: {total} {kind} ({time.perf_counter() - started:.1f} s)")
    return counts


async def load_demo(run: Run, ts_root: Path, *, source_dir: Path = DEFAULT_SOURCE,
                    progress: Callable[[str], None] = print) -> dict:
    """Load the Sodir demo graph through `run` and its monthly production into the store at `ts_root`.

    Returns counts: {'nodes': {label: n}, 'relationships': {'(A)-[:T]->(B)': n},
    'timeseries_rows': n, 'unlinked': {...}, 'seconds': s}.
    """
    started = time.perf_counter()
    tables = await asyncio.to_thread(build_graph, Path(source_dir))
    progress(f"sodir: built {sum(map(len, tables.nodes.values()))} nodes, "
             f"{sum(len(rel.frame) for rel in tables.relationships)} relationships from {source_dir}")
    counts = await load_tables(run, tables, progress=lambda line: progress(f"sodir: {line}"))
    counts["timeseries_rows"] = await asyncio.to_thread(_write_timeseries, Path(ts_root), Path(source_dir))
    progress(f"sodir: {counts['timeseries_rows']} monthly production rows -> {ts_root}")
    counts["unlinked"] = tables.unlinked
    counts["seconds"] = round(time.perf_counter() - started, 2)
    progress(f"sodir: loaded in {counts['seconds']} s; unlinked references: {tables.unlinked}")
    return counts
