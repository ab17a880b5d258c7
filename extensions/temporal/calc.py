"""Arithmetic, comparison, `duration.between` / `inMonths` / `inDays` / `inSeconds` and the
accessors (`d.year`, `dur.minutesOfHour`, ...), as Neo4j (java.time underneath) computes them.

- temporal + duration: the months (the day clamped to the month's end), then the days, then the
  seconds and nanoseconds; a date takes whole days of the seconds, a time wraps at midnight; a
  named zone's date-time adds months and days to its local fields and seconds to its instant.
- duration * or / number: whole-number products are exact; otherwise each part's fraction flows
  into the smaller units (a month is 2,629,746 s), as for a duration built from a map.
- between: zoned against zoned by the instant (in the first one's zone), else by the local
  fields; months, then days, then the rest, each counted toward zero as java.time's `until`.
"""

from __future__ import annotations

import calendar
import datetime as dt
from fractions import Fraction

from .parse import MONTH_SECONDS
from .values import (DAY_NANOS, NANOS, ZONED, Duration, NotComputed, Temporal, argument_error, from_instant,
                     in_zone, make, offset_text)


def _plus_months(day: dt.date, months: int) -> dt.date:
    year, month = divmod(day.year * 12 + day.month - 1 + months, 12)
    if not 1 <= year <= 9999:
        raise NotComputed(f"a date in the year {year}")
    return dt.date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _plus_days(day: dt.date, days: int) -> dt.date:
    try:
        return day + dt.timedelta(days=days)
    except OverflowError:
        raise NotComputed("a date outside the years 1 to 9999") from None


def add(value: Temporal, d: Duration) -> Temporal:
    """`value + d` (`value - d` is `add(value, -d)`)."""
    if value.date is None:                           # times: the seconds only, around the clock
        return Temporal(value.kind, None, (value.nanos + d.total_nanos) % DAY_NANOS, value.zone, value.offset)
    day = _plus_days(_plus_months(value.date, d.months), d.days)
    if value.nanos is None:                          # a date: whole days of the seconds
        return make("date", _plus_days(day, _java_div(d.seconds, 86400)), None)
    if value.kind == "datetime" and value.zone.name is not None:
        return from_instant(make("datetime", day, value.nanos, value.zone).epoch_nanos() + d.total_nanos, value.zone)
    extra_days, nanos = divmod(value.nanos + d.total_nanos, DAY_NANOS)
    return make(value.kind, _plus_days(day, extra_days), nanos, value.zone)


def add_durations(a: Duration, b: Duration) -> Duration:
    return Duration(a.months + b.months, a.days + b.days, a.seconds + b.seconds, a.nanos + b.nanos)


def multiply(d: Duration, factor) -> Duration:
    """`d * factor`; `d / x` is `multiply(d, 1 / x)` with the exact reciprocal (see `divide`)."""
    if isinstance(factor, int):
        return Duration(d.months * factor, d.days * factor, d.seconds * factor, d.nanos * factor)
    return approximate(Fraction(d.months) * Fraction(factor), Fraction(d.days) * Fraction(factor),
                       Fraction(d.total_nanos) * Fraction(factor))


def divide(d: Duration, divisor) -> Duration:
    if divisor == 0:
        raise argument_error("/ by zero")
    return approximate(Fraction(d.months) / Fraction(divisor), Fraction(d.days) / Fraction(divisor),
                       Fraction(d.total_nanos) / Fraction(divisor))


def approximate(months: Fraction, days: Fraction, nanos: Fraction) -> Duration:
    whole_months = int(months)
    days += (months - whole_months) * MONTH_SECONDS / 86400
    whole_days = int(days)
    nanos += (days - whole_days) * DAY_NANOS
    return Duration(whole_months, whole_days, 0, int(nanos))


# ---------------------------------------------------------------- comparison


def compare(a, b) -> int | None:
    """-1, 0 or 1 for two values of one temporal kind; None when they cannot be ordered
    (other kinds, durations)."""
    if not (isinstance(a, Temporal) and isinstance(b, Temporal)) or a.kind != b.kind:
        return None
    if a.kind == "time":
        x, y = (v.nanos - v.offset * NANOS for v in (a, b))
    else:
        x, y = a.epoch_nanos(), b.epoch_nanos()
    return (x > y) - (x < y)


def equal(a, b) -> bool:
    """`a = b`. Zoned values of one instant in different zones are not decided here."""
    if isinstance(a, Duration) or isinstance(b, Duration) or a.kind != b.kind:
        return a == b
    if a.kind in ZONED and a.offset != b.offset or a.zone != b.zone:
        if compare(a, b) == 0:
            raise NotComputed("equality of one instant in two zones")
        return False
    return compare(a, b) == 0


# ---------------------------------------------------------------- between


def between(a: Temporal, b: Temporal, unit: str | None = None) -> Duration | None:
    """`duration.between(a, b)` (unit None), `inMonths` ("months"), `inDays` ("days") and
    `inSeconds` ("seconds"). A side without a date takes the other's, a side without a time is
    at midnight, and a local side is placed in the other's zone; then the months, the days and
    the rest are counted from `a` in its zone."""
    if a is None or b is None:
        return None
    zone = a.zone if a.kind in ZONED else b.zone if b.kind in ZONED else None
    start, end = _full(a, a.date or b.date, zone), _full(b, b.date or a.date, zone)
    if zone is not None:
        end = in_zone(end, start.zone)
    months = _until_months(start, end) if unit in (None, "months") else 0
    moved = _moved(start, months, 0)
    days = _until_days(moved, end) if unit in (None, "days") else 0
    if unit in ("months", "days"):
        return Duration(months, days)
    moved = _moved(start, months, days)
    return Duration(months, days, 0, end.epoch_nanos() - moved.epoch_nanos())


def _full(value: Temporal, day: dt.date | None, zone) -> Temporal:
    """`value` as a date-time: on `day` (1970-01-01 if neither side has one), at midnight if it
    has no time, in its own zone or else `zone` (local when None)."""
    day, nanos = day or dt.date(1970, 1, 1), value.nanos or 0
    if zone is None:
        return make("localdatetime", day, nanos)
    return make("datetime", day, nanos, value.zone if value.kind in ZONED else zone)


def _moved(start: Temporal, months: int, days: int) -> Temporal:
    return make(start.kind, _plus_days(_plus_months(start.date, months), days), start.nanos, start.zone)


def _until_months(start: Temporal, end: Temporal) -> int:
    """java.time's `until(end, MONTHS)` on the local fields (toward zero)."""
    last = _adjusted_end(start, end)
    packed_a = (start.date.year * 12 + start.date.month - 1) * 32 + start.date.day
    packed_b = (last.year * 12 + last.month - 1) * 32 + last.day
    return int((packed_b - packed_a) / 32)


def _until_days(start: Temporal, end: Temporal) -> int:
    return _adjusted_end(start, end).toordinal() - start.date.toordinal()


def _adjusted_end(start: Temporal, end: Temporal) -> dt.date:
    """The end's day, less one when its time is not yet the start's (more one backwards)."""
    if end.date > start.date and end.nanos < start.nanos:
        return end.date - dt.timedelta(days=1)
    if end.date < start.date and end.nanos > start.nanos:
        return end.date + dt.timedelta(days=1)
    return end.date


# ---------------------------------------------------------------- accessors


def _java_div(a: int, b: int) -> int:
    return abs(a) // b * (-1 if a < 0 else 1)


def _java_mod(a: int, b: int) -> int:
    return a - _java_div(a, b) * b


DURATION_FIELDS = {
    "years": lambda d: _java_div(d.months, 12), "quarters": lambda d: _java_div(d.months, 3),
    "months": lambda d: d.months, "weeks": lambda d: _java_div(d.days, 7), "days": lambda d: d.days,
    "hours": lambda d: _java_div(d.seconds, 3600), "minutes": lambda d: _java_div(d.seconds, 60),
    "seconds": lambda d: d.seconds, "milliseconds": lambda d: d.seconds * 1000 + d.nanos // 1_000_000,
    "microseconds": lambda d: d.seconds * 1_000_000 + d.nanos // 1000,
    "nanoseconds": lambda d: d.seconds * NANOS + d.nanos,
    "quartersofyear": lambda d: _java_div(_java_mod(d.months, 12), 3),
    "monthsofquarter": lambda d: _java_mod(d.months, 3), "monthsofyear": lambda d: _java_mod(d.months, 12),
    "daysofweek": lambda d: _java_mod(d.days, 7),
    "minutesofhour": lambda d: _java_mod(_java_div(d.seconds, 60), 60),
    "secondsofminute": lambda d: _java_mod(d.seconds, 60),
    "millisecondsofsecond": lambda d: d.nanos // 1_000_000, "microsecondsofsecond": lambda d: d.nanos // 1000,
    "nanosecondsofsecond": lambda d: d.nanos,
}

_DATE_FIELDS = {
    "year": lambda t: t.date.year, "month": lambda t: t.date.month, "day": lambda t: t.date.day,
    "quarter": lambda t: (t.date.month - 1) // 3 + 1, "week": lambda t: t.date.isocalendar()[1],
    "weekyear": lambda t: t.date.isocalendar()[0], "ordinalday": lambda t: t.date.timetuple().tm_yday,
    "weekday": lambda t: t.date.isoweekday(), "dayofweek": lambda t: t.date.isoweekday(),
    "dayofquarter": lambda t: (t.date - dt.date(t.date.year, 3 * ((t.date.month - 1) // 3) + 1, 1)).days + 1,
}
_TIME_FIELDS = {
    "hour": lambda t: t.nanos // (3600 * NANOS), "minute": lambda t: t.nanos // (60 * NANOS) % 60,
    "second": lambda t: t.nanos // NANOS % 60, "millisecond": lambda t: t.nanos % NANOS // 1_000_000,
    "microsecond": lambda t: t.nanos % NANOS // 1000, "nanosecond": lambda t: t.nanos % NANOS,
}
_ZONE_FIELDS = {
    "timezone": lambda t: t.zone.name or offset_text(t.offset), "offset": lambda t: offset_text(t.offset),
    "offsetminutes": lambda t: t.offset // 60, "offsetseconds": lambda t: t.offset,
}
_EPOCH_FIELDS = {"epochseconds": lambda t: t.epoch_nanos() // NANOS, "epochmillis": lambda t: t.epoch_nanos() // 1_000_000}


def accessor(value, key: str):
    """`value.key` for a temporal or duration; raises NotComputed for a key this kind lacks."""
    lowered = key.lower()
    if isinstance(value, Duration):
        table = DURATION_FIELDS
    else:
        table = {**(_DATE_FIELDS if value.date is not None else {}), **(_TIME_FIELDS if value.nanos is not None else {}),
                 **(_ZONE_FIELDS if value.kind in ZONED else {}),
                 **(_EPOCH_FIELDS if value.kind == "datetime" else {})}
    if lowered not in table:
        raise NotComputed(f"{key} of a {getattr(value, 'kind', 'duration')}")
    return table[lowered](value)

