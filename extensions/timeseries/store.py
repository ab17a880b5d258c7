"""The on-disk timeseries store and its shared in-memory cache.

Layout under `root` (usually `<data-dir>/timeseries`):

    <Label>            -> symlink to .versions/<Label>.<generation>/
    .versions/<Label>.<generation>/series.parquet   key, time, one float64 column per channel
    .versions/<Label>.<generation>/meta.json        resolution, key_property, channels, units

A write builds a new generation directory, fsyncs it, then atomically replaces the symlink, so
readers see the old or the new store, never a mix, and a failed write leaves the old one intact.
Swapping the link also changes the root directory, so the freshness check of every call is one
`stat` of the root (`_Listing`): the labels and their link targets are read again only when it
changed. A plain directory holding the two files (e.g. copied by hand) is read too; while there
is one, every call reads the root again and `stat`s its parquet.

In memory (`LoadedSeries`) rows are sorted by (key, period): keys are canonical strings (found
through a dict of their positions), times are integer period numbers (see `dates.py`), channels
are float64 with NaN for missing. Range queries for any number of (key, first, last) tuples are
`np.searchsorted` on one composite int64 array, then prefix sums (sum, count) or
`ufunc.reduceat` (min, max): no loop per tuple.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
import shutil
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .dates import RESOLUTIONS, period_starts, periods_from_datetimes, periods_to_datetimes

SERIES_FILE = "series.parquet"
META_FILE = "meta.json"
_VERSIONS = ".versions"
#: Open bounds for `LoadedSeries.bounds`.
OPEN_LOW = np.iinfo(np.int64).min // 4
OPEN_HIGH = np.iinfo(np.int64).max // 4
#: How old the root directory's mtime must be before a listing of it is trusted while it keeps
#: that mtime: file times come from a clock that ticks every few milliseconds, so a change made
#: within the same tick as the listing could leave the mtime as it was.
_SETTLED_NS = 1_000_000_000


def default_root(data_dir: str | Path) -> Path:
    """Where the proxy keeps timeseries under its data directory."""
    return Path(data_dir) / "timeseries"


@dataclass(frozen=True)
class SeriesMeta:
    """What describe() and the evaluators need to know about one label's series."""

    label: str
    resolution: str
    key_property: str
    channels: list[str]
    units: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: dict) -> "SeriesMeta":
        return cls(data["label"], data["resolution"], data["key_property"], list(data["channels"]),
                   dict(data.get("units") or {}))


def canonical_key(value) -> str | None:
    """The string that links a node property value to a series key: 42, 42.0 and '42' agree."""
    if type(value) is str:
        return value.strip()
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value)).lower()
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return str(int(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return str(value).strip()


def canonical_keys(values: pd.Series) -> pd.Series:
    """Vectorised `canonical_key` over a column (fast paths for integer and string columns)."""
    if pd.api.types.is_integer_dtype(values.dtype) and not values.isna().any():
        return values.astype(np.int64).astype(str).astype(object)
    if pd.api.types.infer_dtype(values, skipna=False) == "string":
        return values.astype(str).str.strip().astype(object)
    return values.map(canonical_key).astype(object)


class _Channel:
    """One channel's arrays: values plus the derived arrays the kernels need, built on first use."""

    def __init__(self, values: np.ndarray, offsets: np.ndarray):
        self.padded = np.append(values, np.nan)  # reduceat needs an index one past the end
        self.values = self.padded[:-1]
        self._offsets = offsets
        self._lock = threading.Lock()
        self._csum: np.ndarray | None = None
        self._count: np.ndarray | None = None
        self._present: np.ndarray | None = None

    def _derive(self) -> None:
        if self._csum is not None:
            return
        with self._lock:
            if self._csum is not None:
                return
            missing = np.isnan(self.values)
            # Per-key (segmented) cumulative sums: a global cumsum would lose precision on
            # small series late in a big array. Counts are exact integers, so global is fine.
            csum = segmented_cumsum(np.where(missing, 0.0, self.values), self._offsets)
            count = np.zeros(len(self.values) + 1, dtype=np.int32 if len(self.values) < 2**31 else np.int64)
            np.cumsum(~missing, out=count[1:])
            self._present = np.flatnonzero(~missing)
            self._count = count
            self._csum = csum

    @property
    def csum(self) -> np.ndarray:
        self._derive()
        return self._csum

    @property
    def count(self) -> np.ndarray:
        self._derive()
        return self._count

    @property
    def present(self) -> np.ndarray:
        self._derive()
        return self._present

    def nbytes(self) -> int:
        arrays = (self.padded, self._csum, self._count, self._present)
        return sum(a.nbytes for a in arrays if a is not None)


def segmented_cumsum(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The cumulative sum of each segment `values[offsets[k]:offsets[k + 1]]` on its own. Runs of
    neighbouring segments of one length are a 2-D block summed along its rows in one call
    (12M values in 100k series of 120: 0.1 s, against 0.9 s for pandas' groupby cumsum)."""
    out = np.empty_like(values)
    lengths = np.diff(offsets)
    edges = np.concatenate([[0], np.flatnonzero(np.diff(lengths)) + 1, [len(lengths)]]) if len(lengths) else [0]
    for first, end in zip(edges[:-1], edges[1:]):
        length, low, high = lengths[first], offsets[first], offsets[end]
        if length:
            np.cumsum(values[low:high].reshape(-1, length), axis=1, out=out[low:high].reshape(-1, length))
    return out


class LoadedSeries:
    """One label's series as numpy arrays, with the vectorised range kernels over them.

    Kernels take `idx` (series index per tuple, from `lookup`, all >= 0) and row ranges
    `[a, b)` from `bounds`. Results are float64 arrays with NaN where there is no value.
    """

    def __init__(self, meta: SeriesMeta, keys: np.ndarray, row_key: np.ndarray, times: np.ndarray,
                 values: dict[str, np.ndarray]):
        """`row_key` indexes the sorted `keys`; rows may come in any order (sorted here if needed)."""
        self.meta = meta
        self.keys = keys
        self._positions = dict(zip(keys.tolist(), range(len(keys))))
        self.tmin = int(times.min()) if len(times) else 0
        self.tmax = int(times.max()) if len(times) else 0
        self._stride = self.tmax - self.tmin + 2
        self._composite = row_key.astype(np.int64) * self._stride + (times - self.tmin)
        if len(times) > 1 and not (self._composite[1:] > self._composite[:-1]).all():
            order = np.argsort(self._composite, kind="stable")
            self._composite, row_key, times = self._composite[order], row_key[order], times[order]
            values = {name: array[order] for name, array in values.items()}
        self.times = times.astype(np.int32)  # period numbers up to year 9999 in hours fit
        self.offsets = np.zeros(len(keys) + 1, dtype=np.int64)
        np.cumsum(np.bincount(row_key, minlength=len(keys)), out=self.offsets[1:])
        self._channels = {name: _Channel(array, self.offsets) for name, array in values.items()}

    @property
    def rows(self) -> int:
        return len(self.times)

    def channel(self, name: str) -> _Channel:
        return self._channels[name]

    def position(self, key: str | None) -> int:
        """The series index of a canonical key, -1 when there is no such series."""
        return self._positions.get(key, -1)

    def bounds(self, idx: np.ndarray, first: np.ndarray, last: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Row range [a, b) of each series `idx` within inclusive periods [first, last].

        Open bounds are `OPEN_LOW` / `OPEN_HIGH`; b < a never happens (empty ranges give a == b).
        """
        base = idx * self._stride - self.tmin
        lo = np.minimum(np.maximum(first, self.tmin), self.tmax + 1) + base
        hi = np.minimum(np.maximum(last, self.tmin - 1), self.tmax) + base
        a = np.searchsorted(self._composite, lo, side="left")
        b = np.searchsorted(self._composite, hi, side="right")
        return a, np.maximum(a, b)

    def sum_count(self, channel: str, idx: np.ndarray, a: np.ndarray, b: np.ndarray):
        """(sums, non-missing counts) over each range."""
        ch = self.channel(channel)
        count = ch.count[b] - ch.count[a]
        csum = ch.csum
        upper = csum[np.maximum(b - 1, 0)]
        lower = np.where(a > self.offsets[idx], csum[np.maximum(a - 1, 0)], 0.0)
        return np.where(b > a, upper - lower, 0.0), count

    def reduce(self, ufunc: np.ufunc, channel: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """`ufunc` (np.fmin / np.fmax) over each range, NaN-skipping; NaN for empty ranges."""
        out = np.full(len(a), np.nan)
        nonempty = np.flatnonzero(b > a)
        if not len(nonempty):
            return out
        starts, ends = a[nonempty], b[nonempty]
        # Sorted starts keep the in-between segments reduceat also computes disjoint: O(rows).
        order = np.argsort(starts, kind="stable")
        bounds = np.empty(2 * len(order), dtype=np.int64)
        bounds[0::2], bounds[1::2] = starts[order], ends[order]
        reduced = ufunc.reduceat(self.channel(channel).padded, bounds)[0::2]
        out[nonempty[order]] = reduced
        return out

    def first_last(self, channel: str, idx: np.ndarray, last: bool) -> np.ndarray:
        """The first (or last) non-missing value of each series."""
        ch = self.channel(channel)
        present = ch.present
        start, end = self.offsets[idx], self.offsets[idx + 1]
        if last:
            pos = np.searchsorted(present, end, side="left") - 1
            ok = pos >= 0
            ok[ok] &= present[pos[ok]] >= start[ok]
        else:
            pos = np.searchsorted(present, start, side="left")
            ok = pos < len(present)
            ok[ok] &= present[pos[ok]] < end[ok]
        out = np.full(len(idx), np.nan)
        out[ok] = ch.values[present[pos[ok]]]
        return out

    def at(self, channel: str, idx: np.ndarray, period: np.ndarray) -> np.ndarray:
        """The value of each series at one period (NaN where there is none)."""
        a, b = self.bounds(idx, period, period)
        out = np.full(len(idx), np.nan)
        hit = b > a
        out[hit] = self.channel(channel).values[a[hit]]
        return out

    def nbytes(self) -> int:
        arrays = (self.times, self.offsets, self._composite)
        key_bytes = sum(len(k) + 50 for k in self.keys) + self.keys.nbytes + sys.getsizeof(self._positions)
        return sum(a.nbytes for a in arrays) + key_bytes + sum(c.nbytes() for c in self._channels.values())


@dataclass
class _Entry:
    token: object
    series: LoadedSeries


@dataclass(frozen=True)
class _Listing:
    """The labels that have a store, each with its token (`TimeseriesStore._read_token`), as one
    scan of the root found them when the root's stat was `stamp`. A `settled` listing holds while
    the root keeps that stamp; any other is read again on the next call."""

    stamp: tuple | None
    settled: bool
    tokens: dict[str, object]

    @property
    def version(self) -> tuple:
        return tuple(self.tokens.items())


_NOTHING = _Listing(None, False, {})


class TimeseriesStore:
    """Per-label series on disk, loaded into numpy on first use and shared by all callers."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._root_name = str(self.root)
        self._cache: dict[str, _Entry] = {}
        self._lock = threading.Lock()
        self._label_locks: dict[str, threading.Lock] = {}
        self._last = _NOTHING

    # -- reading ---------------------------------------------------------------------------

    def labels(self) -> list[str]:
        """Labels that have a store, sorted."""
        return list(self._listing().tokens)

    def has(self, label: str) -> bool:
        return label in self._listing().tokens

    def meta(self, label: str) -> SeriesMeta:
        """The label's metadata (read from disk unless a fresh copy is loaded)."""
        token = self._token(label)
        entry = self._cache.get(label)
        if entry is not None and entry.token == token:
            return entry.series.meta
        return _read_meta(self._resolve(label, token))

    def coverage(self, label: str) -> tuple[int, int]:
        """The first and last period of the label's series: from the loaded arrays, else from the
        Parquet statistics of the time column, so describe() never loads a big store (12M rows:
        5 s) to name two dates. KeyError if no store."""
        entry = self._cache.get(label)
        token = self._token(label)
        if entry is not None and entry.token == token:
            return entry.series.tmin, entry.series.tmax
        if token is None:
            raise KeyError(f"No timeseries store for label {label!r} under {self.root}")
        directory = self._resolve(label, token)
        metadata = pq.ParquetFile(directory / SERIES_FILE).metadata
        column = metadata.schema.names.index("time")
        stats = [metadata.row_group(i).column(column).statistics for i in range(metadata.num_row_groups)]
        if not stats or not all(s is not None and s.has_min_max for s in stats):
            series = self.series(label)
            return series.tmin, series.tmax
        bounds = np.array([min(s.min for s in stats), max(s.max for s in stats)], dtype="datetime64[s]")
        first, last = periods_from_datetimes(_read_meta(directory).resolution, bounds).tolist()
        return first, last

    def series(self, label: str) -> LoadedSeries:
        """The label's arrays: cached, reloaded when the files change. KeyError if no store."""
        return self._series(label, self._token(label))

    def find(self, labels: Iterable[str]) -> LoadedSeries | None:
        """The arrays of the first of `labels` that has a store, as `series` gives them; None when
        none has one (or it was removed meanwhile)."""
        tokens = self._listing().tokens
        label = next((label for label in labels if label in tokens), None)
        if label is None:
            return None
        try:
            return self._series(label, tokens[label])
        except KeyError:
            return None

    def _series(self, label: str, token) -> LoadedSeries:
        """`series(label)`, given the label's current token."""
        entry = self._cache.get(label)
        if entry is not None and entry.token == token:
            return entry.series
        with self._lock_for(label):
            for _ in range(3):  # a concurrent writer may delete the generation we resolved
                token = self._token(label)
                entry = self._cache.get(label)
                if entry is not None and entry.token == token:
                    return entry.series
                if token is None:
                    raise KeyError(f"No timeseries store for label {label!r} under {self.root}")
                try:
                    loaded = _load(self._resolve(label, token))
                except FileNotFoundError:
                    continue
                self._cache[label] = _Entry(token, loaded)
                return loaded
            raise KeyError(f"Timeseries store for label {label!r} kept changing while loading")

    def unloaded(self) -> set[str]:
        """The labels whose next call loads their series (12M values: ~1 s): never loaded, or
        changed on disk since."""
        cache = self._cache
        return {label for label, token in self._listing().tokens.items()
                if (entry := cache.get(label)) is None or entry.token != token}

    def version(self) -> tuple:
        """Changes whenever a label's series are written, replaced or removed (for caches of
        values computed from them): each label's token (`write` makes a new generation)."""
        return self._listing().version

    def memory_bytes(self) -> int:
        """Bytes held by the loaded arrays (all labels)."""
        return sum(entry.series.nbytes() for entry in list(self._cache.values()))

    def _lock_for(self, label: str) -> threading.Lock:
        with self._lock:
            return self._label_locks.setdefault(label, threading.Lock())

    def _token(self, label: str):
        """The label's token in the current listing (None: no store)."""
        return self._listing().tokens.get(label)

    def _listing(self) -> _Listing:
        """The labels and their tokens: the last scan while the root's stat is as it was then
        (a write replaces a link in the root, which changes it), else a new scan."""
        now = time.time_ns()
        try:
            st = os.stat(self._root_name)
        except OSError:
            return _NOTHING
        stamp = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
        listing = self._last
        if not (listing.settled and listing.stamp == stamp):
            self._last = listing = self._scan(stamp, settled=st.st_mtime_ns < now - _SETTLED_NS)
        return listing

    def _scan(self, stamp: tuple, settled: bool) -> _Listing:
        """Read the root: each label's token, when its directory holds a store. A plain directory
        can change without changing the root: a listing holding one is never settled."""
        try:
            with os.scandir(self.root) as entries:
                names = sorted(e.name for e in entries if not e.name.startswith("."))
        except OSError:
            return _NOTHING
        tokens = {}
        for name in names:
            token = self._read_token(name)
            if token is not None and (self._resolve(name, token) / META_FILE).is_file():
                tokens[name] = token
        return _Listing(stamp, settled and all(isinstance(t, str) for t in tokens.values()), tokens)

    def _read_token(self, label: str):
        """What changes when the label's store is rewritten: the link target, else the file stat."""
        path = self.root / label
        try:
            return os.readlink(path)
        except OSError as exc:
            if exc.errno != errno.EINVAL:  # missing (not: "not a symlink")
                return None
        try:
            st = os.stat(path / SERIES_FILE)
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _resolve(self, label: str, token) -> Path:
        """The directory holding the generation `token` names (a link target, else the label dir)."""
        if token is None or not _valid_label(label):
            raise KeyError(f"No timeseries store for label {label!r} under {self.root}")
        return self.root / token if isinstance(token, str) else self.root / label

    # -- writing ---------------------------------------------------------------------------

    def write(self, label: str, frame: pd.DataFrame, *, key_property: str, resolution: str,
              units: dict[str, str] | None = None) -> None:
        """Replace the label's series with `frame` (columns key, time, channels...), atomically."""
        if not _valid_label(label):
            raise ValueError(f"Invalid label {label!r}: it names a directory, so no '/', NUL or leading '.'")
        table, meta = _prepare(label, frame, key_property, resolution, units or {})
        versions = self.root / _VERSIONS
        versions.mkdir(parents=True, exist_ok=True)
        generation = f"{label}.{time.time_ns()}-{secrets.token_hex(4)}"
        target = versions / generation
        link = self.root / label
        temp_link = self.root / f".{generation}.link"
        with self._lock_for(label):
            token = self._read_token(label)
            previous = None if token is None else self._resolve(label, token)
            try:
                target.mkdir()
                pq.write_table(table, target / SERIES_FILE)
                (target / META_FILE).write_text(json.dumps(meta, indent=2))
                for path in (target / SERIES_FILE, target / META_FILE, target):
                    _fsync(path)
                os.symlink(os.path.join(_VERSIONS, generation), temp_link)
                if link.is_dir() and not link.is_symlink():  # a hand-made directory: move it aside
                    previous = versions / f"{generation}.replaced"
                    os.rename(link, previous)
                os.replace(temp_link, link)
                _fsync(self.root)
            except BaseException:
                temp_link.unlink(missing_ok=True)
                shutil.rmtree(target, ignore_errors=True)
                raise
        if previous is not None and previous != target:
            shutil.rmtree(previous, ignore_errors=True)


def _valid_label(label: str) -> bool:
    return bool(label) and not label.startswith(".") and "/" not in label and "\0" not in label


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _read_meta(directory: Path) -> SeriesMeta:
    return SeriesMeta.from_json(json.loads((directory / META_FILE).read_text()))


def _prepare(label: str, frame: pd.DataFrame, key_property: str, resolution: str,
             units: dict[str, str]) -> tuple[pa.Table, dict]:
    """Validate and normalise a frame into the stored table (sorted by key, time) and meta."""
    if resolution not in RESOLUTIONS:
        raise ValueError(f"Unknown resolution {resolution!r}: use one of {', '.join(RESOLUTIONS)}")
    if not key_property:
        raise ValueError("key_property must name the node property that links a node to its series")
    missing = {"key", "time"} - set(frame.columns)
    if missing:
        raise ValueError(f"Timeseries frame lacks column(s) {sorted(missing)}; it needs key, time, channels...")
    channels = [str(c) for c in frame.columns if c not in ("key", "time")]
    if not channels:
        raise ValueError("Timeseries frame has no channel columns (columns besides key and time)")
    unknown_units = set(units) - set(channels)
    if unknown_units:
        raise ValueError(f"Units given for unknown channel(s) {sorted(unknown_units)}; channels: {channels}")
    keys = canonical_keys(frame["key"])
    if keys.isna().any():
        raise ValueError(f"Timeseries frame has a missing key at row {int(np.flatnonzero(keys.isna())[0])}")
    times = pd.to_datetime(frame["time"])
    if times.dt.tz is not None:
        times = times.dt.tz_localize(None)
    if times.isna().any():
        raise ValueError(f"Timeseries frame has a missing time at row {int(np.flatnonzero(times.isna())[0])}")
    periods = periods_from_datetimes(resolution, times.to_numpy(dtype="datetime64[s]"))
    data = pd.DataFrame({"key": keys.to_numpy(), "period": periods})
    for name, column in zip(channels, (c for c in frame.columns if c not in ("key", "time"))):
        data[name] = pd.to_numeric(frame[column], errors="raise").astype(np.float64).to_numpy()
    data = data.sort_values(["key", "period"], kind="stable", ignore_index=True)
    duplicated = data.duplicated(["key", "period"])
    if duplicated.any():
        row = data[duplicated].iloc[0]
        raise ValueError(f"Duplicate {resolution} for key {row['key']!r} at "
                         f"{period_starts(resolution, [row['period']])[0]}: one value per key and {resolution}")
    table = pa.table({
        "key": pa.array(data["key"].to_numpy(), type=pa.string()),
        "time": pa.array(periods_to_datetimes(resolution, data["period"].to_numpy()), type=pa.timestamp("s")),
        **{name: pa.array(data[name].to_numpy(), type=pa.float64()) for name in channels},
    })
    meta = {"label": label, "resolution": resolution, "key_property": key_property, "channels": channels,
            "units": {c: units[c] for c in channels if c in units}, "rows": len(data),
            "keys": int(data["key"].nunique())}
    return table, meta


def _load(directory: Path) -> LoadedSeries:
    """Read one generation directory into a LoadedSeries, a column at a time in Arrow: keys read
    as a dictionary (a code per row, no string per row) and times converted once per distinct
    time (12M rows: ~0.6 s, against 2.5 s converting every row)."""
    meta = _read_meta(directory)
    path = directory / SERIES_FILE
    strings = pa.types.is_string(pq.read_schema(path).field("key").type)
    table = pq.read_table(path, columns=["key", "time", *meta.channels], read_dictionary=["key"] if strings else None)
    keys, row_key = _key_codes(table.column("key"))
    times = _periods(meta.resolution, table.column("time"))
    values = {name: table.column(name).cast(pa.float64()).to_numpy() for name in meta.channels}
    del table
    pa.default_memory_pool().release_unused()  # return Arrow's read buffers to the OS
    return LoadedSeries(meta, keys.astype(object), row_key, times, values)


def _key_codes(column: pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """(sorted canonical keys, the index of each row's key among them)."""
    if not pa.types.is_dictionary(column.type):
        column = pc.dictionary_encode(column)
    column = column.unify_dictionaries()
    chunks = column.chunks
    dictionary = chunks[0].dictionary if chunks else pa.array([], pa.string())
    canonical = canonical_keys(pd.Series(dictionary.to_pylist(), dtype=object)).to_numpy()
    keys, remap = np.unique(canonical.astype(str), return_inverse=True)
    indices = [c.indices.to_numpy(zero_copy_only=False) for c in chunks]
    return keys, remap.astype(np.int32)[np.concatenate(indices) if indices else np.empty(0, dtype=np.int32)]


def _periods(resolution: str, column: pa.ChunkedArray) -> np.ndarray:
    """Each row's period number (int32), computed once per distinct time of each chunk."""
    out = np.empty(len(column), dtype=np.int32)
    at = 0
    for chunk in column.chunks:
        encoded = pc.dictionary_encode(chunk)
        distinct = encoded.dictionary.to_numpy(zero_copy_only=False)
        if not np.issubdtype(distinct.dtype, np.datetime64):
            distinct = pd.to_datetime(distinct).to_numpy(dtype="datetime64[s]")
        periods = periods_from_datetimes(resolution, distinct).astype(np.int32)
        np.take(periods, encoded.indices.to_numpy(zero_copy_only=False), out=out[at:at + len(chunk)])
        at += len(chunk)
    return out
