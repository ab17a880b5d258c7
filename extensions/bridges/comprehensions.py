"""Pattern comprehensions: the rows FalkorDB drops, and the variables it does not see.

- `[(n)-[:T]->(b) | b.name]` leaves out the rows whose projection is null on FalkorDB (`[]`
  where Neo4j answers `[null]`). The projection is wrapped in a one-element list and unwrapped
  after: `[__pc IN [(n)-[:T]->(b) | [b.name]] | __pc[0]]`. A projection that cannot be null (a
  pattern's own variable, a literal) is left as it is.
- Inside a list comprehension, quantifier or reduce, a pattern that reads the comprehension's
  variable (`[x IN nodes(p) | size([(x)-->(:Y) | 1])]`, `EXISTS { (x)-->() }`) is matched from
  every node on FalkorDB, as if the variable were new: refused, with the UNWIND to write instead.
"""

from __future__ import annotations

from core.errors import CypherError

from ..cypher import ast as A
from ..cypher.tokens import after_first
from .rule import Context, Edit, Rule

_PATTERNS = (A.PatternComprehension, A.PatternExpr, A.ExistsSubquery, A.CountSubquery, A.CollectSubquery)


def keep_nulls(node: A.PatternComprehension, ctx: Context) -> list[Edit]:
    if not _may_be_null(node.projection, node):
        return []
    item = ctx.fresh("pc")
    start, end = node.span
    projection = node.projection.span
    return [(start, start, f"[{item} IN "), (projection[0], projection[0], "["), (projection[1], projection[1], "]"),
            (end, end, f" | {item}[0]]")]


def _may_be_null(projection: A.Expr, node: A.PatternComprehension) -> bool:
    if isinstance(projection, A.Literal):
        return projection.value is None
    if isinstance(projection, (A.ListLiteral, A.MapLiteral)):
        return False
    own = {e.var.name for e in node.path.walk() if getattr(e, "var", None) is not None}
    return not (isinstance(projection, A.Variable) and projection.name in own)


def inner_variable(node: A.ListComprehension | A.Quantifier | A.Reduce, ctx: Context) -> list[Edit]:
    bodies = [getattr(node, name, None) for name in ("where", "projection", "expr")]   # a Reduce has no where
    for body in (b for b in bodies if b is not None):
        for pattern in (n for n in body.walk() if isinstance(n, _PATTERNS)):
            if any(v.name == node.var.name for v in _pattern_variables(pattern)):
                raise CypherError(
                    "Neo.ClientError.Statement.UnsupportedOperationError",
                    f"`{node.text_in(ctx.text)}`: the embedded FalkorDB does not see the variable "
                    f"`{node.var.name}` inside a pattern in a list comprehension, quantifier or reduce, and "
                    f"would match the pattern from every node. UNWIND the list instead and aggregate after "
                    f"(`UNWIND {node.source.text_in(ctx.text)} AS {node.var.name} WITH ... collect(...)`). "
                    "(A limit of the embedded FalkorDB; Neo4j accepts this query.)")
    return []


def _pattern_variables(pattern: A.Node):
    """The variables a pattern's node and relationship elements name (a subquery's all of them)."""
    for n in pattern.walk():
        if isinstance(n, (A.NodePattern, A.RelPattern)) and n.var is not None:
            yield n.var
        elif isinstance(pattern, A._Subquery) and isinstance(n, A.Variable):
            yield n


_COMPREHENSION = r"\[\s*+(?:\w++\s*+=\s*+)?\("
RULES = (Rule(A.PatternComprehension, keep_nulls, ("[",), _COMPREHENSION),
         *(Rule(kind, inner_variable, (" in ",), after_first(r"in\s", r"\(\s*+\w++\s*+[:)]"))
           for kind in (A.ListComprehension, A.Quantifier, A.Reduce)))
