"""What the graph holds, sampled once per graph state: labels, types, properties, patterns.

The schema shims (`apoc.meta.*`, `db.schema.*`, `db.labels()`) all describe the same facts in
different shapes; this module reads them from the embedded database with a few Cypher queries
(named constants below, asyncpg-introspection style) and caches them by `GraphContext.state`.
Only what exists is reported, as Neo4j does: a label whose nodes were all deleted is gone.
Behind a Neo4j without APOC (`apoc_upstream.py`) the same facts are read in Neo4j's Cypher
(`NEO4J_READS`: counts by scan, `valueType()` names mapped to FalkorDB's `typeOf` names).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from extensions.cypher.render import name as quote
from extensions.registry import GraphContext

from .dbms import neo4j_cypher

#: FalkorDB: node and relationship counts per label and type (labels without nodes have 0).
META_STATS = "CALL db.meta.stats() YIELD labels, relTypes RETURN labels, relTypes"
#: Property keys and value types of a sample of one label's nodes (element type for lists).
#: (FalkorDB type-checks every CASE branch, so the list test goes through `head` of a list.)
_KEY_TYPES = ("UNWIND keys(n) AS k WITH k, n[k] AS v RETURN k, typeOf(v), "
              "CASE typeOf(v) WHEN 'List' THEN typeOf(head(CASE typeOf(v) WHEN 'List' THEN v ELSE [] END)) END, "
              "count(*)")
#: Neo4j: the same facts; a list's element types are read from its `valueType()` (`LIST<T>`).
_NEO4J_KEY_TYPES = "UNWIND keys(n) AS k WITH k, valueType(n[k]) AS t RETURN k, t AS type, t AS elements, count(*)"
NEO4J_LABELS = "MATCH (n) UNWIND labels(n) AS label RETURN label, count(*)"
NEO4J_TYPES = "MATCH ()-[r]->() RETURN type(r), count(*)"
#: Neo4j `valueType()` (without NOT NULL, lists by their first word) -> FalkorDB's `typeOf()` names.
_NEO4J_TYPE_NAMES = {"NULL": "Null", "STRING": "String", "INTEGER": "Integer", "FLOAT": "Float", "BOOLEAN": "Boolean",
                     "LIST": "List", "MAP": "Map", "POINT": "Point", "DATE": "Date", "LOCAL DATETIME": "Datetime",
                     "LOCAL TIME": "Time", "ZONED DATETIME": "ZonedDatetime", "ZONED TIME": "ZonedTime",
                     "DURATION": "Duration", "NODE": "Node", "RELATIONSHIP": "Edge", "PATH": "Path"}
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


@dataclass(frozen=True)
class SchemaReads:
    """How one backend's Cypher reads the schema: `counts(graph)` -> (label counts, type counts);
    `key_types` follows a MATCH of one label's sample (rows: key, type, element type, count);
    `type_name` and `element_names` map its type names to FalkorDB's `typeOf` names, which the
    shims' tables use."""

    counts: Callable[[GraphContext], Awaitable[tuple[dict[str, int], dict[str, int]]]]
    key_types: str
    type_name: Callable[[str | None], str | None]
    element_names: Callable[[str | None], list[str]]


async def _falkordb_counts(graph: GraphContext) -> tuple[dict[str, int], dict[str, int]]:
    [[labels, types]] = await graph.read(META_STATS, {})
    return {k: v for k, v in labels.items() if v}, {k: v for k, v in types.items() if v}


async def _neo4j_counts(graph: GraphContext) -> tuple[dict[str, int], dict[str, int]]:
    return dict(await graph.read(NEO4J_LABELS, {})), dict(await graph.read(NEO4J_TYPES, {}))


def _neo4j_type_name(name: str | None) -> str | None:
    if name is None:
        return None
    bare = name.removesuffix(" NOT NULL")
    return _NEO4J_TYPE_NAMES.get(bare.split("<")[0], bare)


def _neo4j_element_names(name: str | None) -> list[str]:
    """`LIST<INTEGER NOT NULL | STRING NOT NULL> NOT NULL` -> ['Integer', 'String']."""
    if not name or not name.startswith("LIST<"):
        return []
    inner = name[len("LIST<"):name.rindex(">")]
    return [_neo4j_type_name(part.strip()) for part in inner.split("|") if part.strip() != "NOTHING"]


FALKORDB_READS = SchemaReads(_falkordb_counts, _KEY_TYPES, lambda name: name,
                             lambda name: [name] if name is not None else [])
NEO4J_READS = SchemaReads(_neo4j_counts, _NEO4J_KEY_TYPES, _neo4j_type_name, _neo4j_element_names)


def reads(graph: GraphContext) -> SchemaReads:
    """The schema reads in the Cypher of the backend `graph` is on."""
    return NEO4J_READS if neo4j_cypher(graph.dialect) else FALKORDB_READS


async def _read(graph: GraphContext, sample: int) -> GraphSchema:
    dialect = reads(graph)
    schema = GraphSchema(*await dialect.counts(graph))
    for label, count in schema.labels.items():
        schema.node_properties[label] = await _properties(graph, dialect, "MATCH (n:{label})", label, sample)
        schema.sampled[label] = min(count, sample)
    for rel_type, count in schema.types.items():
        schema.rel_properties[rel_type] = await _properties(graph, dialect, "MATCH ()-[n:{label}]->()",
                                                            rel_type, sample)
        schema.sampled[rel_type] = min(count, sample)
    seen: Counter = Counter()
    for starts, rel_type, ends, n in await graph.read(PATTERNS, {}):
        for start in starts or ():
            for end in ends or ():
                seen[(start, rel_type, end)] += n
    schema.patterns = dict(seen)
    return schema


async def _properties(graph: GraphContext, dialect: SchemaReads, match: str, label: str,
                      sample: int) -> dict[str, PropertyInfo]:
    query = f"{match.format(label=quote(label))} WITH n LIMIT $sample {dialect.key_types}"
    types: dict[str, Counter] = defaultdict(Counter)
    elements: dict[str, set] = defaultdict(set)
    for key, value_type, element_type, n in await graph.read(query, {"sample": sample}):
        types[key][dialect.type_name(value_type)] += n
        elements[key].update(dialect.element_names(element_type))
    return {key: PropertyInfo(tuple(sorted(counts)), tuple(sorted(elements[key])), sum(counts.values()))
            for key, counts in sorted(types.items())}


#: FalkorDB `typeOf()` -> the type names APOC's meta procedures report.
APOC_TYPES = {"String": "STRING", "Integer": "INTEGER", "Float": "FLOAT", "Boolean": "BOOLEAN",
              "List": "LIST", "Vectorf32": "LIST", "Map": "MAP", "Point": "POINT", "Date": "DATE",
              "Datetime": "LOCAL_DATE_TIME", "Time": "LOCAL_TIME", "Duration": "DURATION",
              "ZonedDatetime": "DATE_TIME", "ZonedTime": "TIME"}
#: FalkorDB `typeOf()` -> the names `db.schema.nodeTypeProperties()` reports (arrays below).
SCHEMA_TYPES = {"String": "String", "Integer": "Long", "Float": "Double", "Boolean": "Boolean",
                "Point": "Point", "Date": "Date", "Datetime": "LocalDateTime", "Time": "LocalTime",
                "Duration": "Duration", "Map": "Map", "Vectorf32": "FloatArray", "ZonedDatetime": "DateTime",
                "ZonedTime": "Time"}


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
