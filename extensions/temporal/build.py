"""Neo4j's temporal constructors: `date(...)`, `localtime(...)`, `time(...)`,
`localdatetime(...)`, `datetime(...)` of a string, a map or another temporal, the epoch forms,
and `<kind>.truncate(unit, value, map)`.

A map names calendar fields (`year`, `month`, `day`; or `week`, `dayOfWeek`; or `quarter`,
`dayOfQuarter`; or `ordinalDay`), clock fields (`hour` ... `nanosecond`) and `timezone`, and may
start from another value (`date: d`, `time: t`, `datetime: dt`): its fields are kept unless
named. A zoned value given a new `timezone` is converted to it (the same instant); a local one
is placed in it. Truncation keeps the local fields down to the unit, then applies the map, its
`timezone` placing the value rather than converting it.
"""

from __future__ import annotations

import datetime as dt
from .parse import read, read_zone
from .values import (HAS_DATE, HAS_TIME, NANOS, UTC, ZONED, NotComputed, Temporal, Zone, argument_error, from_instant,
                     in_zone, make)

DATE_FIELDS = {"year", "month", "day", "week", "dayofweek", "quarter", "dayofquarter", "ordinalday"}
CLOCK_FIELDS = {"hour", "minute", "second", "millisecond", "microsecond", "nanosecond"}
BASES = {"date", "time", "datetime"}
EPOCH_FIELDS = {"epochseconds", "epochmillis"}


def construct(kind: str, arg, default_zone: Zone = UTC):
    """`kind(arg)`: arg a string, a map (keys as written) or a Temporal; None gives None."""
    if arg is None:
        return None
    if isinstance(arg, str):
        return read(arg, kind, default_zone)
    if isinstance(arg, Temporal):
        return convert(kind, arg, default_zone)
    if isinstance(arg, dict):
        return from_map(kind, {key.lower(): value for key, value in arg.items()}, default_zone)
    raise argument_error(f"{kind}() takes a string, a map or a temporal value, not {arg!r}")


def convert(kind: str, value: Temporal, default_zone: Zone = UTC) -> Temporal:
    """`date(datetime)`, `localtime(time)`, `datetime(localdatetime)`, ..."""
    if kind in HAS_DATE and value.date is None or kind not in HAS_DATE and value.nanos is None:
        raise NotComputed(f"{kind}() of a {value.kind}")
    return make(kind, value.date, value.nanos or 0, value.zone or default_zone)


def _integer(m: dict, key: str, default=None):
    value = m.get(key, default)
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise argument_error(f"The value of {key} must be an integer, not {value!r}")
    return value


def from_map(kind: str, m: dict, default_zone: Zone = UTC) -> Temporal:
    unknown = set(m) - DATE_FIELDS - CLOCK_FIELDS - BASES - EPOCH_FIELDS - {"timezone"}
    if unknown:
        raise argument_error(f"{kind} components map contains an unknown key: {sorted(unknown)[0]}")
    if m.keys() & EPOCH_FIELDS:
        return _from_epoch(kind, m)
    bases = {key: m[key] for key in BASES if m.get(key) is not None}
    for key, base in bases.items():
        if not isinstance(base, Temporal):
            raise argument_error(f"{key}: expected a temporal value, got {base!r}")
    date_base = next((b.date for b in (bases.get("date"), bases.get("datetime")) if b is not None and b.date), None)
    time_base = next((b for b in (bases.get("time"), bases.get("datetime")) if b is not None and b.nanos is not None),
                     None)
    if "datetime" in bases and "time" not in bases and bases["datetime"].nanos is None:
        time_base = None
    day = _day(m, date_base) if kind in HAS_DATE else None
    nanos = _clock(m, time_base) if kind in HAS_TIME else None
    zone = read_zone_value(m.get("timezone")) if "timezone" in m else None
    if kind not in ZONED:
        return make(kind, day, nanos)
    base_zone = time_base.zone if time_base is not None and time_base.kind in ZONED else None
    if base_zone is None:
        return make(kind, day, nanos, zone or default_zone)
    value = make(kind, day, nanos, base_zone)
    if kind == "time":
        value = Temporal("time", None, nanos, Zone(time_base.offset), time_base.offset)
    return in_zone(value, zone) if zone is not None else value


def read_zone_value(text) -> Zone:
    if not isinstance(text, str):
        raise argument_error(f"timezone must be a string, not {text!r}")
    if text[:1] in "+-Z" and len(text) <= 9:
        return read_zone(text, None)
    return read_zone(None, text)


def _day(m: dict, base: dt.date | None) -> dt.date:
    year = _integer(m, "year")
    try:
        if m.keys() & {"week", "dayofweek"}:
            iso = base.isocalendar() if base else None
            return dt.date.fromisocalendar(year if year is not None else _need(iso, "year")[0],
                                           _integer(m, "week", iso[1] if iso else 1),
                                           _integer(m, "dayofweek", iso[2] if iso else 1))
        if m.keys() & {"quarter", "dayofquarter"}:
            year = year if year is not None else _need(base, "year").year
            quarter = _integer(m, "quarter", (base.month - 1) // 3 + 1 if base else 1)
            offset = _integer(m, "dayofquarter", _day_of_quarter(base) if base else 1)
            if not 1 <= quarter <= 4:
                raise ValueError
            start = dt.date(year, 3 * quarter - 2, 1)
            day = start + dt.timedelta(days=offset - 1)
            if offset < 1 or (day.month - 1) // 3 != quarter - 1:
                raise ValueError
            return day
        if "ordinalday" in m:
            year = year if year is not None else _need(base, "year").year
            ordinal = _integer(m, "ordinalday")
            day = dt.date(year, 1, 1) + dt.timedelta(days=ordinal - 1)
            if ordinal < 1 or day.year != year:
                raise ValueError
            return day
        if base is None and year is None:
            raise argument_error("year must be specified")
        if base is None and "day" in m and "month" not in m:
            raise argument_error("month must be specified")
        return dt.date(year if year is not None else base.year, _integer(m, "month", base.month if base else 1),
                       _integer(m, "day", base.day if base else 1))
    except (ValueError, OverflowError):
        raise argument_error(f"Invalid value for a date in {_shown(m)}") from None


def _need(value, key: str):
    if value is None:
        raise argument_error(f"{key} must be specified")
    return value


def _day_of_quarter(day: dt.date) -> int:
    return (day - dt.date(day.year, 3 * ((day.month - 1) // 3) + 1, 1)).days + 1


def _clock(m: dict, base: Temporal | None) -> int:
    seconds, fraction = divmod(base.nanos, NANOS) if base is not None else (0, 0)
    hour = _integer(m, "hour", seconds // 3600)
    minute = _integer(m, "minute", seconds // 60 % 60 if base is not None else 0)
    second = _integer(m, "second", seconds % 60 if base is not None else 0)
    if base is None:
        for smaller, larger in (("minute", "hour"), ("second", "minute")):
            if smaller in m and larger not in m:
                raise argument_error(f"{larger} must be specified")
        if m.keys() & {"millisecond", "microsecond", "nanosecond"} and "second" not in m:
            raise argument_error("second must be specified")
    if m.keys() & {"millisecond", "microsecond", "nanosecond"}:
        ms, us, ns = (_integer(m, key, 0) for key in ("millisecond", "microsecond", "nanosecond"))
        limits = (ms, 999), (us, 999 if "millisecond" in m else 999_999), \
                 (ns, 999 if m.keys() & {"millisecond", "microsecond"} else 999_999_999)
        if any(not 0 <= v <= top for v, top in limits):
            raise argument_error(f"Invalid value for a fraction of a second in {_shown(m)}")
        fraction = ms * 1_000_000 + us * 1000 + ns
    if not (0 <= hour <= 23 and 0 <= minute <= 59 and 0 <= second <= 59):
        raise argument_error(f"Invalid value for a time in {_shown(m)}")
    return ((hour * 60 + minute) * 60 + second) * NANOS + fraction


def _from_epoch(kind: str, m: dict) -> Temporal:
    if kind != "datetime":
        raise argument_error(f"{kind} cannot be built from epochSeconds or epochMillis")
    fraction = sum(_integer(m, key, 0) * size for key, size in
                   (("millisecond", 1_000_000), ("microsecond", 1000), ("nanosecond", 1)))
    if "epochseconds" in m:
        instant = _integer(m, "epochseconds") * NANOS + fraction
    else:
        instant = _integer(m, "epochmillis") * 1_000_000 + fraction
    zone = read_zone_value(m["timezone"]) if "timezone" in m else UTC
    return from_instant(instant, zone)


def from_epoch(seconds, nanos) -> Temporal:
    """`datetime.fromepoch(seconds, nanoseconds)`"""
    return _from_epoch("datetime", {"epochseconds": seconds, "nanosecond": nanos})


def from_epoch_millis(millis) -> Temporal:
    return _from_epoch("datetime", {"epochmillis": millis})


def _shown(m: dict) -> str:
    return "{" + ", ".join(f"{k}: {v!r}" for k, v in m.items() if not isinstance(v, Temporal)) + "}"


# ---------------------------------------------------------------- truncate

DATE_UNITS = ("millennium", "century", "decade", "year", "weekyear", "quarter", "month", "week", "day")
TIME_UNITS = {"hour": 3600 * NANOS, "minute": 60 * NANOS, "second": NANOS, "millisecond": 1_000_000,
              "microsecond": 1000}


def truncate(kind: str, unit: str, value: Temporal, m: dict | None, default_zone: Zone = UTC) -> Temporal | None:
    """`kind.truncate(unit, value, m)`."""
    if value is None:
        return None
    unit = unit.lower() if isinstance(unit, str) else unit
    if unit not in DATE_UNITS and unit not in TIME_UNITS:
        raise argument_error(f"Unit '{unit}' is not supported by {kind}.truncate")
    if kind in HAS_DATE and value.date is None or kind not in HAS_DATE and value.nanos is None \
            or kind not in HAS_DATE and unit in DATE_UNITS and unit != "day":
        raise NotComputed(f"{kind}.truncate({unit!r}) of a {value.kind}")
    m = {key.lower(): v for key, v in (m or {}).items()}
    day = _truncate_day(value.date, unit) if kind in HAS_DATE else None
    nanos = value.nanos or 0
    nanos = 0 if unit in DATE_UNITS else nanos - nanos % TIME_UNITS[unit]
    zone = read_zone_value(m.pop("timezone")) if "timezone" in m else (value.zone or default_zone)
    nanos += sum(m.pop(key, 0) * size for key, size in _FRACTIONS)     # below the unit: added
    truncated = make(kind, day, nanos, zone)
    if not m:
        return truncated
    base = "datetime" if kind in HAS_DATE and kind in HAS_TIME else "date" if kind == "date" else "time"
    return from_map(kind, {base: truncated, **m})


_FRACTIONS = (("millisecond", 1_000_000), ("microsecond", 1000), ("nanosecond", 1))


def _truncate_day(day: dt.date, unit: str) -> dt.date:
    if unit in ("millennium", "century", "decade", "year"):
        size = {"millennium": 1000, "century": 100, "decade": 10, "year": 1}[unit]
        if day.year - day.year % size < 1:
            raise NotComputed(f"the {unit} of the year {day.year}")
        return dt.date(day.year - day.year % size, 1, 1)
    if unit == "weekyear":
        return dt.date.fromisocalendar(day.isocalendar()[0], 1, 1)
    if unit == "quarter":
        return dt.date(day.year, 3 * ((day.month - 1) // 3) + 1, 1)
    if unit == "month":
        return day.replace(day=1)
    if unit == "week":
        return day - dt.timedelta(days=day.weekday())
    return day
