"""Graph projections: the subgraph an algorithm runs on, read once into a scipy sparse matrix.

A `Subgraph` (labels, relationship types, weight property, node predicate) is read with one
streaming query that returns each node with the lists of its outgoing neighbours (and weights),
so isolated nodes come along and no per-node query is ever made. The rows become a CSR matrix
of out-relationships, one unit (or the weight) per relationship, and the array of node
identities (`id(n)` on FalkorDB, `elementId(n)` on Neo4j: the form the planner binds results by).

On FalkorDB the read is an aggregating query per window of ID_WINDOW node ids
(`extensions/windows.py`) answering one row: the relationships of the window's start nodes as
one JSON list of `id(start) x span + id(end)` (span: one past the largest node id), so each
relationship costs FalkorDB one number to print and numpy one to parse (`divmod` splits it); a
few MB of text replace millions of list cells decoded one by one. The node ids are a second
such query, skipped when the projection is every node and no id is a hole (the node count
equals the span: the ids are 0 .. span - 1). Measured per window of 200k nodes / 400k
relationships on an idle 2-core machine, FalkorDB's CPU: 0.15 s to walk them (`count(r)`),
0.23 s for the JSON list, 0.26 s for the same numbers as `string.join` of `toString`s, and
0.38-0.56 s (loaded machine) for separate start and end lists.

`ProjectionStore` caches projections per (database, subgraph, node identity form) for one graph
state (`GraphContext.state`): a write through the proxy changes the state and so drops them; on
an upstream Neo4j the state also turns over on the backend's TTL, and `refresh: true` rebuilds.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from itertools import chain
from typing import Any

import numpy as np
import orjson
import pandas as pd
import scipy.sparse as sp

from extensions.cypher import ast as A
from extensions.cypher.parser import parse_expression
from extensions.cypher.render import name as quote_name
from extensions.describe.sample import falkordb_id_bound
from extensions.registry import GraphContext
from extensions.windows import in_windows, joined, json_numbers
from core.errors import CypherError, argument_error

#: Rows per batch read from the backend (the event loop gets a turn between batches).
READ_BATCH = 10_000
#: Node ids per window of the FalkorDB read (~1.4 MB of JSON text per 100k relationships).
ID_WINDOW = 200_000
#: The largest node id span the one-number form holds (span^2 within an int64).
MAX_SPAN = 3_000_000_000


@dataclass(frozen=True)
class Subgraph:
    """Which nodes and relationships a projection holds (hashable: it keys the cache)."""

    labels: tuple[str, ...] = ()           # any of them; () = every node
    types: tuple[str, ...] = ()            # any of them; () = every relationship type
    weight_property: str | None = None
    where: str | None = None               # a predicate on the node `n`

    def query(self, node_id: str) -> str:
        """One read-only query: each node, its outgoing neighbours in the subgraph (and their weights
        when weighted).

        `node_id` is the identity template, e.g. 'id({})'."""
        check_predicate(self.where)
        conditions = [self._label_test("n")] if self.labels else []
        if self.where:
            conditions.append(f"({self.where})")
        types = ":" + "|".join(quote_name(t) for t in self.types) if self.types else ""
        target = f" WHERE {self._label_test('m')}" if self.labels else ""
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        # collect() skips nulls: a node without relationships gets [] in both lists. The target is
        # read through r (endNode): FalkorDB merges parallel relationships when r goes unused.
        weights = (f", collect(CASE WHEN r IS NULL THEN null ELSE coalesce(r.{quote_name(self.weight_property)}, "
                   f"1.0) END)" if self.weight_property else "")
        return (f"MATCH (n){where} OPTIONAL MATCH (n)-[r{types}]->(m){target} "
                f"RETURN {node_id.format('n')}, collect({node_id.format('endNode(r)')}){weights}")

    def window_queries(self) -> tuple[str, str]:
        """FalkorDB: the node ids as one JSON list, and the relationships as one of
        `id(start) x $span + id(end)` (and one of their weights), of the nodes (the start nodes)
        with ids in [$lo, $hi)."""
        check_predicate(self.where)
        conditions = ["id(n) >= $lo AND id(n) < $hi"] + ([self._label_test("n")] if self.labels else [])
        if self.where:
            conditions.append(f"({self.where})")
        where = f" WHERE {' AND '.join(conditions)}" if conditions else ""
        types = ":" + "|".join(quote_name(t) for t in self.types) if self.types else ""
        # The end node is read through r: FalkorDB merges parallel relationships when r goes unused.
        # It is not tested (labels, where): ends outside the node set are dropped in numpy
        # (build_window_projection), cheaper than FalkorDB's label test (0.4 s vs 2 s per 400k).
        weights = (f", toJSON(collect(coalesce(r.{quote_name(self.weight_property)}, 1.0)))"
                   if self.weight_property else "")
        return (f"MATCH (n){where} RETURN toJSON(collect(id(n)))",
                f"MATCH (n)-[r{types}]->(m){where} "
                f"RETURN toJSON(collect(id(n) * $span + id(endNode(r)))){weights}")

    def _label_test(self, var: str) -> str:
        return "(" + " OR ".join(f"{var}:{quote_name(label)}" for label in self.labels) + ")"


def check_predicate(where: str | None) -> None:
    """`where` must be one read-only expression (it is spliced into the projection query)."""
    if where is None:
        return
    try:
        expr = parse_expression(where)
    except CypherError as exc:
        raise argument_error(f"where must be a Cypher predicate on the node n, like \"n.status = 'ACTIVE'\"; "
                             f"{where!r} does not parse: {exc.message}") from None
    if any(isinstance(node, A.UPDATING) for node in expr.walk()):
        raise argument_error("where must be a read-only predicate on the node n; it writes.")


@dataclass
class Projection:
    """A subgraph: node identities and its relationships as index arrays (source, target, weight).

    `matrix(direction, mode)` gives (and keeps) the sparse adjacency the kernels work on."""

    ids: np.ndarray                        # node identity per index (int64 on FalkorDB, object otherwise)
    sources: np.ndarray
    targets: np.ndarray
    weights: np.ndarray                    # 1.0 per relationship, or its weight_property
    #: Kernel values computed on this projection, by (algorithm, options).
    results: dict[tuple, np.ndarray] = field(default_factory=dict, repr=False)
    _matrices: dict[tuple[str, str], sp.csr_matrix] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return len(self.ids)

    @property
    def out(self) -> sp.csr_matrix:
        return self.matrix("out", "sum")

    def matrix(self, direction: str, mode: str = "sum") -> sp.csr_matrix:
        """The adjacency along `direction` ('out' as stored, 'in' reversed, 'both' each relationship
        both ways, a self-loop once). `mode` merges parallel relationships: 'sum' of weights,
        'pattern' (1 per connected pair), 'shortest' (the smallest weight: lengths for paths)."""
        key = (direction, mode)
        if key not in self._matrices:
            rows, cols, values = self._arcs(direction)
            if mode == "shortest":
                order = np.lexsort((values, cols, rows))
                rows, cols, values = rows[order], cols[order], values[order]
                first = np.ones(len(rows), dtype=bool)
                first[1:] = (rows[1:] != rows[:-1]) | (cols[1:] != cols[:-1])
                rows, cols, values = rows[first], cols[first], values[first]
            matrix = sp.csr_matrix((values, (rows, cols)), shape=(self.n, self.n))
            matrix.sum_duplicates()
            if mode == "pattern":
                matrix.data[:] = 1.0
            self._matrices[key] = matrix
        return self._matrices[key]

    def _arcs(self, direction: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        s, t, w = self.sources, self.targets, self.weights
        if direction == "in":
            return t, s, w
        if direction == "both":
            loop = s == t
            return (np.concatenate([s, t[~loop]]), np.concatenate([t, s[~loop]]),
                    np.concatenate([w, w[~loop]]))
        return s, t, w

    @property
    def nbytes(self) -> int:
        """Memory held: relationship arrays, the matrices built so far and the identities."""
        held = self.sources.nbytes + self.targets.nbytes + self.weights.nbytes
        held += sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in self._matrices.values())
        held += sum(values.nbytes for values in self.results.values())
        ids = self.ids.nbytes if self.ids.dtype != object else sum(map(len, self.ids)) + 8 * len(self.ids)
        return held + ids


def build_projection(rows: list[list[Any]]) -> Projection:
    """Rows of `Subgraph.query` -> a Projection (targets outside the node set are dropped; no weight
    column: 1 per relationship)."""
    ids = [row[0] for row in rows]
    numeric = all(isinstance(i, int) for i in ids)
    ids_array = np.array(ids, dtype=np.int64 if numeric else object)
    counts = np.fromiter((len(row[1]) for row in rows), dtype=np.int64, count=len(rows))
    sources = np.repeat(np.arange(len(rows)), counts)
    targets = pd.Index(ids_array).get_indexer(
        pd.Index(list(chain.from_iterable(row[1] for row in rows)), dtype=ids_array.dtype))
    try:
        weights = (np.fromiter(chain.from_iterable(row[2] for row in rows), dtype=np.float64, count=len(sources))
                   if rows and len(rows[0]) > 2 else np.ones(len(sources)))
    except (TypeError, ValueError):
        raise argument_error("weight_property holds values that are not numbers") from None
    keep = targets >= 0
    return Projection(ids_array, sources[keep], targets[keep].astype(np.int64), weights[keep])


def build_window_projection(ids: np.ndarray, source_ids: np.ndarray, target_ids: np.ndarray,
                            weights: np.ndarray | None) -> Projection:
    """`Subgraph.window_queries` answers, parsed -> a Projection (FalkorDB ids: small
    non-negative integers)."""
    position = np.full(int(ids.max(initial=-1)) + 2, -1, dtype=np.int64)    # the last slot: unknown ids
    position[ids] = np.arange(len(ids))
    limit = len(position) - 1
    source_at = position[np.where(source_ids < limit, source_ids, limit)]
    target_at = position[np.where(target_ids < limit, target_ids, limit)]
    values = np.ones(len(source_ids)) if weights is None else weights
    keep = (source_at >= 0) & (target_at >= 0)
    return Projection(ids, source_at[keep], target_at[keep], values[keep])


def weight_array(weights: str) -> np.ndarray:
    """A window's weights (a JSON list): numbers only."""
    try:
        return np.array(orjson.loads(weights), dtype=np.float64)
    except (TypeError, ValueError):
        raise argument_error("weight_property holds values that are not numbers") from None


class ProjectionStore:
    """Projections cached for the current graph state of each database (a few at a time)."""

    def __init__(self, max_entries: int = 8):
        self.max_entries = max_entries
        self._cache: OrderedDict[tuple, Projection] = OrderedDict()
        self._states: dict[str, Any] = {}

    async def get(self, graph: GraphContext, subgraph: Subgraph, node_id: str,
                  refresh: bool = False) -> Projection:
        """The projection of `subgraph` as `graph` sees it: cached, or read now."""
        key = (graph.database, subgraph, node_id)
        if graph.state is not None and self._states.get(graph.database) != graph.state:
            self._drop(graph.database)
            self._states[graph.database] = graph.state
        if graph.state is not None and not refresh and key in self._cache:
            self._cache.move_to_end(key)
            return self._cache[key]
        if graph.integer_ids:
            projection = await _read_windows(graph, subgraph)
        else:
            projection = await _read_rows(graph, subgraph, node_id)
        if graph.state is not None and self._states.get(graph.database) == graph.state:
            self._cache[key] = projection
            while len(self._cache) > self.max_entries:
                self._cache.popitem(last=False)
        return projection

    def _drop(self, database: str) -> None:
        for key in [k for k in self._cache if k[0] == database]:
            del self._cache[key]

    @property
    def nbytes(self) -> int:
        return sum(p.nbytes for p in self._cache.values())


async def _read_rows(graph: GraphContext, subgraph: Subgraph, node_id: str) -> Projection:
    rows = await graph.read_all(subgraph.query(node_id), {})
    return await asyncio.to_thread(build_projection, rows) if len(rows) > READ_BATCH else build_projection(rows)


async def _read_windows(graph: GraphContext, subgraph: Subgraph) -> Projection:
    [[nodes]] = await graph.read("MATCH (n) RETURN count(n)", {})
    span = await falkordb_id_bound(graph.read, nodes)
    if span > MAX_SPAN:
        raise argument_error(f"The graph has node ids up to {span:,}; algorithms on the embedded database read at "
                             f"most {MAX_SPAN:,}. Run the proxy with --upstream on a Neo4j for a graph this big.")
    if await _label_holds_every_node(graph, subgraph, nodes):
        subgraph = replace(subgraph, labels=())            # FalkorDB's label test costs ~30%
    every_node = not subgraph.labels and subgraph.where is None and nodes == span
    nodes_query, relationships_query = subgraph.window_queries()

    async def read_window(low: int) -> tuple[np.ndarray | None, np.ndarray, np.ndarray, np.ndarray | None]:
        window = {"lo": low, "hi": low + ID_WINDOW, "span": span}
        [[pairs, *weights]] = await graph.read(relationships_query, window)
        sources, targets = np.divmod(json_numbers(pairs, np.int64), span)
        [[ids]] = [[None]] if every_node else await graph.read(nodes_query, window)
        return (None if ids is None else json_numbers(ids, np.int64), sources, targets,
                weight_array(weights[0]) if weights else None)

    windows = await in_windows(read_window, range(0, span, ID_WINDOW))
    ids = np.arange(span, dtype=np.int64) if every_node else joined([w[0] for w in windows])
    weights = joined([w[3] for w in windows], np.float64) if subgraph.weight_property else None
    return await asyncio.to_thread(build_window_projection, ids, joined([w[1] for w in windows]),
                                   joined([w[2] for w in windows]), weights)


async def _label_holds_every_node(graph: GraphContext, subgraph: Subgraph, nodes: int) -> bool:
    """Whether the subgraph's one label is on every node (a counter: constant time)."""
    if len(subgraph.labels) != 1:
        return False
    [[labelled]] = await graph.read(f"MATCH (n:{quote_name(subgraph.labels[0])}) RETURN count(n)", {})
    return labelled == nodes
