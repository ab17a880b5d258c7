"""Type errors Neo4j finds while compiling: operands whose type is known from the text alone.

Neo4j types every expression before it runs a query, so `RETURN NOT 0`, `RETURN 1 IN true` or
`RETURN any(x IN ['Clara'] WHERE x % 2 = 0)` fail at compile time with a SyntaxError ("Type
mismatch: expected Boolean but was Integer"), whatever the graph holds. The embedded database
finds them only while it runs, and reports them as a TypeError (after any write before them).
`check(node)` gives Neo4j's error for the operands whose type the text alone tells: literals,
negated number literals, and the variable of a comprehension or quantifier over a list literal
whose elements share one type. Anything else is left to the database.
"""

from __future__ import annotations

from typing import Optional

from core.errors import CypherError, syntax_error

from . import ast as A

BOOLEAN, INTEGER, FLOAT, STRING, LIST, MAP, NULL = "Boolean", "Integer", "Float", "String", "List", "Map", "Null"
_NUMBERS = frozenset({INTEGER, FLOAT})
_ARITHMETIC = frozenset({"+", "-", "*", "/", "%"})

#: operator -> (what Neo4j expects, the known types it refuses)
_OPERANDS = {
    **{op: ("Boolean", frozenset({INTEGER, FLOAT, STRING, LIST, MAP})) for op in ("AND", "OR", "XOR", "NOT")},
    **{op: ("Float or Integer", frozenset({BOOLEAN, STRING, LIST, MAP})) for op in ("*", "/", "%", "^")},
}
#: function -> (what Neo4j expects, the known types it refuses) for its first argument
_ARGUMENTS = {"properties": ("Map, Node or Relationship", frozenset({BOOLEAN, INTEGER, FLOAT, STRING, LIST}))}
_NOT_INTEGER = frozenset({BOOLEAN, FLOAT, STRING, LIST, MAP})


def static_type(expr: A.Expr, env: dict[str, str]) -> Optional[str]:
    """The type of `expr` when the text alone tells it, else None."""
    if isinstance(expr, A.Literal):
        value = expr.value
        return NULL if value is None else {bool: BOOLEAN, int: INTEGER, float: FLOAT, str: STRING}[type(value)]
    if isinstance(expr, A.ListLiteral):
        return LIST
    if isinstance(expr, A.MapLiteral):
        return MAP
    if isinstance(expr, A.UnaryOp) and expr.op in ("-", "+"):
        inner = static_type(expr.operand, env)
        return inner if inner in _NUMBERS else None
    if isinstance(expr, A.Variable):
        return env.get(expr.name)
    if isinstance(expr, A.BinaryOp) and expr.op in _ARITHMETIC:
        sides = {static_type(expr.left, env), static_type(expr.right, env)}
        return (FLOAT if FLOAT in sides else INTEGER) if sides <= _NUMBERS else None
    return None


def _element_type(source: A.Expr, env: dict[str, str]) -> Optional[str]:
    """The one type every element of a list literal has (None when they differ or are unknown)."""
    if not isinstance(source, A.ListLiteral) or not source.items:
        return None
    types = {static_type(item, env) for item in source.items}
    return types.pop() if len(types) == 1 and None not in types else None


def check(node: A.Node) -> None:
    """Raise Neo4j's compile-time error if `node` (one node of an expression: its operands are
    looked at, not walked) has an operand of known, wrong type."""
    _check_node(node, {})
    if isinstance(node, (A.ListComprehension, A.Quantifier)) and (element := _element_type(node.source, {})):
        _check_body(node, {node.var.name: element})


def _check_body(node: A.ListComprehension | A.Quantifier, env: dict[str, str]) -> None:
    """The WHERE and projection of a comprehension whose variable's type is known (unless a
    comprehension inside names another variable the same)."""
    bodies = [b for b in (node.where, getattr(node, "projection", None)) if b is not None]
    inner = [n for b in bodies for n in b.walk()]
    if any(isinstance(n, (A.ListComprehension, A.Quantifier, A.Reduce, A.PatternComprehension, A._Subquery))
           for n in inner):
        return
    for n in inner:
        _check_node(n, env)


def _check_node(node: A.Node, env: dict[str, str]) -> None:
    if isinstance(node, A.BinaryOp):
        _operand(node.op, (node.left, node.right), env)
        if node.op == "IN" and (found := static_type(node.right, env)) in {BOOLEAN, INTEGER, FLOAT, STRING, MAP}:
            raise _mismatch("List<T>", found)
    elif isinstance(node, A.UnaryOp):
        _operand(node.op, (node.operand,), env)
    elif isinstance(node, A.FunctionCall) and node.args:
        _arguments(node, env)


def _operand(op: str, operands: tuple, env: dict[str, str]) -> None:
    expected, refused = _OPERANDS.get(op, ("", frozenset()))
    for operand in operands:
        if (found := static_type(operand, env)) in refused:
            raise _mismatch(expected, found)


def _arguments(call: A.FunctionCall, env: dict[str, str]) -> None:
    name = call.lower_name
    if name in _ARGUMENTS and (found := static_type(call.args[0], env)) in _ARGUMENTS[name][1]:
        raise _mismatch(_ARGUMENTS[name][0], found)
    if name == "range":
        for arg in call.args:
            if (found := static_type(arg, env)) in _NOT_INTEGER:
                raise CypherError("Neo.ClientError.Statement.ArgumentError",
                                  f"Invalid argument of range(): expected Integer but was {found}")


def _mismatch(expected: str, found: str) -> CypherError:
    return syntax_error(f"Type mismatch: expected {expected} but was {found}")
