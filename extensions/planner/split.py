"""Separated probes: the distinct nodes and the distinct other arguments of a probe, fetched apart.

When every call of a probe is indexed by the same node and its other varying arguments do not
read that node (`ts_avg(s.kwh, year)` after `MATCH (s) UNWIND range(2011, 2020) AS year`), the
nodes and the values vary independently as far as the planner can bind them: the planner
probes the distinct nodes and the distinct value tuples apart and evaluates their product, so
10k nodes x 10 years costs 10k + 10 probe rows, not 100k.

The product is a superset of the combinations the query makes (each combination that occurs has
its node on one side and its values on the other), so every value the rewritten query reads is
the one the combined probe would have bound; some may be computed that no row reads. The planner
falls back to the combined probe when the product is much larger than its sides (the arguments
are correlated, like a node and its neighbour's date) or when an evaluator refuses a
combination (the query may never make it).

Both probes deduplicate before they compute: the node probe keeps each distinct node once
(`WITH DISTINCT n`) and returns one row per label set, `labels(n), collect([<node columns>,
id(n)])`; the value probe keeps the distinct values of the variables its arguments read
(`WITH DISTINCT year`) before it writes their keys. Over 10k nodes x 10 years (FalkorDB) the
node probe takes 15 ms this way, 55-70 ms grouped by `labels(n), n.id` with
`collect(DISTINCT id(n))` (and `labels(n)` for every row costs four times the rest), the value
probe 6 ms instead of 15. (A node that is not a variable, or an argument reading a variable
local to it, keeps the plain forms.) The node side depends on the query prefix only, so the
probe cache keeps it (with the nodes' `NodeRef`s) across queries that differ in a constant.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.dialect import Dialect

from ..cypher.render import name as quote_name


@dataclass(frozen=True)
class SiteSplit:
    """One call's arguments on each side, with columns renumbered to that side's rows."""

    node_args: tuple               # ArgPlans read from node rows (the indexing node)
    value_args: tuple              # ArgPlans read from value rows, after the node side's in call order
    index: int                     # position of the indexing argument in `node_args`
    value_keys: tuple[int, ...]    # value-row columns of the keys, in the call's key order


@dataclass(frozen=True)
class SplitProbe:
    """The two probes: node rows are `[labels, [[*other node columns, id], ...]]` groups
    (Neo4j: `..., id, element id]`); value rows are plain."""

    node_text: str
    value_text: str | None         # None: no argument varies apart from the node
    node_width: int                # node columns per node, the labels first
    sites: tuple[SiteSplit, ...]


def split_probe(lines: list[str], exprs: list[str], sites: list, dialect: Dialect,
                scope: frozenset = frozenset()) -> SplitProbe | None:
    """The separated form of the probe `lines` + RETURN DISTINCT `exprs`, or None when its
    calls are not all indexed by one node whose columns no other varying argument shares.
    `scope`: the variables known after `lines`."""
    if not sites or any(site.index_arg is None for site in sites):
        return None
    indexes = [site.args[site.index_arg] for site in sites]
    if len({arg.indexed_by for arg in indexes}) != 1:
        return None
    node = indexes[0]
    id_cols = {node.id_col, node.eid_col} - {-1}
    node_cols: set[int] = set()
    value_cols: set[int] = set()
    value_vars: set[str] = set()
    sides = []
    for site in sites:
        on_node = _sides(site)
        if on_node is None:
            return None
        for arg, node_side in zip(site.args, on_node):
            (node_cols if node_side else value_cols).update(_columns(arg))
            if not node_side:
                value_vars |= arg.uses
        sides.append(on_node)
    node_cols -= id_cols
    if node_cols & value_cols or id_cols & value_cols:
        return None
    node_order = [node.labels_col, *sorted(node_cols - {node.labels_col})]
    value_order = sorted(value_cols)
    node_pos = {col: i for i, col in enumerate(node_order)}
    node_pos.update({node.id_col: len(node_order), node.eid_col: len(node_order) + 1})
    value_pos = {col: i for i, col in enumerate(value_order)}
    plans = []
    for site, on_node in zip(sites, sides):
        count = sum(on_node)
        value_args = tuple(_renumber(arg, value_pos) for arg in site.args[count:])
        plans.append(SiteSplit(tuple(_renumber(arg, node_pos) for arg in site.args[:count]), value_args,
                               site.index_arg, tuple(arg.key_col for arg in value_args if arg.key_col >= 0)))
    return SplitProbe(_node_text(lines, exprs, node, node_order, dialect, scope),
                      _value_text(lines, exprs, value_order, value_vars, scope),
                      len(node_order), tuple(plans))


def _node_text(lines: list[str], exprs: list[str], node, order: list[int], dialect: Dialect, scope) -> str:
    per_node = [exprs[col] for col in order[1:]] + [exprs[node.id_col]]
    if not dialect.integer_ids:
        per_node.append(exprs[node.eid_col])
    distinct = "DISTINCT "
    if node.indexed_by in scope:
        lines = [*lines, f"WITH DISTINCT {node.indexed_by} WHERE {node.indexed_by} IS NOT NULL"]
        distinct = ""
    return "\n".join([*lines, f"RETURN {exprs[order[0]]} AS __c{order[0]}, "
                                f"collect({distinct}[{', '.join(per_node)}]) AS __ids"])


def _value_text(lines: list[str], exprs: list[str], order: list[int], variables: set[str], scope) -> str | None:
    if not order:
        return None
    if variables <= scope:
        kept = ", ".join(quote_name(v) for v in sorted(variables)) or "true AS __any"
        lines = [*lines, f"WITH DISTINCT {kept}"]
    return "\n".join([*lines, "RETURN DISTINCT " + ", ".join(f"{exprs[c]} AS __c{c}" for c in order)])


def node_rows(groups: list[list]) -> list[list]:
    """Grouped node rows -> one row per node: `[labels, *other node columns, id]` (Neo4j: `..., id,
    element id]`); a null node (OPTIONAL MATCH) is left out."""
    return [[labels, *item] for labels, items in groups for item in items if item[-1] is not None]


def _sides(site) -> list[bool] | None:
    """Per argument, whether it is read from node rows: only the indexing node. Everything else,
    constants too, is read from value rows, so the node probe does not change with a constant
    (`text_score(n, 'text', $q)`: a new question reuses the cached node side). None when another
    argument reads the node or the indexing node is not the first argument."""
    node_vars = site.args[site.index_arg].uses
    sides, seen_value = [], False
    for i, arg in enumerate(site.args):
        if i == site.index_arg:
            if seen_value:
                return None
            on_node = True
        elif arg.uses & node_vars:
            return None
        else:
            on_node = False
        seen_value |= not on_node
        sides.append(on_node)
    return sides


def _columns(arg) -> set[int]:
    cols = {arg.id_col, arg.eid_col, arg.labels_col, arg.value_col, arg.key_col}
    cols.update(col for _, col in arg.prop_cols)
    return cols - {-1}


def _renumber(arg, positions: dict[int, int]):
    def at(col: int) -> int:
        return positions[col] if col >= 0 else -1
    return replace(arg, id_col=at(arg.id_col), eid_col=at(arg.eid_col), labels_col=at(arg.labels_col),
                   value_col=at(arg.value_col), key_col=at(arg.key_col),
                   prop_cols=tuple((name, at(col)) for name, col in arg.prop_cols))
