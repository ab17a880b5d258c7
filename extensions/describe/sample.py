"""describe()'s inventory of a graph too big to read whole: exact counts from the database's own
counters, the rest from a bounded uniform random sample of each node type.

- Counts: `MATCH (n:L) RETURN count(n)` and `MATCH ()-[r:T]->() RETURN count(r)` are answered
  from FalkorDB's label and relation matrices and Neo4j's count store (~1 ms each on 1M nodes).
- Nodes: each type gets a uniform random sample of about SAMPLE_PER_TYPE nodes (a type that
  small: all of them). On FalkorDB, ids drawn at random over the id range are looked up (an id
  is a seek), so the cost follows the sample, not the graph: at most MAX_DRAWS ids, enough for
  every type holding at least SAMPLE_PER_TYPE / MAX_DRAWS of the id range. Rarer types, and
  every type on other databases, are sampled by a scan of the type's nodes that keeps each with
  probability SAMPLE_PER_TYPE / count (`rand()`; a label scan that reads no properties until a
  node is kept: 55 ms per million nodes on FalkorDB).
  Either way each node of a type is kept with probability at least p = SAMPLE_PER_TYPE / count,
  so a property on a share f of the type's nodes is missed with probability at most
  (1 - p)^(f x count) <= exp(-f x SAMPLE_PER_TYPE): seen with probability >= 99.99% at f = 5%,
  >= 86% at f = 1%.
- Connections: the outgoing relationships of the sampled nodes, each weighted by its start type's
  count / sample size, estimate each (start type, relationship type, end type) count (shown with
  "~"); one carried by >= 5% of its start type's nodes is seen with the probability above. A
  relationship type none of the sampled nodes has is read from its first relationships, so no
  type is left out.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any, Awaitable, Callable

import numpy as np

from extensions.cypher.render import name as quote

Read = Callable[[str, dict[str, Any]], Awaitable[list[list[Any]]]]

#: Nodes sampled per type (the guarantee above).
SAMPLE_PER_TYPE = 200
#: Random ids looked up at most, on FalkorDB (about 15 ms per thousand).
MAX_DRAWS = 20_000
#: Relationships read of a type none of the sampled nodes has.
FIRST_RELATIONSHIPS = 100

_NODES = "MATCH (n) RETURN count(n)"
_RELATIONSHIPS = "MATCH ()-[r]->() RETURN count(r)"
_LABELS = "CALL db.labels() YIELD label RETURN label"
_TYPES = "CALL db.relationshipTypes() YIELD relationshipType RETURN relationshipType"
_ID_ABOVE = "MATCH (n) WHERE id(n) >= $from RETURN max(id(n))"
_DRAWN = "UNWIND $ids AS i MATCH (n) WHERE id(n) = i RETURN id(n), labels(n), properties(n)"


async def totals(read: Read) -> tuple[int, int]:
    """(nodes, relationships) from the counters."""
    [[nodes]] = await read(_NODES, {})
    [[relationships]] = await read(_RELATIONSHIPS, {})
    return nodes, relationships


async def label_counts(read: Read) -> dict[str, int]:
    """Label -> node count, for labels on at least one node (FalkorDB keeps a label whose nodes
    are all deleted)."""
    labels = [row[0] for row in await read(_LABELS, {})]
    counts = {label: (await read(f"MATCH (n:{quote(label)}) RETURN count(n)", {}))[0][0] for label in labels}
    return {label: count for label, count in counts.items() if count}


class NodeSample:
    """Per label, sampled nodes as (identity, property map); `weight(label)` = count / sampled."""

    def __init__(self, counts: dict[str, int]):
        self.counts = counts
        self.nodes: dict[str, list[tuple[Any, dict]]] = defaultdict(list)

    def add(self, label: str, identity: Any, properties: dict) -> None:
        self.nodes[label].append((identity, properties))

    def weight(self, label: str) -> float:
        return self.counts[label] / len(self.nodes[label]) if self.nodes.get(label) else 0.0

    def maps(self) -> dict[str, list[dict]]:
        return {label: [props for _, props in nodes] for label, nodes in self.nodes.items()}


async def sample_nodes(read: Read, integer_ids: bool, nodes: int, counts: dict[str, int]) -> NodeSample:
    """A uniform random sample of each label (see the module docstring); `integer_ids`: the
    backend's nodes are found by FalkorDB's integer ids (`core/dialect.py`)."""
    sample = NodeSample(counts)
    scanned = dict(counts)
    if integer_ids and nodes:
        bound = await falkordb_id_bound(read, nodes)
        draws = _draws(bound, counts)
        if draws:
            ids = np.random.default_rng().choice(bound, size=draws, replace=False).tolist()
            for identity, labels, properties in await read(_DRAWN, {"ids": ids}):
                for label in labels:
                    if counts.get(label, 0) * draws >= SAMPLE_PER_TYPE * bound:
                        sample.add(label, identity, properties)
            scanned = {label: count for label, count in counts.items() if count * draws < SAMPLE_PER_TYPE * bound}
    identity = "id(n)" if integer_ids else "elementId(n)"
    for label, count in scanned.items():
        share = min(1.0, SAMPLE_PER_TYPE / count) if count else 1.0
        for node, properties in await read(f"MATCH (n:{quote(label)}) WHERE rand() < $p "
                                           f"RETURN {identity}, properties(n)", {"p": share}):
            sample.add(label, node, properties)
    return sample


async def falkordb_id_bound(read: Read, nodes: int | None = None) -> int:
    """One past FalkorDB's largest node id: the node count, unless deleted ids left holes below
    it (both answers constant time: a counter and an id-range seek)."""
    if nodes is None:
        [[nodes]] = await read(_NODES, {})
    [[above]] = await read(_ID_ABOVE, {"from": nodes})
    return nodes if above is None else above + 1


def _draws(bound: int, counts: dict[str, int]) -> int:
    """Ids to draw so that each label reachable within MAX_DRAWS expects SAMPLE_PER_TYPE hits."""
    needed = [math.ceil(SAMPLE_PER_TYPE * bound / count) for count in counts.values() if count > SAMPLE_PER_TYPE]
    reachable = [n for n in needed if n <= min(MAX_DRAWS, bound)]
    return max(reachable, default=0)


async def sample_patterns(read: Read, integer_ids: bool, sample: NodeSample) -> dict[tuple[str, str, str], int]:
    """(start label, type, end label) -> estimated relationship count (see the module docstring)."""
    identity = "id(a)" if integer_ids else "elementId(a)"
    starts: dict[Any, list[str]] = defaultdict(list)
    for label, nodes in sample.nodes.items():
        for node, _ in nodes:
            starts[node].append(label)
    estimate: Counter[tuple[str, str, str]] = Counter()
    if starts:
        rows = await read(f"UNWIND $ids AS i MATCH (a)-[r]->(b) WHERE {identity} = i "
                          f"RETURN i, type(r), labels(b), count(*)", {"ids": list(starts)})
        for node, rel_type, ends, count in rows:
            for start in starts[node]:
                for end in ends or ():
                    estimate[(start, rel_type, end)] += count * sample.weight(start)
    seen = {rel_type for _, rel_type, _ in estimate}
    for rel_type in await _relationship_types(read):
        if rel_type not in seen:
            estimate.update(await _first_relationships(read, rel_type))
    return {pattern: max(1, round(count)) for pattern, count in estimate.items()}


async def _relationship_types(read: Read) -> list[str]:
    return [row[0] for row in await read(_TYPES, {})]


async def _first_relationships(read: Read, rel_type: str) -> Counter[tuple[str, str, str]]:
    """A type's label pairs from its first relationships, scaled to its count."""
    name = quote(rel_type)
    [[total]] = await read(f"MATCH ()-[r:{name}]->() RETURN count(r)", {})
    rows = await read(f"MATCH (a)-[r:{name}]->(b) WITH a, b LIMIT {FIRST_RELATIONSHIPS} "
                      f"RETURN labels(a), labels(b), count(*)", {})
    read_count = sum(row[2] for row in rows)
    found: Counter[tuple[str, str, str]] = Counter()
    for starts, ends, count in rows:
        for start in starts or ():
            for end in ends or ():
                found[(start, rel_type, end)] += count * total / read_count
    return found
