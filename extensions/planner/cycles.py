"""The graph check a variable-length range runs before it (FalkorDB, `bridges/ranges.py`).

A range FalkorDB may answer wrongly is right on a graph without a closed trail of at most
`RangeCheck.longest` relationships of its types (for an undirected one, without a self-loop
either). The relationships of those types are read once per graph state (`ProjectionStore`, the
algorithms' projection: one joined number per relationship) and their shortest cycle classed in
numpy/scipy: a self-loop (1), two relationships between one pair (2: directed both ways, or
undirected any two), any other cycle (3: a strongly connected component of two or more nodes; a
connected component with as many relationships as nodes). Class 3 stands for every length from
3, so a graph whose shortest cycle is longer than a range reaches is refused too, a price paid
for never answering wrongly. The verdicts are kept per graph state, so a range on an unchanged
graph costs a dictionary lookup.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Hashable

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from core.errors import CypherError

from ..algorithms.projection import Projection, ProjectionStore, Subgraph
from ..bridges.fixed_lengths import MAX_HOPS
from ..bridges.ranges import RangeCheck
from ..bridges.rule import UNSUPPORTED
from ..registry import GraphContext

#: Verdicts kept (per database, graph state, types, direction).
MAX_VERDICTS = 256
#: Relationships above which the cycle is classed in a worker thread (measured ~0.9 s per million).
OFF_LOOP = 50_000


class CycleGuard:
    """Refuses a query whose ranges the graph could make wrong."""

    def __init__(self, projections: ProjectionStore | None = None):
        self.projections = projections or ProjectionStore(max_entries=4)
        self._shortest: OrderedDict[Hashable, int | None] = OrderedDict()

    async def check(self, ranges: list[RangeCheck], graph: GraphContext) -> None:
        """Raise UnsupportedOperationError for the first range the graph could make wrong."""
        for check in ranges:
            cycle = await self.shortest_cycle(graph, check.types, check.directed)
            if cycle is not None and cycle <= check.longest:
                raise CypherError(UNSUPPORTED, _refusal(check, cycle))

    async def relationship_counts(self, ranges: list[RangeCheck], graph: GraphContext) -> tuple:
        """(types, number) pairs: the relationships of each range's types, the longest trail it can
        match, counted up to MAX_HOPS + 1 (more are as many as a range written as hops can use)."""
        counts = {check.types: min(len((await self._projection(graph, check.types)).sources), MAX_HOPS + 1)
                  for check in ranges}
        return tuple(sorted(counts.items(), key=repr))

    async def _projection(self, graph: GraphContext, types: tuple[str, ...] | None) -> Projection:
        return await self.projections.get(graph, Subgraph(types=types or ()), "id({})")

    async def shortest_cycle(self, graph: GraphContext, types: tuple[str, ...] | None, directed: bool) -> int | None:
        """1, 2 or 3 (3 or more) for the shortest cycle of `types` relationships, None without one."""
        key = (graph.database, graph.state, types, directed)
        if graph.state is not None and key in self._shortest:
            self._shortest.move_to_end(key)
            return self._shortest[key]
        projection = await self._projection(graph, types)
        if len(projection.sources) > OFF_LOOP:
            found = await asyncio.to_thread(shortest_cycle, projection, directed)
        else:
            found = shortest_cycle(projection, directed)
        if graph.state is not None:
            self._shortest[key] = found
            while len(self._shortest) > MAX_VERDICTS:
                self._shortest.popitem(last=False)
        return found


def shortest_cycle(projection: Projection, directed: bool) -> int | None:
    """The class of the shortest cycle of `projection`'s relationships (see the module)."""
    sources, targets, n = projection.sources, projection.targets, projection.n
    if np.any(sources == targets):
        return 1
    if directed:
        pairs = np.unique(sources * n + targets)
        if np.isin(targets * n + sources, pairs).any():
            return 2
        matrix = sp.csr_matrix((np.ones(len(sources)), (sources, targets)), shape=(n, n))
        count, labels = connected_components(matrix, directed=True, connection="strong")
        return 3 if count < n and np.bincount(labels).max() > 1 else None
    low, high = np.minimum(sources, targets), np.maximum(sources, targets)
    if len(np.unique(low * n + high)) < len(sources):
        return 2
    matrix = sp.csr_matrix((np.ones(len(sources)), (low, high)), shape=(n, n))
    count, _ = connected_components(matrix, directed=False)
    return 3 if len(sources) > n - count else None


def _refusal(check: RangeCheck, cycle: int) -> str:
    kind = {1: "a self-loop", 2: "two relationships between one pair of nodes"}.get(cycle, "a cycle")
    among = f"`:{'|'.join(check.types)}` relationships" if check.types else "relationships"
    return (f"The variable-length relationship `{check.pattern}` cannot be matched faithfully on the "
            f"embedded FalkorDB: the graph has {kind} among its {among}, and FalkorDB's traversal "
            "never goes on from a node it has already passed, so it would miss trails that Neo4j matches "
            "(each relationship once, nodes any number of times). A range of at most "
            f"{MAX_HOPS} relationships in a MATCH or OPTIONAL MATCH (of the query or a CALL {{ }} in it, not "
            "in EXISTS { }, COUNT { } or an expression) is matched exactly, one length at a time: "
            "write it so, or one fixed length per MATCH (`*1`, `*2`, ... combined with UNION ALL). "
            "When only which nodes are reached matters, start the range at 0 or 1, leave its "
            "relationships and path unread and return DISTINCT rows.")
