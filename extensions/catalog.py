"""The extensions this server offers, built from the stores in its data directory."""

from __future__ import annotations

from pathlib import Path

from extensions.algorithms import ProjectionStore, algorithm_procedures
from extensions.compat import compat_procedures, name_store
from extensions.compat.apoc_merge import merge_rewrites
from extensions.compat.schema_commands import SchemaCommands
from extensions.compat.vector import search_rewrites
from extensions.db_ping import DB_PING
from extensions.registry import Registry
from extensions.spatial import GeometryStore, SpatialConfig, spatial_extensions
from extensions.text import TextStore, default_root as text_root, text_extensions
from extensions.timeseries.functions import timeseries_extensions
from extensions.timeseries.store import TimeseriesStore, default_root


def build_registry(data_dir: Path, *, text_model: str | None = None) -> Registry:
    """Every extension, reading its store under `data_dir` (timeseries: `<data_dir>/timeseries`;
    spatial: geometries read from the graph, configured by `<data_dir>/spatial.json` if present)."""
    return Registry([
        *timeseries_extensions(TimeseriesStore(default_root(data_dir))),
        *algorithm_procedures(ProjectionStore()),
        DB_PING,
        *text_extensions(TextStore(text_root(data_dir), text_model)),
        *_compat_shims(data_dir),
        *spatial_extensions(GeometryStore(SpatialConfig.load(data_dir))),
    ])


def _compat_shims(data_dir: Path) -> list:
    """What stock Neo4j tools call, served where the backend lacks it (extensions/compat)."""
    names = name_store(data_dir)
    return [*compat_procedures(names), *SchemaCommands(names).handlers(), *search_rewrites(names),
            *merge_rewrites()]
