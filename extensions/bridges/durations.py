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

from fractions import Fraction
from typing import Any

from neo4j.time import Duration

from proxy.backends.falkordb.values import stored_duration
from core.errors import CypherError

from ..cypher import ast as A
from ..temporal.parse import UNITS, duration_amounts, duration_parts
from .rule import Context, Edit, Rule
from .temporal import UNSUPPORTED, fraction_error


class Unreadable(ValueError):
    pass


def parts(amounts: dict[str, Fraction]) -> tuple[int, int, int, Fraction]:
    """(months, days, seconds, fraction of a second) of a duration given in Neo4j's units."""
    months, days, seconds = duration_parts(amounts)
    return months, days, int(seconds), seconds - int(seconds)


def read(text: str) -> dict[str, Fraction]:
    amounts = duration_amounts(text)
    if amounts is None:
        raise Unreadable(text)
    return amounts


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
