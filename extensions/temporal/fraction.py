"""Date-times with a fraction of a second, stored as integers of epoch microseconds.

FalkorDB 4.16 keeps a date-time to the whole second: `localdatetime('...T10:00:00.123456')`
is stored, compared and printed as 10:00:00 (measured on bare FalkorDB: `.millisecond` is 0,
two values 0.3 s apart are equal, and it has no `.epochMillis`). Yet the usual Python idiom,
`SET n.updatedAt = $now` with `datetime.now(timezone.utc)`, carries microseconds. An integer
keeps them exactly and FalkorDB orders and compares integers correctly, so a date-time parameter
with a fraction (naive, or in UTC, to the microsecond) is sent as the microseconds since
1970-01-01T00:00 of its UTC instant (a naive one: of its wall clock). Its property key is then
recorded FINE beside its kind (`kinds.py`), so the proxy reads such integers back as the
date-time (`DateTime` with the same microseconds, zoned in UTC or local as written), and the
query rewrite in `extensions/bridges/fractions.py` compares, orders and counts days with them.
A whole-second date-time stays FalkorDB's own value, so old values need no migration.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from neo4j.time import DateTime

_EPOCH = _dt.datetime(1970, 1, 1)
_MICRO = _dt.timedelta(microseconds=1)


def micros(value: Any) -> int | None:
    """The epoch microseconds a date-time parameter is stored as, or None when it is stored as
    FalkorDB's own date-time (whole seconds) or cannot be stored (a zone other than UTC, a
    nanosecond fraction: `params.py` refuses those)."""
    if not isinstance(value, (_dt.datetime, DateTime)):
        return None
    if value.tzinfo is not None and value.utcoffset() != _dt.timedelta(0):
        return None
    if isinstance(value, DateTime):
        if value.nanosecond % 1000 or not value.nanosecond:
            return None
        value = value.to_native()
    elif not value.microsecond or getattr(value, "nanosecond", 0):     # pandas.Timestamp's nanoseconds
        return None
    return (value.replace(tzinfo=None) - _EPOCH) // _MICRO


#: parameter values that hold no date-time, skipped by type (a list of a million ids is common)
_PLAIN = frozenset({int, float, str, bool, type(None)})


def has_fraction(value: Any) -> bool:
    """Whether a parameter value holds a date-time stored as epoch microseconds (lists and maps
    looked into; those of plain values skipped at C speed)."""
    kind = type(value)
    if kind in _PLAIN:
        return False
    if kind is dict:
        value = value.values()
    elif kind not in (list, tuple):
        return micros(value) is not None
    if set(map(type, value)) <= _PLAIN:
        return False
    return any(has_fraction(item) for item in value if type(item) not in _PLAIN)


def encoded(value: Any) -> Any:
    """A parameter value with its date-times with a fraction as their epoch microseconds."""
    if isinstance(value, dict):
        return {k: encoded(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [encoded(v) for v in value]
    stored = micros(value)
    return value if stored is None else stored


def decoded(stored: int, zoned: bool) -> DateTime:
    """The date-time an integer of epoch microseconds stands for."""
    value = DateTime.from_native(_EPOCH + stored * _MICRO)
    return value.replace(tzinfo=_dt.timezone.utc) if zoned else value
