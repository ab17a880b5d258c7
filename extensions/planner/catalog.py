"""The extensions this server offers, built from the stores in its data directory."""

from __future__ import annotations

from pathlib import Path

from extensions.algorithms import ProjectionStore, algorithm_procedures
from extensions.algorithms.describer import algorithms_describer
from extensions.compat import compat_procedures, name_store
from extensions.compat.apoc_merge import merge_rewrites
from extensions.compat.schema_commands import SchemaCommands
from extensions.compat.vector import search_rewrites
from extensions.compat.db_ping import DB_PING
from extensions.describe import describe_procedure
from extensions.registry import Registry
from extensions.spatial import GeometryStore, SpatialConfig, spatial_extensions
from extensions.spatial.describer import spatial_describer
from extensions.text import TextStore, default_root as text_root, text_extensions
from extensions.text.describer import text_describer
from extensions.timeseries.describer import timeseries_describer
from extensions.timeseries.functions import timeseries_extensions
from extensions.timeseries.store import TimeseriesStore, default_root


def build_registry(data_dir: Path, *, text_model: str | None = None) -> Registry:
    """Every extension, each family with its describer (its part in describe()), reading its store
    under `data_dir` (timeseries: `<data_dir>/timeseries`; spatial: geometries read from the graph,
    configured by `<data_dir>/spatial.json` if present), and the compatibility shims."""
    timeseries_store = TimeseriesStore(default_root(data_dir))
    timeseries = timeseries_extensions(timeseries_store)
    algorithms = algorithm_procedures(ProjectionStore())
    text = text_extensions(TextStore(text_root(data_dir), text_model))
    spatial_config = SpatialConfig.load(data_dir)
    spatial = spatial_extensions(GeometryStore(spatial_config))
    return Registry([
        *timeseries, timeseries_describer(timeseries_store, [e.name for e in timeseries]),
        *spatial, spatial_describer(spatial_config, [e.name for e in spatial]),
        *text, text_describer([e.name for e in text]),
        *algorithms, algorithms_describer([p.name for p in algorithms]),
        describe_procedure(),
        DB_PING,
        *_compat_shims(data_dir),
    ])


def _compat_shims(data_dir: Path) -> list:
    """What stock Neo4j tools call, served where the backend lacks it (extensions/compat)."""
    names = name_store(data_dir)
    return [*compat_procedures(names), *SchemaCommands(names).handlers(), *search_rewrites(names),
            *merge_rewrites()]
