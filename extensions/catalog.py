"""The extensions this server offers, built from the stores in its data directory."""

from __future__ import annotations

from pathlib import Path

from extensions.algorithms import ProjectionStore, algorithm_procedures
from extensions.algorithms.describer import algorithms_describer
from extensions.db_ping import DB_PING
from extensions.describe import describe_procedure
from extensions.registry import Registry
from extensions.text import TextStore, default_root as text_root, text_extensions
from extensions.text.describer import text_describer
from extensions.timeseries.describer import timeseries_describer
from extensions.timeseries.functions import timeseries_extensions
from extensions.timeseries.store import TimeseriesStore, default_root


def build_registry(data_dir: Path, *, text_model: str | None = None) -> Registry:
    """Every extension, reading its store under `data_dir` (timeseries: `<data_dir>/timeseries`),
    each family with its describer (its part in describe())."""
    timeseries_store = TimeseriesStore(default_root(data_dir))
    timeseries = timeseries_extensions(timeseries_store)
    algorithms = algorithm_procedures(ProjectionStore())
    text = text_extensions(TextStore(text_root(data_dir), text_model))
    return Registry([
        *timeseries, timeseries_describer(timeseries_store, [e.name for e in timeseries]),
        *algorithms, algorithms_describer([p.name for p in algorithms]),
        *text, text_describer([e.name for e in text]),
        DB_PING,
        describe_procedure(),
    ])
