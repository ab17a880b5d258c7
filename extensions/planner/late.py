"""Text that depends on the data: labels and types computed per row, on a backend whose Cypher
has only literal labels (FalkorDB).

Neo4j 5 writes `SET n:$(row.type)`, `MERGE (n:$($label) {id: $id})` and APOC's `apoc.merge.node([row.type], ...)`; FalkorDB needs
the label in the query text. A `LateStep` first runs a probe that returns the distinct values the
expression takes (the query's own reading clauses, writes left out: a superset is fine), then
renders one branch per value, `FOREACH (_ IN CASE WHEN <expr> = 'A' THEN [1] ELSE [] END | SET
n:A)`, into the query at `marker`. The plan stays cached by text; only the branches are rendered
per execution.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Awaitable, Callable

from core.errors import argument_error

from ..cypher import ast as A
from ..cypher.render import name as quote
from ..bridges.spelling import SET_VECTOR_PROCEDURES
from ..plan_builder import PlanBuilder, as_list, string, values_step, when


@dataclass
class LateStep:
    """Run `probe` (first column: the distinct values), then `render(values)` replaces `marker`.
    With `follow`, values are found in rounds: `follow(values so far)` is the next probe, or None.
    With `wanted`, `await wanted(runner)` first says whether to probe at all (False: no values)."""

    probe: str
    marker: str
    render: Callable[[list[Any]], str]
    follow: Callable[[list[Any]], str | None] | None = None
    wanted: Callable[[Any], Awaitable[bool]] | None = None


def dynamic(labels: A.LabelExpr | None) -> A.DynamicLabel | None:
    return labels if isinstance(labels, A.DynamicLabel) else None


def plan_dynamic_labels(planner: PlanBuilder, clause_index: int, clause: A.Clause) -> None:
    """`SET n:$(e)` / `REMOVE n:$(e)`: one conditional SET/REMOVE per label the probe finds."""
    if isinstance(clause, (A.Create, A.Merge)):
        return plan_pattern_labels(planner, clause_index, clause)
    keyword = "SET" if isinstance(clause, A.SetClause) else "REMOVE"
    parts = []
    for item in clause.items:
        label = dynamic(item.labels) if item.kind == "labels" else None
        if label is None:
            parts.append(f"{keyword} {planner.render(item)}")
            continue
        render = label_branches(keyword, planner.render(item.target), as_list(planner.render(label.expr)))
        parts.append(values_step(planner, clause_index, label.expr, render, each=True))
    planner.add_edit((*clause.span, " ".join(parts)))


def label_branches(keyword: str, target: str, labels_expr: str, *, strict: bool = False):
    """render(labels) for `values_step(each=True)`: a conditional `SET|REMOVE target:L` per label.
    `strict` (CREATE): a label that is not a non-empty string is an error, as in Neo4j."""

    def render(values: list[Any]) -> str:
        if strict and not all(isinstance(v, str) and v for v in values):
            bad = next(v for v in values if not (isinstance(v, str) and v))
            raise argument_error(f"A label in CREATE must be a non-empty STRING; a row's label is {bad!r}.")
        labels = sorted({v for v in values if isinstance(v, str)})
        if not labels:
            return when("false", f"SET {target}.__proxy_unused = null")
        return " ".join(when(f"{string(v)} IN {labels_expr}", f"{keyword} {target}:{quote(v)}") for v in labels)

    return render


def plan_vector_property(planner: PlanBuilder, clause_index: int, clause: A.CallProcedure) -> None:
    """`CALL db.create.setNodeVectorProperty(n, key, v)` with a key that is not a literal (a
    parameter, or a value per row): one conditional `SET n.key = vecf32(v)` per distinct key."""
    node, key, vector = clause.args
    target, key_text, value = planner.render(node), planner.render(key), planner.render(vector)

    def render(values: list[Any]) -> str:
        keys = sorted({v for v in values if isinstance(v, str)})
        if not keys:
            return when("false", f"SET {target}.__proxy_unused = null")
        return " ".join(when(f"{key_text} = {string(k)}", f"SET {target}.{quote(k)} = vecf32({value})")
                        for k in keys)

    planner.add_edit((*clause.span, values_step(planner, clause_index, key, render, each=False)))


def is_vector_property_call(clause: A.Clause) -> bool:
    """A setNodeVectorProperty CALL whose key is not a string literal (bridges/spelling.py rewrites those)."""
    return (isinstance(clause, A.CallProcedure) and clause.name.lower() in SET_VECTOR_PROCEDURES
            and len(clause.args or ()) == 3 and clause.yields is None
            and not (isinstance(clause.args[1], A.Literal) and isinstance(clause.args[1].value, str)))


def has_dynamic_labels(clause: A.Clause) -> bool:
    if isinstance(clause, (A.Create, A.Merge)):
        return bool(pattern_dynamic_labels(clause))
    return isinstance(clause, (A.SetClause, A.Remove)) and any(
        item.kind == "labels" and dynamic(item.labels) for item in clause.items)


def pattern_dynamic_labels(clause: A.Create | A.Merge) -> list[A.DynamicLabel]:
    """The `$(e)` labels and types of a CREATE or MERGE pattern (not of its ON ... SET)."""
    pattern = clause.pattern if isinstance(clause, A.Create) else clause.path
    return list(pattern.find_all(A.DynamicLabel))


def plan_pattern_labels(planner: PlanBuilder, clause_index: int, clause: A.Create | A.Merge) -> None:
    """`CREATE (n:$(e))`, `MERGE (n:$(e) {id: $id})`, `[:$(t)]`: the labels the expression takes,
    written into the pattern. The pattern is one text for all rows, so the expression must take one
    value in the query (a parameter, a literal, or a value that is the same on every row), except
    for a node's labels in CREATE, which may differ per row: they are SET after it is created."""
    keyword = "CREATE" if isinstance(clause, A.Create) else "MERGE"
    per_row = _per_row_created_labels(clause) if keyword == "CREATE" else {}
    for node, label in per_row.items():
        _plan_created_label(planner, clause_index, clause, node, label)
    for label in pattern_dynamic_labels(clause):
        if label in per_row.values():
            continue
        source = label.expr.text_in(planner.text)

        def render(values: list[Any], source=source) -> str:
            if not values:                   # EXPLAIN, or no row reaches the clause: nothing is written
                return quote("__proxy_no_label")
            if len(values) > 1:
                raise argument_error(
                    f"{keyword} with a label or type computed per row ($({source}) takes {len(values)} values) is not "
                    f"available on the embedded database, which needs the label in the query text. Pass it "
                    f"as a parameter, or use {'apoc.merge.node' if keyword == 'MERGE' else 'apoc.merge.relationship'}.")
            names = values[0] if isinstance(values[0], list) else [values[0]]
            if not names or not all(isinstance(n, str) and n for n in names):
                raise argument_error(f"A label in {keyword} must be a non-empty STRING (or a list of them); "
                                     f"$({source}) is {values[0]!r}.")
            return ":".join(quote(n) for n in names)

        planner.add_edit((*label.span, values_step(planner, clause_index, label.expr, render, each=False)))


def _per_row_created_labels(clause: A.Create) -> dict[A.NodePattern, A.DynamicLabel]:
    """CREATE's nodes with one `$(e)` label that reads variables (so may differ between rows)."""
    found = {}
    for node in clause.pattern.find_all(A.NodePattern):
        labels = list(node.labels.find_all(A.DynamicLabel)) if node.labels is not None else []
        if len(labels) == 1 and any(labels[0].expr.find_all(A.Variable)) and labels[0].mode == "all":
            found[node] = labels[0]
    return found


def _plan_created_label(planner: PlanBuilder, clause_index: int, clause: A.Create, node: A.NodePattern,
                        label: A.DynamicLabel) -> None:
    """`CREATE (n:Base:$(row.type))` -> `CREATE (n:Base)` and, after the clause, one conditional
    `SET n:T` per label the probe finds (an anonymous node gets a variable)."""
    colon = planner.text.rindex(":", node.span[0], label.span[0])
    planner.add_edit((colon, label.span[1], ""))
    if node.var is None:
        target = f"__created{planner.fresh()}"
        planner.add_edit((node.span[0] + 1, node.span[0] + 1, target))
    else:
        target = quote(node.var.name)
    render = label_branches("SET", target, as_list(planner.render(label.expr)), strict=True)
    marker = values_step(planner, clause_index, label.expr, render, each=True)
    planner.add_edit((clause.span[1], clause.span[1], " " + marker))
