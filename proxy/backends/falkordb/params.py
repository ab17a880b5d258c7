"""Parameters FalkorDB's `CYPHER k=v` header cannot carry, written into the query text instead.

The header takes literals only, but drivers send temporal values, points and NaN as parameters
all the time. Each `$name` token (also `$0`, `` $`odd name` ``) that refers to such a value -
alone or inside a list or map - is replaced by an equivalent expression; every other parameter
stays in the header. Tokens are found in the caller's `code`: the query with strings, comments
and quoted names blanked by the same lexer as the write and nesting checks, so `'$d'` and
`// $d` are left alone. Parameter names FalkorDB's `$` syntax refuses (`$0`, `$ünï`) are
backtick-quoted.

What FalkorDB keeps (measured on 4.16): dates 0001-01-01..9999-12-31; local date-times and
local times to the whole second (it would drop a fraction, so one is refused, never cut);
durations as whole seconds, and it normalises mixed-sign or >30-day parts through a calendar;
points as float32 (about 7 significant digits). It has no zoned date-time or time and no
cartesian or 3D point: those are TypeErrors rather than silently different values, except a
date-time in UTC (`datetime.now(timezone.utc)`), which is the instant the proxy stores date-times
as (see extensions/bridges/temporal.py). A date-time with microseconds arrives here already as
its epoch microseconds, an integer (extensions/temporal/fraction.py); one with nanoseconds is
refused.

FalkorDB names an unaliased column by its text, so `RETURN $d` would come back as
"date('2024-01-01')"; `Inlined.column` maps such names back to what the client wrote.
"""

from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass, field
from typing import Any

from neo4j.time import Date, DateTime, Duration, Time

from extensions.cypher.tokens import string_value
from proxy.backends.falkordb.values import finite_numbers, param_error, quote_name, stored_duration, to_literal
from core.errors import CypherError
from core.values import Point

_TOKEN = re.compile(r"\$\s*(?:`([^`]*)`|(\w+))")
_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TEMPORALS = (Date, DateTime, Time, Duration, _dt.date, _dt.time, _dt.timedelta)
_SMALLEST_NORMAL = 2.2250738585072014e-308     # FalkorDB's parser overflows on smaller literals
_WGS84 = 4326
_LITERAL_ONLY = frozenset({int, str, bool, type(None)})     # never written as an expression
_MONTH = 2_629_746                               # seconds in an average Gregorian month
_MAX_DURATION_SECONDS = 10**9 * _MONTH           # FalkorDB's duration arithmetic is exact below


@dataclass
class Inlined:
    """A query with its expression-only parameters written in, and the rest for the header."""

    query: str
    params: dict[str, Any]
    renames: list[tuple[str, str]] = field(default_factory=list)    # (text sent, text written)

    def column(self, key: str) -> str:
        """A result column name as the client's own query text would have produced it."""
        for sent, written in self.renames:
            key = key.replace(sent, written)
        return key


def inline_params(query: str, code: str, params: dict[str, Any] | None) -> Inlined:
    """Write the parameters that have no literal form into `query` (`code` is the query with
    strings, comments and quoted names blanked, same length)."""
    params = params or {}
    header = {name: value for name, value in params.items() if not needs_expression(value)}
    pieces, renames, start = [], {}, 0
    for dollar in re.finditer(r"\$", code):
        token = _TOKEN.match(query, dollar.start())
        if token is None:
            continue
        name = token.group(2) if token.group(1) is None else token.group(1)
        if name in params and name not in header:
            sent = to_expression(params[name], name)
        elif token.group(2) is not None and not _PLAIN_NAME.match(name):
            sent = f"$`{name}`"
        else:
            continue
        pieces += [query[start:token.start()], sent]
        start = token.end()
        renames.setdefault(sent, token.group())
    pieces.append(query[start:])
    ordered = sorted(renames.items(), key=lambda item: -len(item[0]))   # outer expressions first
    return Inlined("".join(pieces), header, ordered)


_COUNT_BEFORE = re.compile(r"(?:LIMIT|SKIP|OFFSET)\s*\Z", re.I)


def placeholders(query: str, code: str) -> dict[str, Any]:
    """A stand-in value for every parameter `query` uses, for planning it without values as Neo4j
    does (EXPLAIN): null, or 0 after LIMIT / SKIP (FalkorDB refuses to plan a null there)."""
    values: dict[str, Any] = {}
    for dollar in re.finditer(r"\$", code):
        token = _TOKEN.match(query, dollar.start())
        if token is not None:
            name = token.group(2) if token.group(1) is None else token.group(1)
            values[name] = 0 if _COUNT_BEFORE.search(code, 0, dollar.start()) else values.get(name)
    return values


def needs_expression(value: Any) -> bool:
    """True for values the header cannot carry: temporals, points and NaN, also inside lists and
    maps. (`to_expression` refuses the few of them FalkorDB has no type for.)"""
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (*_TEMPORALS, Point)):
        return True
    if isinstance(value, (list, tuple)):
        return not finite_numbers(value) and any(map(needs_expression, value))
    if isinstance(value, dict):
        values = value.values()
        return not set(map(type, values)) <= _LITERAL_ONLY and any(map(needs_expression, values))
    return False


def to_expression(value: Any, name: str = "p") -> str:
    """A Cypher expression FalkorDB evaluates to `value`; `name` is the parameter, for errors."""
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, (_dt.datetime, DateTime)):
        value = _utc(value, name)
        _refuse_fraction(value, name, "date-time")
        # The map form: FalkorDB's string parser fails on exactly 1969-12-31T23:59:59 (mktime's -1).
        return (f"localdatetime({{year: {value.year}, month: {value.month}, day: {value.day}, "
                f"hour: {value.hour}, minute: {value.minute}, second: {value.second}}})")
    if isinstance(value, (_dt.date, Date)):
        return f"date('{value.year:04d}-{value.month:02d}-{value.day:02d}')"
    if isinstance(value, (_dt.time, Time)):
        _refuse_zone(value, name, "time", "localtime")
        _refuse_fraction(value, name, "time")
        return f"localtime('{value.hour:02d}:{value.minute:02d}:{value.second:02d}')"
    if isinstance(value, _dt.timedelta):
        value = Duration(days=value.days, seconds=value.seconds, microseconds=value.microseconds)
    if isinstance(value, Duration):                     # seconds share the nanoseconds' sign
        if value.nanoseconds:
            raise param_error(name, f"the duration {value.iso_format()}", "FalkorDB keeps durations "
                              "to the whole second, and a cut value would differ from what was "
                              "sent; send whole seconds, and the fraction as a number of its own")
        if abs(value.months * _MONTH + value.days * 86400 + value.seconds) > _MAX_DURATION_SECONDS:
            raise param_error(name, f"the duration {value.iso_format()}", "FalkorDB keeps durations "
                              "exactly up to about 83 million years (10^9 months); send a larger "
                              "one as a number of months or seconds")
        if stored_duration(value.months, value.days, value.seconds) != value:
            raise param_error(name, f"the duration {value.iso_format()}", "FalkorDB keeps a duration as "
                              "an offset from 1970-01-01 and would give it back as another one (P40D "
                              "as P1M9D); it keeps whole months, 0 to 27 days and under 24 hours, all "
                              "of one sign. Send a number of days or seconds as an integer instead")
        return f"duration({{months: {value.months}, days: {value.days}, seconds: {value.seconds}}})"
    if isinstance(value, Point):
        return _point(value, name)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(to_expression(v, name) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{quote_name(str(k), name)}: {to_expression(v, name)}"
                               for k, v in value.items()) + "}"
    return to_literal(value, name)


def _float(value: float) -> str:
    """Unlike the header, the query body has no literal for NaN, infinities or subnormals."""
    if math.isnan(value):
        return "(0.0/0.0)"
    if math.isinf(value):
        return "(1.0/0.0)" if value > 0 else "(-1.0/0.0)"
    if 0 < abs(value) < _SMALLEST_NORMAL:               # exact: scaling by a power of two
        return f"({value * 2.0 ** 537!r} * {2.0 ** -537!r})"
    return repr(value)


def _point(value: Point, name: str) -> str:
    srid = getattr(value, "srid", None)
    if srid != _WGS84:
        raise param_error(name, f"a point with srid {srid} ({type(value).__name__})",
                          "FalkorDB has only 2D geographic WGS84 points (srid 4326); send the "
                          "coordinates as numbers or as a WGS84Point(longitude, latitude)")
    return f"point({{latitude: {_float(float(value[1]))}, longitude: {_float(float(value[0]))}}})"


def _utc(value: Any, name: str) -> Any:
    """A date-time in UTC as the naive UTC date-time FalkorDB stores; other zones are refused."""
    if value.tzinfo is not None and value.utcoffset() == _dt.timedelta(0):
        return value.replace(tzinfo=None)
    _refuse_zone(value, name, "date-time", "localdatetime")
    return value


def _refuse_fraction(value: Any, name: str, kind: str) -> None:
    fraction = getattr(value, "nanosecond", None)
    if fraction is None:
        fraction = value.microsecond * 1000
    if fraction:
        raise param_error(name, f"a {kind} with a fraction of a second ({value.isoformat()})",
                          "FalkorDB keeps times and date-times to the whole second, and a cut value "
                          "would break equality and MERGE later; send the whole seconds "
                          "(value.replace(microsecond=0)) and the fraction as a property of its own, "
                          "or the instant as epoch milliseconds (an integer)")


def _refuse_zone(value: Any, name: str, kind: str, local: str) -> None:
    if value.tzinfo is not None:
        raise param_error(name, f"a {kind} with a time zone ({value.tzinfo})",
                          f"FalkorDB has only local {kind}s ({local}), and dropping the zone would "
                          "change the value; convert it to UTC yourself "
                          "(value.astimezone(timezone.utc)), or send it as an ISO 8601 string")


#: String literals at least this long travel as parameters instead: FalkorDB parses query text
#: about ten times slower than its parameter header (a 1 MB literal: 0.24 s against 0.025 s), and
#: the query text itself is capped (`falkordb.MAX_QUERY_CHARS`).
LIFT_CHARS = 4096
#: An unclosed comment runs to the end (one attempt, not one per `/*`: that was quadratic).
_STRING = re.compile(r"""'[^'\\]*+(?:\\.[^'\\]*+)*+'|"[^"\\]*+(?:\\.[^"\\]*+)*+"|`[^`]*+`|//[^\n]*+"""
                     r"""|/\*.*?(?:\*/|\Z)""", re.S)


def lift_long_strings(query: str, params: dict[str, Any] | None) -> Inlined:
    """Move string literals of `LIFT_CHARS` or more out of `query` into parameters `$__sN`
    (`Inlined.column` names a result column by the literal again, as Neo4j does)."""
    params = dict(params or {})
    if len(query) < LIFT_CHARS:
        return Inlined(query, params)
    pieces, renames, start = [], [], 0
    for lexeme in _STRING.finditer(query):
        raw = lexeme.group()
        if len(raw) < LIFT_CHARS or raw[0] not in "'\"":
            continue
        try:
            value = string_value(raw)
        except CypherError:
            continue                                  # a malformed escape: FalkorDB reports it
        name = next(f"__s{i}" for i in range(len(params) + 1) if f"__s{i}" not in params)
        params[name] = value
        pieces += [query[start:lexeme.start()], f"${name}"]
        renames.append((f"${name}", raw))
        start = lexeme.end()
    pieces.append(query[start:])
    return Inlined("".join(pieces), params, renames)
