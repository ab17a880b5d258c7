"""SKIP and LIMIT as Neo4j reads them: writes kept under `LIMIT 0`, big counts, expressions.

Three differences, measured on FalkorDB 4.16:

- `CREATE (n:N) RETURN n LIMIT 0` creates nothing: FalkorDB skips the whole plan under a
  `LIMIT 0` (also from a parameter, also in a subquery or a UNION branch), where Neo4j runs the
  writes before it and returns no rows. `LIMIT 1` does run all the writes before it (they are
  eager), so after a write a zero limit becomes `SKIP <max> LIMIT 1`: no row, every write.
- SKIP and LIMIT keep only the low 32 bits of their count: `LIMIT 4294967296` returns no row and
  `SKIP 4294967296` skips none. Counts are clamped to 2^32 - 1 (no result has that many rows).
- `LIMIT toInteger($n)`, `SKIP toInteger(rand() * 9)`: Neo4j takes any expression without
  variables; FalkorDB only a literal or a parameter. Such an expression is computed by the proxy
  (`constants.py`) into a derived parameter; one it cannot compute reaches FalkorDB unchanged.

A count that is a parameter or an expression becomes a derived parameter computed before each
run; a literal that needs no change stays as written, so most queries are untouched.
"""

from __future__ import annotations

from typing import Any

from ..cypher import ast as A
from ..cypher.tokens import tokenize
from .constants import Unsupported, evaluator
from .rule import Context, Edit, Rule

#: The largest count FalkorDB keeps (it truncates to 32 bits).
MAX_COUNT = 2**32 - 1


def skip_limit(part: A.SingleQuery, ctx: Context) -> list[Edit]:
    """Derived SKIP/LIMIT counts for every projection of `part` that needs them."""
    edits: list[Edit] = []
    written = False
    for clause in part.clauses:
        if isinstance(clause, A._Projection) and (clause.skip is not None or clause.limit is not None):
            edits += _projection(clause, written, ctx)
        written = written or any(True for node in clause.walk() if isinstance(node, A.UPDATING))
    return edits


def _projection(clause: A._Projection, written: bool, ctx: Context) -> list[Edit]:
    skip, limit = _count(clause.skip), _count(clause.limit)
    if skip is None or limit is None:                 # an expression the proxy cannot compute
        return []
    zero_possible = written and clause.limit is not None and not (
        isinstance(clause.limit, A.Literal) and clause.limit.value != 0)
    if not (zero_possible or _needs_change(clause.skip) or _needs_change(clause.limit)):
        return []

    def counts(params: dict[str, Any]) -> tuple[Any, Any]:
        skipped, limited = skip(params), limit(params)
        if zero_possible and _is_int(limited) and limited == 0:
            return MAX_COUNT, 1                        # run the writes, return no row
        return _clamped(skipped), _clamped(limited)

    skip_name, limit_name = ctx.fresh("skip"), ctx.fresh("limit")
    edits: list[Edit] = []
    if clause.skip is not None:
        ctx.derived[skip_name] = lambda params: counts(params)[0]
        edits.append((*clause.skip.span, f"${skip_name}"))
    elif zero_possible:
        ctx.derived[skip_name] = lambda params: counts(params)[0]
        at = _limit_keyword(clause, ctx.text)
        edits.append((at, at, f"SKIP ${skip_name} "))
    if clause.limit is not None:
        ctx.derived[limit_name] = lambda params: counts(params)[1]
        edits.append((*clause.limit.span, f"${limit_name}"))
    return edits


def _count(expr: A.Expr | None):
    """A function of the parameters giving the count `expr` denotes (None when absent), or None
    when the proxy cannot compute it (variables, functions it does not know)."""
    if expr is None:
        return lambda params: None
    try:
        return evaluator(expr)
    except Unsupported:
        return None


def _needs_change(expr: A.Expr | None) -> bool:
    """Anything but an absent count or an integer literal FalkorDB keeps as it is."""
    if expr is None:
        return False
    return not (isinstance(expr, A.Literal) and _is_int(expr.value) and 0 <= expr.value <= MAX_COUNT)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _clamped(value: Any) -> Any:
    return MAX_COUNT if _is_int(value) and value > MAX_COUNT else value


def _limit_keyword(clause: A._Projection, text: str) -> int:
    """Where the LIMIT keyword of `clause` starts."""
    start = clause.span[0]
    keywords = [t for t in tokenize(text[start:clause.limit.span[0]]) if t.upper == "LIMIT"]
    return start + keywords[-1].start


RULES = (Rule(A.SingleQuery, skip_limit, ("limit", "skip"),
              r"\b(?:limit|skip)\s+(?:[^\d\s]|\d+\s*[-+*/%^.e]|0\b|\d{10})"),)
