"""Import timeseries from CSV or Parquet into the store (`cypher-proxy ts import`).

The source is read in chunks (progress is reported as rows done / total), every row is
validated with an error naming its row number and the bad value, and the result is written
with `TimeseriesStore.write`, which is atomic: a failed import leaves the old store as it was.
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import numpy as np
import pandas as pd
import pyarrow.parquet as pq

from .dates import RESOLUTIONS, infer_resolution
from .store import TimeseriesStore, default_root

CHUNK_ROWS = 200_000


class TimeseriesImportError(ValueError):
    """Bad input or options for an import; the message names the row, column and value."""


@dataclass(frozen=True)
class ImportResult:
    label: str
    rows: int
    keys: int
    resolution: str
    channels: list[str]


def import_timeseries(source: Path, store: TimeseriesStore, *, label: str, key_column: str,
                      key_property: str = "id", channels: list[str] | dict[str, str],
                      date_column: str | None = None, year_column: str | None = None,
                      month_column: str | None = None, day_column: str | None = None,
                      resolution: str | None = None, units: dict[str, str] | None = None,
                      progress: Callable[[int, int], None] | None = None,
                      chunk_rows: int = CHUNK_ROWS) -> ImportResult:
    """Read `source` (.csv or .parquet), validate it, and replace `label`'s series in `store`.

    Time comes from `date_column`, or from `year_column` (+ `month_column` (+ `day_column`)).
    `channels` maps source columns to channel names (a list keeps the names). `resolution`
    is inferred when None: from the year/month/day columns given, else from the dates.
    """
    source = Path(source)
    mapping = dict(channels) if isinstance(channels, dict) else {c: c for c in channels}
    _check_options(mapping, date_column, year_column, month_column, day_column, resolution)
    time_columns = [c for c in (date_column, year_column, month_column, day_column) if c]
    needed = list(dict.fromkeys([key_column, *time_columns, *mapping]))
    reader, total = _open(source, needed, chunk_rows)
    frames, done = [], 0
    for chunk in reader:
        frames.append(_convert(chunk, done, key_column, mapping, date_column, year_column, month_column,
                               day_column, source.suffix.lower() == ".csv"))
        done += len(chunk)
        if progress:
            progress(done, max(total, done))
    if progress and done != total:  # the line count was an estimate (blank lines, quoted newlines)
        progress(done, done)
    frame = pd.concat(frames, ignore_index=True) if frames else _empty(mapping)
    if resolution is None:
        resolution = ("day" if day_column else "month" if month_column else "year" if year_column
                      else infer_resolution(frame["time"].to_numpy()) if len(frame) else "day")
    try:
        store.write(label, frame, key_property=key_property, resolution=resolution, units=units)
    except ValueError as exc:
        raise TimeseriesImportError(f"{source}: {exc}") from exc
    return ImportResult(label, len(frame), int(frame["key"].nunique()), resolution, list(mapping.values()))


def _check_options(mapping, date_column, year_column, month_column, day_column, resolution) -> None:
    if not mapping:
        raise TimeseriesImportError("No channels: name at least one value column (--channel src[:name])")
    if bool(date_column) == bool(year_column):
        raise TimeseriesImportError("Give either a date column or a year column (+ month, + day columns)")
    if (day_column and not month_column) or (month_column and not year_column):
        raise TimeseriesImportError("A day column needs a month column, and a month column a year column")
    if resolution is not None and resolution not in RESOLUTIONS:
        raise TimeseriesImportError(f"Unknown resolution {resolution!r}: use one of {', '.join(RESOLUTIONS)}")
    clashes = {"key", "time"} & set(mapping.values())
    if clashes or len(set(mapping.values())) != len(mapping):
        raise TimeseriesImportError(f"Channel names must be distinct and not 'key' or 'time': {list(mapping.values())}")


def _open(source: Path, columns: list[str], chunk_rows: int) -> tuple[Iterator[pd.DataFrame], int]:
    """A chunk iterator over `columns` of the source, and its total row count (for progress)."""
    if not source.is_file():
        raise TimeseriesImportError(f"No such file: {source}")
    suffix = source.suffix.lower()
    if suffix == ".parquet":
        parquet = pq.ParquetFile(source)
        _check_columns(source, columns, parquet.schema_arrow.names)
        batches = parquet.iter_batches(batch_size=chunk_rows, columns=columns)
        return (batch.to_pandas() for batch in batches), parquet.metadata.num_rows
    if suffix == ".csv":
        header = pd.read_csv(source, nrows=0, encoding="utf-8-sig").columns
        _check_columns(source, columns, list(header))
        reader = pd.read_csv(source, usecols=columns, dtype=str, keep_default_na=False,
                             chunksize=chunk_rows, encoding="utf-8-sig")
        return iter(reader), _count_lines(source) - 1
    raise TimeseriesImportError(f"{source}: unsupported file type {suffix!r}; use .csv or .parquet")


def _check_columns(source: Path, wanted: list[str], present: list[str]) -> None:
    missing = [c for c in wanted if c not in present]
    if missing:
        raise TimeseriesImportError(f"{source}: no column(s) {missing}. Columns: {', '.join(map(str, present))}")


def _count_lines(path: Path) -> int:
    lines, last = 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")


def _blank(column: pd.Series) -> np.ndarray:
    """Null, or an empty / whitespace-only string."""
    blank = column.isna().to_numpy()
    if column.dtype == object or pd.api.types.is_string_dtype(column.dtype):
        blank = blank | column.astype(str).str.strip().eq("").to_numpy()
    return blank


def _fail(problem: str, column: str, chunk: pd.DataFrame, positions: np.ndarray, offset: int, csv: bool):
    pos = int(positions[0])
    row = offset + pos + 1
    where = f"row {row} (line {row + 1})" if csv else f"row {row}"
    raise TimeseriesImportError(f"{where}: {problem} in column '{column}': {chunk[column].iloc[pos]!r}"
                                + (f" ({len(positions)} such rows in this chunk)" if len(positions) > 1 else ""))


def _numbers(chunk, column, offset, csv, *, problem="non-numeric value") -> pd.Series:
    values = pd.to_numeric(chunk[column].where(~_blank(chunk[column])), errors="coerce")
    bad = np.flatnonzero(values.isna().to_numpy() & ~_blank(chunk[column]) & ~_nan_text(chunk[column]))
    if len(bad):
        _fail(problem, column, chunk, bad, offset, csv)
    return values.astype(np.float64)


def _nan_text(column: pd.Series) -> np.ndarray:
    if not (column.dtype == object or pd.api.types.is_string_dtype(column.dtype)):
        return np.zeros(len(column), dtype=bool)
    return column.astype(str).str.strip().str.lower().isin(["nan", "na", "null", "none"]).to_numpy()


def _convert(chunk, offset, key_column, mapping, date_column, year_column, month_column, day_column,
             csv) -> pd.DataFrame:
    """One validated chunk as (key, time, channels...)."""
    missing_key = np.flatnonzero(_blank(chunk[key_column]))
    if len(missing_key):
        _fail("missing key", key_column, chunk, missing_key, offset, csv)
    times = (_dates(chunk, date_column, offset, csv) if date_column
             else _date_parts(chunk, year_column, month_column, day_column, offset, csv))
    frame = pd.DataFrame({"key": chunk[key_column].to_numpy(), "time": times})
    for column, name in mapping.items():
        frame[name] = _numbers(chunk, column, offset, csv).to_numpy()
    return frame


def _dates(chunk, column, offset, csv) -> np.ndarray:
    values = chunk[column]
    blank = _blank(values)
    if len(np.flatnonzero(blank)):
        _fail("missing date", column, chunk, np.flatnonzero(blank), offset, csv)
    if pd.api.types.is_numeric_dtype(values.dtype):  # a numeric date column holds years
        return _date_parts(chunk, column, None, None, offset, csv)
    if not (values.dtype == object or pd.api.types.is_string_dtype(values.dtype)):
        parsed = pd.to_datetime(values)
        return (parsed.dt.tz_localize(None) if parsed.dt.tz is not None else parsed).to_numpy("datetime64[s]")
    text = values.astype(str).str.strip()
    parsed = pd.to_datetime(text, errors="coerce", format="ISO8601")
    retry = parsed.isna().to_numpy()
    if retry.any():
        parsed[retry] = pd.to_datetime(text[retry], errors="coerce", format="mixed")
    bad = np.flatnonzero(parsed.isna().to_numpy())
    if len(bad):
        _fail("unparseable date", column, chunk, bad, offset, csv)
    if parsed.dt.tz is not None:
        parsed = parsed.dt.tz_localize(None)
    return parsed.to_numpy("datetime64[s]")


def _date_parts(chunk, year_column, month_column, day_column, offset, csv) -> np.ndarray:
    parts = {}
    for unit, column, low, high in (("year", year_column, 1, 9999), ("month", month_column, 1, 12),
                                    ("day", day_column, 1, 31)):
        if not column:
            parts[unit] = np.ones(len(chunk), dtype=np.int64)
            continue
        values = _numbers(chunk, column, offset, csv, problem=f"non-numeric {unit}").to_numpy()
        bad = np.flatnonzero(np.isnan(values) | (values != np.floor(values)) | (values < low) | (values > high))
        if len(bad):
            _fail(f"invalid {unit}", column, chunk, bad, offset, csv)
        parts[unit] = values.astype(np.int64)
    times = pd.to_datetime(pd.DataFrame(parts), errors="coerce")
    bad = np.flatnonzero(times.isna().to_numpy())
    if len(bad):
        _fail("invalid date (no such day in that month)", day_column, chunk, bad, offset, csv)
    return times.to_numpy("datetime64[s]")


def _empty(mapping: dict[str, str]) -> pd.DataFrame:
    return pd.DataFrame({"key": pd.Series([], dtype=object), "time": pd.Series([], dtype="datetime64[s]"),
                         **{name: pd.Series([], dtype=np.float64) for name in mapping.values()}})


# -- command line -------------------------------------------------------------------------------

def _channel(text: str) -> tuple[str, str]:
    source, found, name = text.partition(":")
    if not source or (found and not name):
        raise argparse.ArgumentTypeError(f"expected SRC or SRC:NAME, got {text!r}")
    return source, name or source


def _unit(text: str) -> tuple[str, str]:
    channel, _, unit = text.partition("=")
    if not channel or not unit:
        raise argparse.ArgumentTypeError(f"expected CHANNEL=UNIT, got {text!r}")
    return channel, unit


def add_import_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of `cypher-proxy ts import`."""
    parser.add_argument("source", type=Path, help="CSV or Parquet file")
    parser.add_argument("--data-dir", type=Path, default=Path(os.environ.get("CYPHER_PROXY_DATA_DIR", "data")),
                        help="the proxy's data directory; series go to <data-dir>/timeseries (default ./data)")
    parser.add_argument("--label", required=True, help="node label the series belong to, e.g. ProductionProfile")
    parser.add_argument("--key-column", required=True, help="source column holding each row's node key")
    parser.add_argument("--key-property", default="id",
                        help="node property whose value equals the key column (default id)")
    parser.add_argument("--channel", action="append", required=True, type=_channel,
                        metavar="SRC[:NAME]", help="value column to import, optionally renamed (repeatable)")
    parser.add_argument("--date-column", help="column with dates (e.g. 2020-03-01)")
    parser.add_argument("--year-column", help="column with years (instead of --date-column)")
    parser.add_argument("--month-column", help="column with months 1-12 (with --year-column)")
    parser.add_argument("--day-column", help="column with days of month (with --month-column)")
    parser.add_argument("--resolution", choices=RESOLUTIONS, help="year|month|day|hour (default: inferred)")
    parser.add_argument("--unit", action="append", default=[], type=_unit,
                        metavar="CHANNEL=UNIT", help="unit of a channel, e.g. oil=MSm3 (repeatable)")


def run_import(args: argparse.Namespace) -> int:
    """Run an import from parsed arguments, with progress on stderr. Returns the exit code."""
    def progress(done: int, total: int) -> None:
        print(f"\r{args.label}: {done:,}/{total:,} rows ({100 * done / max(total, 1):.0f}%)",
              end="", file=sys.stderr, flush=True)

    store = TimeseriesStore(default_root(args.data_dir))
    try:
        result = import_timeseries(
            args.source, store, label=args.label, key_column=args.key_column, key_property=args.key_property,
            channels=dict(args.channel), date_column=args.date_column, year_column=args.year_column,
            month_column=args.month_column, day_column=args.day_column, resolution=args.resolution,
            units=dict(args.unit) or None, progress=progress)
    except TimeseriesImportError as exc:
        print(f"\nerror: {exc}", file=sys.stderr)
        return 1
    print(f"\n{result.label}: imported {result.rows:,} rows for {result.keys:,} keys at {result.resolution} "
          f"resolution, channels {', '.join(result.channels)} -> {store.root / result.label}", file=sys.stderr)
    return 0
