"""What the variables of a query part stand for, clause by clause, for planning its probes:
a node, a relationship, a path or a value (`cypher/ast.py`'s kinds); and what a `CALL { }` body
starts from when its extension calls are planned as a query of their own
(`probe.PartPlanner.plan_subquery`).

The scope is the AST's (`ast.bindings`); the planner knows a little more about some clauses:
a variable a pattern declares is what the pattern says even when it was bound before as a value
(the AST keeps the first kind; `UNWIND ns AS n MATCH (n)-->(m)` binds n as a node to plan it as
one), the first column an algorithm procedure yields is a node (and a CALL of one without YIELD
binds all its columns), SHOW's YIELD binds its columns, and a SEARCH binds its score. A `CALL { }`
body is walked with that knowledge too, so a node it returns from an algorithm stays a node.
"""

from __future__ import annotations

from ..cypher import ast as A
from ..cypher.scope import NODE, VALUE, bindings, pattern_bindings
from ..cypher.render import name as quote_name
from ..registry import Registry


def scope_after(clause: A.Clause, scope: dict[str, str], text: str, registry: Registry) -> dict[str, str]:
    """Variables (name -> kind, `ast.NODE` ... `ast.VALUE`) visible after `clause`."""
    if isinstance(clause, A.CallSubquery):
        return {**scope, **_returned(clause, scope, text, registry)}
    if isinstance(clause, A.Show):
        return {**scope, **{y.name: VALUE for y in clause.yields or ()}}
    after = bindings(clause, scope)
    if isinstance(clause, (A.Match, A.Create, A.Merge)):      # `UNWIND ns AS n MATCH (n)-->(m)`: n is a node
        after.update(pattern_bindings(clause.path if isinstance(clause, A.Merge) else clause.pattern))
    if isinstance(clause, A.Match) and clause.search and clause.search.score:
        after[clause.search.score.name] = VALUE
    if isinstance(clause, A.CallProcedure) and (procedure := registry.procedure(clause.name)):
        names = {y.field: y.name for y in clause.yields or ()}
        fields = list(names) if clause.yields is not None else list(procedure.yields)
        after.update({names.get(f, f): NODE if f == procedure.yields[0] else VALUE for f in fields})
    return after


def _returned(call: A.CallSubquery, scope: dict[str, str], text: str, registry: Registry) -> dict[str, str]:
    """The columns a `CALL { }` returns; a returned variable keeps its kind (`RETURN r, m`)."""
    clauses = call.query.parts[0].clauses if call.query.parts else ()
    if not clauses or not isinstance(clauses[-1], A.Return):
        return {}
    inner = dict(scope) if call.scope in (None, ("*",)) else {v.name: scope.get(v.name, VALUE) for v in call.scope}
    for clause in clauses[:-1]:
        inner = scope_after(clause, inner, text, registry)
    return bindings(clauses[-1], inner)


def plannable(clause: A.Clause) -> bool:
    """A `CALL { }` whose body's extension calls are planned as a query of their own."""
    return isinstance(clause, A.CallSubquery) and clause.in_transactions is None


def imported(call: A.CallSubquery, body: A.SingleQuery, lines: list[str], outer: dict) -> tuple[list[str], dict]:
    """The probe lines and variables a `CALL { }` body starts from, after the outer `lines`."""
    first = body.clauses[0] if body.clauses else None
    if call.scope == ("*",) or (call.scope is None and isinstance(first, A.With)):
        return lines, dict(outer)                    # the body's WITH imports (or all are visible)
    if call.scope:
        names = [v.name for v in call.scope]
        return [*lines, "WITH " + ", ".join(map(quote_name, names))], {n: outer.get(n, VALUE) for n in names}
    return [*lines, "WITH DISTINCT 1 AS __outer"], {}      # uncorrelated: once per incoming row
