"""`a =~ p` on FalkorDB, which has no `=~`: `string.matchRegEx` on the translated pattern.

`s =~ p` -> `[__rx IN [s] WHERE typeOf(__rx) = 'String' | size(string.matchRegEx(__rx, $__re)) > 0][0]`:
true or false for a string, null for anything else (as Neo4j: `null =~ p` and `1 =~ p` are
null), with `s` written once so the bridges inside it stay. `$__re` is the pattern translated
from Java (`java_regex.py`, anchored to the whole string): when the query is planned for a
literal, when it runs for a parameter (or literals and parameters joined with `+`, as in
`'(?i).*' + $name + '.*'`). A pattern computed from the data cannot be translated by the proxy
and is refused.
"""

from __future__ import annotations

from typing import Any

from core.errors import CypherError

from ..cypher import ast as A
from .java_regex import InvalidRegex, Untranslatable, translate
from .rule import Context, Edit, Rule

UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"


def pattern_for_falkordb(pattern: Any) -> str | None:
    """The translated pattern, None for a non-string (the match is then null)."""
    if not isinstance(pattern, str):
        return None
    try:
        return translate(pattern)
    except InvalidRegex as exc:
        raise CypherError("Neo.ClientError.Statement.SemanticError", f"Invalid Regex: {exc}") from None
    except Untranslatable as exc:
        raise CypherError(UNSUPPORTED, f"The embedded FalkorDB cannot match this regular expression "
                          f"as Java does: {exc}. (A limit of the embedded FalkorDB; Neo4j accepts "
                          "this query.)") from None


def regex_match(op: A.BinaryOp, ctx: Context) -> list[Edit]:
    if op.op != "=~":
        return []
    compute = _constant(op.right)
    if compute is None:
        raise CypherError(UNSUPPORTED, f"`{op.text_in(ctx.text)}`: on the embedded FalkorDB the "
                          "proxy translates each regular expression from Java's syntax, so the "
                          "pattern must be a string literal or a parameter (or literals and "
                          "parameters joined with +), not a value computed from the data. "
                          "(A limit of the embedded FalkorDB; Neo4j accepts this query.)")
    var, param = ctx.fresh("rx"), ctx.fresh("re")
    if isinstance(op.right, A.Literal):
        translated = pattern_for_falkordb(op.right.value)          # errors now, not at run time
        ctx.derived[param] = lambda params: translated
        test = f"size(string.matchRegEx({var}, ${param})) > 0"
    else:
        ctx.derived[param] = lambda params: pattern_for_falkordb(compute(params))
        test = f"CASE WHEN ${param} IS NULL THEN null ELSE size(string.matchRegEx({var}, ${param})) > 0 END"
    return [(op.left.span[0], op.left.span[0], f"[{var} IN ["),
            (op.left.span[1], op.right.span[1], f"] WHERE typeOf({var}) = 'String' | {test}][0]")]


def _constant(expr: A.Expr):
    """params -> value for a pattern built from literals and parameters with `+`; else None."""
    if isinstance(expr, A.Literal):
        return lambda params: expr.value
    if isinstance(expr, A.Parameter):
        def read(params: dict[str, Any]) -> Any:
            if expr.name not in params:
                raise CypherError("Neo.ClientError.Statement.ParameterMissing",
                                  f"Expected parameter(s): {expr.name}")
            return params[expr.name]
        return read
    if isinstance(expr, A.BinaryOp) and expr.op == "+":
        left, right = _constant(expr.left), _constant(expr.right)
        if left is None or right is None:
            return None
        return lambda params: _concat(left(params), right(params))
    return None


def _concat(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if isinstance(a, str) or isinstance(b, str):
        return f"{a}{b}"
    return None                       # not a string pattern: the match is null


RULES = (Rule(A.BinaryOp, regex_match, ("=~",), r"=~"),)
