"""Type errors Neo4j finds while compiling: operands whose type is known from the text alone.

Neo4j types every expression before it runs a query, so `RETURN NOT 0`, `RETURN 1 IN true` or
`RETURN any(x IN ['Clara'] WHERE x % 2 = 0)` fail at compile time with a SyntaxError ("Type
mismatch: expected Boolean but was Integer"), whatever the graph holds. The embedded database
finds them only while it runs, and reports them as a TypeError (after any write before them).
`check(clause)` gives Neo4j's error for the operands whose type the text alone tells: literals,
negated number literals, and the variable of a comprehension or quantifier over a list literal
whose elements share one type. Anything else is left to the database.
"""

from __future__ import annotations

from typing import Iterator, Optional

from proxy.errors import CypherError, syntax_error

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


def check(root: A.Node) -> None:
    """Raise Neo4j's compile-time error for an operand of known, wrong type under `root`."""
    for node, env in _typed(root, {}):
        if isinstance(node, A.BinaryOp):
            _operand(node.op, (node.left, node.right), env)
            if node.op == "IN" and static_type(node.right, env) in {BOOLEAN, INTEGER, FLOAT, STRING, MAP}:
                raise _mismatch("List<T>", static_type(node.right, env))
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


def _typed(node: A.Node, env: dict[str, str]) -> Iterator[tuple[A.Node, dict[str, str]]]:
    """Every expression node under `node` with the types of the comprehension variables in
    scope there (subqueries are checked as queries of their own)."""
    yield node, env
    if isinstance(node, (A.ListComprehension, A.Quantifier)):
        yield from _typed(node.source, env)
        inner = {**env, node.var.name: _element_type(node.source, env)}
        for child in (node.where, getattr(node, "projection", None)):
            if child is not None:
                yield from _typed(child, inner)
        return
    for child in node.children():
        if not isinstance(child, (A.Query, A.SingleQuery, A.Clause, A._Subquery)):
            yield from _typed(child, env)


def _mismatch(expected: str, found: str) -> CypherError:
    return syntax_error(f"Type mismatch: expected {expected} but was {found}")
