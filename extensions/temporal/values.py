"""Neo4j's temporal values, exact to the nanosecond, and how Neo4j prints them.

One class, `Temporal`, holds the five kinds (`date`, `localtime`, `time`, `localdatetime`,
`datetime`): a calendar day (`datetime.date`), a time of day in nanoseconds, and for the zoned
kinds a `Zone` (a fixed offset or an IANA name) with the offset in force. `Duration` holds
Neo4j's four parts: months, days, seconds and nanoseconds (0 to 999,999,999; the seconds carry
the sign). `to_bolt` gives the `neo4j.time` value the driver receives; `from_bolt` reads one sent
as a parameter. Python's calendar covers the years 1 to 9999: a value outside raises
`NotComputed`, as does anything else the library does not know.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import neo4j.time as nt
import pytz

from core.errors import CypherError

NANOS = 1_000_000_000
DAY_NANOS = 86_400 * NANOS
EPOCH = dt.date(1970, 1, 1).toordinal()
ARGUMENT = "Neo.ClientError.Statement.ArgumentError"
KINDS = ("date", "localtime", "time", "localdatetime", "datetime")
HAS_DATE = frozenset({"date", "localdatetime", "datetime"})
HAS_TIME = frozenset({"localtime", "time", "localdatetime", "datetime"})
ZONED = frozenset({"time", "datetime"})


class NotComputed(Exception):
    """What this library does not compute (a year outside 1 to 9999, a conversion it does not
    know): the caller falls back to the database."""


def argument_error(message: str) -> CypherError:
    return CypherError(ARGUMENT, message)


@lru_cache(maxsize=256)
def zone_info(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise argument_error(f"Invalid value for TimeZone: Text '{name}'") from None


@dataclass(frozen=True, slots=True)
class Zone:
    """A fixed offset in seconds (`name` None) or an IANA zone."""

    offset: int = 0
    name: str | None = None

    def offset_at(self, local: dt.datetime) -> int:
        """The offset of this zone for a local date-time (the earlier one in an overlap)."""
        if self.name is None:
            return self.offset
        return int(zone_info(self.name).utcoffset(local.replace(fold=0)).total_seconds())

    def offset_of_instant(self, utc: dt.datetime) -> int:
        if self.name is None:
            return self.offset
        return int(zone_info(self.name).fromutc(utc.replace(tzinfo=zone_info(self.name))).utcoffset().total_seconds())


UTC = Zone(0)


@dataclass(frozen=True, slots=True)
class Temporal:
    """A date, time or date-time of one of `KINDS` (fields a kind lacks are None)."""

    kind: str
    date: dt.date | None = None
    nanos: int | None = None          # of the day
    zone: Zone | None = None
    offset: int | None = None         # seconds east of UTC in force (zoned kinds)

    @property
    def local(self) -> dt.datetime:
        """The local date-time (microseconds cut: for zone rules only)."""
        day = self.date or dt.date(1970, 1, 1)
        return dt.datetime.combine(day, dt.time()) + dt.timedelta(microseconds=(self.nanos or 0) // 1000)

    def epoch_nanos(self) -> int:
        """Nanoseconds since 1970-01-01T00:00Z (local kinds as if in UTC)."""
        days = (self.date.toordinal() - EPOCH) if self.date else 0
        return days * DAY_NANOS + (self.nanos or 0) - (self.offset or 0) * NANOS


@dataclass(frozen=True, slots=True)
class Duration:
    months: int = 0
    days: int = 0
    seconds: int = 0
    nanos: int = 0

    def __post_init__(self):
        carry, nanos = divmod(self.nanos, NANOS)
        object.__setattr__(self, "seconds", self.seconds + carry)
        object.__setattr__(self, "nanos", nanos)

    def __neg__(self) -> "Duration":
        return Duration(-self.months, -self.days, -self.seconds, -self.nanos)

    @property
    def total_nanos(self) -> int:
        """The seconds part in nanoseconds."""
        return self.seconds * NANOS + self.nanos


def make(kind: str, day: dt.date | None, nanos: int | None, zone: Zone | None = None) -> Temporal:
    """A value from its local parts; a named zone's offset is resolved as Java does (the earlier
    offset in an overlap, moved forward by the gap in a gap)."""
    if kind not in ZONED:
        return Temporal(kind, day if kind in HAS_DATE else None, nanos if kind in HAS_TIME else None)
    zone = zone or UTC
    if kind == "time":
        offset = zone.offset if zone.name is None else zone.offset_at(dt.datetime(1970, 1, 1))
        return Temporal(kind, None, nanos, Zone(offset), offset)
    local = dt.datetime.combine(day, dt.time()) + dt.timedelta(microseconds=nanos // 1000)
    offset = zone.offset_at(local)
    if zone.name is not None:
        utc = local - dt.timedelta(seconds=offset)
        actual = zone.offset_of_instant(utc)
        if actual != offset:                 # a gap: the same instant, shown in the later offset
            shifted = local + dt.timedelta(seconds=actual - offset)
            day = shifted.date()
            nanos = (nanos + (actual - offset) * NANOS) % DAY_NANOS
            offset = actual
    return Temporal(kind, day, nanos, zone, offset)


def from_instant(epoch_nanos: int, zone: Zone) -> Temporal:
    """The date-time at an instant, in `zone`."""
    seconds, rest = divmod(epoch_nanos, NANOS)
    try:
        utc = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=seconds)
    except OverflowError:
        raise NotComputed("an instant outside the years 1 to 9999") from None
    offset = zone.offset_of_instant(utc)
    local = utc + dt.timedelta(seconds=offset)
    nanos = (local.hour * 3600 + local.minute * 60 + local.second) * NANOS + rest
    return Temporal("datetime", local.date(), nanos, zone, offset)


def with_kind(value: Temporal, kind: str, zone: Zone | None = None) -> Temporal:
    """`value`'s local parts as another kind (in `zone`, else its own zone, else UTC)."""
    return make(kind, value.date or dt.date(1970, 1, 1), value.nanos or 0, zone or value.zone)


def in_zone(value: Temporal, zone: Zone) -> Temporal:
    """The same instant (a time: the same offset-adjusted time) in another zone."""
    if value.kind == "time":
        offset = zone.offset if zone.name is None else zone.offset_at(dt.datetime(1970, 1, 1))
        return Temporal("time", None, (value.nanos + (offset - value.offset) * NANOS) % DAY_NANOS, Zone(offset), offset)
    return from_instant(value.epoch_nanos(), zone)


# ---------------------------------------------------------------- text


def fraction(nanos: int) -> str:
    """Java's fraction of a second: digits in groups of three, none when zero."""
    if nanos == 0:
        return ""
    if nanos % 1_000_000 == 0:
        return f".{nanos // 1_000_000:03d}"
    if nanos % 1000 == 0:
        return f".{nanos // 1000:06d}"
    return f".{nanos:09d}"


def date_text(day: dt.date) -> str:
    return f"{day.year:04d}-{day.month:02d}-{day.day:02d}"


def time_text(nanos: int) -> str:
    seconds, rest = divmod(nanos, NANOS)
    text = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}"
    return text + (f":{seconds % 60:02d}{fraction(rest)}" if seconds % 60 or rest else "")


def offset_text(seconds: int) -> str:
    if seconds == 0:
        return "Z"
    sign, seconds = ("-" if seconds < 0 else "+"), abs(seconds)
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}"
    return text + (f":{seconds % 60:02d}" if seconds % 60 else "")


def text(value: Temporal | Duration) -> str:
    """`toString(value)` as Neo4j prints it."""
    if isinstance(value, Duration):
        return duration_text(value)
    parts = []
    if value.date is not None:
        parts.append(date_text(value.date))
    if value.nanos is not None:
        parts.append(("T" if parts else "") + time_text(value.nanos))
    if value.kind in ZONED:
        parts.append(offset_text(value.offset))
        if value.zone.name is not None:
            parts.append(f"[{value.zone.name}]")
    return "".join(parts)


def _java_divmod(a: int, b: int) -> tuple[int, int]:
    quotient = abs(a) // b * (-1 if a < 0 else 1)
    return quotient, a - quotient * b


def duration_text(d: Duration) -> str:
    """`P1Y2M3DT4H5M6.5S`, `PT-0.001S`, `PT0S`: each unit keeps the sign of its part."""
    years, months = _java_divmod(d.months, 12)
    out = "P" + "".join(f"{n}{unit}" for n, unit in [(years, "Y"), (months, "M"), (d.days, "D")] if n)
    whole, rest = _java_divmod(d.total_nanos, NANOS)
    if whole or rest:
        hours, left = _java_divmod(whole, 3600)
        minutes, secs = _java_divmod(left, 60)
        out += "T" + "".join(f"{n}{unit}" for n, unit in [(hours, "H"), (minutes, "M")] if n)
        if secs or rest:
            sign = "-" if rest < 0 and secs == 0 else ""
            out += f"{sign}{secs}{fraction(abs(rest)).rstrip('0')}S"
    return out if out != "P" else "PT0S"


# ---------------------------------------------------------------- the driver's values


def to_bolt(value):
    """The `neo4j.time` value for a Temporal or Duration (anything else as it is)."""
    if isinstance(value, Duration):
        return nt.Duration(months=value.months, days=value.days, seconds=value.seconds, nanoseconds=value.nanos)
    if not isinstance(value, Temporal):
        return value
    if value.offset is not None and value.offset % 60:
        raise NotComputed("an offset with seconds (the neo4j drivers read offsets in whole minutes)")
    seconds, rest = divmod(value.nanos or 0, NANOS)
    clock = (seconds // 3600, seconds // 60 % 60, seconds % 60, rest)
    if value.kind == "date":
        return nt.Date(value.date.year, value.date.month, value.date.day)
    if value.kind == "localtime":
        return nt.Time(*clock)
    if value.kind == "time":
        return nt.Time(*clock, tzinfo=dt.timezone(dt.timedelta(seconds=value.offset)))
    local = nt.DateTime(value.date.year, value.date.month, value.date.day, *clock)
    if value.kind == "localdatetime":
        return local
    if value.zone.name is None:
        return local.replace(tzinfo=dt.timezone(dt.timedelta(seconds=value.offset)))
    utc = from_instant(value.epoch_nanos(), UTC)          # the instant, shown in the named zone
    seconds, rest = divmod(utc.nanos, NANOS)
    return nt.DateTime(utc.date.year, utc.date.month, utc.date.day, seconds // 3600, seconds // 60 % 60,
                       seconds % 60, rest, tzinfo=pytz.utc).astimezone(pytz.timezone(value.zone.name))


def from_bolt(value):
    """A parameter's temporal value (driver or Python types) as a Temporal/Duration; None when
    it is not one."""
    if isinstance(value, nt.Duration):
        return Duration(value.months, value.days, value.seconds, value.nanoseconds)
    if isinstance(value, dt.timedelta):
        return Duration(0, value.days, value.seconds, value.microseconds * 1000)
    if isinstance(value, (nt.DateTime, dt.datetime)):
        day = dt.date(value.year, value.month, value.day)
        nanos = ((value.hour * 60 + value.minute) * 60 + value.second) * NANOS + _nanosecond(value)
        if value.tzinfo is None:
            return make("localdatetime", day, nanos)
        name = getattr(value.tzinfo, "zone", None) or getattr(value.tzinfo, "key", None)
        offset = int(value.utcoffset().total_seconds())
        if name and name != "UTC":
            return replace(make("datetime", day, nanos, Zone(0, name)), offset=offset)
        return make("datetime", day, nanos, Zone(offset))
    if isinstance(value, (nt.Date, dt.date)):
        return make("date", dt.date(value.year, value.month, value.day), None)
    if isinstance(value, (nt.Time, dt.time)):
        nanos = ((value.hour * 60 + value.minute) * 60 + value.second) * NANOS + _nanosecond(value)
        if value.tzinfo is None:
            return make("localtime", None, nanos)
        offset = int(value.utcoffset().total_seconds())
        return Temporal("time", None, nanos, Zone(offset), offset)
    return None


def _nanosecond(value) -> int:
    return value.nanosecond if hasattr(value, "nanosecond") else value.microsecond * 1000
