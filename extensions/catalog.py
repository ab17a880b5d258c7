"""The extensions this server offers, built from the stores in its data directory."""

from __future__ import annotations

from pathlib import Path

from extensions.compat import compat_procedures, name_store
from extensions.compat.apoc_merge import merge_rewrites
from extensions.compat.schema_commands import SchemaCommands
from extensions.compat.vector import search_rewrites
from extensions.registry import Registry
from extensions.timeseries.functions import timeseries_extensions
from extensions.timeseries.store import TimeseriesStore, default_root


def build_registry(data_dir: Path) -> Registry:
    """Every extension, reading its store under `data_dir` (timeseries: `<data_dir>/timeseries`)."""
    registry = Registry(timeseries_extensions(TimeseriesStore(default_root(data_dir))))
    names = name_store(data_dir)
    for shim in [*compat_procedures(names), *SchemaCommands(names).handlers(), *search_rewrites(names),
                 *merge_rewrites()]:
        registry.add(shim)
    return registry
