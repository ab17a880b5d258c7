"""Values of expressions without variables, computed by the proxy from the client's parameters.

Neo4j accepts any expression without variables where FalkorDB wants a literal or a parameter
(`LIMIT toInteger($limit)`, `SKIP $page * $size`). `evaluator(expr)` turns such an expression
into a function of the parameters with Neo4j's arithmetic (integer operations stay integers,
division truncates toward zero, int64 overflow and division by zero are errors); anything else
(a variable, a function not listed here) raises `Unsupported` and the query goes to the database
as written.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from core.errors import CypherError

from ..cypher import ast as A

Evaluator = Callable[[dict[str, Any]], Any]
_INT64 = (-2**63, 2**63 - 1)


class Unsupported(Exception):
    """The expression is not one the proxy computes."""


def evaluator(expr: A.Expr) -> Evaluator:
    """A function of the parameters computing `expr` as Neo4j does (raises Unsupported)."""
    if isinstance(expr, A.Literal):
        return lambda params, value=expr.value: value
    if isinstance(expr, A.Parameter):
        return lambda params, name=expr.name: parameter(params, name)
    if isinstance(expr, A.UnaryOp) and expr.op in ("-", "+"):
        operand = evaluator(expr.operand)
        sign = -1 if expr.op == "-" else 1
        return lambda params: _arithmetic("*", sign, operand(params))
    if isinstance(expr, A.BinaryOp) and expr.op in ("+", "-", "*", "/", "%", "^"):
        left, right = evaluator(expr.left), evaluator(expr.right)
        return lambda params: _arithmetic(expr.op, left(params), right(params))
    if isinstance(expr, A.FunctionCall) and expr.lower_name in _FUNCTIONS and not expr.distinct:
        function, arity = _FUNCTIONS[expr.lower_name]
        if len(expr.args) == arity:
            args = [evaluator(arg) for arg in expr.args]
            return lambda params: function(*(arg(params) for arg in args))
    raise Unsupported(type(expr).__name__)


def parameter(params: dict[str, Any], name: str) -> Any:
    if name not in params:
        raise CypherError("Neo.ClientError.Statement.ParameterMissing", f"Expected parameter(s): {name}")
    return params[name]


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _arithmetic(op: str, a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if not (_number(a) and _number(b)):
        raise CypherError("Neo.ClientError.Statement.TypeError",
                          f"Cannot apply `{op}` to {a!r} and {b!r}: both must be numbers")
    if op == "^":
        return float(a) ** float(b)
    if isinstance(a, int) and isinstance(b, int):
        if op in ("/", "%") and b == 0:
            raise CypherError("Neo.ClientError.Statement.ArithmeticError", "/ by zero")
        value = {"+": a + b, "-": a - b, "*": a * b,
                 "/": abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1),
                 "%": int(math.fmod(a, b))}[op]
        if not _INT64[0] <= value <= _INT64[1]:
            raise CypherError("Neo.ClientError.Statement.ArithmeticError", "long overflow")
        return value
    a, b = float(a), float(b)
    if op in ("/", "%") and b == 0:
        return math.nan if op == "%" or a == 0 else math.copysign(math.inf, a)
    return {"+": a + b, "-": a - b, "*": a * b, "/": a / b, "%": math.fmod(a, b)}[op]


def _to_integer(value: Any) -> Any:
    if value is None or isinstance(value, bool):
        return None if value is None else int(value)
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) else None
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                return _to_integer(float(value.strip()))
            except ValueError:
                return None
    raise CypherError("Neo.ClientError.Statement.TypeError", f"Cannot convert {value!r} to an integer")


def _numeric(function: Callable[[float], Any]) -> Callable[[Any], Any]:
    def apply(value: Any) -> Any:
        if value is None:
            return None
        if not _number(value):
            raise CypherError("Neo.ClientError.Statement.TypeError", f"Expected a number, got {value!r}")
        return function(value)
    return apply


_FUNCTIONS: dict[str, tuple[Callable[..., Any], int]] = {
    "tointeger": (_to_integer, 1),
    "ceil": (_numeric(lambda x: float(math.ceil(x))), 1),
    "floor": (_numeric(lambda x: float(math.floor(x))), 1),
    "abs": (_numeric(abs), 1),
    "rand": (random.random, 0),
}
