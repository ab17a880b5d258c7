"""The extensions this server offers, built from the stores in its data directory."""

from __future__ import annotations

from pathlib import Path

from extensions.describe import describe_procedure
from extensions.registry import Registry
from extensions.timeseries.describer import timeseries_describer
from extensions.timeseries.functions import timeseries_extensions
from extensions.timeseries.store import TimeseriesStore, default_root


def build_registry(data_dir: Path) -> Registry:
    """Every extension, reading its store under `data_dir` (timeseries: `<data_dir>/timeseries`)."""
    timeseries_store = TimeseriesStore(default_root(data_dir))
    timeseries = timeseries_extensions(timeseries_store)
    return Registry([
        *timeseries, timeseries_describer(timeseries_store, [e.name for e in timeseries]),
        describe_procedure(),
    ])
