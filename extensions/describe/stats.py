"""What describe() knows of a graph: exact on a small graph, from counters and samples on a big one.

Two levels, both read with Cypher that FalkorDB and Neo4j accept alike:

- `GraphStats` (every describe()): node counts by label, relationship counts by
  (start label, type, end label), the properties every node has, and a sample of each
  label's property maps (for property kinds and the families' flags). Up to EXACT_MAX nodes and
  relationships, four queries, each one pass over the nodes or the relationships: no per-node or
  per-label round trips. Beyond that, counts come from the database's counters and the rest from
  a uniform random sample of each label (`sample.py`: its size and what it guarantees), so the
  first describe() of a million-node graph costs about what it costs on a thousand.
- `TypeStats` (a type's detail): that label's property keys, presence, distinct counts, a few
  values of low-cardinality properties and ranges of numbers and ISO dates. Four queries over
  at most `SCAN_LIMIT` nodes of the label (keys, a sample, min/max, distinct values), so one
  huge label costs a bounded time.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Awaitable, Callable

from neo4j.spatial import Point
from neo4j.time import Date, DateTime, Time

from extensions.cypher.render import name as quote

from . import sample as sampling

Read = Callable[[str, dict[str, Any]], Awaitable[list[list[Any]]]]

#: Property maps sampled per label for the inventory (kinds, conventions, families' flags).
SAMPLE_SIZE = 20
#: Graphs with up to this many nodes + relationships are read whole; larger ones are sampled.
EXACT_MAX = 100_000
#: Nodes of one label read for its detail statistics.
SCAN_LIMIT = 10_000
#: Up to this many distinct values are listed (more: only the count).
VALUE_LIST_MAX = 8
#: Share of all nodes a property must be on to be stated once as a convention.
CONVENTION_SHARE = 0.95
#: Strings with spaces at least this long (on average, in the sample) are "text".
LONG_TEXT = 80

_LABEL_COUNTS = "MATCH (n) RETURN labels(n) AS labels, count(*) AS count"
_PATTERNS = ("MATCH (a)-[r]->(b) "
             "RETURN labels(a) AS start, type(r) AS type, labels(b) AS end, count(*) AS count")
_SAMPLE = ("MATCH (n) WITH labels(n) AS labels, collect(n)[..$size] AS nodes "
           "UNWIND nodes AS n RETURN labels, properties(n) AS properties")
_ISO_DATE = re.compile(r"\d{4}-\d{2}(-\d{2})?([T ]\d{2}:\d{2}(:\d{2})?)?$")


@dataclass
class GraphStats:
    nodes: int
    relationships: int
    #: label -> node count (a node with two labels counts for both).
    labels: dict[str, int]
    #: (start label, type, end label) -> relationship count.
    patterns: dict[tuple[str, str, str], int]
    #: property -> share of all nodes that have it, for those on at least CONVENTION_SHARE.
    conventions: dict[str, float]
    #: label -> sampled property maps.
    samples: dict[str, list[dict[str, Any]]]
    #: Whether relationship counts and property shares are estimates from samples (`sample.py`).
    sampled: bool = False


@dataclass
class PropertyStats:
    name: str
    kind: str                      # str, text (long, with spaces), isodate (ISO date string),
                                   # wkt, int, float, bool, date, datetime, point, list, ...
    present: int                   # nodes (of those scanned) that have it
    distinct: int | None = None
    values: list[Any] | None = None          # all distinct values, when few
    low: Any = None                # range of numbers and dates
    high: Any = None


@dataclass
class TypeStats:
    label: str
    count: int
    scanned: int                   # nodes the statistics were computed from
    properties: list[PropertyStats] = field(default_factory=list)
    sample: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- the inventory

async def graph_stats(read: Read, integer_ids: bool = False) -> GraphStats:
    """The inventory statistics of the whole graph (`integer_ids`: the backend's binding form, see
    `sample.py`)."""
    nodes, relationships = await sampling.totals(read)
    if nodes + relationships > EXACT_MAX:
        return await _sampled_stats(read, integer_ids, nodes, relationships)
    label_sets = await read(_LABEL_COUNTS, {})
    labels: Counter[str] = Counter()
    for names, count in label_sets:
        for label in names or ():
            labels[label] += count
    patterns: Counter[tuple[str, str, str]] = Counter()
    relationships = 0
    for starts, rel_type, ends, count in await read(_PATTERNS, {}):
        relationships += count
        for start in starts or ():             # unlabelled ends: counted, not described
            for end in ends or ():
                patterns[(start, rel_type, end)] += count
    samples: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for names, properties in await read(_SAMPLE, {"size": SAMPLE_SIZE}):
        for label in names or ():
            samples[label].append(properties)
    nodes = sum(count for _, count in label_sets)
    return GraphStats(
        nodes=nodes, relationships=relationships,
        labels=dict(sorted(labels.items(), key=lambda item: (-item[1], item[0]))),
        patterns=dict(sorted(patterns.items(), key=lambda item: (-item[1], item[0]))),
        conventions=await _conventions(read, samples, labels, nodes), samples=dict(samples))


async def _sampled_stats(read: Read, integer_ids: bool, nodes: int, relationships: int) -> GraphStats:
    counts = await sampling.label_counts(read)
    sample = await sampling.sample_nodes(read, integer_ids, nodes, counts)
    patterns = await sampling.sample_patterns(read, integer_ids, sample)
    samples = sample.maps()
    estimate: Counter[str] = Counter()
    for label, maps in samples.items():
        for key, seen in Counter(key for props in maps for key in props).items():
            estimate[key] += counts[label] * seen / len(maps)
    conventions = {key: min(1.0, share / nodes) for key, share in estimate.items()
                   if share >= CONVENTION_SHARE * nodes}
    return GraphStats(
        nodes=nodes, relationships=relationships,
        labels=dict(sorted(counts.items(), key=lambda item: (-item[1], item[0]))),
        patterns=dict(sorted(patterns.items(), key=lambda item: (-item[1], item[0]))),
        conventions=conventions, samples=samples, sampled=True)


async def _conventions(read: Read, samples: dict[str, list[dict]], labels: Counter[str],
                       nodes: int) -> dict[str, float]:
    """Properties on (nearly) every node: candidates estimated from the samples (each label
    weighted by its size), then counted exactly."""
    estimate: Counter[str] = Counter()
    for label, sample in samples.items():
        for key, seen in Counter(key for props in sample for key in props).items():
            estimate[key] += labels[label] * seen / len(sample)
    candidates = [key for key, share in estimate.items() if nodes and share >= 0.9 * nodes]
    if not candidates:
        return {}
    columns = ", ".join(f"count(n.{quote(key)})" for key in candidates)
    counts = (await read(f"MATCH (n) RETURN {columns}", {}))[0]
    shares = {key: count / nodes for key, count in zip(candidates, counts)}
    return {key: share for key, share in shares.items() if share >= CONVENTION_SHARE}


# ---------------------------------------------------------------- one type in detail

async def type_stats(read: Read, label: str, count: int) -> TypeStats:
    """Property statistics of `label` (its first SCAN_LIMIT nodes) and one sample node."""
    match = f"MATCH (n:{quote(label)}) WITH n LIMIT {SCAN_LIMIT}"
    keys = await read(f"{match} UNWIND keys(n) AS key RETURN key, count(*) AS count", {})
    sample = [row[0] for row in await read(f"MATCH (n:{quote(label)}) RETURN properties(n) LIMIT 50", {})]
    stats = TypeStats(label, count, min(count, SCAN_LIMIT), sample=_short_sample(sample))
    if not keys:
        return stats
    present = dict(keys)
    order = first_seen(sample)
    names = sorted(present, key=lambda key: (-present[key], order.get(key, len(order)), key))
    # min/max of any kind work on both databases; they also type keys the sample missed. Each
    # a column of its own, so the proxy reads a date-time it stores as an integer back as one.
    bounds = ", ".join(f"min(n.{quote(key)}) AS lo{i}, max(n.{quote(key)}) AS hi{i}" for i, key in enumerate(names))
    row = (await read(f"{match} RETURN {bounds}", {}))[0]
    ranges = list(zip(row[0::2], row[1::2]))
    kinds = {key: kind_of([props[key] for props in sample if key in props] + list(low_high))
             for key, low_high in zip(names, ranges)}
    listed = [key for key in names if kinds[key] not in _UNLISTED]
    distinct: dict[str, tuple[int, list]] = {}
    if listed:
        collects = ", ".join(f"collect(DISTINCT n.{quote(key)}) AS d{i}" for i, key in enumerate(listed))
        slices = ", ".join(f"size(d{i}) AS s{i}, d{i}[..{VALUE_LIST_MAX + 1}] AS v{i}" for i in range(len(listed)))
        row = (await read(f"{match} WITH {collects} RETURN {slices}", {}))[0]
        distinct = dict(zip(listed, zip(row[0::2], row[1::2])))
    for key, (low, high) in zip(names, ranges):
        kind = kinds[key]
        count_distinct, values = distinct.get(key, (None, None))
        few = count_distinct is not None and count_distinct <= VALUE_LIST_MAX and count_distinct < present[key]
        ranged = kind in _RANGED
        stats.properties.append(PropertyStats(
            key, kind, present[key], count_distinct, sorted(values, key=str) if few else None,
            low if ranged else None, high if ranged else None))
    return stats


#: Kinds whose distinct values are not collected (long, or not comparable on every database).
_UNLISTED = {"text", "wkt", "point", "list", "map", "unknown"}
#: Kinds shown with their range.
_RANGED = {"int", "float", "date", "datetime", "isodate"}
_WKT = re.compile(r"\s*(MULTI)?(POINT|LINESTRING|POLYGON)|GEOMETRYCOLLECTION", re.IGNORECASE)


def kind_of(values: list[Any]) -> str:
    """The kind of a property from sampled values (the most common one when mixed)."""
    kinds = Counter(_kind(value) for value in values if value is not None)
    if not kinds:
        return "unknown"
    kind = kinds.most_common(1)[0][0]
    if kind != "str":
        return kind
    strings = [v for v in values if isinstance(v, str)]
    if all(_WKT.match(v) for v in strings):
        return "wkt"
    if all(_ISO_DATE.match(v) for v in strings):
        return "isodate"
    if sum(map(len, strings)) / len(strings) >= LONG_TEXT and sum(v.count(" ") for v in strings) >= 8 * len(strings):
        return "text"
    return "str"


def first_seen(maps: list[dict[str, Any]]) -> dict[str, int]:
    """Property -> its position in the sampled maps' key order (usually the order data was written)."""
    order: dict[str, int] = {}
    for props in maps:
        for key in props:
            order.setdefault(key, len(order))
    return order


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "str"
    if isinstance(value, Point):
        return "point"
    if isinstance(value, (DateTime, datetime)):
        return "datetime"
    if isinstance(value, (Date, date)):
        return "date"
    if isinstance(value, Time):
        return "time"
    if isinstance(value, list):
        return "list"
    return type(value).__name__.lower()


def _short_sample(maps: list[dict[str, Any]]) -> dict[str, Any]:
    """The sampled node with the most properties, long values left out."""
    if not maps:
        return {}
    best = max(maps, key=len)
    return {key: value for key, value in best.items()
            if isinstance(value, (bool, int, float)) or (isinstance(value, str) and len(value) <= 40)}
