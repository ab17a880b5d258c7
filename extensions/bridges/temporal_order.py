"""Dates and date-times more than ~68 years apart: FalkorDB compares them wrongly; compare by year.

FalkorDB 4.16 (and 4.22) stores a date or local date-time as seconds since 1970 and compares two
of them through a 32-bit difference: past 2^31 seconds (68 years) the sign wraps, so
`date('2000-01-01') < date('2069-01-01')` is false and ORDER BY, `min` and `max` go wrong (an
index scan too). Values of one year are never that far apart, so each comparison is decided by
the year when the years differ and by FalkorDB within a year:

- `a < b` (also `<=`, `>`, `>=`) -> `[__v IN [[a, b]] | CASE WHEN <same type, years differ>
  THEN <years compared> ELSE <a < b> END][0]`, with `a` and `b` written once (bridges inside them
  keep their edits). A side that can never be a date (a number or string literal, arithmetic,
  `count()`, ...) leaves the comparison alone. A comparison with a parameter is rewritten only
  when the parameter holds a date or date-time (`Context.conditional`), so `n.age > $min` keeps
  its index. A side holding an aggregate (`max(d) < x`) is left to FalkorDB, which cannot
  aggregate inside a list comprehension.
- `ORDER BY k` -> `ORDER BY <rank of k>, k`: the year for a date or date-time, below it the
  types Neo4j orders before temporals (maps, nodes, relationships, lists, paths), above it the
  ones after, null included (it then sorts after numbers on `k`, as in Neo4j; a null rank put
  nulls first in FalkorDB under ORDER BY ... LIMIT). A key that is a number by its form, or a
  variable bound to numbers (`UNWIND range(...)`, `count(*) AS c`), is left alone.
- `min(x)`, `max(x)` -> when every value is a date (or every one a date-time), the minimum of
  their zero-padded ISO text, read back; else FalkorDB's own `min`/`max`.

Local times never span more than a day and are left to FalkorDB.
"""

from __future__ import annotations

import datetime as _dt

from neo4j.time import Date, DateTime

from ..cypher import ast as A
from .rule import Context, Edit, Rule, aggregates, copy, copyable

FAR_APART = ("Date", "Datetime")           # FalkorDB's typeOf() names of the affected types
COMPARISONS = frozenset({"<", ">", "<=", ">="})
#: Functions whose value is never a date or date-time.
NOT_TEMPORAL_FUNCTIONS = frozenset({
    "count", "size", "length", "tointeger", "tofloat", "tostring", "toboolean", "id", "elementid",
    "abs", "ceil", "floor", "round", "sqrt", "sign", "rand", "log", "log10", "exp", "e", "pi",
    "sin", "cos", "tan", "asin", "acos", "atan", "atan2", "degrees", "radians", "avg", "sum",
    "stdev", "stdevp", "percentilecont", "percentiledisc", "tolower", "toupper", "trim", "ltrim",
    "rtrim", "substring", "replace", "left", "right", "split", "reverse", "labels", "type", "keys",
    "timestamp", "exists", "isempty", "char_length", "character_length", "valuetype"})
TEMPORAL_FUNCTIONS = frozenset({"date", "datetime", "localdatetime"})
_NOT_TEMPORAL_OPS = frozenset({"*", "/", "%", "^", "AND", "OR", "XOR", "=", "<>", "<", ">", "<=", ">=",
                               "IN", "STARTS WITH", "ENDS WITH", "CONTAINS", "=~"})


def never_temporal(expr: A.Expr, numbers: frozenset[str] = frozenset()) -> bool:
    """Whether `expr` can never be a date or a date-time, judged from its form and the variables
    in `numbers` (`rule.numeric_variables`)."""
    if isinstance(expr, A.Variable):
        return expr.name in numbers
    if isinstance(expr, (A.Literal, A.ListLiteral, A.MapLiteral, A.CountStar, A.UnaryOp, A.IsNull,
                         A.ComparisonChain)):
        return True
    if isinstance(expr, A.FunctionCall):
        return expr.lower_name in NOT_TEMPORAL_FUNCTIONS or expr.lower_name == "range"
    if isinstance(expr, A.BinaryOp):
        return expr.op in _NOT_TEMPORAL_OPS or (never_temporal(expr.left, numbers)
                                                and never_temporal(expr.right, numbers))
    return False


def _year(expr: str) -> str:
    """The year of `expr` when it is a date or date-time, else null (never an error: FalkorDB
    evaluates every CASE branch)."""
    return f"(CASE WHEN typeOf({expr}) IN {list(FAR_APART)} THEN {expr} END).year"


def compare(op: A.BinaryOp, ctx: Context) -> list[Edit]:
    if op.op not in COMPARISONS:
        return []
    numbers = ctx.numbers(never_temporal)
    if never_temporal(op.left, numbers) or never_temporal(op.right, numbers) \
            or aggregates(op.left) or aggregates(op.right):      # `max(d) < x` is left to FalkorDB
        return []
    v = ctx.fresh("v")
    edits = [(op.left.span[0], op.left.span[0], f"[{v} IN [["), (op.left.span[1], op.right.span[0], ", "),
             (op.right.span[1], op.right.span[1], f"]] | {by_year(f'{v}[0]', op.op, f'{v}[1]')}][0]")]
    params = [side.name for side in (op.left, op.right) if isinstance(side, A.Parameter)]
    if params and not any(_temporal(side) for side in (op.left, op.right)):
        for name in params:                       # only when the parameter holds a date
            ctx.conditional.setdefault(name, []).extend(edits)
        return []
    return edits


def by_year(a: str, op: str, b: str) -> str:
    """`a op b` decided by the years when `a` and `b` are dates (or date-times) of different
    years, else by FalkorDB (`a` and `b` are evaluated several times)."""
    return (f"CASE WHEN typeOf({a}) = typeOf({b}) AND {_year(a)} <> {_year(b)} "
            f"THEN {_year(a)} {op} {_year(b)} ELSE {a} {op} {b} END")


def holds_date(value) -> bool:
    """Whether a parameter value is a date or date-time (what `compare` is conditional on)."""
    return isinstance(value, (_dt.date, Date, DateTime))


def _temporal(expr: A.Expr) -> bool:
    if isinstance(expr, A.FunctionCall):
        return expr.lower_name in TEMPORAL_FUNCTIONS
    return isinstance(expr, A.BinaryOp) and expr.op in "+-" and (_temporal(expr.left) or _temporal(expr.right))


#: typeOf() -> rank for the types Neo4j orders before and after dates and date-times.
_BEFORE, _AFTER = ("Map", "Node", "Edge", "List", "Path"), 10_000


def order_keys(projection: A.With | A.Return, ctx: Context) -> list[Edit]:
    edits = []
    aliases = {item.alias: item.expr for item in projection.items if item.alias}
    numbers = ctx.numbers(never_temporal)
    for item in projection.order_by:
        key = item.expr
        if never_temporal(key, numbers) or not copyable(key) or isinstance(key, A.Variable) \
                and key.name in aliases and not copyable(aliases[key.name]):
            continue
        text = copy(key, ctx)
        rank = f"CASE WHEN typeOf({text}) IN {list(_BEFORE)} THEN -1 ELSE coalesce({_year(text)}, {_AFTER}) END"
        direction = " DESC" if item.descending else ""
        edits.append((key.span[0], key.span[0], f"{rank}{direction}, "))
    return edits


def extremes(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    """`min(x)` / `max(x)` over dates or date-times by their zero-padded ISO text."""
    if call.lower_name not in ("min", "max") or len(call.args) != 1 or never_temporal(call.args[0]) \
            or not copyable(call.args[0]):
        return []
    x, fn = f"({copy(call.args[0], ctx)})", call.name
    temporal = f"(CASE WHEN typeOf({x}) IN {list(FAR_APART)} THEN {x} END)"
    iso = f"toString({temporal})"
    padded = f"substring('000', 0, coalesce(4 - size(split({iso}, '-')[0]), 0)) + {iso}"
    kind = f"CASE typeOf({x}) WHEN 'Null' THEN null ELSE typeOf({x}) END"
    only = f"min({kind}) = max({kind}) AND min({kind})"
    extreme = f"{fn}({padded})"
    return [(*call.span,
             f"CASE WHEN {only} = 'Date' THEN date(CASE WHEN {only} = 'Date' THEN {extreme} ELSE '1970-01-01' END) "
             f"WHEN {only} = 'Datetime' THEN localdatetime(CASE WHEN {only} = 'Datetime' THEN {extreme} "
             f"ELSE '1970-01-01T00:00:00' END) ELSE {fn}({x}) END")]


RULES = (
    Rule(A.BinaryOp, compare, ("<", ">"), r"(?<![-<])[<>](?![->])"),     # not an arrow, not <>
    Rule(A.With, order_keys, ("order",), r"order\s+by"),
    Rule(A.Return, order_keys, ("order",), r"order\s+by"),
    Rule(A.FunctionCall, extremes, ("min", "max"), r"\b(?:min|max)\s*\("),
)
