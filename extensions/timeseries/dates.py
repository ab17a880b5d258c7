"""Date arguments of the `ts_*` functions, resolved to inclusive ranges of period numbers.

A period number is an integer counting the store's resolution unit, so a date range becomes
two integers that `np.searchsorted` can use:

- year:  the year (2020)
- month: months since year 0 (year * 12 + month - 1)
- day:   days since 1970-01-01 (numpy `datetime64[D]`)
- hour:  hours since 1970-01-01T00 (numpy `datetime64[h]`)

Accepted arguments: 'YYYY', 'YYYY-M', 'YYYY-MM', 'YYYY-M-D', an integer year, a
`neo4j.time.Date`/`DateTime`, a Python `date`/`datetime`, or null (an open bound).
A string names a whole period; a temporal value names the period that contains it (a Date on
hourly data names its whole day).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import neo4j.time

from core.errors import argument_error

RESOLUTIONS = ("year", "month", "day", "hour")
_RANK = {name: rank for rank, name in enumerate(RESOLUTIONS)}
_ADJECTIVE = {"year": "yearly", "month": "monthly", "day": "daily", "hour": "hourly"}
ACCEPTED_FORMS = ("'YYYY', 'YYYY-M', 'YYYY-MM', 'YYYY-M-D', an integer year, "
                  "a date/datetime value, or null for an open bound")
_DATE_RE = re.compile(r"^\s*(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?\s*$")
_EPOCH = dt.date(1970, 1, 1)


@dataclass(frozen=True, slots=True)
class DateSpec:
    """A parsed date argument: a calendar period, or an instant (`point`) of a temporal value."""

    granularity: str  # year | month | day | hour
    year: int
    month: int = 1
    day: int = 1
    hour: int = 0
    point: bool = False  # a temporal value: when finer than the data, the period that contains it

    def text(self) -> str:
        parts = [f"{self.year:04d}", f"{self.month}", f"{self.day}"][: _RANK[self.granularity] + 1]
        return "-".join(parts)


def adjective(resolution: str) -> str:
    """'monthly' for 'month': how error messages name a resolution."""
    return _ADJECTIVE[resolution]


def forms_for(resolution: str) -> str:
    """The string forms that are valid at a resolution, for error messages."""
    forms = {"year": "'YYYY'", "month": "'YYYY' or 'YYYY-M'"}.get(resolution, "'YYYY', 'YYYY-M' or 'YYYY-M-D'")
    return f"{forms} (or a date value, which selects the {resolution} containing it)"


@lru_cache(maxsize=4096)
def _parse_text(text: str) -> DateSpec:
    match = _DATE_RE.match(text)
    if not match:
        raise argument_error(f"Invalid date '{text}'. Accepted forms: {ACCEPTED_FORMS}.")
    year, month, day = (int(g) if g else None for g in match.groups())
    if month is not None and not 1 <= month <= 12:
        raise argument_error(f"Invalid date '{text}': month {month} is not 1-12. Accepted forms: {ACCEPTED_FORMS}.")
    if day is not None and not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise argument_error(f"Invalid date '{text}': {year}-{month:02d} has no day {day}. "
                             f"Accepted forms: {ACCEPTED_FORMS}.")
    if year < 1:
        raise argument_error(f"Invalid date '{text}': year must be 1-9999. Accepted forms: {ACCEPTED_FORMS}.")
    granularity = "year" if month is None else "month" if day is None else "day"
    return DateSpec(granularity, year, month or 1, day or 1)


def parse_date(value) -> DateSpec | None:
    """Parse one date argument; None stays None (an open bound). Raises ArgumentError."""
    if value is None:
        return None
    if isinstance(value, str):
        return _parse_text(value)
    if isinstance(value, int) and not isinstance(value, bool):
        if not 1 <= value <= 9999:
            raise argument_error(f"Invalid year {value}: must be 1-9999. Accepted forms: {ACCEPTED_FORMS}.")
        return DateSpec("year", value)
    if isinstance(value, (neo4j.time.DateTime, dt.datetime)):
        return DateSpec("hour", value.year, value.month, value.day, value.hour, point=True)
    if isinstance(value, (neo4j.time.Date, dt.date)):
        return DateSpec("day", value.year, value.month, value.day, point=True)
    raise argument_error(f"Invalid date argument {value!r} of type {type(value).__name__}. "
                         f"Accepted forms: {ACCEPTED_FORMS}.")


def period_of(resolution: str, year: int, month: int = 1, day: int = 1, hour: int = 0) -> int:
    """The period number containing that instant."""
    if resolution == "year":
        return year
    if resolution == "month":
        return year * 12 + month - 1
    days = (dt.date(year, month, day) - _EPOCH).days
    return days if resolution == "day" else days * 24 + hour


def spec_range(spec: DateSpec, resolution: str, *, where: str = "") -> tuple[int, int]:
    """The inclusive [first, last] periods a date covers, at `resolution`.

    A string finer than the resolution is an error (it would silently mean its whole period).
    """
    if spec.point and _RANK[spec.granularity] >= _RANK[resolution]:
        first = period_of(resolution, spec.year, spec.month, spec.day, spec.hour)
        return first, first
    if _RANK[spec.granularity] > _RANK[resolution]:
        raise argument_error(
            f"Date '{spec.text()}' is finer than the {adjective(resolution)} resolution"
            f"{' of ' + where if where else ''}. Use {forms_for(resolution)}.")
    first = period_of(resolution, spec.year, spec.month, spec.day)
    if spec.granularity == "year":
        last_month, last_day = 12, 31
    elif spec.granularity == "month":
        last_month, last_day = spec.month, calendar.monthrange(spec.year, spec.month)[1]
    else:
        last_month, last_day = spec.month, spec.day
    return first, period_of(resolution, spec.year, last_month, last_day, 23)


def resolve_range(args: tuple, resolution: str, *, where: str = "") -> tuple[int | None, int | None]:
    """Resolve the date arguments of a range function to inclusive period bounds (None = open).

    No argument: everything. One argument: that whole period (null: everything).
    Two arguments: from the first period of the first to the last period of the second.
    """
    if not args:
        return None, None
    start = parse_date(args[0])
    if len(args) == 1:
        return (None, None) if start is None else spec_range(start, resolution, where=where)
    end = parse_date(args[1])
    first = None if start is None else spec_range(start, resolution, where=where)[0]
    last = None if end is None else spec_range(end, resolution, where=where)[1]
    return first, last


def resolve_single(value, resolution: str, *, where: str = "") -> int | None:
    """Resolve a date that must name exactly one period (ts_at, ts_delta); None stays None."""
    spec = parse_date(value)
    if spec is None:
        return None
    first, last = spec_range(spec, resolution, where=where)
    if first != last:
        raise argument_error(
            f"Date '{spec.text()}' covers several periods of the {adjective(resolution)} data"
            f"{' of ' + where if where else ''}; this function needs one {resolution}. "
            f"Use {_single_form(resolution)}.")
    return first


def _single_form(resolution: str) -> str:
    return {"year": "'YYYY'", "month": "'YYYY-M'"}.get(resolution, "'YYYY-M-D'") + " or a date value"


def period_starts(resolution: str, periods: np.ndarray) -> list:
    """Period numbers -> the neo4j temporal value of each period's start (Date, DateTime for hours)."""
    periods = np.asarray(periods, dtype=np.int64)
    if resolution == "year":
        return [neo4j.time.Date(int(y), 1, 1) for y in periods]
    if resolution == "month":
        return [neo4j.time.Date(int(p // 12), int(p % 12) + 1, 1) for p in periods]
    if resolution == "day":
        return [neo4j.time.Date.from_native(d) for d in periods.astype("datetime64[D]").tolist()]
    return [neo4j.time.DateTime.from_native(d) for d in periods.astype("datetime64[h]").astype("datetime64[s]").tolist()]


def periods_from_datetimes(resolution: str, times: np.ndarray) -> np.ndarray:
    """numpy datetime64 array -> period numbers (vectorised; truncates to the period)."""
    if resolution == "year":
        return times.astype("datetime64[Y]").astype(np.int64) + 1970
    if resolution == "month":
        return times.astype("datetime64[M]").astype(np.int64) + 1970 * 12
    if resolution == "day":
        return times.astype("datetime64[D]").astype(np.int64)
    return times.astype("datetime64[h]").astype(np.int64)


def periods_to_datetimes(resolution: str, periods: np.ndarray) -> np.ndarray:
    """Period numbers -> datetime64[s] of each period's start (the inverse of the above)."""
    periods = np.asarray(periods, dtype=np.int64)
    unit = {"year": "Y", "month": "M", "day": "D", "hour": "h"}[resolution]
    offset = {"year": 1970, "month": 1970 * 12}.get(resolution, 0)
    return (periods - offset).astype(f"datetime64[{unit}]").astype("datetime64[s]")


def infer_resolution(times: np.ndarray) -> str:
    """The coarsest resolution that truncates no timestamp (all on the 1st of a month -> month, ...)."""
    for resolution, unit in (("year", "Y"), ("month", "M"), ("day", "D")):
        if (times.astype(f"datetime64[{unit}]") == times).all():
            return resolution
    return "hour"
