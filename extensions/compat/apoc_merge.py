"""`apoc.merge.node`, `apoc.merge.relationship` and `apoc.create.addLabels` on FalkorDB, which
has no APOC.

LangChain's `add_graph_documents` and neo4j-graphrag's writers merge nodes and relationships
whose labels and types come from the data (`[row.type]`). Each CALL becomes, per distinct label
set or type the probe finds (`late.py`), a conditional `MERGE ... ON CREATE SET ... ON MATCH SET`
inside a FOREACH (FalkorDB 4.16 merges only the first row when MERGE runs inside CALL { }),
followed by a MATCH that binds the merged element under the yielded name. `apoc.create.addLabels`
(llama-index's and neo4j-graphrag's writers on Neo4j before 5.24) is a conditional `SET n:Label`
per label the probe finds, for each node given (one node or a list).
"""

from __future__ import annotations

from extensions.cypher import ast as A
from extensions.cypher.render import name as quote
from extensions.plan_builder import PlanBuilder, as_list, call_tail, carried, string, values_step, when, yielded
from extensions.registry import ProcedureRewrite
from core.dialect import Capability
from core.errors import argument_error

from .apoc_refactor import MERGE_NODES


def _properties(planner: PlanBuilder, expr: A.Expr | None, what: str) -> str:
    """`{k: v}` for a MERGE pattern: the identifying properties must be a map literal."""
    if expr is None or (isinstance(expr, A.MapLiteral) and not expr.items):
        return ""
    if not isinstance(expr, A.MapLiteral):
        raise argument_error(f"The identifying properties of {what} must be a map literal like "
                             "{id: row.id} on the embedded database (its MERGE needs the keys in the query).")
    return " " + planner.render(expr)


def _sets(planner: PlanBuilder, var: str, on_create: A.Expr | None, on_match: A.Expr | None) -> str:
    out = ""
    for keyword, expr in (("ON CREATE SET", on_create), ("ON MATCH SET", on_match)):
        if expr is not None and not (isinstance(expr, A.MapLiteral) and not expr.items):
            out += f" {keyword} {var} += {planner.render(expr)}"
    return out


def _conditions(var: str, identity: A.Expr | None, planner: PlanBuilder) -> list[str]:
    if not isinstance(identity, A.MapLiteral):
        return []
    return [f"{var}.{quote(key)} = {planner.render(value)}" for key, value in identity.items]


def _plan_node(planner: PlanBuilder, clause_index: int, clause: A.CallProcedure) -> None:
    args = list(clause.args or ())
    if not 2 <= len(args) <= 4:
        raise argument_error(f"apoc.merge.node() takes 2 to 4 arguments. Usage: {MERGE_NODE.signature}")
    labels, identity, on_create, on_match = (args + [None, None])[:4]
    fields, names = yielded(MERGE_NODE, clause)
    node = quote(names.get("node", "node"))
    pattern = _properties(planner, identity, "apoc.merge.node")
    sets = _sets(planner, "__m", on_create, on_match)
    label_list = planner.render(labels)
    kept = ", ".join(carried(planner, clause_index)) or "*"
    conditions = _conditions(node, identity, planner)

    def render(values: list) -> str:
        sets_of_labels = sorted({tuple(v) for v in values if isinstance(v, list) and v
                                 and all(isinstance(x, str) for x in v)})
        merges = [when(f"{label_list} = [{', '.join(map(string, ls))}]",
                       f"MERGE (__m{''.join(':' + quote(x) for x in ls)}{pattern}){sets}")
                  for ls in sets_of_labels]
        matches = [f"({label_list} = [{', '.join(map(string, ls))}] AND {node}"
                   f"{''.join(':' + quote(x) for x in ls)})" for ls in sets_of_labels] or ["false"]
        where = " AND ".join(conditions + ["(" + " OR ".join(matches) + ")"])
        return f"{' '.join(merges)} WITH {kept} MATCH ({node}) WHERE {where}"

    marker = values_step(planner, clause_index, labels, render, each=False)
    planner.add_edit((*clause.span, marker + call_tail(planner, clause, fields, names)))


def _plan_relationship(planner: PlanBuilder, clause_index: int, clause: A.CallProcedure) -> None:
    args = list(clause.args or ())
    if not 5 <= len(args) <= 6:
        raise argument_error(f"apoc.merge.relationship() takes 5 or 6 arguments. Usage: {MERGE_RELATIONSHIP.signature}")
    start, rel_type, identity, on_create, end, on_match = (args + [None])[:6]
    if not isinstance(start, A.Variable) or not isinstance(end, A.Variable):
        raise argument_error("apoc.merge.relationship() needs its start and end nodes as variables.")
    fields, names = yielded(MERGE_RELATIONSHIP, clause)
    rel = quote(names.get("rel", "rel"))
    pattern = _properties(planner, identity, "apoc.merge.relationship")
    sets = _sets(planner, "__r", on_create, on_match)
    type_expr = planner.render(rel_type)
    a, b = quote(start.name), quote(end.name)
    kept = ", ".join(carried(planner, clause_index)) or "*"
    conditions = _conditions(rel, identity, planner)

    def render(values: list) -> str:
        types = sorted({v for v in values if isinstance(v, str)})
        merges = [when(f"{type_expr} = {string(t)}", f"MERGE ({a})-[__r:{quote(t)}{pattern}]->({b}){sets}")
                  for t in types]
        where = " AND ".join(conditions + [f"type({rel}) = {type_expr}"])
        return f"{' '.join(merges)} WITH {kept} MATCH ({a})-[{rel}]->({b}) WHERE {where}"

    marker = values_step(planner, clause_index, rel_type, render, each=False)
    planner.add_edit((*clause.span, marker + call_tail(planner, clause, fields, names)))


def _plan_add_labels(planner: PlanBuilder, clause_index: int, clause: A.CallProcedure) -> None:
    args = list(clause.args or ())
    if len(args) != 2:
        raise argument_error(f"apoc.create.addLabels() takes 2 arguments. Usage: {ADD_LABELS.signature}")
    nodes, labels = args
    fields, names = yielded(ADD_LABELS, clause)
    node = quote(names.get("node", "node"))
    each = f"__added{planner.fresh()}"
    label_list = as_list(planner.render(labels))
    kept = [n for n in carried(planner, clause_index) if n != node]

    def render(values: list) -> str:
        added = sorted({v for v in values if isinstance(v, str)})
        sets = " ".join(when(f"{string(v)} IN {label_list}", f"SET {each}:{quote(v)}") for v in added)
        return f"{sets} WITH {', '.join(kept + [f'{each} AS {node}'])}" if added else \
            f"WITH {', '.join(kept + [f'{each} AS {node}'])}"

    marker = values_step(planner, clause_index, labels, render, each=True)
    unwind = f"UNWIND {as_list(planner.render(nodes))} AS {each} "
    planner.add_edit((*clause.span, unwind + marker + call_tail(planner, clause, fields, names)))


MERGE_NODE = ProcedureRewrite(
    "apoc.merge.node", ("node",), _plan_node,
    "apoc.merge.node(labels :: LIST<STRING>, identProps :: MAP, onCreateProps = {} :: MAP, "
    "onMatchProps = {} :: MAP) :: (node :: NODE)",
    "Merges a node with the given labels and identifying properties.", Capability.APOC)
MERGE_RELATIONSHIP = ProcedureRewrite(
    "apoc.merge.relationship", ("rel",), _plan_relationship,
    "apoc.merge.relationship(startNode :: NODE, relType :: STRING, identProps :: MAP, "
    "onCreateProps :: MAP, endNode :: NODE, onMatchProps = {} :: MAP) :: (rel :: RELATIONSHIP)",
    "Merges a relationship of the given type and identifying properties.", Capability.APOC)


ADD_LABELS = ProcedureRewrite(
    "apoc.create.addLabels", ("node",), _plan_add_labels,
    "apoc.create.addLabels(nodes :: ANY, labels :: LIST<STRING>) :: (node :: NODE)",
    "Adds the given labels to the given `NODE` values.", Capability.APOC)


def merge_rewrites() -> list[ProcedureRewrite]:
    """APOC's writes whose labels and types come from the data."""
    return [MERGE_NODE, MERGE_RELATIONSHIP, ADD_LABELS, MERGE_NODES]
