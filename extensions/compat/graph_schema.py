"""What the graph holds, sampled once per graph state: labels, types, properties, patterns.

The schema shims (`apoc.meta.*`, `db.schema.*`, `db.labels()`) all describe the same facts in
different shapes; this module reads them from the embedded database with a few Cypher queries
(named constants below, asyncpg-introspection style) and caches them by `GraphContext.state`.
Only what exists is reported, as Neo4j does: a label whose nodes were all deleted is gone.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from extensions.cypher.render import name as quote
from extensions.registry import GraphContext

#: FalkorDB: node and relationship counts per label and type (labels without nodes have 0).
META_STATS = "CALL db.meta.stats() YIELD labels, relTypes RETURN labels, relTypes"
#: Property keys and value types of a sample of one label's nodes (element type for lists).
#: (FalkorDB type-checks every CASE branch, so the list test goes through `head` of a list.)
_KEY_TYPES = ("UNWIND keys(n) AS k WITH k, n[k] AS v RETURN k, typeOf(v), "
              "CASE typeOf(v) WHEN 'List' THEN typeOf(head(CASE typeOf(v) WHEN 'List' THEN v ELSE [] END)) END, "
              "count(*)")
NODE_PROPERTIES = "MATCH (n:{label}) WITH n LIMIT $sample " + _KEY_TYPES
REL_PROPERTIES = "MATCH ()-[n:{label}]->() WITH n LIMIT $sample " + _KEY_TYPES
#: Which labels each relationship type connects, exactly (one scan of the relationships, 60 ms
#: for the demo's 41k; a sample per type misses rare label pairs).
PATTERNS = "MATCH (a)-[r]->(b) RETURN labels(a), type(r), labels(b), count(*)"

#: Sample size when the caller asks for everything (`sample: -1`): FalkorDB keeps the low 32 bits
#: of a LIMIT (2**62 became LIMIT 0: labels listed without properties), so the largest it keeps.
EVERYTHING = 2**32 - 1


@dataclass(frozen=True)
class PropertyInfo:
    """One property of a label or type: the value types seen, and on how many sampled elements."""

    types: tuple[str, ...]          # FalkorDB typeOf names: 'String', 'Integer', 'List', ...
    element_types: tuple[str, ...]  # for lists: the types of their first elements
    count: int


@dataclass
class GraphSchema:
    """Labels and types with their counts, properties per label/type, and patterns."""

    labels: dict[str, int] = field(default_factory=dict)
    types: dict[str, int] = field(default_factory=dict)
    node_properties: dict[str, dict[str, PropertyInfo]] = field(default_factory=dict)
    rel_properties: dict[str, dict[str, PropertyInfo]] = field(default_factory=dict)
    #: (start label, type, end label) -> how many relationships.
    patterns: dict[tuple[str, str, str], int] = field(default_factory=dict)
    #: How many elements of each label / type were sampled.
    sampled: dict[str, int] = field(default_factory=dict)

    def mandatory(self, owner: str, key: str) -> bool:
        """Whether every sampled element of `owner` had the property `key`."""
        info = (self.node_properties.get(owner) or self.rel_properties.get(owner) or {}).get(key)
        return info is not None and info.count >= self.sampled.get(owner, 0) > 0


_cache: dict[tuple, GraphSchema] = {}
_CACHE_SIZE = 16


async def graph_schema(graph: GraphContext, sample: int | None = 1000) -> GraphSchema:
    """The schema of `graph` from up to `sample` elements per label and type (None or -1: all)."""
    sample = EVERYTHING if sample is None or sample < 0 else min(EVERYTHING, max(1, int(sample)))
    key = (graph.database, graph.state, sample)
    if graph.state is not None and key in _cache:
        return _cache[key]
    schema = await _read(graph, sample)
    if graph.state is not None:
        if len(_cache) >= _CACHE_SIZE:
            _cache.pop(next(iter(_cache)))
        _cache[key] = schema
    return schema


async def _read(graph: GraphContext, sample: int) -> GraphSchema:
    [[labels, types]] = await graph.read(META_STATS, {})
    schema = GraphSchema({k: v for k, v in labels.items() if v},
                         {k: v for k, v in types.items() if v})
    for label, count in schema.labels.items():
        schema.node_properties[label] = await _properties(graph, NODE_PROPERTIES, label, sample)
        schema.sampled[label] = min(count, sample)
    for rel_type, count in schema.types.items():
        schema.rel_properties[rel_type] = await _properties(graph, REL_PROPERTIES, rel_type, sample)
        schema.sampled[rel_type] = min(count, sample)
    seen: Counter = Counter()
    for starts, rel_type, ends, n in await graph.read(PATTERNS, {}):
        for start in starts or ():
            for end in ends or ():
                seen[(start, rel_type, end)] += n
    schema.patterns = dict(seen)
    return schema


async def _properties(graph: GraphContext, query: str, label: str, sample: int) -> dict[str, PropertyInfo]:
    rows = await graph.read(query.format(label=quote(label)), {"sample": sample})
    types: dict[str, Counter] = defaultdict(Counter)
    elements: dict[str, set] = defaultdict(set)
    for key, value_type, element_type, n in rows:
        types[key][value_type] += n
        if element_type is not None:
            elements[key].add(element_type)
    return {key: PropertyInfo(tuple(sorted(counts)), tuple(sorted(elements[key])), sum(counts.values()))
            for key, counts in sorted(types.items())}


#: FalkorDB `typeOf()` -> the type names APOC's meta procedures report.
APOC_TYPES = {"String": "STRING", "Integer": "INTEGER", "Float": "FLOAT", "Boolean": "BOOLEAN",
              "List": "LIST", "Vectorf32": "LIST", "Map": "MAP", "Point": "POINT", "Date": "DATE",
              "Datetime": "LOCAL_DATE_TIME", "Time": "LOCAL_TIME", "Duration": "DURATION"}
#: FalkorDB `typeOf()` -> the names `db.schema.nodeTypeProperties()` reports (arrays below).
SCHEMA_TYPES = {"String": "String", "Integer": "Long", "Float": "Double", "Boolean": "Boolean",
                "Point": "Point", "Date": "Date", "Datetime": "LocalDateTime", "Time": "LocalTime",
                "Duration": "Duration", "Map": "Map", "Vectorf32": "FloatArray"}


def apoc_type(info: PropertyInfo) -> str:
    """The one APOC type name of a property (the most general when values differ)."""
    names = {APOC_TYPES.get(t, t.upper()) for t in info.types}
    return names.pop() if len(names) == 1 else "ANY"


def schema_types(info: PropertyInfo) -> list[str]:
    """`db.schema.*TypeProperties` names: `String`, `Long`, `StringArray`, ..."""
    out = []
    for value_type in info.types:
        if value_type == "List":
            out += [SCHEMA_TYPES.get(t, t) + "Array" for t in info.element_types] or ["ListArray"]
        else:
            out.append(SCHEMA_TYPES.get(value_type, value_type))
    return sorted(set(out))
