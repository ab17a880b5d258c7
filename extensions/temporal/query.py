"""Queries that touch no graph and do temporal work, answered in Python with Neo4j's values.

FalkorDB has no `time()`, no zones, no fraction of a second, no `duration.between` or
`.truncate`, and keeps durations as offsets from 1970 (docs/falkordb-notes.md). A query made
only of WITH / UNWIND / RETURN over literals and parameters (`RETURN date({year: 1984,
week: 10})`, `WITH datetime('...') AS d RETURN d + duration('PT1.5S')`, `UNWIND [...] AS t
RETURN t.week`) never needs the database, so the planner hands it here (`compile_query`). Each
expression is compiled to a function of the row and the parameters over the library's values
(`values.py`, `build.py`, `calc.py`); anything this module does not know - a clause, a
function, an operator on values it does not compute - makes `compile_query` return None (or the
run raise `NotComputed`) and the query takes the database path as before, never a guess.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from core.errors import CypherError

from ..cypher import ast as A
from . import build, calc
from .parse import UNITS, duration_of, read_duration
from .values import (KINDS, UTC, Duration, NotComputed, Temporal, argument_error, from_bolt, from_instant, text,
                     to_bolt)

Row = dict[str, Any]
Compiled = Callable[[Row, dict], Any]
TYPE_ERROR = "Neo.ClientError.Statement.TypeError"


class Unsupported(Exception):
    """Not a query (or expression) this module computes."""


@dataclass(frozen=True)
class ConstantQuery:
    columns: list[str]
    run: Callable[[dict], list[list[Any]]]        # raises NotComputed: take the database path


def compile_query(query: A.Query, source: str) -> ConstantQuery | None:
    """The Python answer of `query` when it is one of temporal work on no graph, else None."""
    if len(query.parts) != 1 or query.prefix or not any(_temporal_call(n) for n in query.walk()):
        return None
    clauses = query.parts[0].clauses
    if not clauses or not isinstance(clauses[-1], A.Return):
        return None
    try:
        steps, scope = [], set()
        for clause in clauses:
            steps.append(_clause(clause, scope, source))
            if isinstance(clause, A.Unwind):
                scope.add(clause.var.name)
            else:
                scope = {_column(item, source) for item in clause.items}
    except Unsupported:
        return None
    columns = [_column(item, source) for item in clauses[-1].items]

    def run(params: dict) -> list[list[Any]]:
        rows: list[Row] = [{}]
        params = {**params, _STATEMENT_CLOCK: time.time_ns()}
        try:
            for step in steps:
                rows = step(rows, params)
        except (ValueError, OverflowError, ZeroDivisionError) as exc:
            raise NotComputed(str(exc)) from None
        return [[_bolt(row[c]) for c in columns] for row in rows]
    return ConstantQuery(columns, run)


#: `date.statement(...)` and the other clocks: those in `_NOW` are computed here, the transaction
#: clock (one instant for every statement of a transaction) only in a null zone
_CLOCKS = tuple(f"{kind}.{clock}" for kind in KINDS for clock in ("transaction", "statement", "realtime"))
#: where `run` keeps the statement clock's reading: `date()`, `date.statement()`, ... give one
#: instant per statement, as in Neo4j (no client parameter can be named so: it has spaces)
_STATEMENT_CLOCK = " statement clock"
_TEMPORAL_FUNCTIONS = frozenset({*KINDS, "duration", "duration.between", "duration.inmonths", "duration.indays",
                                 "duration.inseconds", "datetime.fromepoch", "datetime.fromepochmillis",
                                 *(f"{kind}.truncate" for kind in KINDS), *_CLOCKS})


def _temporal_call(node: A.Node) -> bool:
    """A call this module computes and FalkorDB does not: `date()` alone stays FalkorDB's (to
    the whole second, which it can store), `date.statement()` it lacks."""
    return isinstance(node, A.FunctionCall) and node.lower_name in _TEMPORAL_FUNCTIONS and (
        bool(node.args) or "." in node.lower_name and node.lower_name in _NOW)


def _column(item: A.ReturnItem, source: str) -> str:
    return item.alias or item.expr.text_in(source)


def _bolt(value):
    if isinstance(value, list):
        return [_bolt(v) for v in value]
    if isinstance(value, dict):
        return {k: _bolt(v) for k, v in value.items()}
    return to_bolt(value)


# ---------------------------------------------------------------- clauses


def _clause(clause: A.Clause, scope: set[str], source: str):
    if isinstance(clause, A.Unwind):
        values = _expr(clause.expr, scope)
        name = clause.var.name

        def unwind(rows, params):
            out = []
            for row in rows:
                items = values(row, params)
                items = [] if items is None else items if isinstance(items, list) else [items]
                out += [{**row, name: item} for item in items]
            return out
        return unwind
    if not isinstance(clause, (A.With, A.Return)) or clause.star or clause.distinct or clause.order_by \
            or clause.skip is not None or clause.limit is not None:
        raise Unsupported(type(clause).__name__)
    items = [(_column(item, source), _expr(item.expr, scope)) for item in clause.items]
    if any(isinstance(n, A.FunctionCall) and n.lower_name in _AGGREGATES for item in clause.items
           for n in item.expr.walk()):
        raise Unsupported("aggregation")
    where = _expr(clause.where, {name for name, _ in items}) if getattr(clause, "where", None) else None

    def project(rows, params):
        out = [{name: compute(row, params) for name, compute in items} for row in rows]
        return [row for row in out if where is None or where(row, params) is True]
    return project


_AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "percentilecont",
                         "percentiledisc"})


# ---------------------------------------------------------------- expressions


def _expr(expr: A.Expr, scope: set[str]) -> Compiled:
    if isinstance(expr, A.Literal):
        return lambda row, params, value=expr.value: value
    if isinstance(expr, A.Parameter):
        return lambda row, params, name=expr.name: _parameter(params, name)
    if isinstance(expr, A.Variable):
        if expr.name not in scope:
            raise Unsupported(expr.name)
        return lambda row, params, name=expr.name: row[name]
    if isinstance(expr, A.ListLiteral):
        items = [_expr(item, scope) for item in expr.items]
        return lambda row, params: [item(row, params) for item in items]
    if isinstance(expr, A.MapLiteral):
        entries = [(key, _expr(value, scope)) for key, value in expr.items]
        return lambda row, params: {key: value(row, params) for key, value in entries}
    if isinstance(expr, A.Property):
        return _property(_expr(expr.expr, scope), expr.key)
    if isinstance(expr, A.FunctionCall) and not expr.distinct:
        return _function(expr.lower_name, [_expr(arg, scope) for arg in expr.args])
    if isinstance(expr, A.BinaryOp) and expr.op in _OPERATORS:
        left, right, op = _expr(expr.left, scope), _expr(expr.right, scope), _OPERATORS[expr.op]
        return lambda row, params: op(left(row, params), right(row, params))
    if isinstance(expr, A.UnaryOp) and expr.op in ("-", "NOT"):
        operand = _expr(expr.operand, scope)
        negate = _negate if expr.op == "-" else _not
        return lambda row, params: negate(operand(row, params))
    if isinstance(expr, A.IsNull):
        operand = _expr(expr.expr, scope)
        return lambda row, params: (operand(row, params) is None) != expr.negated
    raise Unsupported(type(expr).__name__)


def _parameter(params: dict, name: str):
    if name not in params:
        raise CypherError("Neo.ClientError.Statement.ParameterMissing", f"Expected parameter(s): {name}")
    return _value(params[name])


def _value(value):
    """A parameter's value in this module's terms (temporals and durations as the library's)."""
    if isinstance(value, (list, tuple)):
        return [_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _value(v) for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    converted = from_bolt(value)
    if converted is None:
        raise NotComputed(type(value).__name__)
    return converted


def _property(target: Compiled, key: str) -> Compiled:
    def get(row, params):
        value = target(row, params)
        if value is None:
            return None
        if isinstance(value, dict):
            return value.get(key)
        if isinstance(value, (Temporal, Duration)):
            return calc.accessor(value, key)
        raise NotComputed(f".{key} of {type(value).__name__}")
    return get


def _nulls(function):
    """`function`, giving null when any argument is null."""
    return lambda *args: None if any(a is None for a in args) else function(*args)


def _duration(arg):
    if isinstance(arg, str):
        return read_duration(arg)
    if isinstance(arg, Duration):
        return arg
    if isinstance(arg, dict):
        amounts = {}
        for key, value in arg.items():
            if key.lower() not in UNITS:
                raise argument_error(f"No such field: {key}")
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise NotComputed(f"duration field {key} = {value!r}")
            amounts[key.lower()] = Fraction(value)
        return duration_of(amounts)
    raise NotComputed(f"duration({arg!r})")


def _to_string(value):
    if isinstance(value, (Temporal, Duration)):
        return text(value)
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    raise NotComputed(f"toString({value!r})")


def _truncate(kind: str):
    def apply(unit, value, m=None):
        if value is None:
            return None
        if not isinstance(value, Temporal) or not (m is None or isinstance(m, dict)):
            raise NotComputed(f"{kind}.truncate of {value!r}")
        return build.truncate(kind, unit, value, m)
    return apply


def _construct(kind: str):
    def apply(arg):
        if arg is not None and not isinstance(arg, (str, dict, Temporal)):
            raise NotComputed(f"{kind}({arg!r})")
        return build.construct(kind, arg)
    return apply


def _null_clock(zone):
    """A clock read in a null zone is null (Neo4j); in a given zone it needs the clock."""
    if zone is not None:
        raise NotComputed("a clock in a time zone")
    return None


def _between(unit: str | None):
    def apply(a, b):
        if not (isinstance(a, Temporal) and isinstance(b, Temporal)):
            raise NotComputed("duration.between of non-temporal values")
        return calc.between(a, b, unit)
    return _nulls(apply)


_FUNCTIONS: dict[str, tuple[Callable, tuple[int, ...]]] = {
    **{kind: (_construct(kind), (1,)) for kind in KINDS},
    **{f"{kind}.truncate": (_truncate(kind), (2, 3)) for kind in KINDS},
    "duration": (_nulls(_duration), (1,)),
    "duration.between": (_between(None), (2,)), "duration.inmonths": (_between("months"), (2,)),
    "duration.indays": (_between("days"), (2,)), "duration.inseconds": (_between("seconds"), (2,)),
    "datetime.fromepoch": (_nulls(build.from_epoch), (2,)),
    "datetime.fromepochmillis": (_nulls(build.from_epoch_millis), (1,)),
    "tostring": (_nulls(_to_string), (1,)),
    **{clock: (_null_clock, (1,)) for clock in _CLOCKS},
}


def _now(kind: str, reading: Callable[[dict], int]) -> Callable[[Compiled | None], Compiled]:
    """`kind()` read from a clock (nanoseconds since the epoch), in the default zone (UTC) or
    the zone the call names (`date.statement('Europe/Stockholm')`); null in a null zone."""
    def call(zone_arg: Compiled | None) -> Compiled:
        def now(row, params):
            zone = UTC if zone_arg is None else zone_arg(row, params)
            if zone is None:
                return None
            zone = zone if zone is UTC else build.read_zone_value(zone)
            return build.convert(kind, from_instant(reading(params), zone), zone)
        return now
    return call


_NOW = {
    **{name: _now(kind, lambda params: params[_STATEMENT_CLOCK])
       for kind in KINDS for name in (kind, f"{kind}.statement")},
    **{f"{kind}.realtime": _now(kind, lambda params: time.time_ns()) for kind in KINDS},
}


def _construct_or_now(kind: str, arg: Compiled) -> Compiled:
    """`kind(arg)`; a map of only a timezone (`datetime({timezone: '+01:00'})`) reads the
    statement clock in that zone, as in Neo4j."""
    construct = _FUNCTIONS[kind][0]

    def call(row, params):
        value = arg(row, params)
        if isinstance(value, dict) and len(value) == 1 and next(iter(value)).lower() == "timezone" \
                and isinstance(zone := next(iter(value.values())), str):
            return _NOW[kind](lambda row, params: zone)(row, params)
        return construct(value)
    return call


def _function(name: str, args: list[Compiled]) -> Compiled:
    if name in _NOW and (not args or len(args) == 1 and "." in name):
        return _NOW[name](args[0] if args else None)
    if name in KINDS and len(args) == 1:
        return _construct_or_now(name, args[0])
    if name not in _FUNCTIONS or len(args) not in _FUNCTIONS[name][1]:
        raise Unsupported(name)
    function = _FUNCTIONS[name][0]
    return lambda row, params: function(*(arg(row, params) for arg in args))


# ---------------------------------------------------------------- operators


def _number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _plus(a, b):
    if a is None or b is None:
        return None
    if isinstance(a, Temporal) and isinstance(b, Duration):
        return calc.add(a, b)
    if isinstance(a, Duration) and isinstance(b, Temporal):
        return calc.add(b, a)
    if isinstance(a, Duration) and isinstance(b, Duration):
        return calc.add_durations(a, b)
    if isinstance(a, str) and isinstance(b, str):
        return a + b
    raise NotComputed("+")


def _minus(a, b):
    if a is None or b is None:
        return None
    if isinstance(b, Duration) and isinstance(a, (Temporal, Duration)):
        return _plus(a, -b)
    raise NotComputed("-")


def _times(a, b):
    if a is None or b is None:
        return None
    if isinstance(a, Duration) and _number(b):
        return _scaled(a, b)
    if _number(a) and isinstance(b, Duration):
        return _scaled(b, a)
    raise NotComputed("*")


def _scaled(d: Duration, factor):
    if isinstance(factor, float) and not math.isfinite(factor):
        raise NotComputed("a duration times a non-finite number")
    return calc.multiply(d, factor)


def _divided(a, b):
    if a is None or b is None:
        return None
    if isinstance(a, Duration) and _number(b) and (not isinstance(b, float) or math.isfinite(b)):
        return calc.divide(a, b)
    raise NotComputed("/")


def _comparable(a, b) -> bool:
    return _number(a) and _number(b) or type(a) is type(b) and isinstance(a, (str, bool))


def _order(test: Callable[[int], bool]):
    def apply(a, b):
        if a is None or b is None:
            return None
        if isinstance(a, (Temporal, Duration)) or isinstance(b, (Temporal, Duration)):
            sign = calc.compare(a, b)
            return None if sign is None else test(sign)
        if _comparable(a, b):
            return test((a > b) - (a < b))
        raise NotComputed("ordering")
    return apply


def _equals(a, b):
    if a is None or b is None:
        return None
    if isinstance(a, (Temporal, Duration)) or isinstance(b, (Temporal, Duration)):
        if isinstance(a, (Temporal, Duration)) and isinstance(b, (Temporal, Duration)):
            return calc.equal(a, b)
        return False
    if _comparable(a, b):
        return a == b
    raise NotComputed("=")


def _not_equals(a, b):
    result = _equals(a, b)
    return None if result is None else not result


def _logic(op: str):
    def apply(a, b):
        if not all(v is None or isinstance(v, bool) for v in (a, b)):
            raise CypherError(TYPE_ERROR, f"{op} takes booleans, not {a!r} and {b!r}")
        if op == "AND":
            return False if False in (a, b) else None if None in (a, b) else True
        if op == "OR":
            return True if True in (a, b) else None if None in (a, b) else False
        return None if None in (a, b) else a != b
    return apply


def _negate(value):
    if value is None:
        return None
    if isinstance(value, Duration):
        return -value
    if _number(value):
        return -value
    raise NotComputed("-")


def _not(value):
    if value is None or isinstance(value, bool):
        return None if value is None else not value
    raise CypherError(TYPE_ERROR, f"NOT takes a boolean, not {value!r}")


_OPERATORS = {"+": _plus, "-": _minus, "*": _times, "/": _divided, "=": _equals, "<>": _not_equals,
              "<": _order(lambda s: s < 0), ">": _order(lambda s: s > 0), "<=": _order(lambda s: s <= 0),
              ">=": _order(lambda s: s >= 0), "AND": _logic("AND"), "OR": _logic("OR"), "XOR": _logic("XOR")}


def constant_nanos(expr: A.Expr, params: dict, clock_ns: int) -> int | None:
    """Nanoseconds since 1970-01-01T00:00Z of `expr`, a date or date-time computed from literals,
    parameters and the statement clock read as `clock_ns` (`datetime() - duration('P7D')`), for
    comparing it with date-times the database keeps to the whole second only; None for null.
    Raises NotComputed for an expression this module does not compute or a value that is neither."""
    try:
        value = _expr(expr, set())({}, {**params, _STATEMENT_CLOCK: clock_ns})
    except Unsupported as exc:
        raise NotComputed(str(exc)) from None
    except (ValueError, OverflowError, ZeroDivisionError) as exc:
        raise NotComputed(str(exc)) from None
    if value is None:
        return None
    if not isinstance(value, Temporal) or value.date is None:
        raise NotComputed("not a date or date-time")
    return value.epoch_nanos()
