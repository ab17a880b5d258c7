"""Epoch values, day counts and accessors FalkorDB lacks or gets wrong, from the parts it has.

FalkorDB 4.16 has no `.epochSeconds` / `.epochMillis` and no `duration.inDays` /
`duration.inSeconds` ("unknown datetime component", "Unknown function"), which recency ranking
needs (`duration.inDays(n.updatedAt, date()).days`). Both come exactly from `.year` and
`.ordinalDay` (correct in FalkorDB) with integer arithmetic: the days since 1970-01-01 of a date
in the proleptic Gregorian calendar are `365 (y - 1) + (y - 1)/4 - (y - 1)/100 + (y - 1)/400 +
ordinalDay - 719163`. The hours, minutes and seconds of a date-time add to it (values hold whole
seconds on FalkorDB, so `.epochMillis` is exact too).

- `t.epochSeconds`, `t.epochMillis` -> that number (still the map key for a map);
- `t.dayOfQuarter` -> `t.ordinalDay` less the days before the quarter (FalkorDB's own is off
  in some months: 13 for 1984-10-11);
- `duration.inDays(a, b).days` -> whole days from `a` to `b`, toward zero;
  `duration.inSeconds(a, b).seconds` -> seconds. Any other use of these two functions would
  need a duration of days FalkorDB does not keep (P40D comes back P1M9D) and is refused.
"""

from __future__ import annotations

from core.errors import CypherError

from ..cypher import ast as A
from .rule import Context, Edit, Rule, copy, copyable
from .temporal import UNSUPPORTED

_TEMPORALS = "['Date', 'Datetime', 'Time', 'Duration']"


def epoch_seconds(x: str) -> str:
    """Seconds since 1970-01-01T00:00 of `x`, a date or local date-time (null for others)."""
    t = f"(CASE WHEN typeOf({x}) IN ['Date', 'Datetime'] THEN {x} END)"
    clock = f"(CASE WHEN typeOf({x}) = 'Datetime' THEN {x} END)"
    y = f"({t}.year - 1)"
    days = f"(365 * {y} + {y} / 4 - {y} / 100 + {y} / 400 + {t}.ordinalDay - 719163)"
    return (f"({days} * 86400 + coalesce({clock}.hour * 3600 + {clock}.minute * 60 + {clock}.second, 0))")


def day_of_quarter(x: str) -> str:
    t = f"(CASE WHEN typeOf({x}) IN ['Date', 'Datetime'] THEN {x} END)"
    leap = f"({t}.year % 4 = 0 AND ({t}.year % 100 <> 0 OR {t}.year % 400 = 0))"
    before = f"CASE WHEN {leap} THEN [0, 91, 182, 274] ELSE [0, 90, 181, 273] END"
    return f"{t}.ordinalDay - ({before})[{t}.quarter - 1]"


ACCESSORS = {"epochseconds": epoch_seconds, "epochmillis": lambda x: epoch_seconds(x) + " * 1000",
             "dayofquarter": day_of_quarter}


def accessors(prop: A.Property, ctx: Context) -> list[Edit]:
    key = prop.key.lower()
    if key not in ACCESSORS or not copyable(prop.expr):
        return []
    x = f"({copy(prop.expr, ctx)})"
    value = ACCESSORS[key](x)
    other = f"(CASE WHEN typeOf({x}) IN {_TEMPORALS} THEN null ELSE {x} END).{prop.key}"
    return [(*prop.span, f"(CASE WHEN typeOf({x}) IN ['Date', 'Datetime'] THEN {value} ELSE {other} END)")]


BETWEEN = {"duration.indays": ("days", 86400), "duration.inseconds": ("seconds", 1)}


def between(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    """`duration.inDays(a, b)` only as `duration.inDays(a, b).days` (see `counted`)."""
    if call.lower_name not in BETWEEN:
        return []
    unit = BETWEEN[call.lower_name][0]
    parent = _parent(ctx.query, call)
    if not (isinstance(parent, A.Property) and parent.key.lower() == unit) or len(call.args) != 2 \
            or not all(copyable(arg) for arg in call.args):
        raise CypherError(UNSUPPORTED, f"{call.text_in(ctx.text)}: the embedded FalkorDB has no "
                          f"{call.name} and would not keep the duration it returns; write "
                          f"{call.text_in(ctx.text)}.{unit} for the number of {unit} between the two "
                          "(of dates or date-times). (A limit of the embedded FalkorDB.)")
    return []


def counted(prop: A.Property, ctx: Context) -> list[Edit]:
    call = prop.expr
    if not (isinstance(call, A.FunctionCall) and call.lower_name in BETWEEN and len(call.args) == 2
            and prop.key.lower() == BETWEEN[call.lower_name][0] and all(copyable(a) for a in call.args)):
        return []
    a, b = (f"({copy(arg, ctx)})" for arg in call.args)
    seconds = f"({epoch_seconds(b)} - {epoch_seconds(a)})"
    size = BETWEEN[call.lower_name][1]
    return [(*prop.span, seconds if size == 1 else f"({seconds} / {size})")]


def _parent(query: A.Query, child: A.Node) -> A.Node | None:
    for node in query.walk():
        if any(c is child for c in node.children()):
            return node
    return None


RULES = (Rule(A.Property, accessors, ("epoch", "dayofquarter"),
              r"\.\s*(?:epochseconds|epochmillis|dayofquarter)\b"),
         Rule(A.FunctionCall, between, ("duration.in",), r"duration\.in(?:days|seconds)\s*\("),
         Rule(A.Property, counted, ("duration.in",), r"duration\.in(?:days|seconds)\s*\("))
