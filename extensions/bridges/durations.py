"""Durations FalkorDB cannot hold or add as Neo4j does: computed exactly, or refused.

FalkorDB 4.16 keeps a duration as the instant 1970-01-01 + duration, in seconds, and reads the
calendar parts back from it: `duration({days: 40})` comes back P1M9D, `duration({hours: 50})`
P2DT2H, a fraction of a second is dropped, and a string with a fraction (`'P0.75M'`) is null.
Adding one to a date adds those seconds, so a month is 31 days (`date('2024-01-31') +
duration({months: 1})` is 2024-03-02, not 2024-02-29). So:

- a `duration('...')` or `duration({...})` of literals is computed in Python as Neo4j computes
  it (a fraction of a year, month, week, day, hour or minute flows into the smaller units; a
  month is 2,629,746 s) and sent as whole months, days and seconds when FalkorDB gives that
  duration back unchanged (`falkordb.values.stored_duration`); otherwise it is refused, as is a
  fraction of a second;
- date arithmetic with a duration of months (a literal, or a parameter holding one) is refused.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

from neo4j.time import Duration

from proxy.backends.falkordb.values import stored_duration
from core.errors import CypherError

from ..cypher import ast as A
from .rule import Context, Edit, Rule
from .temporal import UNSUPPORTED, fraction_error

MONTH_SECONDS = 2_629_746
#: Neo4j's map keys -> (unit: months, days or seconds, how many of it)
UNITS = {"years": ("months", 12), "quarters": ("months", 3), "months": ("months", 1), "weeks": ("days", 7),
         "days": ("days", 1), "hours": ("seconds", 3600), "minutes": ("seconds", 60), "seconds": ("seconds", 1),
         "milliseconds": ("seconds", Fraction(1, 1000)), "microseconds": ("seconds", Fraction(1, 10**6)),
         "nanoseconds": ("seconds", Fraction(1, 10**9))}
_NUMBER = r"[-+]?\d+(?:[.,]\d+)?"
_ISO = re.compile(rf"""(?P<sign>-)?P(?:(?P<years>{_NUMBER})Y)?(?:(?P<months>{_NUMBER})M)?(?:(?P<weeks>{_NUMBER})W)?
    (?:(?P<days>{_NUMBER})D)?(?:T(?:(?P<hours>{_NUMBER})H)?(?:(?P<minutes>{_NUMBER})M)?(?:(?P<seconds>{_NUMBER})S)?)?\Z""",
                  re.X | re.I)
_ALTERNATIVE = re.compile(r"P(?P<years>\d{4})-(?P<months>\d{2})-(?P<days>\d{2})"
                          r"T(?P<hours>\d{2}):(?P<minutes>\d{2}):(?P<seconds>\d{2}(?:[.,]\d+)?)\Z", re.I)


class Unreadable(ValueError):
    pass


def parts(amounts: dict[str, Fraction]) -> tuple[int, int, int, Fraction]:
    """(months, days, seconds, fraction of a second) of a duration given in Neo4j's units."""
    total = {"months": Fraction(0), "days": Fraction(0), "seconds": Fraction(0)}
    for key, amount in amounts.items():
        unit, size = UNITS[key]
        total[unit] += amount * size
    months = int(total["months"])                    # fractions flow down, toward zero
    seconds = (total["months"] - months) * MONTH_SECONDS + (total["days"] - int(total["days"])) * 86400
    days = int(total["days"]) + int(seconds / 86400)
    seconds = seconds - int(seconds / 86400) * 86400 + total["seconds"]
    return months, days, int(seconds), seconds - int(seconds)


def read(text: str) -> dict[str, Fraction]:
    found = _ISO.match(text.strip()) or _ALTERNATIVE.match(text.strip())
    if found is None or not any(v for k, v in found.groupdict().items() if k != "sign"):
        raise Unreadable(text)
    sign = -1 if found.groupdict().get("sign") else 1
    return {key: sign * Fraction(value.replace(",", ".")) for key, value in found.groupdict().items()
            if key != "sign" and value is not None}


def exact(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    """`duration('P0.75M')`, `duration({months: 0.75})` -> whole parts FalkorDB keeps, or refused."""
    if call.lower_name != "duration" or len(call.args) != 1:
        return []
    arg, shown = call.args[0], call.text_in(ctx.text)
    if isinstance(arg, A.Literal) and isinstance(arg.value, str):
        try:
            amounts = read(arg.value)
        except Unreadable:
            raise CypherError(UNSUPPORTED, f"{shown}: the proxy cannot read '{arg.value}' as an ISO 8601 "
                              "duration (e.g. 'P1Y2M10DT2H30M'), and the embedded FalkorDB would answer "
                              "null. (A limit of the embedded FalkorDB.)") from None
    elif isinstance(arg, A.MapLiteral) and all(isinstance(v, A.Literal) and type(v.value) in (int, float)
                                               and k.lower() in UNITS for k, v in arg.items):
        amounts = {k.lower(): Fraction(v.value) for k, v in arg.items}
    else:
        return []
    months, days, seconds, fraction = parts(amounts)
    if fraction:
        raise fraction_error(shown, f"{float(fraction):g} s")
    wanted = Duration(months=months, days=days, seconds=seconds)
    kept = stored_duration(months, days, seconds)
    if kept != wanted and not (kept is None and not days and not seconds):   # (whole months past
        raise unkept(shown, wanted)                                         # the calendar: kept)
    if isinstance(arg, A.MapLiteral) and all(type(v.value) is int for _, v in arg.items):
        return []                                    # FalkorDB builds it the same way
    return [(*arg.span, f"{{months: {months}, days: {days}, seconds: {seconds}}}")]


def unkept(shown: str, wanted: Duration) -> CypherError:
    return CypherError(
        UNSUPPORTED,
        f"{shown} is {wanted.iso_format()}: the embedded FalkorDB keeps a duration as an offset from "
        "1970-01-01 and would give it back as another one (P40D as P1M9D, PT50H as P2DT2H), which "
        "also changes date arithmetic with it. Durations it keeps have whole months, 0 to 27 days "
        "and under 24 hours, all of one sign; for a number of days or hours, compute the date or "
        "time in the application and pass it as a parameter. (A limit of the embedded FalkorDB; "
        "Neo4j accepts this query.)")


def _months_of(expr: A.Expr, ctx: Context) -> int:
    if isinstance(expr, A.FunctionCall) and expr.lower_name == "duration" and len(expr.args) == 1:
        arg = expr.args[0]
        if isinstance(arg, A.Literal) and isinstance(arg.value, str):
            return parts(read(arg.value))[0]
        if isinstance(arg, A.MapLiteral):
            if all(isinstance(v, A.Literal) and type(v.value) in (int, float) and k.lower() in UNITS
                   for k, v in arg.items):
                return parts({k.lower(): Fraction(v.value) for k, v in arg.items})[0]
            return sum(1 for k, _ in arg.items if UNITS.get(k.lower(), ("",))[0] == "months")
    return 0


def month_arithmetic(op: A.BinaryOp, ctx: Context) -> list[Edit]:
    """`x + duration({months: 1})`, `x - $d` (a duration of months): refused."""
    if op.op not in ("+", "-"):
        return []
    for side in (op.left, op.right):
        if _months_of(side, ctx):
            raise month_error(op.text_in(ctx.text))
    edits: list[Edit] = []
    for side in (op.left, op.right):
        if isinstance(side, A.Parameter):
            name = ctx.fresh("du")
            ctx.derived[name] = lambda params, source=side.name, shown=op.text_in(ctx.text): \
                _without_months(params, source, shown)
            edits.append((*side.span, f"${name}"))
    return edits


def _without_months(params: dict[str, Any], name: str, shown: str) -> Any:
    if name not in params:
        raise CypherError("Neo.ClientError.Statement.ParameterMissing", f"Expected parameter(s): {name}")
    value = params[name]
    if isinstance(value, Duration) and value.months:
        raise month_error(f"{shown} with ${name} = {value.iso_format()}")
    return value


def month_error(shown: str) -> CypherError:
    return CypherError(
        UNSUPPORTED,
        f"{shown} adds months: the embedded FalkorDB adds a month as the seconds of a month of 1970 "
        "(date('2024-01-31') + P1M is 2024-03-02 there, 2024-02-29 in Neo4j). Compute the date in the "
        "application and pass it as a parameter, or build it from its parts "
        "(date({year: d.year, month: d.month, day: 1})). (A limit of the embedded FalkorDB; Neo4j "
        "accepts this query.)")


RULES = (Rule(A.FunctionCall, exact, ("duration",), r"duration\s*\("),
         Rule(A.BinaryOp, month_arithmetic, ("duration", "$"), r"duration\s*\(|[-+]\s*\$|\$\w+\s*[-+]"))
