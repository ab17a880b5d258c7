"""The APOC meta and schema procedures stock tools call, with APOC's columns and value shapes.

LangChain's Neo4jGraph and neo4j-graphrag read `apoc.meta.data` (node properties, relationship
properties, and `(label)-[type]->(other)` rows: outgoing relationships only, as APOC lists them),
`apoc.meta.graph` (enhanced schema counts) and `apoc.schema.nodes`; mcp-neo4j-cypher reads
`apoc.meta.schema`; llama-index `apoc.meta.subGraph`, langchain-community `apoc.meta.graphSample`.
Not all of APOC: what those tools call (the census in the README), plus `apoc.util.sleep`.
"""

from __future__ import annotations

import asyncio

from typing import Any

from extensions.cypher.render import name as quote
from extensions.registry import CallContext, VirtualProcedure
from core.dialect import Capability
from core.errors import argument_error

from .db_schema import meta_graph
from .graph_schema import META_STATS, GraphSchema, apoc_type, graph_schema, reads
from .schema_catalog import NameStore, read_catalog

DATA_COLUMNS = ("label", "property", "count", "unique", "index", "existence", "type", "array", "sample",
                "left", "right", "other", "otherLabels", "elementType")


def _sample(args: list) -> int | None:
    config = args[0] if args and isinstance(args[0], dict) else {}
    return config.get("sample", 1000)


def _indexed(catalog) -> tuple[set, set, set]:
    """(label, property) pairs that are indexed, unique, and must exist."""
    indexed = {(label, p) for e in catalog.indexes for label in e.definition.labels for p in e.definition.properties}
    unique, existence = set(), set()
    for e in catalog.constraints:
        d = e.definition
        pairs = {(d.labels[0], p) for p in d.properties}
        if d.kind in ("UNIQUE", "KEY") and len(d.properties) == 1:
            unique |= pairs
        if d.kind in ("KEY", "NOT NULL"):
            existence |= pairs
    return indexed, unique, existence


def _data_rows(schema: GraphSchema, flags: tuple[set, set, set]) -> list[list[Any]]:
    indexed, unique, existence = flags
    rows = []

    def row(label, prop, count, type_name, array, other, element):
        key = (label, prop)
        return [label, prop, count, key in unique, key in indexed, key in existence, type_name, array,
                None, 0, 0, other, [], element]

    for label, properties in schema.node_properties.items():
        for key, info in properties.items():
            type_name = apoc_type(info)
            rows.append(row(label, key, 0, type_name, type_name == "LIST", [], "node"))
        outgoing: dict[str, list[str]] = {}
        for (start, rel_type, end), n in schema.patterns.items():
            if start == label:
                outgoing.setdefault(rel_type, []).append(end)
        for rel_type, others in outgoing.items():
            rows.append(row(label, rel_type, schema.types.get(rel_type, 0), "RELATIONSHIP", True, others, "node"))
    for rel_type, properties in schema.rel_properties.items():
        for key, info in properties.items():
            type_name = apoc_type(info)
            rows.append(row(rel_type, key, 0, type_name, type_name == "LIST", [], "relationship"))
    return rows


def _property_map(properties, owner: str, flags: tuple[set, set, set]) -> dict[str, Any]:
    indexed, unique, existence = flags
    return {key: {"type": apoc_type(info), "array": apoc_type(info) == "LIST",
                  "indexed": (owner, key) in indexed, "unique": (owner, key) in unique,
                  "existence": (owner, key) in existence}
            for key, info in properties.items()}


def _schema_value(schema: GraphSchema, flags: tuple[set, set, set]) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for label, count in schema.labels.items():
        relationships: dict[str, Any] = {}
        for (start, rel_type, end), n in schema.patterns.items():
            for direction, here, other in (("out", start, end), ("in", end, start)):
                if here != label:
                    continue
                entry = relationships.setdefault(rel_type, {
                    "direction": direction, "count": 0, "labels": [],
                    "properties": _property_map(schema.rel_properties.get(rel_type, {}), rel_type, flags)})
                if entry["direction"] == direction:
                    entry["count"] += n
                    if other not in entry["labels"]:
                        entry["labels"].append(other)
        value[label] = {"type": "node", "count": count, "labels": [],
                        "properties": _property_map(schema.node_properties.get(label, {}), label, flags),
                        "relationships": relationships}
    for rel_type, count in schema.types.items():
        value.setdefault(rel_type, {"type": "relationship", "count": count,
                                    "properties": _property_map(schema.rel_properties.get(rel_type, {}),
                                                                rel_type, flags)})
    return value


def apoc_meta_procedures(names: NameStore) -> list[VirtualProcedure]:
    """apoc.meta.* and apoc.schema.*, reading index names from `names`."""

    async def flags(ctx: CallContext) -> tuple[set, set, set]:
        return _indexed(await read_catalog(ctx.graph, names))

    async def data(ctx: CallContext, args: list) -> list[list[Any]]:
        return _data_rows(await graph_schema(ctx.graph, _sample(args)), await flags(ctx))

    async def schema(ctx: CallContext, args: list) -> list[list[Any]]:
        return [[_schema_value(await graph_schema(ctx.graph, _sample(args)), await flags(ctx))]]

    async def graph(ctx: CallContext, args: list) -> list[list[Any]]:
        found = await graph_schema(ctx.graph, _sample(args))
        nodes, relationships = meta_graph(found, lambda label, n: {"name": label, "count": n},
                                          lambda rel_type, n: {"type": rel_type, "count": n})
        return [_sub_graph(nodes, relationships, args[0] if args and isinstance(args[0], dict) else {})]

    async def sleep(ctx: CallContext, args: list) -> list[list[Any]]:
        (duration,) = args
        if not isinstance(duration, int) or isinstance(duration, bool) or duration < 0:
            raise argument_error(f"apoc.util.sleep() takes a duration in milliseconds, got {duration!r}")
        await asyncio.sleep(duration / 1000)
        return []

    async def stats(ctx: CallContext, args: list) -> list[list[Any]]:
        labels, types = await reads(ctx.graph).counts(ctx.graph)
        keys = await ctx.graph.read("CALL db.propertyKeys() YIELD propertyKey RETURN count(propertyKey)", {})
        found = await graph_schema(ctx.graph, None)
        rel_types = {f"()-[:{t}]->()": n for t, n in types.items()}
        for (start, rel_type, end), n in found.patterns.items():
            rel_types[f"(:{start})-[:{rel_type}]->()"] = rel_types.get(f"(:{start})-[:{rel_type}]->()", 0) + n
            rel_types[f"()-[:{rel_type}]->(:{end})"] = rel_types.get(f"()-[:{rel_type}]->(:{end})", 0) + n
        node_count = (await ctx.graph.read("MATCH (n) RETURN count(n)", {}))[0][0]
        rel_count = sum(types.values())
        return [[len(labels), len(types), keys[0][0], node_count, rel_count, labels, rel_types, types,
                 {"labelCount": len(labels), "relTypeCount": len(types), "propertyKeyCount": keys[0][0],
                  "nodeCount": node_count, "relCount": rel_count, "labels": labels, "relTypes": rel_types}]]

    async def schema_nodes(ctx: CallContext, args: list) -> list[list[Any]]:
        catalog = await read_catalog(ctx.graph, names)
        rows = []
        for e in catalog.indexes + catalog.constraints:
            d = e.definition
            if d.entity != "NODE" or (d.what == "INDEX" and e.owner):
                continue
            label = d.labels[0] if len(d.labels) == 1 else list(d.labels)
            kind = d.kind if d.what == "INDEX" else {"UNIQUE": "UNIQUENESS", "KEY": "NODE_KEY"}.get(
                d.kind, "NODE_PROPERTY_EXISTENCE")
            size, distinct = await _counts(ctx, d) if d.what == "INDEX" else (0, 0)
            rows.append([e.name, label, list(d.properties), e.state, kind, "NO FAILURE", 100.0, size,
                         distinct / size if size else 1.0, e.name])
        return rows

    async def distinct_values(ctx: CallContext, args: list) -> list[list[Any]]:
        label, key = args
        rows = await ctx.graph.read(f"MATCH (n:{quote(label)}) WHERE n.{quote(key)} IS NOT NULL "
                                    f"RETURN collect(DISTINCT n.{quote(key)})", {})
        return [[rows[0][0]]]

    def proc(name, yields, answer, signature, description):
        return VirtualProcedure(name, yields, answer, signature, description, "READ", Capability.APOC)

    return [
        proc("apoc.meta.data", DATA_COLUMNS, data,
             "apoc.meta.data(config = {} :: MAP) :: (label :: STRING, property :: STRING, count :: INTEGER, "
             "unique :: BOOLEAN, index :: BOOLEAN, existence :: BOOLEAN, type :: STRING, array :: BOOLEAN, "
             "sample :: LIST<ANY>, left :: INTEGER, right :: INTEGER, other :: LIST<STRING>, "
             "otherLabels :: LIST<STRING>, elementType :: STRING)",
             "Examines the full graph and returns a table of metadata."),
        proc("apoc.meta.schema", ("value",), schema, "apoc.meta.schema(config = {} :: MAP) :: (value :: MAP)",
             "Returns the metadata for the graph as a map."),
        proc("apoc.meta.graph", ("nodes", "relationships"), graph,
             "apoc.meta.graph(config = {} :: MAP) :: (nodes :: LIST<NODE>, relationships :: LIST<RELATIONSHIP>)",
             "Examines the full graph and returns a meta-graph."),
        proc("apoc.meta.subGraph", ("nodes", "relationships"), graph,
             "apoc.meta.subGraph(config :: MAP) :: (nodes :: LIST<NODE>, relationships :: LIST<RELATIONSHIP>)",
             "Examines a sub-graph (config: labels, rels, excludes) and returns a meta-graph."),
        proc("apoc.meta.graphSample", ("nodes", "relationships"), graph,
             "apoc.meta.graphSample(config = {} :: MAP) :: (nodes :: LIST<NODE>, relationships :: LIST<RELATIONSHIP>)",
             "Examines the database statistics to build the meta-graph."),
        proc("apoc.util.sleep", (), sleep, "apoc.util.sleep(duration :: INTEGER)",
             "Causes the current thread to sleep for the given duration of milliseconds."),
        proc("apoc.meta.stats", ("labelCount", "relTypeCount", "propertyKeyCount", "nodeCount", "relCount",
                                 "labels", "relTypes", "relTypesCount", "stats"), stats,
             "apoc.meta.stats() :: (labelCount :: INTEGER, relTypeCount :: INTEGER, propertyKeyCount :: INTEGER, "
             "nodeCount :: INTEGER, relCount :: INTEGER, labels :: MAP, relTypes :: MAP, relTypesCount :: MAP, "
             "stats :: MAP)", "Returns the metadata stored in the transactional database statistics."),
        proc("apoc.schema.nodes", ("name", "label", "properties", "status", "type", "failure",
                                   "populationProgress", "size", "valuesSelectivity", "userDescription"),
             schema_nodes,
             "apoc.schema.nodes(config = {} :: MAP) :: (name :: STRING, label :: ANY, properties :: LIST<STRING>, "
             "status :: STRING, type :: STRING, failure :: STRING, populationProgress :: FLOAT, size :: INTEGER, "
             "valuesSelectivity :: FLOAT, userDescription :: STRING)",
             "Returns all indexes and constraints information for all node labels in the database."),
        proc("apoc.schema.properties.distinct", ("value",), distinct_values,
             "apoc.schema.properties.distinct(label :: STRING, key :: STRING) :: (value :: LIST<ANY>)",
             "Returns all distinct node property values for the given key."),
    ]



def _sub_graph(nodes: list, relationships: list, config: dict) -> list:
    """`apoc.meta.subGraph`'s filter: only `labels` and `rels` when given, never `excludes`;
    a relationship is kept when both its end labels are."""
    labels, rels, excludes = (set(config.get(k) or ()) for k in ("labels", "rels", "excludes"))
    kept = [n for n in nodes if (not labels or n.labels[0] in labels) and n.labels[0] not in excludes]
    ids = {n.id for n in kept}
    return [kept, [r for r in relationships if r.start_id in ids and r.end_id in ids
                   and (not rels or r.type in rels) and r.type not in excludes]]


async def _counts(ctx: CallContext, d) -> tuple[int, int]:
    """How many nodes an index covers (APOC's `size`) and how many distinct values they have."""
    label, key = quote(d.labels[0]), quote(d.properties[0])
    [[size, distinct]] = await ctx.graph.read(
        f"MATCH (n:{label}) WHERE n.{key} IS NOT NULL RETURN count(n), count(DISTINCT n.{key})", {})
    return size, distinct
