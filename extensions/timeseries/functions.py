"""The `ts_*` extension functions: argument handling around the store's vectorised kernels.

`evaluate(rows)` receives every distinct argument tuple of a query. Rows are grouped by
(label, channel); each group resolves its distinct date arguments once, maps node keys to
series with one index lookup, and computes all its values in one numpy pass.
`evaluate_product(nodes, values)` does the same for every node x value combination of a
separated probe, broadcasting the nodes' series and the values' periods.
"""

from __future__ import annotations

from collections import defaultdict
from functools import lru_cache, partial
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from extensions.registry import ArgKind, Extension, PropertyRef
from core.errors import argument_error

from .dates import period_starts, resolve_range, resolve_single
from .store import OPEN_HIGH, OPEN_LOW, LoadedSeries, TimeseriesStore, canonical_key

_RANGE_ARGS = (ArgKind.PROPERTY, ArgKind.VALUE, ArgKind.VALUE)


def _floats(values: np.ndarray) -> list:
    return [None if v != v else v for v in values.tolist()]


def _range_sum(series, channel, idx, a, b):
    return series.sum_count(channel, idx, a, b)[0]


def _range_count(series, channel, idx, a, b):
    return series.sum_count(channel, idx, a, b)[1]


def _range_avg(series, channel, idx, a, b):
    total, count = series.sum_count(channel, idx, a, b)
    return np.divide(total, count, out=np.full(len(total), np.nan), where=count > 0)


def _range_series(series: LoadedSeries, channel, idx, a, b):
    values = series.channel(channel).values
    starts: dict[int, Any] = {}
    out = []
    for lo, hi in zip(a.tolist(), b.tolist()):
        vals, periods = values[lo:hi], series.times[lo:hi]
        keep = ~np.isnan(vals)
        vals, periods = vals[keep].tolist(), periods[keep].tolist()
        new = [p for p in periods if p not in starts]
        if new:
            starts.update(zip(new, period_starts(series.meta.resolution, np.array(new))))
        out.append([{"time": starts[p], "value": v} for p, v in zip(periods, vals)])
    return out


#: Kernels over row ranges [a, b): a float array (NaN: null), an int array, or a list of values.
_RANGE_KERNELS: dict[str, Callable] = {
    "ts_sum": _range_sum,
    "ts_avg": _range_avg,
    "ts_count": _range_count,
    "ts_min": lambda s, c, i, a, b: s.reduce(np.fmin, c, a, b),
    "ts_max": lambda s, c, i, a, b: s.reduce(np.fmax, c, a, b),
    "ts_series": _range_series,
}


_ABSENT = object()  # an optional argument the call did not write


def _per_row(values: list, resolve: Callable[..., tuple[int, ...]], null: tuple[int, ...], *context) -> np.ndarray:
    """One row of ints per value: `resolve(type(value), value, *context)`, `null` for null. Each
    distinct value is resolved once per call (values of other types apart: 1 is a year, True an
    error); `resolve` (lru-cached) keeps its rows across calls."""
    table, codes = [null], []
    code_of: dict = {}
    for value in values:
        if value is None:
            codes.append(0)
            continue
        key = value if value.__class__ is str else (value.__class__, value)
        try:
            code = code_of.get(key)
            if code is None:
                code = code_of[key] = len(table)
                table.append(resolve(value.__class__, value, *context))
        except TypeError:      # unhashable (a list): resolved on its own, to its error
            code = len(table)
            table.append(resolve.__wrapped__(value.__class__, value, *context))
        codes.append(code)
    return np.array(table, dtype=np.int64)[np.array(codes, dtype=np.intp)]


@lru_cache(maxsize=4096)
def _range_periods(kind: type, value, resolution: str, where: str) -> tuple[int, int]:
    """The inclusive (first, last) periods one date argument covers (`_ABSENT`: open). `kind` is the
    value's type: values that are equal but resolve apart (1 is a year, True an error) stay apart."""
    if value is _ABSENT:
        return _open(None, None)
    return _open(*resolve_range((value,), resolution, where=where))


@lru_cache(maxsize=4096)
def _single_period(kind: type, value, resolution: str, where: str) -> tuple[int]:
    """The one period a date argument names (ts_at, ts_delta), as `_range_periods` caches it."""
    return (resolve_single(value, resolution, where=where),)


def _open(first: int | None, last: int | None) -> tuple[int, int]:
    return OPEN_LOW if first is None else first, OPEN_HIGH if last is None else last


def _as_list(values) -> list:
    """A kernel's result as the values a query reads (NaN is null)."""
    if isinstance(values, np.ndarray):
        return _floats(values) if values.dtype.kind == "f" else values.tolist()
    return values


def _as_rows(values, found: np.ndarray, n: int, width: int) -> list[list]:
    """Kernel results at the flat positions `found` of an n x width grid -> n rows (None elsewhere)."""
    if isinstance(values, np.ndarray) and values.dtype.kind == "f":
        flat = np.full(n * width, np.nan)
        flat[found] = values
        grid = flat.reshape(n, width)
        rows = grid.tolist()
        for i in np.flatnonzero(np.isnan(grid).any(axis=1)).tolist():
            rows[i] = [None if v != v else v for v in rows[i]]
        return rows
    cells: list = [None] * (n * width)
    for i, value in zip(found.tolist(), _as_list(values)):
        cells[i] = value
    return [cells[i:i + width] for i in range(0, len(cells), width)]


class _Evaluator:
    """Groups argument rows by (label, channel) and dispatches each group to one kernel.

    A group's work is in numpy: the series index of each node (`_series_index`), the period
    columns of the date arguments (`_dates`, each distinct date parsed once), and one kernel
    call over both (`_kernel`). `evaluate_product` computes the index per node and the periods
    per value tuple, and broadcasts them, so a separated probe's 10k nodes x 10 years costs
    10k lookups and 10 date parses.
    """

    def __init__(self, store: TimeseriesStore):
        self.store = store

    def evaluate(self, name: str, rows: Sequence[tuple]) -> list:
        results: list = [None] * len(rows)
        for series, channel, indices in self._groups(name, [row[0] if row else None for row in rows]):
            group = [rows[i] for i in indices]
            idx = self._series_index(series, [row[0] for row in group])
            dates = self._dates(name, series, channel, [row[1:] for row in group])
            found, values = self._kernel(name, series, channel, idx, dates)
            for i, value in zip(found.tolist(), _as_list(values)):
                results[indices[i]] = value
        return results

    def evaluate_product(self, name: str, nodes: Sequence[tuple], values: Sequence[tuple]) -> list[list]:
        """`evaluate` of every `node + value` tuple, as one row of len(values) per node."""
        width = len(values)
        rows: list = [[None] * width for _ in nodes]
        for series, channel, indices in self._groups(name, [node[0] for node in nodes]):
            idx = self._series_index(series, [nodes[i][0] for i in indices])
            dates = self._dates(name, series, channel, values)
            n = len(indices)
            found, result = self._kernel(name, series, channel, np.repeat(idx, width),
                                         [column if n == 1 else np.tile(column, n) for column in dates])
            for i, row in zip(indices, _as_rows(result, found, n, width)):
                rows[i] = row
        return rows

    def _groups(self, name: str, refs: list):
        """(series, channel, positions in `refs`) per (label, channel) with a store; nodes whose
        labels have none are left out (null)."""
        by_ref: dict[tuple[tuple[str, ...], str], list[int]] = defaultdict(list)
        for i, ref in enumerate(refs):
            if ref is None:
                continue
            if not isinstance(ref, PropertyRef):
                raise argument_error(f"{name}() expects a node's channel as its first argument, like "
                                     f"{name}(n.channel, ...); got {ref!r}")
            by_ref[(ref.node.labels, ref.key)].append(i)
        groups: dict[tuple[LoadedSeries, str], list[int]] = defaultdict(list)
        for (labels, channel), indices in by_ref.items():
            series = self.store.find(labels)
            if series is not None:
                groups[(series, channel)].extend(indices)
        for (series, channel), indices in groups.items():
            if channel not in series.meta.channels:
                raise argument_error(f"Unknown channel '{channel}' on {series.meta.label}. "
                                     f"Available: {', '.join(series.meta.channels)}")
            yield series, channel, indices

    @staticmethod
    def _series_index(series: LoadedSeries, refs: list) -> np.ndarray:
        """The series index of each node (-1 where it has none), each node looked up once."""
        key_property = series.meta.key_property
        found: dict[int, int] = {}
        index = []
        for ref in refs:
            node = ref.node
            position = found.get(id(node))
            if position is None:
                position = found[id(node)] = series.position(canonical_key(node.properties.get(key_property)))
            index.append(position)
        return np.array(index, dtype=np.int64)

    def _dates(self, name: str, series: LoadedSeries, channel: str, dates: Sequence[tuple]) -> list[np.ndarray]:
        """The period columns of the date arguments: (first, last) for range functions, one
        period per date for ts_at / ts_delta, none for ts_first / ts_last."""
        meta = series.meta
        where = f"{meta.label}.{channel}"
        if name in _RANGE_KERNELS:
            return list(self._range_bounds(dates, meta.resolution, where))
        if name in ("ts_first", "ts_last"):
            return []
        return self._single_periods(dates, 2 if name == "ts_delta" else 1, meta.resolution, where)

    @staticmethod
    def _kernel(name: str, series: LoadedSeries, channel: str, idx: np.ndarray, dates: list[np.ndarray]):
        """(positions that have a value, their values) for one (label, channel)."""
        if name in _RANGE_KERNELS:
            first, last = dates
            found = np.flatnonzero(idx >= 0)
            if len(found) < len(idx):
                idx, first, last = idx[found], first[found], last[found]
            a, b = series.bounds(idx, first, last)
            return found, _RANGE_KERNELS[name](series, channel, idx, a, b)
        if name in ("ts_first", "ts_last"):
            found = np.flatnonzero(idx >= 0)
            return found, series.first_last(channel, idx[found], last=name == "ts_last")
        found = np.flatnonzero((idx >= 0) & np.logical_and.reduce([c != OPEN_LOW for c in dates]))
        values = [series.at(channel, idx[found], column[found]) for column in dates]
        return found, values[0] if name == "ts_at" else values[1] - values[0]

    @staticmethod
    def _range_bounds(dates: Sequence[tuple], resolution: str, where: str) -> tuple[np.ndarray, np.ndarray]:
        """Inclusive period bounds per date tuple (OPEN_LOW/OPEN_HIGH when open), each distinct
        date parsed once.

        One date argument means that whole period; with two, the range runs from the first
        period of the start to the last period of the end.
        """
        open_range = _open(None, None)
        starts = _per_row([d[0] if d else _ABSENT for d in dates], _range_periods, open_range, resolution, where)
        ends = _per_row([d[1] if len(d) > 1 else _ABSENT for d in dates], _range_periods, open_range,
                        resolution, where)
        one_arg = np.array([len(d) < 2 for d in dates], dtype=bool)
        return starts[:, 0], np.where(one_arg, starts[:, 1], ends[:, 1])

    @staticmethod
    def _single_periods(dates: Sequence[tuple], count: int, resolution: str, where: str) -> list[np.ndarray]:
        """The period each date argument names (ts_at: one column, ts_delta: two); OPEN_LOW where null."""
        return [_per_row([d[j] if j < len(d) else None for d in dates], _single_period, (OPEN_LOW,),
                         resolution, where)[:, 0]
                for j in range(count)]


def _cold(store: TimeseriesStore, arguments: Iterable[tuple]) -> bool:
    """Whether evaluating `arguments` may load a label's series (seconds for a big store): one of
    its nodes has a label whose series are not loaded, or changed on disk since."""
    unloaded = store.unloaded()
    return bool(unloaded) and any(isinstance(args[0], PropertyRef) and not unloaded.isdisjoint(args[0].node.labels)
                                  for args in arguments)


def timeseries_extensions(store: TimeseriesStore) -> list[Extension]:
    """The `ts_*` extensions over `store` (node_properties: the key properties of its labels)."""
    evaluator = _Evaluator(store)
    key_properties = tuple(sorted({store.meta(label).key_property for label in store.labels()}))
    specs = [
        *((name, _RANGE_ARGS, 1, f"{name}(n.channel, start?, end?)")
          for name in ("ts_sum", "ts_avg", "ts_min", "ts_max", "ts_count", "ts_series")),
        ("ts_first", (ArgKind.PROPERTY,), 1, "ts_first(n.channel)"),
        ("ts_last", (ArgKind.PROPERTY,), 1, "ts_last(n.channel)"),
        ("ts_at", (ArgKind.PROPERTY, ArgKind.VALUE), 2, "ts_at(n.channel, date)"),
        ("ts_delta", _RANGE_ARGS, 3, "ts_delta(n.channel, from, to)"),
    ]
    return [Extension(name=name, arg_kinds=kinds, min_args=min_args, evaluate=partial(evaluator.evaluate, name),
                      node_properties=key_properties, signature=signature,
                      evaluate_product=partial(evaluator.evaluate_product, name), data_version=store.version,
                      cold=partial(_cold, store))
            for name, kinds, min_args, signature in specs]
