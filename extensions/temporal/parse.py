"""Neo4j's ISO 8601 strings for temporals and durations, read exactly.

Dates: calendar (`2015-07-21`, `20150721`, `2015-07`, `2015`), week (`2015-W30-2`, `2015W302`,
`2015-W30`) and ordinal (`2015-202`, `2015202`). Times: `21`, `21:40`, `2140`, `21:40:32`,
`214032`, with a fraction of up to nine digits after `.` or `,`. Zones: `Z`, `+01`, `+0100`,
`+01:00`, `+01:00:30`, and a name in brackets (`[Europe/Stockholm]`), with or without the
offset. Durations: `P1Y2M3W4DT5H6M7.5S` (any unit may carry a fraction and a sign) and the
alternative `P2012-02-02T14:37:21.545`.
"""

from __future__ import annotations

import datetime as dt
import re
from fractions import Fraction

from .values import NANOS, Duration, NotComputed, Temporal, Zone, argument_error, make, zone_info

_DATE = re.compile(r"""(?P<year>\d{4}|[+-]\d{4,9})(?:
      -W(?P<week>\d{2})(?:-(?P<weekday>\d))?
    | W(?P<bweek>\d{2})(?P<bweekday>\d)?
    | -(?P<month>\d{2})(?:-(?P<day>\d{2}))?
    | (?P<bmonth>\d{2})(?P<bday>\d{2})?
    | -?(?P<ordinal>\d{3})
    )?\Z""", re.X)
_TIME = re.compile(r"(?P<hour>\d{2})(?:(?P<colon>:?)(?P<minute>\d{2})(?:(?P=colon)(?P<second>\d{2})"
                   r"(?:[.,](?P<fraction>\d{1,9}))?)?)?\Z")
_ZONE = re.compile(r"(?P<clock>.*?)(?P<offset>Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?(?:\[(?P<name>[^\]]+)\])?\Z",
                   re.S)


def _fail(text: str, kind: str):
    return argument_error(f"Text cannot be parsed to a {_NAMES[kind]}\n\"{text}\"")


_NAMES = {"date": "Date", "localtime": "LocalTime", "time": "Time", "localdatetime": "LocalDateTime",
          "datetime": "DateTime", "duration": "Duration"}


def read_date(text: str, kind: str = "date") -> dt.date:
    found = _DATE.match(text)
    if found is None:
        raise _fail(text, kind)
    g = found.groupdict()
    year = int(g["year"])
    if not 1 <= year <= 9999:
        raise NotComputed(f"the year {year}")
    try:
        if g["week"] or g["bweek"]:
            return dt.date.fromisocalendar(year, int(g["week"] or g["bweek"]), int(g["weekday"] or g["bweekday"] or 1))
        if g["ordinal"]:
            day = dt.date(year, 1, 1) + dt.timedelta(days=int(g["ordinal"]) - 1)
            if not 0 < int(g["ordinal"]) or day.year != year:
                raise ValueError(text)
            return day
        return dt.date(year, int(g["month"] or g["bmonth"] or 1), int(g["day"] or g["bday"] or 1))
    except (ValueError, OverflowError):
        raise _fail(text, kind) from None


def read_clock(text: str, kind: str) -> int:
    """Nanoseconds of the day."""
    found = _TIME.match(text)
    if found is None:
        raise _fail(text, kind)
    g = found.groupdict()
    hour, minute, second = int(g["hour"]), int(g["minute"] or 0), int(g["second"] or 0)
    if hour > 23 or minute > 59 or second > 59:
        raise _fail(text, kind)
    nanos = int((g["fraction"] or "").ljust(9, "0"))
    return ((hour * 60 + minute) * 60 + second) * NANOS + nanos


def read_zone(offset: str | None, name: str | None) -> Zone | None:
    if name:
        zone_info(name)
        return Zone(0, name)
    if not offset:
        return None
    if offset == "Z":
        return Zone(0)
    digits = offset[1:].replace(":", "")
    seconds = int(digits[:2]) * 3600 + int(digits[2:4] or 0) * 60 + int(digits[4:6] or 0)
    if seconds > 18 * 3600:
        raise argument_error(f"Zone offset {offset} is out of range (at most 18 hours)")
    return Zone(-seconds if offset[0] == "-" else seconds)


def split_zone(text: str) -> tuple[str, str | None, str | None]:
    """(the clock, the offset, the zone name) of a time written with an optional zone."""
    split = _ZONE.match(text)
    return split.group("clock"), split.group("offset"), split.group("name")


def read(text: str, kind: str, default_zone: Zone) -> Temporal:
    """A temporal string as `kind` (`default_zone` for a zoned kind written without one)."""
    body = text.strip()
    if kind == "date":
        return make("date", read_date(body), None)
    day, clock = (None, body) if kind in ("localtime", "time") else body.partition("T")[::2]
    zone = None
    if kind in ("time", "datetime", "localtime", "localdatetime") and clock:
        clock, offset, name = split_zone(clock)
        zone = read_zone(offset, name)
        if zone is not None and zone.name is not None and offset:
            zone = Zone(0, zone.name)
    nanos = read_clock(clock, kind) if clock else 0
    date = read_date(day, kind) if day is not None else None
    if zone is not None and (kind in ("localtime", "localdatetime") or kind == "time" and zone.name):
        raise _fail(text, kind)
    return make(kind, date, nanos, zone or default_zone)


_NUMBER = r"[-+]?\d+(?:[.,]\d+)?"
_ISO = re.compile(rf"""(?P<sign>-)?P(?:(?P<years>{_NUMBER})Y)?(?:(?P<months>{_NUMBER})M)?(?:(?P<weeks>{_NUMBER})W)?
    (?:(?P<days>{_NUMBER})D)?(?:T(?:(?P<hours>{_NUMBER})H)?(?:(?P<minutes>{_NUMBER})M)?(?:(?P<seconds>{_NUMBER})S)?)?\Z""",
                  re.X | re.I)
_ALTERNATIVE = re.compile(r"P(?P<years>\d{4})-(?P<months>\d{2})-(?P<days>\d{2})"
                          r"T(?P<hours>\d{2}):(?P<minutes>\d{2}):(?P<seconds>\d{2}(?:[.,]\d+)?)\Z", re.I)


def duration_amounts(text: str) -> dict[str, Fraction] | None:
    """The amount per unit (`years`, ..., `seconds`) an ISO 8601 duration string writes, signed;
    None when it is not one."""
    found = _ISO.match(text.strip()) or _ALTERNATIVE.match(text.strip())
    if found is None or not any(v for k, v in found.groupdict().items() if k != "sign"):
        return None
    sign = -1 if found.groupdict().get("sign") else 1
    return {key: sign * Fraction(value.replace(",", ".")) for key, value in found.groupdict().items()
            if key != "sign" and value is not None}


def read_duration(text: str) -> Duration:
    amounts = duration_amounts(text)
    if amounts is None or text.strip().upper().endswith("T"):
        raise _fail(text, "duration")
    return duration_of(amounts)


MONTH_SECONDS = 2_629_746
#: Neo4j's duration keys -> (unit: months, days or seconds, how many of it)
UNITS = {"years": ("months", 12), "quarters": ("months", 3), "months": ("months", 1), "weeks": ("days", 7),
         "days": ("days", 1), "hours": ("seconds", 3600), "minutes": ("seconds", 60), "seconds": ("seconds", 1),
         "milliseconds": ("seconds", Fraction(1, 1000)), "microseconds": ("seconds", Fraction(1, 10**6)),
         "nanoseconds": ("seconds", Fraction(1, 10**9))}


def duration_parts(amounts: dict[str, Fraction]) -> tuple[int, int, Fraction]:
    """(months, days, seconds) of amounts in Neo4j's units: a fraction of a month or day flows
    into the smaller units (a month is 2,629,746 s), toward zero."""
    total = {"months": Fraction(0), "days": Fraction(0), "seconds": Fraction(0)}
    for key, amount in amounts.items():
        unit, size = UNITS[key]
        total[unit] += amount * size
    months = int(total["months"])
    seconds = (total["months"] - months) * MONTH_SECONDS + (total["days"] - int(total["days"])) * 86400
    days = int(total["days"]) + int(seconds / 86400)
    return months, days, seconds - int(seconds / 86400) * 86400 + total["seconds"]


def duration_of(amounts: dict[str, Fraction]) -> Duration:
    """A duration from amounts in Neo4j's units (`duration_parts`)."""
    months, days, seconds = duration_parts(amounts)
    return Duration(months, days, 0, int(seconds * NANOS))
