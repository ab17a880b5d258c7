"""`apoc.refactor.mergeNodes` on FalkorDB (neo4j-graphrag's entity resolution).

APOC merges the nodes of a list into the first: it takes the others' labels and properties (with
`properties: 'discard'` the first's values win, then the earliest other's; with 'overwrite' the
latest's), moves their relationships onto it (one between two merged nodes becomes a loop; with
`mergeRels: true`, one of the same type and direction to the same node as an existing one is
merged into it) and deletes them. On FalkorDB labels and relationship types must be written in
the query, so, as for `apoc.merge.node`, a probe reads the labels and types the nodes have and
the CALL becomes one conditional SET or MERGE per label and type, in FOREACH loops over the
relationships collected before the others are deleted.
"""

from __future__ import annotations

from typing import Any

from extensions.cypher import ast as A
from extensions.cypher.render import name as quote
from extensions.plan_builder import PlanBuilder, call_tail, carried, reading_prefix, string, when, yielded
from extensions.registry import ProcedureRewrite
from core.dialect import Capability
from core.errors import argument_error


_STRATEGIES = {"discard", "overwrite", "override"}


def _config(clause: A.CallProcedure) -> tuple[str, bool]:
    """(properties strategy, mergeRels) from a literal config map."""
    args = clause.args or ()
    if not 1 <= len(args) <= 2:
        raise argument_error(f"apoc.refactor.mergeNodes() takes 1 or 2 arguments. Usage: {MERGE_NODES.signature}")
    if len(args) == 1:
        return "discard", False
    if not isinstance(args[1], A.MapLiteral) or not all(isinstance(v, A.Literal) for _, v in args[1].items):
        raise argument_error("The config of apoc.refactor.mergeNodes() must be a map of literals on the embedded "
                             "database, like {properties: 'discard', mergeRels: true}.")
    config = {k: v.value for k, v in args[1].items}
    strategy = str(config.get("properties", "discard")).lower()
    if strategy not in _STRATEGIES:
        raise argument_error(f"properties: '{strategy}' is not available on the embedded database: use "
                             "'discard' or 'overwrite'.")
    return strategy, bool(config.get("mergeRels", False))


def _plan(planner: PlanBuilder, clause_index: int, clause: A.CallProcedure) -> None:
    strategy, merge_rels = _config(clause)
    fields, names = yielded(MERGE_NODES, clause)
    n = planner.fresh()
    ns, first, row, out, into, keep = (f"__{w}{n}" for w in ("ns", "first", "row", "out", "in", "keep"))
    kept = carried(planner, clause_index)
    keys = ", ".join(kept + [ns, row, first])
    nodes = planner.render(clause.args[0])
    others = f"tail({ns})"

    def collected(pattern: str, name: str, skip: str) -> str:
        return (f"UNWIND CASE WHEN size({ns}) > 1 THEN {others} ELSE [null] END AS __o{n} "
                f"OPTIONAL MATCH {pattern.format(o=f'__o{n}', r=f'__r{n}', x=f'__x{n}')} "
                f"WITH {keys}{', ' + out if name == into else ''}, collect(CASE WHEN __r{n} IS NULL OR {skip} "
                f"THEN null ELSE [type(__r{n}), properties(__r{n}), __x{n}] END) AS {name} ")

    text = (f"WITH {', '.join(kept + [f'{nodes} AS {ns}', f'rand() AS {row}'])} "
            f"WITH {', '.join(kept + [ns, row, f'head({ns}) AS {first}'])} WHERE {first} IS NOT NULL "
            + collected("({o})-[{r}]->({x})", out, "false")
            + collected("({o})<-[{r}]-({x})", into, f"__x{n} IN {others}")
            + _properties(strategy, first, others, keep, keys, out, into))
    probe = reading_prefix(planner, clause_index, clause.args[0]) if any(clause.args[0].find_all(A.Variable)) else []
    probe.append(f"UNWIND {nodes} AS __n WITH __n WHERE __n IS NOT NULL "
                 "OPTIONAL MATCH (__n)-[__r]-() WITH __n, collect(DISTINCT type(__r)) AS __types "
                 "RETURN DISTINCT [labels(__n), __types] AS __value")
    marker = planner.add_late("\n".join(probe), _renderer(n, first, ns, out, into, merge_rels))
    node = quote(names.get("node", "node"))
    text += (f"{marker} FOREACH (__o IN {others} | DETACH DELETE __o) "
             f"WITH {', '.join(kept + [f'{first} AS {node}'])}")
    planner.add_edit((*clause.span, text + call_tail(planner, clause, fields, names)))


def _properties(strategy: str, first: str, others: str, keep: str, keys: str, out: str, into: str) -> str:
    if strategy == "discard":        # the first's values, then the earliest other's
        return (f"WITH {keys}, {out}, {into}, properties({first}) AS {keep} "
                f"FOREACH (__o IN reverse({others}) | SET {first} += properties(__o)) SET {first} += {keep} ")
    return f"FOREACH (__o IN {others} | SET {first} += properties(__o)) "


def _renderer(n: int, first: str, ns: str, out: str, into: str, merge_rels: bool):
    def render(values: list[Any]) -> str:
        labels = sorted({label for v in values if v for label in v[0]})
        types = sorted({t for v in values if v for t in v[1] if t is not None})
        parts = [f"FOREACH (__o IN tail({ns}) | {when(f'{string(label)} IN labels(__o)', f'SET {first}:{quote(label)}')})"
                 for label in labels]
        for rel_type in types:
            for source, arrow in ((out, "->"), (into, "<-")):
                parts += [_move(n, first, ns, source, rel_type, arrow, merge_rels, loop) for loop in (False, True)]
        return " ".join(parts)
    return render


def _move(n: int, first: str, ns: str, source: str, rel_type: str, arrow: str, merge_rels: bool, loop: bool) -> str:
    """Re-create the collected relationships of one type and direction on the first node (to
    itself when the other end is one of the merged nodes)."""
    t, x, m = f"__t{n}", f"__y{n}", f"__m{n}"
    other = "" if loop else "NOT "
    target = first if loop else x
    left, right = ("-", "->") if arrow == "->" else ("<-", "-")
    pattern = f"({first}){left}[{m}:{quote(rel_type)}]{right}({target})"
    write = (f"MERGE {pattern} ON CREATE SET {m} += {t}[1]" if merge_rels
             else f"CREATE {pattern} SET {m} += {t}[1]")
    return (f"FOREACH ({t} IN {source} | FOREACH ({x} IN CASE WHEN {t}[0] = {string(rel_type)} AND "
            f"{other}{t}[2] IN {ns} THEN [{t}[2]] ELSE [] END | {write}))")


MERGE_NODES = ProcedureRewrite(
    "apoc.refactor.mergeNodes", ("node",), _plan,
    "apoc.refactor.mergeNodes(nodes :: LIST<NODE>, config = {} :: MAP) :: (node :: NODE)",
    "Merges the given `LIST<NODE>` onto the first `NODE` in the `LIST<NODE>`. All relationships are merged "
    "onto that `NODE` too.", Capability.APOC)
