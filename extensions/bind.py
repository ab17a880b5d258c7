"""How computed extension values are read back into a query, per backend.

A bound call becomes a parameter lookup: an index by the call's primary node, then one key per
other argument that varies from row to row. The fastest form differs per backend
(docs/falkordb-notes.md, "binding computed values"):

- FalkorDB: map lookups are linear, list indexing is constant time, so the parameter is a list
  indexed by internal id, holding the value or a small map of the other keys. The list covers
  only the id range of the nodes computed, from `$__ext0_base` on, not every id from 0: a
  handful of bound nodes in a large graph makes a short list. (The base is a parameter of its
  own: FalkorDB copies a map parameter's value on each access, so `$p.values[i]` is quadratic.)
- Neo4j: maps are hashed; the parameter is a map keyed by `elementId(p)`.

Keys of non-node arguments are strings the database computes itself (`key_expr`); the probe
returns them as columns, so Python never has to reproduce Cypher's `toString` of a float.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any


def node_index_expr(kind: str, node: str) -> str:
    """The index of a node in a bound parameter: `id(n)` (list index) or `elementId(n)` (map key)."""
    return f"id({node})" if kind == "falkordb" else f"elementId({node})"


def element_id_expr(kind: str, node: str) -> str:
    """The node's element id as the client sees it (FalkorDB: the internal id as a string)."""
    return f"toString(id({node}))" if kind == "falkordb" else f"elementId({node})"


def key_expr(kind: str, arg: str, is_node: bool) -> str:
    """A string key for one varying argument; null gets the key 'n', any value 's' + its text."""
    if is_node:
        return element_id_expr(kind, arg)
    return f"coalesce('s' + toString({arg}), 'n')"


def base_param(param: str) -> str:
    """The parameter holding the first id of a FalkorDB id window."""
    return f"{param}_base"


def lookup(kind: str, param: str, index: str | None, keys: Sequence[str]) -> str:
    """The Cypher that replaces a call: `$param[index][key1][key2]...` (parts omitted when absent).

    On FalkorDB the index is an offset into the id window; an id below the window (a node that
    appeared after the probe) reads null rather than wrapping round to the end of the list.
    """
    if index is None:
        text = f"${param}"
    elif kind == "falkordb":
        base = f"${base_param(param)}"
        text = f"(CASE WHEN {index} >= {base} THEN ${param}[{index} - {base}] END)"
    else:
        text = f"${param}[{index}]"
    return text + "".join(f"[{k}]" for k in keys)


def placeholder(kind: str, param: str, indexed: bool, n_keys: int) -> dict[str, Any]:
    """Parameters of the right shape for EXPLAIN, where nothing is computed."""
    if indexed and kind == "falkordb":
        return {param: [], base_param(param): 0}
    return {param: {} if indexed or n_keys else None}


def build(kind: str, param: str, indexed: bool,
          entries: Iterable[tuple[Any, tuple[str, ...], Any]]) -> dict[str, Any]:
    """The parameters read by `lookup`, from `(index, keys, value)` entries (index None when
    not indexed).

    FalkorDB indexed: a list from the smallest to the largest id computed (the smallest in
    `base_param(param)`), None where nothing was (out-of-range indexes read as null too).
    Otherwise nested dicts, one level per key.
    """
    entries = list(entries)
    if not indexed:
        if not entries or not entries[0][1]:
            return {param: entries[0][2] if entries else None}
        root: dict = {}
        for _, keys, value in entries:
            _put(root, keys, value)
        return {param: root}
    by_index: dict[Any, Any] = {}
    for index, keys, value in entries:
        if len(keys) == 1:
            by_index.setdefault(index, {})[keys[0]] = value
        elif keys:
            _put(by_index.setdefault(index, {}), keys, value)
        else:
            by_index[index] = value
    if kind != "falkordb":
        return {param: by_index}
    base = min(by_index, default=0)
    values: list[Any] = [None] * (max(by_index, default=-1) + 1 - base)
    for index, value in by_index.items():
        values[index - base] = value
    return {param: values, base_param(param): base}


def _put(root: dict, keys: tuple[str, ...], value: Any) -> None:
    for key in keys[:-1]:
        root = root.setdefault(key, {})
    root[keys[-1]] = value
