"""How computed extension values are read back into a query, per binding form of the dialect.

A bound call becomes a parameter lookup: an index by the call's primary node, then one key per
other argument that varies from row to row. The fastest form differs per backend
(docs/falkordb-notes.md, "binding computed values"):

- integer ids (`Dialect.integer_ids`, FalkorDB): map lookups are linear, list indexing is constant time, so the parameter is a list
  indexed by internal id. It covers only the id range of the nodes computed, from
  `$__ext0_base` on, not every id from 0: a handful of bound nodes in a large graph makes a
  short list. (The base is a parameter of its own: FalkorDB copies a map parameter's value on
  each access, so `$p.values[i]` is quadratic.) A call with other varying arguments reads a
  *grid*: per node one list, one value per distinct key tuple, at the column
  `$__ext0_cols[key]...` names (a small map). When the nodes and key tuples computed fill
  less than a quarter of the grid (arguments that vary with the node, like its own date), the
  call is bound *sparse* instead, a map of keys per node, and the query text is rewritten to
  read it (`Lookup.sparse`).
- element ids (Neo4j): maps are hashed; the parameter is a map keyed by `elementId(p)`, then by key.

Keys of other arguments are strings the database computes itself (`toString(x)`, a node's
element id); the probe returns them as columns, so Python never has to reproduce Cypher's
`toString` of a float. Null has no string: the lookup reads `coalesce(key, $__ext0_null)`, a
key no value of this execution has (chosen when binding).

Measured with 10k nodes x 10 years, 100k rows reading their value (FalkorDB 4.x): per-node
maps keyed `coalesce('s' + toString(year), 'n')` 99 ms; the grid with `$cols[toString(year)]`
46 ms; the query without the extension 8 ms, with the grid's parameter parsed but not read 17 ms.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from core.dialect import Dialect

#: A grid is bound when the values computed fill at least 1 / SPARSE_RATIO of its cells.
SPARSE_RATIO = 4


def key_expr(dialect: Dialect, arg: str, is_node: bool) -> str:
    """The string key of one varying argument, as the probe returns it (null for null)."""
    return dialect.element_id(arg) if is_node else f"toString({arg})"


def base_param(param: str) -> str:
    """The parameter holding the first id of a FalkorDB id window."""
    return f"{param}_base"


def columns_param(param: str) -> str:
    """The parameter mapping key tuples to grid columns (None when bound sparse)."""
    return f"{param}_cols"


def null_param(param: str) -> str:
    """The parameter holding the key that stands for null."""
    return f"{param}_null"


@dataclass(frozen=True)
class Lookup:
    """How the rewritten query reads one call's values from the parameter `param`: an index
    expression (`id(n)` / `elementId(n)`, None when no node varies) and the key expressions of
    the other varying arguments."""

    dialect: Dialect
    param: str
    index: str | None
    keys: tuple[str, ...]

    @property
    def grid(self) -> bool:
        """Whether the call's values are bound as a grid (FalkorDB, indexed, with keys)."""
        return self.dialect.integer_ids and self.index is not None and bool(self.keys)

    @property
    def text(self) -> str:
        """The Cypher that replaces the call: `$p[index][key1][key2]...`, parts omitted when
        absent; a grid reads `$p[index][$p_cols[key1][key2]]`.

        On FalkorDB the index is an offset into the id window; an id below the window (a node
        that appeared after the probe) reads null rather than wrapping round to the end of the list.
        """
        keys = "".join(f"[{k}]" for k in self._keys())
        return self._indexed() + (f"[${columns_param(self.param)}{keys}]" if self.grid else keys)

    @property
    def sparse(self) -> str:
        """`text` as it reads a grid call bound sparse: per node a map of keys."""
        return self._indexed() + "".join(f"[{k}]" for k in self._keys())

    def _indexed(self) -> str:
        p = self.param
        if self.index is None:
            return f"${p}"
        if self.dialect.integer_ids:
            base = f"${base_param(p)}"
            return f"(CASE WHEN {self.index} >= {base} THEN ${p}[{self.index} - {base}] END)"
        return f"${p}[{self.index}]"

    def _keys(self) -> list[str]:
        return [f"coalesce({k}, ${null_param(self.param)})" for k in self.keys]

    def placeholders(self) -> dict[str, Any]:
        """Parameters of the right shape for EXPLAIN, where nothing is computed."""
        out: dict[str, Any] = {}
        if self.index is not None and self.dialect.integer_ids:
            out = {self.param: [], base_param(self.param): 0}
        else:
            out = {self.param: {} if self.index is not None or self.keys else None}
        if self.keys:
            out[null_param(self.param)] = ""
        if self.grid:
            out[columns_param(self.param)] = {}
        return out

    def is_sparse(self, params: dict[str, Any]) -> bool:
        """Whether `params` bind this grid call sparse (its text must read `sparse`)."""
        return self.grid and params.get(columns_param(self.param), {}) is None

    # -- binding

    def bind(self, entries: Iterable[tuple[Any, tuple, Any]]) -> dict[str, Any]:
        """The parameters `text` reads, from `(index, keys, value)` entries (index None when not
        indexed; keys as the probe returned them, None for null). A grid call whose entries fill
        too little of its grid is bound sparse (`is_sparse`)."""
        entries = list(entries)
        null = _null_key(keys for _, keys, _ in entries)
        if self.index is None:
            if not self.keys:
                return {self.param: entries[0][2] if entries else None}
            root: dict = {}
            for _, keys, value in entries:
                _put(root, _strings(keys, null), value)
            return {self.param: root, null_param(self.param): null}
        if self.grid:
            nodes = {index: None for index, _, _ in entries}
            columns = {keys: None for _, keys, _ in entries}
            if len(nodes) * len(columns) <= SPARSE_RATIO * len(entries):
                return self._grid_from_entries(entries, nodes, columns, null)
        by_index: dict[Any, Any] = {}
        for index, keys, value in entries:
            if keys:
                _put(by_index.setdefault(index, {}), _strings(keys, null), value)
            else:
                by_index[index] = value
        out = self._indexed_params(by_index)
        if self.keys:
            out[null_param(self.param)] = null
        if self.grid:
            out[columns_param(self.param)] = None
        return out

    def bind_grid(self, nodes: Sequence[Any], keys: Sequence[tuple], rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
        """The parameters `text` reads when every node has a value for every key tuple:
        `rows[i][j]` is the value of `nodes[i]` with `keys[j]`."""
        if not self.keys:
            return self._indexed_params({node: row[0] for node, row in zip(nodes, rows)})
        null = _null_key(keys)
        if not self.grid:                              # Neo4j: maps keyed by element id, then key
            strings = [_strings(k, null) for k in keys]
            by_index: dict[Any, dict] = {}
            for node, row in zip(nodes, rows):
                inner = by_index[node] = {}
                for key, value in zip(strings, row):
                    _put(inner, key, value)
            return {self.param: by_index, null_param(self.param): null}
        columns: dict = {}
        for j, key in enumerate(keys):
            _put(columns, _strings(key, null), j)
        out = self._indexed_params(dict(zip(nodes, rows)))
        out[columns_param(self.param)] = columns
        out[null_param(self.param)] = null
        return out

    def _grid_from_entries(self, entries, nodes: dict, columns: dict, null: str) -> dict[str, Any]:
        width = len(columns)
        for j, key in enumerate(columns):
            columns[key] = j
        for node in nodes:
            nodes[node] = [None] * width
        for index, keys, value in entries:
            nodes[index][columns[keys]] = value
        return self.bind_grid(list(nodes), list(columns), list(nodes.values()))

    def _indexed_params(self, by_index: dict[Any, Any]) -> dict[str, Any]:
        """FalkorDB: a list from the smallest to the largest index, None where nothing was
        computed (out-of-range indexes read as null too); Neo4j: the map itself."""
        if not self.dialect.integer_ids:
            return {self.param: by_index}
        base = min(by_index, default=0)
        values: list[Any] = [None] * (max(by_index, default=-1) + 1 - base)
        for index, value in by_index.items():
            values[index - base] = value
        return {self.param: values, base_param(self.param): base}


def sparse_edits(lookups: Iterable[Lookup], params: dict[str, Any]) -> list[tuple[str, str]]:
    """(text, replacement) for each grid call `params` bind sparse."""
    return [(lookup.text, lookup.sparse) for lookup in lookups if lookup.is_sparse(params)]


def _null_key(key_tuples: Iterable[Sequence[Any]]) -> str:
    """A key that no non-null key among `key_tuples` equals: it stands for null."""
    taken = {key for keys in key_tuples for key in keys}
    null, n = "null", 0
    while null in taken:
        n += 1
        null = f"null{n}"
    return null


def _strings(keys: Sequence[Any], null: str) -> tuple[str, ...]:
    return tuple(null if key is None else key for key in keys)


def _put(root: dict, keys: tuple[str, ...], value: Any) -> None:
    for key in keys[:-1]:
        root = root.setdefault(key, {})
    root[keys[-1]] = value
