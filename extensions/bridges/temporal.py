"""Zoned date-times on a database without zones: refuse, never change the value silently.

FalkorDB has no zoned temporal types: `dialect.py` runs `datetime(...)` as `localdatetime(...)`,
and FalkorDB's parser drops an offset or zone it finds in the string
(`localdatetime('2024-01-01T10:00:00+02:00')` is 10:00, an instant two hours off). A value
without a zone, or in UTC (`Z`, `+00:00`, `[UTC]`), is the same instant in UTC, which is how the
proxy stores date-times (Neo4j's default time zone is UTC too). Anything else is refused with an
error that names the zone and shows the UTC instant to store instead, with the zone in a
property of its own if it matters. Literals are checked when the query is planned, parameters
when it runs; strings read from the graph are parsed by FalkorDB as they are.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from proxy.errors import CypherError

from ..cypher import ast as A
from .rule import Context, Edit, Rule

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


def zoned_literals(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    """`datetime('...+02:00')`, `datetime({..., timezone: 'Europe/Oslo'})`: refused; a
    `datetime($p)` parameter is checked when the query runs."""
    if call.lower_name != "datetime" or len(call.args) != 1:
        return []
    arg = call.args[0]
    if isinstance(arg, A.Literal) and isinstance(arg.value, str):
        zone = zone_of(arg.value)
        if zone:
            raise refuse(call.text_in(ctx.text), zone, arg.value)
    elif isinstance(arg, A.MapLiteral):
        for key, value in arg.items:
            if key.lower() == "timezone" and isinstance(value, A.Literal) and isinstance(value.value, str) \
                    and value.value.upper() not in _UTC_ZONES | _UTC_OFFSETS:
                raise refuse(call.text_in(ctx.text), value.value)
    elif isinstance(arg, A.Parameter):
        name = ctx.fresh("dt")
        ctx.derived[name] = lambda params, source=arg.name: _checked(params, source)
        return [(*arg.span, f"${name}")]
    return []


def _checked(params: dict[str, Any], name: str) -> Any:
    if name not in params:
        raise CypherError("Neo.ClientError.Statement.ParameterMissing", f"Expected parameter(s): {name}")
    value = params[name]
    if isinstance(value, str) and (zone := zone_of(value)):
        raise refuse(f"datetime(${name}) with ${name} = '{value}'", zone, value)
    return value


RULES = (Rule(A.FunctionCall, zoned_literals, ("datetime",), r"datetime\s*\("),)
