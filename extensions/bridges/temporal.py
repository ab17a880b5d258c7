"""Temporal values FalkorDB cannot hold or misreads: rewrite exactly, or refuse; never change them.

FalkorDB has no zoned temporal types: `spelling.py` runs `datetime(...)` as `localdatetime(...)`,
and FalkorDB's parser drops an offset or zone it finds in the string
(`localdatetime('2024-01-01T10:00:00+02:00')` is 10:00, an instant two hours off). A value
without a zone, or in UTC (`Z`, `+00:00`, `[UTC]`), is the same instant in UTC, which is how the
proxy stores date-times (Neo4j's default time zone is UTC too). Anything else is refused with an
error that names the zone and shows the UTC instant to store instead, with the zone in a
property of its own if it matters. Literals are checked when the query is planned, parameters
when it runs; strings read from the graph are parsed by FalkorDB as they are.

The same goes for `date`, `localtime` and `localdatetime`: a string is read by the proxy
(`temporal_text.py`: week and ordinal dates, basic forms) and handed to FalkorDB in the one form
it reads right; a fraction of a second, which FalkorDB would drop, is refused with the way to
store it, in a string or in a map (`millisecond`, `microsecond`, `nanosecond`).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from core.errors import CypherError

from ..cypher import ast as A
from .rule import Context, Edit, Rule
from .temporal_text import Fraction, Unreadable, canonical

_ZONED = re.compile(r"T[\d:.,]*?(?P<offset>Z|[+-]\d{2}(?::?\d{2}(?::?\d{2})?)?)?(?:\[(?P<zone>[^\]]+)\])?\s*\Z")
_UTC_OFFSETS = {"Z", "+00", "-00", "+00:00", "-00:00", "+0000", "-0000"}
_UTC_ZONES = {"UTC", "Z", "ETC/UTC", "GMT", "ETC/GMT", "UCT", "ZULU"}
UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"


def zone_of(text: str) -> str | None:
    """The non-UTC offset or zone written in an ISO 8601 date-time string, else None."""
    found = _ZONED.search(text)
    if found is None:
        return None
    offset, zone = found.group("offset"), found.group("zone")
    if zone and zone.upper() not in _UTC_ZONES:
        return f"[{zone}]" if not offset else f"{offset}[{zone}]"
    if offset and offset not in _UTC_OFFSETS:
        return offset
    return None


def refuse(shown: str, zone: str, value: str = "") -> CypherError:
    """The error for a date-time `shown` (as written) in a non-UTC `zone`."""
    hint = _utc_hint(value)
    return CypherError(
        UNSUPPORTED,
        f"{shown} is in the time zone {zone}: the embedded FalkorDB stores date-times "
        "without a zone (in UTC), so keeping the zone is impossible and dropping it would change "
        f"the value. Store the UTC instant{hint} and, if the zone matters, the zone in a property of "
        f"its own (e.g. {{at: datetime('...Z'), tz: '{zone.strip('[]')}'}}). "
        "(A limit of the embedded FalkorDB; Neo4j accepts this query.)")


def _utc_hint(value: str) -> str:
    text, _, zone = value.partition("[")
    try:
        moment = datetime.fromisoformat(text.strip())
        if moment.tzinfo is None and zone:
            moment = moment.replace(tzinfo=ZoneInfo(zone.rstrip("]")))
    except (ValueError, ZoneInfoNotFoundError):
        return ""
    if moment.tzinfo is None:
        return ""
    utc = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return f", datetime('{utc.isoformat()}Z')"


#: Neo4j's constructors FalkorDB has (datetime() is run as localdatetime(), see spelling.py).
KINDS = frozenset({"date", "localtime", "localdatetime", "datetime"})
SUB_SECOND = frozenset({"millisecond", "microsecond", "nanosecond"})


def temporal_values(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    """`datetime('...+02:00')`, `localtime('21:40:32.142')`, `date({..., nanosecond: 5})`:
    refused; `date('2015-202')` -> `date('2015-07-21')`; a parameter is checked when the query
    runs (`$__tsN`)."""
    kind = call.lower_name
    if kind == "time":
        raise CypherError(UNSUPPORTED, f"{call.text_in(ctx.text)} is a time with a zone: the embedded FalkorDB "
                          "has no zoned time to store or compute it with. Store localtime(...) and the offset "
                          "in a property of its own (e.g. {at: localtime('12:00'), offset: '+01:00'}). (A limit "
                          "of the embedded FalkorDB; the proxy answers time() itself in queries on no graph.)")
    if kind not in KINDS or len(call.args) != 1:
        return []
    arg, shown = call.args[0], call.text_in(ctx.text)
    if isinstance(arg, A.Literal) and isinstance(arg.value, str):
        written = readable(arg.value, kind, shown)
        return [] if written == arg.value else [(*arg.span, f"'{written}'")]
    if isinstance(arg, A.MapLiteral):
        _check_map(arg, kind, shown)
    elif isinstance(arg, A.Parameter):
        name = ctx.fresh("ts")
        ctx.derived[name] = lambda params, source=arg.name: _checked(params, source, kind)
        return [(*arg.span, f"${name}")]
    return []


def readable(text: str, kind: str, shown: str) -> str:
    """`text` in the form FalkorDB reads as Neo4j does, or the error that refuses it."""
    try:
        value, zone = canonical(text, kind)
    except Fraction as exc:
        raise fraction_error(shown, f".{exc.fraction}") from None
    except Unreadable:
        raise CypherError(UNSUPPORTED, f"{shown}: the proxy cannot read '{text}' as a {kind}, and the "
                          "embedded FalkorDB would misread it. Write it in ISO 8601 form, e.g. "
                          f"'{_EXAMPLES[kind]}'. (A limit of the embedded FalkorDB.)") from None
    if zone and zone_of("T" + zone):
        raise refuse(shown, zone_of("T" + zone), text)
    return value


def fraction_error(shown: str, fraction: str) -> CypherError:
    """The error for a temporal value `shown` with a `fraction` of a second (as written)."""
    return CypherError(
        UNSUPPORTED,
        f"{shown} has a fraction of a second ({fraction}): the embedded FalkorDB keeps times and "
        "date-times to the whole second, and storing it cut would break equality, MERGE and "
        "ordering later. Store the whole seconds as the temporal value and the fraction in a "
        "property of its own (e.g. {at: localdatetime('2015-07-21T21:40:32'), nanos: 142000000}), "
        "or the instant as epoch milliseconds (an integer); from Python, "
        "value.replace(microsecond=0). (A limit of the embedded FalkorDB; Neo4j accepts this query.)")


_EXAMPLES = {"date": "2015-07-21", "localtime": "21:40:32", "localdatetime": "2015-07-21T21:40:32",
             "datetime": "2015-07-21T21:40:32Z"}


def _check_map(arg: A.MapLiteral, kind: str, shown: str) -> None:
    for key, value in arg.items:
        lowered = key.lower()
        if lowered in SUB_SECOND and not (isinstance(value, A.Literal) and value.value == 0):
            written = value.value if isinstance(value, A.Literal) else "..."
            raise fraction_error(shown, f"{key}: {written}")
        if kind == "datetime" and lowered == "timezone" and isinstance(value, A.Literal) \
                and isinstance(value.value, str) and value.value.upper() not in _UTC_ZONES | _UTC_OFFSETS:
            raise refuse(shown, value.value)


def _checked(params: dict[str, Any], name: str, kind: str) -> Any:
    if name not in params:
        raise CypherError("Neo.ClientError.Statement.ParameterMissing", f"Expected parameter(s): {name}")
    value = params[name]
    if isinstance(value, str):
        return readable(value, kind, f"{kind}(${name}) with ${name} = '{value}'")
    return value


RULES = (Rule(A.FunctionCall, temporal_values, ("date", "time"), r"(?:date|time)\s*\("),)
