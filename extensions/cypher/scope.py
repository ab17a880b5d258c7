"""What the variables of a query stand for, clause by clause: a node, a relationship, a path,
a list of them or a value. Read from the syntax tree alone (`ast.py`); the planner adds what it
knows beyond it (`planner/scopes.py`)."""

from __future__ import annotations

from typing import Optional

from .ast import (CallProcedure, CallSubquery, Clause, Create, LoadCSV, Match, Merge, Node, NodePattern, Pattern,
                  QuantifiedPath, Return, SingleQuery, Unwind, Variable, _Projection)

NODE, RELATIONSHIP, PATH, VALUE = "node", "relationship", "path", "value"
NODE_LIST, RELATIONSHIP_LIST = "node_list", "relationship_list"   # var-length / quantified groups


def pattern_bindings(pattern: Node) -> dict[str, str]:
    """Variables a Pattern/PathPattern declares -> 'node', 'relationship', 'path',
    'relationship_list' (var-length `[r*]`, quantified) or 'node_list' (inside a quantified path)."""
    out: dict[str, str] = {}

    def visit(elements, grouped: bool) -> None:
        for el in elements:
            if isinstance(el, QuantifiedPath):
                visit(el.elements, True)
            elif el.var is not None and el.var.name not in out:
                if isinstance(el, NodePattern):
                    out[el.var.name] = NODE_LIST if grouped else NODE
                else:
                    out[el.var.name] = RELATIONSHIP_LIST if grouped or el.length is not None else RELATIONSHIP

    paths = pattern.paths if isinstance(pattern, Pattern) else (pattern,)
    for path in paths:
        if path.var is not None:
            out[path.var.name] = PATH
        visit(path.elements, False)
    return out


def _projected(clause: _Projection, scope: dict[str, str]) -> dict[str, str]:
    out = dict(scope) if clause.star else {}
    for item in clause.items:
        is_var = isinstance(item.expr, Variable)
        column = item.alias if item.alias is not None else (item.expr.name if is_var else None)
        if column is not None:
            out[column] = scope.get(item.expr.name, VALUE) if is_var else VALUE
    return out


def bindings(clause: Clause, scope: Optional[dict[str, str]] = None) -> dict[str, str]:
    """The variables in scope after `clause` (name -> kind), given those in scope before it.

    MATCH/CREATE/MERGE add pattern variables; WITH/RETURN replace the scope with their columns
    (a projected variable keeps its kind, any other expression is a 'value'); UNWIND, LOAD CSV and
    YIELD add values; CALL { } adds the subquery's returned columns.
    """
    scope = dict(scope or {})
    if isinstance(clause, (Match, Create)):
        new = pattern_bindings(clause.pattern)
    elif isinstance(clause, Merge):
        new = pattern_bindings(clause.path)
    elif isinstance(clause, (Unwind, LoadCSV)):
        new = {clause.var.name: VALUE}
    elif isinstance(clause, _Projection):
        return _projected(clause, scope)
    elif isinstance(clause, CallProcedure):
        new = {item.name: VALUE for item in clause.yields or ()}
    elif isinstance(clause, CallSubquery):
        if clause.scope is None or clause.scope == ("*",):
            inner = scope
        else:
            inner = {v.name: scope.get(v.name, VALUE) for v in clause.scope}
        last = clause.query.parts[-1]
        final = scopes(last, inner)[-1] if isinstance(last.clauses[-1], Return) else {}
        new = dict(final)
        if clause.in_transactions is not None and clause.in_transactions.report is not None:
            new[clause.in_transactions.report.name] = VALUE
    else:
        new = {}
    for name, kind in new.items():
        scope.setdefault(name, kind)
    return scope


def scopes(part: SingleQuery, scope: Optional[dict[str, str]] = None) -> list[dict[str, str]]:
    """The scope after each clause of `part` (one dict per clause, in order)."""
    out = []
    for clause in part.clauses:
        scope = bindings(clause, scope)
        out.append(scope)
    return out
