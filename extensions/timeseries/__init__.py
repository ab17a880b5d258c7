"""Timeseries extension: `ts_*` functions over per-label Parquet series (see store.py)."""

from .functions import timeseries_extensions
from .store import LoadedSeries, SeriesMeta, TimeseriesStore, default_root

__all__ = ["LoadedSeries", "SeriesMeta", "TimeseriesStore", "default_root", "timeseries_extensions"]
