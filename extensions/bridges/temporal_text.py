"""Neo4j's ISO 8601 temporal strings, read in Python into the one form FalkorDB parses right.

FalkorDB 4.16 reads only the extended calendar forms correctly: it takes `'2015-202'` (an
ordinal date) as 2015-02-01, `'20150721T21:40'` as 21:00, `'2015-W30-2T214032'` as 2015-01-01,
and drops a fraction of a second. Neo4j accepts calendar, week (`2015-W30-2`) and ordinal
(`2015-202`) dates, basic and extended forms, and times down to the nanosecond. `canonical`
reads each such string with the temporal library's reader (`extensions/temporal/parse.py`) and
writes it as `YYYY-MM-DD`, `HH:MM:SS` or `YYYY-MM-DDTHH:MM:SS` (the zone, if any, is returned
apart: `temporal.py` decides about it); it raises `Fraction` for a time with a fraction of a
second, which FalkorDB cannot hold.
"""

from __future__ import annotations

import datetime as _dt

from core.errors import CypherError

from ..temporal import parse
from ..temporal.values import NANOS, NotComputed


class Unreadable(ValueError):
    """Not a temporal string of the expected kind."""


class Fraction(ValueError):
    """The string has a fraction of a second (`fraction` holds its digits)."""

    def __init__(self, fraction: str):
        super().__init__(fraction)
        self.fraction = fraction


def canonical(text: str, kind: str) -> tuple[str, str]:
    """(the value in FalkorDB's extended form, the zone as written or "") for a `kind` of
    'date', 'localtime', 'localdatetime' or 'datetime'."""
    body = text.strip()
    day, clock = ("", body) if kind == "localtime" else body.partition("T")[::2]
    zone = ""
    try:
        if kind == "date":
            return parse.read_date(body).isoformat(), ""
        if kind in ("localtime", "datetime"):
            clock, offset, name = parse.split_zone(clock)
            zone = (offset or "") + (f"[{name}]" if name else "")
        nanos = parse.read_clock(clock, kind) if clock else 0
        date = None if kind == "localtime" else parse.read_date(day, kind)
    except (CypherError, NotComputed):
        raise Unreadable(text) from None
    if nanos % NANOS:
        raise Fraction(clock.replace(",", ".").partition(".")[2])
    seconds = nanos // NANOS
    time = _dt.time(seconds // 3600, seconds // 60 % 60, seconds % 60).isoformat()
    return (time if date is None else f"{date.isoformat()}T{time}"), zone
