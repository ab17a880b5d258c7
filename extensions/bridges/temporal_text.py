"""Neo4j's ISO 8601 temporal strings, read in Python into the one form FalkorDB parses right.

FalkorDB 4.16 reads only the extended calendar forms correctly: it takes `'2015-202'` (an
ordinal date) as 2015-02-01, `'20150721T21:40'` as 21:00, `'2015-W30-2T214032'` as 2015-01-01,
and drops a fraction of a second. Neo4j accepts calendar, week (`2015-W30-2`) and ordinal
(`2015-202`) dates, basic and extended forms, and times down to the nanosecond. `canonical`
turns each such string into `YYYY-MM-DD`, `HH:MM:SS` or `YYYY-MM-DDTHH:MM:SS` (the zone, if
any, is returned apart: `temporal.py` decides about it), and raises `Fraction` for a time with
a fraction of a second, which FalkorDB cannot hold.
"""

from __future__ import annotations

import datetime as _dt
import re

_DATE = re.compile(r"""(?P<year>\d{4})(?:
      -?W(?P<week>\d{2})(?:-?(?P<weekday>\d))?
    | -(?P<month>\d{2})(?:-(?P<day>\d{2}))?
    | (?P<bmonth>\d{2})(?P<bday>\d{2})?
    | -?(?P<ordinal>\d{3})
    )?\Z""", re.X)
_TIME = re.compile(r"(?P<hour>\d{2})(?::?(?P<minute>\d{2})(?::?(?P<second>\d{2})(?:[.,](?P<fraction>\d{1,9}))?)?)?\Z")
_ZONE = re.compile(r"(?P<time>.*?)(?P<zone>(?:Z|[+-]\d{2}(?::?\d{2})?)?(?:\[[^\]]+\])?)\Z")


class Unreadable(ValueError):
    """Not a temporal string of the expected kind."""


class Fraction(ValueError):
    """The string has a fraction of a second (`fraction` holds its digits)."""

    def __init__(self, fraction: str):
        super().__init__(fraction)
        self.fraction = fraction


def read_date(text: str) -> _dt.date:
    found = _DATE.match(text)
    if found is None:
        raise Unreadable(text)
    g = found.groupdict()
    year = int(g["year"])
    try:
        if g["week"]:
            return _dt.date.fromisocalendar(year, int(g["week"]), int(g["weekday"] or 1))
        if g["ordinal"]:
            day = _dt.date(year, 1, 1) + _dt.timedelta(days=int(g["ordinal"]) - 1)
            if not (0 < int(g["ordinal"]) and day.year == year):
                raise ValueError(text)
            return day
        month, day = g["month"] or g["bmonth"] or "1", g["day"] or g["bday"] or "1"
        return _dt.date(year, int(month), int(day))
    except ValueError:
        raise Unreadable(text) from None


def read_time(text: str) -> _dt.time:
    found = _TIME.match(text)
    if found is None:
        raise Unreadable(text)
    g = found.groupdict()
    if g["fraction"] and int(g["fraction"]):
        raise Fraction(g["fraction"])
    try:
        return _dt.time(int(g["hour"]), int(g["minute"] or 0), int(g["second"] or 0))
    except ValueError:
        raise Unreadable(text) from None


def canonical(text: str, kind: str) -> tuple[str, str]:
    """(the value in FalkorDB's extended form, the zone as written or "") for a `kind` of
    'date', 'localtime', 'localdatetime' or 'datetime'."""
    body = text.strip()
    if kind == "date":
        return read_date(body).isoformat(), ""
    day, _, clock = ("", "", body) if kind == "localtime" else body.partition("T")
    zone = ""
    if kind in ("localtime", "datetime"):
        split = _ZONE.match(clock)
        clock, zone = split.group("time"), split.group("zone")
    if kind == "localtime":
        return read_time(clock).isoformat(), zone
    moment = read_date(day).isoformat() + "T" + (read_time(clock).isoformat() if clock else "00:00:00")
    return moment, zone
