"""The timeseries family in describe(): the `ts` flag on labels with series, and each such
type's channels, units, resolution and coverage."""

from __future__ import annotations

import asyncio

from extensions.registry import Describer, GraphContext

from .dates import adjective, period_starts
from .store import TimeseriesStore

_DATES = "Dates: 'YYYY', 'YYYY-M', 'YYYY-M-D' or a date; one = that whole period, two = a range"
_PERIOD_TEXT = {"year": 4, "month": 7, "day": 10, "hour": 13}    # ISO prefix length per resolution


def timeseries_describer(store: TimeseriesStore, names: list[str]) -> Describer:
    """`names`: the ts_* extension names, listed under "Timeseries"."""

    async def detail(graph: GraphContext, label: str, sample) -> list[str]:
        if not store.has(label):
            return []
        meta = await asyncio.to_thread(store.meta, label)
        coverage = await asyncio.to_thread(store.coverage, label)       # Parquet statistics: no load
        first, last = (_period(meta.resolution, p) for p in coverage)
        by_unit: dict[str, list[str]] = {}
        for channel in meta.channels:
            by_unit.setdefault(meta.units.get(channel, ""), []).append(channel)
        channels = "; ".join(", ".join(names) + (f" in {unit}" if unit else "") for unit, names in by_unit.items())
        return [f"Timeseries ({adjective(meta.resolution)}, {first}..{last}): {channels}"]

    return Describer(family="Timeseries", extensions=tuple(names),
                     notes=(_DATES,), legend={"ts": "timeseries"},
                     flags=lambda label, sample: ("ts",) if store.has(label) else (), detail=detail)


def _period(resolution: str, period: int) -> str:
    start = period_starts(resolution, [period])[0]
    return start.iso_format()[:_PERIOD_TEXT[resolution]]
