"""What the variables of a query part stand for, clause by clause, for planning its probes:
a node, a relationship, a path or a value; and what a `CALL { }` body starts from when its
extension calls are planned as a query of their own (`probe.PartPlanner.plan_subquery`)."""

from __future__ import annotations

from ..cypher import ast as A
from ..cypher.render import name as quote_name
from ..registry import Registry


def _pattern_vars(pattern) -> dict[str, str]:
    found: dict[str, str] = {}
    for node in pattern.walk():
        if isinstance(node, A.PathPattern) and node.var:
            found[node.var.name] = "path"
        elif isinstance(node, A.NodePattern) and node.var:
            found[node.var.name] = "node"
        elif isinstance(node, A.RelPattern) and node.var:
            found[node.var.name] = "rel"
    return found


def scope_after(clause: A.Clause, scope: dict[str, str], text: str, registry: Registry) -> dict[str, str]:
    """Variables (name -> 'node'/'rel'/'path'/'value') visible after `clause`."""
    if isinstance(clause, A.Match):
        score = {clause.search.score.name: "value"} if clause.search and clause.search.score else {}
        return {**scope, **_pattern_vars(clause.pattern), **score}
    if isinstance(clause, A.Create):
        return {**scope, **_pattern_vars(clause.pattern)}
    if isinstance(clause, A.Merge):
        return {**scope, **_pattern_vars(clause.path)}
    if isinstance(clause, (A.Unwind, A.LoadCSV)):
        return {**scope, clause.var.name: "value"}
    if isinstance(clause, A.With):
        out = dict(scope) if clause.star else {}
        for item in clause.items:
            out[item.name(text)] = scope.get(item.expr.name, "value") if isinstance(item.expr, A.Variable) else "value"
        return out
    if isinstance(clause, A.CallProcedure):
        procedure = registry.procedure(clause.name)
        fields = [y.field for y in clause.yields or ()]
        if procedure and clause.yields is None:
            fields = list(procedure.yields)
        names = {y.field: y.name for y in clause.yields or ()}
        return {**scope, **{names.get(f, f): ("node" if procedure and f == procedure.yields[0] else "value")
                            for f in fields}}
    if isinstance(clause, A.Show):
        return {**scope, **{y.name: "value" for y in clause.yields or ()}}
    if isinstance(clause, A.CallSubquery):
        return {**scope, **_returned(clause, scope, text, registry)}
    return scope


def _returned(call: A.CallSubquery, scope: dict[str, str], text: str, registry: Registry) -> dict[str, str]:
    """The columns a `CALL { }` returns; a returned variable keeps its kind (`RETURN r, m`)."""
    clauses = call.query.parts[0].clauses if call.query.parts else ()
    if not clauses or not isinstance(clauses[-1], A.Return):
        return {}
    inner = dict(scope) if call.scope in (None, ("*",)) else {v.name: scope.get(v.name, "value") for v in call.scope}
    for clause in clauses[:-1]:
        inner = scope_after(clause, inner, text, registry)
    return {item.name(text): inner.get(item.expr.name, "value") if isinstance(item.expr, A.Variable) else "value"
            for item in clauses[-1].items}


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
        return [*lines, "WITH " + ", ".join(map(quote_name, names))], {n: outer.get(n, "value") for n in names}
    return [*lines, "WITH DISTINCT 1 AS __outer"], {}      # uncorrelated: once per incoming row
