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

The node side is grouped: `RETURN labels(n), collect(DISTINCT id(n))`, one row per label set
(returning `labels(n)` for every node costs FalkorDB four times the rest), and it depends on
the query prefix only, so the probe cache keeps it (with the nodes' `NodeRef`s) across queries
that differ in a constant.
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class SiteSplit:
    """One call's arguments on each side, with columns renumbered to that side's rows."""

    node_args: tuple               # ArgPlans read from node rows (the indexing node)
    value_args: tuple              # ArgPlans read from value rows, after the node side's in call order
    index: int                     # position of the indexing argument in `node_args`
    value_keys: tuple[int, ...]    # value-row columns of the keys, in the call's key order


@dataclass(frozen=True)
class SplitProbe:
    """The two probes: node rows are `[*node columns, ids]` groups; value rows are plain."""

    node_text: str
    value_text: str | None         # None: no argument varies apart from the node
    node_width: int                # columns before the id list in a node row
    sites: tuple[SiteSplit, ...]


def split_probe(lines: list[str], exprs: list[str], sites: list, kind: str) -> SplitProbe | None:
    """The separated form of the probe `lines` + RETURN DISTINCT `exprs`, or None when its
    calls are not all indexed by one node whose columns no other varying argument shares."""
    if not sites or any(site.index_arg is None for site in sites):
        return None
    indexes = [site.args[site.index_arg] for site in sites]
    if len({arg.text for arg in indexes}) != 1:
        return None
    node_vars = indexes[0].uses
    id_cols = {indexes[0].id_col, indexes[0].eid_col} - {-1}
    node_cols: set[int] = set()
    value_cols: set[int] = set()
    sides = []
    for site in sites:
        on_node = _sides(site)
        if on_node is None:
            return None
        for arg, node_side in zip(site.args, on_node):
            (node_cols if node_side else value_cols).update(_columns(arg))
        sides.append(on_node)
    node_cols -= id_cols
    if node_cols & value_cols or id_cols & value_cols:
        return None
    node_order, value_order = sorted(node_cols), sorted(value_cols)
    node_pos = {col: i for i, col in enumerate(node_order)}
    node_pos.update({indexes[0].id_col: len(node_order), indexes[0].eid_col: len(node_order) + 1})
    value_pos = {col: i for i, col in enumerate(value_order)}
    plans = []
    for site, on_node in zip(sites, sides):
        count = sum(on_node)
        value_args = tuple(_renumber(arg, value_pos) for arg in site.args[count:])
        plans.append(SiteSplit(tuple(_renumber(arg, node_pos) for arg in site.args[:count]), value_args,
                               site.index_arg, tuple(arg.key_col for arg in value_args if arg.key_col >= 0)))
    ids = exprs[indexes[0].id_col] if kind == "falkordb" else \
        f"[{exprs[indexes[0].id_col]}, {exprs[indexes[0].eid_col]}]"
    grouped = [f"{exprs[col]} AS __c{col}" for col in node_order] + [f"collect(DISTINCT {ids}) AS __ids"]
    node_text = "\n".join([*lines, "RETURN " + ", ".join(grouped)])
    value_text = None
    if value_order:
        value_text = "\n".join([*lines, "RETURN DISTINCT " + ", ".join(f"{exprs[c]} AS __c{c}" for c in value_order)])
    return SplitProbe(node_text, value_text, len(node_order), tuple(plans))


def node_rows(groups: list[list], width: int, kind: str) -> list[list]:
    """Grouped node rows -> one row per node: `[*node columns, id]` (Neo4j: `..., id, element id]`)."""
    if kind == "falkordb":
        return [[*group[:width], node_id] for group in groups for node_id in group[width]]
    return [[*group[:width], *pair] for group in groups for pair in group[width]]


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
