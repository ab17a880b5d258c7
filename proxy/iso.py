"""Temporal and spatial values as the text Neo4j's HTTP APIs use: ISO-8601 and WKT.

Formatting follows what Neo4j prints (Java's ISO formatters): seconds always shown,
the fraction trimmed of trailing zeros, `Z` for a zero offset, a zone id in brackets
after the offset. Parsing accepts what the drivers send (nanoseconds included, which
Python's `datetime.fromisoformat` would cut to microseconds).
"""

from __future__ import annotations

import datetime as _dt
import re

import pytz
from neo4j.spatial import CartesianPoint, Point, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

from core.values import zone_id

_SRID_CLASSES = {7203: (CartesianPoint, 2), 9157: (CartesianPoint, 3),
                 4326: (WGS84Point, 2), 4979: (WGS84Point, 3)}


class IsoError(ValueError):
    """Text that is not the ISO-8601 / WKT form of the value type it claims to be."""


# ---- formatting ---------------------------------------------------------------------------

def _fraction(nanos: int) -> str:
    return f".{nanos:09d}".rstrip("0") if nanos else ""


def _clock(hour: int, minute: int, second: int, nanos: int) -> str:
    return f"{hour:02d}:{minute:02d}:{second:02d}{_fraction(nanos)}"


def _offset(offset: _dt.timedelta | None) -> str:
    seconds = int(offset.total_seconds()) if offset is not None else 0
    if seconds == 0:
        return "Z"
    sign, seconds = ("-", -seconds) if seconds < 0 else ("+", seconds)
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}"
    return text + (f":{seconds % 60:02d}" if seconds % 60 else "")


def _date(year: int, month: int, day: int) -> str:
    return f"{year:04d}-{month:02d}-{day:02d}" if 0 <= year <= 9999 else f"{year:+d}-{month:02d}-{day:02d}"


def format_date(value: Date | _dt.date) -> str:
    return _date(value.year, value.month, value.day)


def format_time(value: Time | _dt.time) -> str:
    """`LocalTime` without a tzinfo, `Time` (with offset) with one."""
    nanos = value.nanosecond if isinstance(value, Time) else value.microsecond * 1000
    text = _clock(value.hour, value.minute, value.second, nanos)
    return text if value.tzinfo is None else text + _offset(value.utcoffset())


def format_datetime(value: DateTime | _dt.datetime) -> str:
    if isinstance(value, DateTime):
        nanos = value.nanosecond
        native = value.to_native() if value.tzinfo is not None else None
    else:
        nanos = value.microsecond * 1000 + getattr(value, "nanosecond", 0)   # pandas.Timestamp
        native = value
    clock = _clock(value.hour, value.minute, value.second, nanos)
    text = f"{_date(value.year, value.month, value.day)}T{clock}"
    if value.tzinfo is None:
        return text
    # The offset is asked of a native datetime: zoneinfo misreads neo4j.time.DateTime.
    text += _offset(value.tzinfo.utcoffset(native))
    zone = zone_id(value.tzinfo)
    return f"{text}[{zone}]" if zone else text


def datetime_kind(value: DateTime | _dt.datetime) -> str:
    """`LocalDateTime`, `OffsetDateTime` or `ZonedDateTime` (the Query API's type names)."""
    if value.tzinfo is None:
        return "LocalDateTime"
    return "ZonedDateTime" if zone_id(value.tzinfo) else "OffsetDateTime"


def _split(total: int, size: int) -> tuple[int, int]:
    """Java-style division: both parts carry the sign of `total`."""
    quotient, remainder = divmod(abs(total), size)
    return (quotient, remainder) if total >= 0 else (-quotient, -remainder)


def format_duration(value: Duration | _dt.timedelta) -> str:
    if isinstance(value, _dt.timedelta):
        value = Duration(days=value.days, seconds=value.seconds, microseconds=value.microseconds)
    years, months = _split(value.months, 12)
    hours, rest = _split(value.seconds, 3600)
    minutes, seconds = _split(rest, 60)
    date = "".join(f"{n}{unit}" for n, unit in ((years, "Y"), (months, "M"), (value.days, "D")) if n)
    time = "".join(f"{n}{unit}" for n, unit in ((hours, "H"), (minutes, "M")) if n)
    nanos = value.nanoseconds
    if seconds or nanos:
        sign = "-" if seconds < 0 or nanos < 0 else ""
        time += f"{sign}{abs(seconds)}{_fraction(abs(nanos))}S"
    if not date and not time:
        return "PT0S"
    return f"P{date}T{time}" if time else f"P{date}"


def format_point(value: Point) -> str:
    """`SRID=4326;POINT (x y)`, or `POINT Z (x y z)` in three dimensions."""
    coords = " ".join(_coordinate(c) for c in value)
    return f"SRID={value.srid};POINT{' Z' if len(value) == 3 else ''} ({coords})"


def _coordinate(c: float) -> str:
    return repr(float(c)).replace("nan", "NaN").replace("inf", "Infinity")


# ---- parsing ---------------------------------------------------------------------------

_DATE = r"(?P<year>[+-]?\d{4,9})-(?P<month>\d{2})-(?P<day>\d{2})"
_CLOCK = r"(?P<hour>\d{2}):(?P<minute>\d{2})(?::(?P<second>\d{2})(?:[.,](?P<fraction>\d{1,9}))?)?"
_OFFSET = r"(?P<offset>Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)"
_ZONE = r"(?:\[(?P<zone>[^\]]+)\])"
_DATE_RE = re.compile(_DATE + "$")
_TIME_RE = re.compile(f"{_CLOCK}{_OFFSET}?$")
_DATETIME_RE = re.compile(f"{_DATE}T{_CLOCK}{_OFFSET}?{_ZONE}?$")
_DURATION_RE = re.compile(
    r"P(?!$)(?:(?P<years>[+-]?\d+)Y)?(?:(?P<months>[+-]?\d+)M)?(?:(?P<weeks>[+-]?\d+)W)?"
    r"(?:(?P<days>[+-]?\d+)D)?(?:T(?=[+-]?\d)(?:(?P<hours>[+-]?\d+)H)?(?:(?P<minutes>[+-]?\d+)M)?"
    r"(?:(?P<seconds>[+-]?\d+)(?:[.,](?P<fraction>\d{1,9}))?S)?)?$")
_POINT_RE = re.compile(r"SRID=(?P<srid>\d+);\s*POINT(?P<z>\s*Z)?\s*\((?P<coords>[^)]*)\)$", re.I)


def _match(pattern: re.Pattern, text: object, kind: str) -> re.Match:
    match = pattern.match(text) if isinstance(text, str) else None
    if match is None:
        raise IsoError(f"{text!r:.100} is not an ISO-8601 {kind}")
    return match


def _nanos(fraction: str | None) -> int:
    return int(fraction.ljust(9, "0")) if fraction else 0


def _tz(offset: str | None, zone: str | None = None):
    if zone:
        try:
            return pytz.timezone(zone)
        except pytz.UnknownTimeZoneError:
            raise IsoError(f"unknown time zone {zone!r:.100}") from None
    if offset is None:
        return None
    if offset == "Z":
        return _dt.timezone.utc             # a zero offset, not the zone "UTC"
    digits = offset[1:].replace(":", "")
    seconds = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60 + int(digits[4:6] or 0)
    sign = -1 if offset[0] == "-" else 1
    return _dt.timezone(_dt.timedelta(seconds=sign * seconds))


def parse_date(text: object) -> Date:
    m = _match(_DATE_RE, text, "date")
    try:
        return Date(int(m["year"]), int(m["month"]), int(m["day"]))
    except ValueError as exc:
        raise IsoError(f"{text!r:.100} is not a valid date: {exc}") from None


def parse_time(text: object) -> Time:
    m = _match(_TIME_RE, text, "time")
    try:
        return Time(int(m["hour"]), int(m["minute"]), int(m["second"] or 0), _nanos(m["fraction"]),
                    tzinfo=_tz(m["offset"]))
    except ValueError as exc:
        raise IsoError(f"{text!r:.100} is not a valid time: {exc}") from None


def parse_datetime(text: object) -> DateTime:
    """A local, offset or zoned date-time; a zone id wins over the offset, as in Neo4j."""
    m = _match(_DATETIME_RE, text, "date-time")
    try:
        local = DateTime(int(m["year"]), int(m["month"]), int(m["day"]), int(m["hour"]),
                         int(m["minute"]), int(m["second"] or 0), _nanos(m["fraction"]))
    except ValueError as exc:
        raise IsoError(f"{text!r:.100} is not a valid date-time: {exc}") from None
    offset, zone = _tz(m["offset"]), _tz(None, m["zone"])
    if zone is None:
        return local if offset is None else local.replace(tzinfo=offset)
    if offset is None:
        return zone.localize(local)
    utc = local - Duration(seconds=int(offset.utcoffset(None).total_seconds()))
    return pytz.utc.localize(utc).astimezone(zone)          # the offset fixes the instant


def parse_duration(text: object) -> Duration:
    m = _match(_DURATION_RE, text, "duration")
    seconds = int(m["seconds"] or 0)
    nanos = _nanos(m["fraction"]) * (-1 if (m["seconds"] or "").startswith("-") else 1)
    return Duration(years=int(m["years"] or 0), months=int(m["months"] or 0), weeks=int(m["weeks"] or 0),
                    days=int(m["days"] or 0), hours=int(m["hours"] or 0), minutes=int(m["minutes"] or 0),
                    seconds=seconds, nanoseconds=nanos)


def parse_point(text: object) -> Point:
    m = _match(_POINT_RE, text, "point (SRID=4326;POINT (x y))")
    try:
        coords = [float(c) for c in m["coords"].split()]
    except ValueError:
        raise IsoError(f"{text!r:.100} has a coordinate that is not a number") from None
    srid = int(m["srid"])
    cls, dims = _SRID_CLASSES.get(srid, (None, None))
    if cls is None:
        raise IsoError(f"unknown SRID {srid}: Neo4j knows 4326, 4979 (WGS-84) and 7203, 9157 (cartesian)")
    if len(coords) != dims or (m["z"] and dims != 3):
        raise IsoError(f"SRID {srid} needs {dims} coordinates{' (POINT, not POINT Z)' if dims == 2 else ''}, "
                       f"got {len(coords)}")
    return cls(coords)
