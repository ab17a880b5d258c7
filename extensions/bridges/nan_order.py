"""NaN in ORDER BY: Neo4j sorts it as the largest number, FalkorDB wherever the input had it.

FalkorDB compares NaN with `<`, which is false both ways, so a sort key holding NaN lands at
a place that depends on the row order (`[1.5, NaN, 3]` sorts as 1.5, NaN, 3 ascending). Neo4j
orders NaN after every number and before null (ascending; the reverse descending). Each sort
key that may be a float gets a key before it that ranks null last and NaN just before it:
`ORDER BY x DESC` -> `ORDER BY CASE WHEN x IS NULL THEN 2 WHEN typeOf(x) = 'Float' AND x <> x
THEN 1 ELSE 0 END DESC, x DESC` (numbers come after every other type ascending, so NaN after
all non-null values is Neo4j's place).
"""

from __future__ import annotations

from ..cypher import ast as A
from .rule import Context, Edit, Rule, copy, copyable

#: Functions whose value is never a float (the sort key needs no NaN rank).
_NOT_FLOAT = frozenset({"count", "size", "length", "id", "elementid", "tostring", "type", "labels", "keys",
                        "collect", "tointeger", "toupper", "tolower", "trim", "ltrim", "rtrim", "substring",
                        "replace", "left", "right", "split", "toboolean", "exists", "nodes", "relationships",
                        "properties", "startnode", "endnode", "date", "datetime", "localdatetime", "localtime",
                        "time", "duration", "timestamp", "sign"})
_NOT_FLOAT_NODES = (A.ListLiteral, A.MapLiteral, A.ComparisonChain, A.IsNull, A.IsType, A.LabelPredicate,
                    A.ListComprehension, A.PatternComprehension, A.Quantifier, A.MapProjection, A.CountStar)


def _never_float(key: A.Expr, integers: frozenset[str] = frozenset()) -> bool:
    """Whether `key` cannot be a float (`integers`: variables that only hold integers)."""
    if isinstance(key, A.Variable):
        return key.name in integers
    if isinstance(key, A.Literal):
        return not isinstance(key.value, float)
    if isinstance(key, A.FunctionCall):
        return key.lower_name in _NOT_FLOAT
    if isinstance(key, A.BinaryOp):
        return key.op not in ("+", "-", "*", "/", "%", "^")
    return isinstance(key, _NOT_FLOAT_NODES)


def nan_rank(projection: A.With | A.Return, ctx: Context) -> list[Edit]:
    edits = []
    aliases = {item.alias: item.expr for item in projection.items if item.alias}
    integers = ctx.numbers(_never_float)
    for item in projection.order_by:
        key = item.expr
        if isinstance(key, A.Variable) and key.name in aliases:
            if _never_float(aliases[key.name], integers) or not copyable(aliases[key.name]):
                continue
        if _never_float(key, integers) or not copyable(key):
            continue
        text = f"({copy(key, ctx)})"
        rank = f"CASE WHEN {text} IS NULL THEN 2 WHEN typeOf({text}) = 'Float' AND {text} <> {text} THEN 1 ELSE 0 END"
        edits.append((key.span[0], key.span[0], f"{rank}{' DESC' if item.descending else ''}, "))
    return edits


RULES = (Rule(A.With, nan_rank, ("order",), r"order\s+by"), Rule(A.Return, nan_rank, ("order",), r"order\s+by"))
