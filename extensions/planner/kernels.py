"""The binding kernels: pure functions from a probe's rows to the argument tuples the evaluators
get, and from the values they compute to the parameters the rewritten query reads.

They are the CPU-bound part of running a plan, apart from the asyncio code that runs the steps
(`planner.py`), because big batches run them in a worker thread (`Extension.offload_above`)
and because they are what a benchmark of binding measures: rows are deduplicated by the
database-computed identity and keys before any argument object is built, each node's `NodeRef`
is built once, and a projection's cut is computed over numpy arrays (`reduce.py`).
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import repeat
from operator import itemgetter
from typing import Any

import numpy as np

from core.dialect import Dialect
from core.errors import database_error
from core.values import Node, Relationship

from .plan import AlgorithmStep, Site, cut_param, seek_param
from ..registry import NodeRef, PropertyRef, RelationshipRef, ValueColumn

#: An algorithm CALL whose query needs at most 1 / SEEK_RATIO of its rows seeks them by identity
#: rather than scanning every node for its bound value.
SEEK_RATIO = 4
#: An argument whose node or relationship is missing (OPTIONAL MATCH): the row binds nothing.
_MISSING = object()


def distinct_arguments(site: Site, rows: list[list[Any]], dialect: Dialect) -> dict[tuple, tuple]:
    """Probe rows -> {key: argument tuple}, one entry per distinct argument tuple.

    Rows are deduplicated by the database-computed index and keys before any argument object
    is built, and each node's `NodeRef` is built once.
    """
    index_col = None
    if site.index_arg is not None:
        arg = site.args[site.index_arg]
        index_col = arg.id_col if dialect.integer_ids else arg.eid_col
    makers = [_argument_maker(arg, dialect) for arg in site.args]
    key_of = _key_getter(index_col, site.key_cols)
    distinct: dict[tuple, tuple] = {}
    for row in rows:
        key = key_of(row)
        if key in distinct or (index_col is not None and key[0] is None):
            continue
        args = tuple([make(row) for make in makers])
        if _MISSING not in args:
            distinct[key] = args
    return distinct


def node_side(plan, nodes: list[list[Any]], dialect: Dialect) -> dict[Any, tuple]:
    """Node rows of a separated probe -> {node index: node-side arguments} (see `split.py`)."""
    makers = [_argument_maker(arg, dialect) for arg in plan.node_args]
    index = plan.node_args[plan.index]
    id_col = index.id_col if dialect.integer_ids else index.eid_col
    side: dict[Any, tuple] = {}
    for row in nodes:
        if row[id_col] not in side:
            side[row[id_col]] = tuple([make(row) for make in makers])
    return side


def value_side(plan, values_rows: list[list[Any]], dialect: Dialect) -> dict[tuple, tuple]:
    """Value rows of a separated probe -> {value keys: value-side arguments}; each combination
    with a node side's entry is one distinct argument tuple."""
    makers = [_argument_maker(arg, dialect) for arg in plan.value_args]
    side: dict[tuple, tuple] = {}
    for row in values_rows:
        key = tuple([row[col] for col in plan.value_keys])
        if key not in side:
            side[key] = tuple([make(row) for make in makers])
    return side


def _key_getter(index_col: int | None, key_cols: list[int]):
    """row -> (index or None, key1, key2, ...), the identity of a distinct argument tuple."""
    if index_col is None:
        if not key_cols:
            return lambda row: (None,)
        getter = itemgetter(*key_cols)
        return (lambda row: (None, getter(row))) if len(key_cols) == 1 else (lambda row: (None, *getter(row)))
    if not key_cols:
        return lambda row: (row[index_col],)
    return itemgetter(index_col, *key_cols)


def _argument_maker(arg, dialect: Dialect):
    """A function: probe row -> this argument as the evaluator gets it
    (NodeRef/PropertyRef/RelationshipRef/value)."""
    if arg.kind == "value":
        return itemgetter(arg.value_col)
    refs: dict[Any, Any] = {}

    def make(row):
        entity_id = row[arg.id_col]
        if entity_id is None:
            return _MISSING
        ref = refs.get(entity_id)
        if ref is None:
            element_id = str(entity_id) if dialect.integer_ids else row[arg.eid_col]
            refs[entity_id] = ref = _reference(arg, entity_id, element_id, row)
        return ref
    return make


def _reference(arg, entity_id: int, element_id: str, row) -> NodeRef | PropertyRef | RelationshipRef:
    if arg.kind == "relationship":
        return RelationshipRef(entity_id, element_id, row[arg.labels_col])
    node = NodeRef(entity_id, element_id, tuple(row[arg.labels_col] or ()),
                   {name: row[col] for name, col in arg.prop_cols})
    return PropertyRef(node, arg.key) if arg.kind == "property" else node


def bind_distinct(site: Site, distinct: dict[tuple, tuple], prepared: tuple,
                   params: dict[str, Any]) -> dict[str, Any]:
    """`evaluate` once over the distinct argument tuples -> the site's parameters."""
    values = site.ext.evaluate(list(distinct.values()), *prepared) if distinct else []
    if len(values) != len(distinct):
        raise database_error(f"{site.ext.name}() returned {len(values)} values for {len(distinct)} inputs")
    if site.reduction is not None:
        return bind_cut(site, [key[0] for key in distinct], values, params)
    return site.lookup.bind((key[0], key[1:], value) for key, value in zip(distinct, values))


def bind_product(site: Site, node_side: dict, value_side: dict, prepared: tuple,
                  params: dict[str, Any]) -> dict[str, Any]:
    """The site's values for node side x value side -> its parameters (a grid: a row per node)."""
    nodes, values = list(node_side.values()), list(value_side.values())
    if not nodes or not values:              # no rows (or a write between the two probes)
        return site.lookup.bind([])
    width = len(values)
    ext = site.ext
    if ext.evaluate_product is not None:
        rows = ext.evaluate_product(nodes, values, *prepared)
        if len(rows) != len(nodes) or any(len(row) != width for row in rows):
            raise database_error(f"{ext.name}() returned a product of the wrong shape for "
                                 f"{len(nodes)} x {width} inputs")
    else:
        flat = ext.evaluate([a + b for a in nodes for b in values], *prepared)
        if len(flat) != len(nodes) * width:
            raise database_error(f"{ext.name}() returned {len(flat)} values for {len(nodes) * width} inputs")
        rows = [flat[i:i + width] for i in range(0, len(flat), width)]
    if site.reduction is not None and width == 1:
        return bind_cut(site, list(node_side), [row[0] for row in rows], params)
    return site.lookup.bind_grid(list(node_side), list(value_side), rows)


def bind_cut(site: Site, nodes: list, values: list | np.ndarray, params: dict[str, Any]) -> dict[str, Any]:
    """One value per node (a list, or an array of numbers with NaN for null) -> the parameters of
    the nodes whose rows the query needs (`reduce.plan_projection`), flagged so that the text
    drops the others (`Site.edits`); the kept nodes whose value is null are bound apart
    (`Site.nulls`). All of them when a value is not a number."""
    if isinstance(values, np.ndarray):
        numbers, null = values, np.isnan(values)
        values = np.where(null, None, values).tolist() if null.any() else values.tolist()
    else:
        numbers, null = _numbers(values), np.array([v is None for v in values], dtype=bool)
    keep = site.reduction.keep(numbers, params) if numbers is not None and numbers.dtype.kind in "if" else None
    if keep is None:
        return site.lookup.bind_grid(nodes, [()], [[value] for value in values])
    kept = np.flatnonzero(keep & ~null).tolist()
    nulls = np.flatnonzero(keep & null).tolist()
    bound = site.lookup.bind_grid([nodes[i] for i in kept], [()], [[values[i]] for i in kept])
    bound.update(site.nulls.bind_grid([nodes[i] for i in nulls], [()], [[True]] * len(nulls)))
    return {**bound, cut_param(site.lookup.param): True}


def _numbers(values: list) -> np.ndarray | None:
    """The values as an array of numbers (NaN for null); None when one is neither, or an integer
    a float would round."""
    if any(isinstance(v, bool) or not isinstance(v, (int, float, type(None))) for v in values):
        return None
    if any(v is None for v in values):
        if any(isinstance(v, int) and abs(v) > 2**53 for v in values):
            return None
        return np.array([np.nan if v is None else v for v in values], dtype=float)
    return np.array(values)


def bind_values(step: AlgorithmStep, computed: Mapping[Any, tuple], params: dict[str, Any]) -> dict[str, Any]:
    """One value per node -> the parameters of the rows the query needs (`reduce.py`): a few
    are bound as [identity, value] pairs the rewritten CALL seeks (`AlgorithmStep.edits`), many
    as the lookup its scan of every node reads."""
    if isinstance(computed, ValueColumn):
        ids, values = computed.ids, computed.values
    else:
        ids = np.array(list(computed), dtype=object)
        values = np.array([value for (value,) in computed.values()])
    keep = step.reduction.keep(values, params) if step.reduction is not None else None
    if keep is not None:
        ids, values = ids[keep], values[keep]
        if len(ids) * SEEK_RATIO <= len(keep):
            return {seek_param(step.lookup.param): [list(pair) for pair in zip(ids.tolist(), values.tolist())]}
    return step.lookup.bind(zip(ids.tolist(), repeat(()), values.tolist()))


def bindable(value: Any) -> Any:
    """Rows as a database takes them as a parameter: neither FalkorDB's (literals) nor Neo4j's take
    a node, so the virtual nodes and relationships of schema procedures travel as their property maps."""
    if isinstance(value, list):
        return [bindable(v) for v in value]
    if isinstance(value, (Node, Relationship)):
        return bindable(value.properties)
    if isinstance(value, dict):
        return {k: bindable(v) for k, v in value.items()}
    return value
