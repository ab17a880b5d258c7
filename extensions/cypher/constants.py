"""Constant expressions, evaluated in Python before a query runs: the arguments of virtual and
algorithm procedures, a join's bounds, and schema command OPTIONS (literals, parameters, lists and
maps of them). A syntax question, so it lives with the AST: the planner and compat's schema
commands both read it."""

from __future__ import annotations

from typing import Any

from core.errors import CypherError, syntax_error

from . import ast as A


#: Conversions allowed around constants (`OPTIONS {indexConfig: {dims: toInteger($d)}}`).
_CONVERSIONS = {"tointeger": lambda v: int(float(v)), "tofloat": float, "tostring": str}


def constant(expr: A.Expr, params: dict[str, Any]) -> Any:
    """The value of a constant argument (literals, parameters, lists and maps of them): procedure
    arguments and schema command OPTIONS."""
    if isinstance(expr, A.Literal):
        return expr.value
    if isinstance(expr, A.Parameter):
        if expr.name not in params:
            raise CypherError("Neo.ClientError.Statement.ParameterMissing", f"Expected parameter(s): {expr.name}")
        return params[expr.name]
    if isinstance(expr, A.ListLiteral):
        return [constant(item, params) for item in expr.items]
    if isinstance(expr, A.MapLiteral):
        return {key: constant(value, params) for key, value in expr.items}
    if isinstance(expr, A.UnaryOp) and expr.op == "-":
        return -constant(expr.operand, params)
    if isinstance(expr, A.Variable):            # as Neo4j reports `CALL p({sample: None})`
        raise syntax_error(f"Variable `{expr.name}` not defined (this argument is computed before the "
                           "query runs: use a literal or a query parameter)")
    if isinstance(expr, A.FunctionCall) and expr.lower_name in _CONVERSIONS and len(expr.args) == 1:
        value = constant(expr.args[0], params)
        return None if value is None else _CONVERSIONS[expr.lower_name](value)
    raise CypherError("Neo.ClientError.Statement.ArgumentError",
                      "The arguments of this procedure must be literals or query parameters "
                      "(lists and maps of them), not values computed per row")
