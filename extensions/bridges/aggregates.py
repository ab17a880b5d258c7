"""`sum()` of integers is an integer in Neo4j; FalkorDB sums in floating point and returns a float.

`sum(x)` -> `CASE WHEN <some x is a float> THEN sum(x) ELSE <the exact integer sum> END`. The
integer sum is exact to 64 bits: each integer is cut into three 21-bit parts (`%` keeps the
dividend's sign, so the parts of a negative number are negative), each part is summed in
FalkorDB's doubles, which is exact below 2^53 (over four billion rows of parts), and the three
sums are put back together in integer arithmetic. Only `sum(DISTINCT x)` keeps the float sum
(converted back), exact below 2^53 in total: the parts of distinct values are not distinct.
The argument is written out several times, so one holding an extension call or a subquery is
left to FalkorDB (`rule.copyable`): the sum of `ts_count(...)` values stays a float.
FalkorDB evaluates every CASE branch, which costs a few more aggregations but no error: every
branch is defined for numbers and nulls, and any other value fails in `sum` as it does in Neo4j.
"""

from __future__ import annotations

from ..cypher import ast as A
from .rule import Context, Edit, Rule, copy, copyable

_PART = 2 ** 21


def integer_sum(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    if call.lower_name != "sum" or len(call.args) != 1 or not copyable(call.args[0]):
        return []
    x = f"({copy(call.args[0], ctx)})"
    floats = f"max(CASE typeOf({x}) WHEN 'Float' THEN 1 ELSE 0 END) = 1"
    if call.distinct:
        return [(*call.span, f"CASE WHEN {floats} THEN sum(DISTINCT {x}) ELSE toInteger(sum(DISTINCT {x})) END")]
    low = f"{x} % {_PART}"
    high = f"({x} - {low}) / {_PART}"
    middle, top = f"{high} % {_PART}", f"({high} - {high} % {_PART}) / {_PART}"
    exact = (f"toInteger(sum({top})) * {_PART * _PART} + toInteger(sum({middle})) * {_PART}"
             f" + toInteger(sum({low}))")
    return [(*call.span, f"CASE WHEN {floats} THEN sum({x}) ELSE {exact} END")]


RULES = (Rule(A.FunctionCall, integer_sum, ("sum",), r"\bsum\s*\("),)
