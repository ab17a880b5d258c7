"""`toString()` of a float as Neo4j writes it, or refused while the query runs.

FalkorDB formats a float with `%f` (`toString(2.3)` is '2.300000', `toString(1e-9)` '0.000000');
Neo4j writes Java's shortest form ('2.3', '1.0E-9'). Between 0.001 and 10^7 Java writes plain
decimals, and when the shortest form has at most six of them, it is the `%f` text cut after the
decimals, less its trailing zeros; it has at most six exactly when round(x * 10^6) / 10^6 = x
(computed in doubles: FalkorDB's `toFloat` reads strings in single precision). The text is
built without list comprehensions, which would cost the query its nesting budget. Other floats (more digits, or Java's E notation) fail the query
with a message saying so (`Context.refuse_when`); NaN and the infinities are written as Neo4j
writes them.
"""

from __future__ import annotations

from ..cypher import ast as A
from .rule import Context, Edit, Rule, copy, copyable

#: Functions whose value is never a float.
NOT_FLOAT = frozenset({"id", "elementid", "size", "length", "count", "tointeger", "tostring", "toboolean",
                       "labels", "type", "keys", "tolower", "toupper", "trim", "ltrim", "rtrim", "substring",
                       "replace", "left", "right", "date", "datetime", "localdatetime", "localtime",
                       "duration", "timestamp", "char_length", "character_length"})
REFUSAL = ("toString() of a float the embedded FalkorDB cannot write as Neo4j does (it has more than "
           "six decimals, or Neo4j writes it in E notation, below 0.001 or from 10^7): round it first "
           "(toString(round(x, 6))) or format it in the application. (A limit of the embedded "
           "FalkorDB; Neo4j accepts this query.)")


def _never_float(expr: A.Expr, whole: frozenset[str] = frozenset()) -> bool:
    """Whether `expr` can never be a float, judged from its form and the variables in `whole`."""
    if isinstance(expr, A.Literal):
        return not isinstance(expr.value, float)
    if isinstance(expr, A.FunctionCall):
        return expr.lower_name in NOT_FLOAT or expr.lower_name == "range"
    if isinstance(expr, A.Variable):
        return expr.name in whole
    return isinstance(expr, (A.ListLiteral, A.MapLiteral, A.CountStar, A.IsNull, A.ComparisonChain))


def java_float_text(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    if call.lower_name != "tostring" or len(call.args) != 1 or not copyable(call.args[0]) \
            or _never_float(call.args[0], ctx.numbers(_never_float)):
        return []
    x = copy(call.args[0], ctx)
    f = f"CASE WHEN typeOf({x}) = 'Float' THEN {x} ELSE 1.0 END"          # never an error
    s = f"toString({f})"
    zeros = " ".join(f"WHEN right({s}, {6 - k}) = '{'0' * (6 - k)}' THEN {k}" for k in range(1, 6))
    written = (f"CASE WHEN {x} <> {x} THEN 'NaN' WHEN {x} = 1.0 / 0 THEN 'Infinity' "
               f"WHEN {x} = -1.0 / 0 THEN '-Infinity' WHEN {x} = 0.0 THEN "
               f"CASE WHEN {s} STARTS WITH '-' THEN '-0.0' ELSE '0.0' END "
               f"ELSE left({s}, size({s}) - 6 + CASE {zeros} ELSE 6 END) END")
    unwritable = (f"typeOf({x}) = 'Float' AND {x} = {x} AND abs({f}) < 1.0 / 0 AND {x} <> 0.0 AND "
                  f"(abs({f}) < 0.001 OR abs({f}) >= 10000000.0 OR round({f} * 1000000.0) / 1000000.0 <> {f})")
    text = ctx.refuse_when(written, unwritable, REFUSAL)
    return [(*call.span, f"CASE WHEN typeOf({x}) = 'Float' THEN {text} ELSE toString({x}) END")]


RULES = (Rule(A.FunctionCall, java_float_text, ("tostring",), r"tostring\s*\("),)
