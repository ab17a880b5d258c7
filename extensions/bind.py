"""How computed extension values are read back into a query, per backend.

A bound call becomes a parameter lookup: an index by the call's primary node, then one key per
other argument that varies from row to row. The fastest form differs per backend
(docs/falkordb-notes.md, "binding computed values"):

- FalkorDB: map lookups are linear, list indexing is constant time, so the parameter is a list
  indexed by internal id, `$__ext0[id(p)]`, holding the value or a small map of the other keys.
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


def lookup(param: str, index: str | None, keys: Sequence[str]) -> str:
    """The Cypher that replaces a call: `$param[index][key1][key2]...` (parts omitted when absent)."""
    text = f"${param}"
    if index is not None:
        text += f"[{index}]"
    return text + "".join(f"[{k}]" for k in keys)


def placeholder(kind: str, indexed: bool, n_keys: int) -> Any:
    """A value of the right shape for EXPLAIN, where nothing is computed."""
    if indexed and kind == "falkordb":
        return []
    if indexed or n_keys:
        return {}
    return None


def build(kind: str, indexed: bool, entries: Iterable[tuple[Any, tuple[str, ...], Any]]) -> Any:
    """The parameter value from `(index, keys, value)` entries (index None when not indexed).

    FalkorDB indexed: a list as long as the largest id + 1, with None where nothing was
    computed (out-of-range indexes read as null too). Otherwise nested dicts, one level per key.
    """
    entries = list(entries)
    if not indexed:
        if not entries:
            return None
        if not entries[0][1]:
            return entries[0][2]
        root: dict = {}
        for _, keys, value in entries:
            _put(root, keys, value)
        return root
    by_index: dict[Any, Any] = {}
    for index, keys, value in entries:
        if len(keys) == 1:
            by_index.setdefault(index, {})[keys[0]] = value
        elif keys:
            _put(by_index.setdefault(index, {}), keys, value)
        else:
            by_index[index] = value
    if kind != "falkordb":
        return by_index
    size = max(by_index, default=-1) + 1
    values: list[Any] = [None] * size
    for index, value in by_index.items():
        values[index] = value
    return values


def _put(root: dict, keys: tuple[str, ...], value: Any) -> None:
    for key in keys[:-1]:
        root = root.setdefault(key, {})
    root[keys[-1]] = value
