"""`db.labels()`, `db.relationshipTypes()` and `db.schema.*` as Neo4j 5 answers them.

FalkorDB has its own `db.labels()` / `db.relationshipTypes()`, but they keep labels and types
whose elements were all deleted; Neo4j lists only those in use, so the proxy answers them.
`db.propertyKeys()` is FalkorDB's own (Neo4j also lists keys no longer used).
"""

from __future__ import annotations

from typing import Any

from extensions.registry import CallContext, VirtualProcedure
from core.dialect import Capability
from core.errors import argument_error
from core.values import Node, Relationship

from .schema_catalog import await_indexes
from .graph_schema import META_STATS, graph_schema, schema_types


async def _labels(ctx: CallContext, args: list) -> list[list[Any]]:
    [[labels, _]] = await ctx.graph.read(META_STATS, {})
    return [[label] for label, count in labels.items() if count]


async def _types(ctx: CallContext, args: list) -> list[list[Any]]:
    [[_, types]] = await ctx.graph.read(META_STATS, {})
    return [[rel_type] for rel_type, count in types.items() if count]


def _schema_name(name: str) -> str:
    """Neo4j's `:`Label`` form in the schema procedures: always backticked."""
    return ":`" + name.replace("`", "``") + "`"


async def _node_type_properties(ctx: CallContext, args: list) -> list[list[Any]]:
    schema = await graph_schema(ctx.graph, None)
    rows = []
    for label, properties in schema.node_properties.items():
        node_type = _schema_name(label)
        if not properties:
            rows.append([node_type, [label], None, None, False])
        for key, info in properties.items():
            rows.append([node_type, [label], key, schema_types(info), schema.mandatory(label, key)])
    return rows


async def _rel_type_properties(ctx: CallContext, args: list) -> list[list[Any]]:
    schema = await graph_schema(ctx.graph, None)
    rows = []
    for rel_type, properties in schema.rel_properties.items():
        name = _schema_name(rel_type)
        if not properties:
            rows.append([name, None, None, False])
        for key, info in properties.items():
            rows.append([name, key, schema_types(info), schema.mandatory(rel_type, key)])
    return rows


def meta_graph(schema, node_properties, rel_properties) -> tuple[list[Node], list[Relationship]]:
    """Virtual nodes (one per label) and relationships (one per pattern), with negative ids as
    Neo4j gives virtual entities; `*_properties(name, count)` builds their properties."""
    nodes = {label: Node(-i - 1, [label], node_properties(label, count), str(-i - 1))
             for i, (label, count) in enumerate(schema.labels.items())}
    relationships = []
    for i, ((start, rel_type, end), count) in enumerate(schema.patterns.items()):
        if start in nodes and end in nodes:
            a, b = nodes[start], nodes[end]
            relationships.append(Relationship(-i - 1, a.id, b.id, rel_type, rel_properties(rel_type, count),
                                              str(-i - 1), a.element_id, b.element_id))
    return list(nodes.values()), relationships


async def _visualization(ctx: CallContext, args: list) -> list[list[Any]]:
    schema = await graph_schema(ctx.graph, None)
    nodes, relationships = meta_graph(schema, lambda label, n: {"name": label},
                                      lambda rel_type, n: {"name": rel_type})
    return [[nodes, relationships]]


async def _wait_for_indexes(ctx: CallContext, timeout: Any) -> list[list[Any]]:
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout < 0:
        raise argument_error(f"The timeout must be a number of seconds, got {timeout!r}")
    await await_indexes(ctx.graph, float(timeout))
    return []


async def _await_indexes(ctx: CallContext, args: list) -> list[list[Any]]:
    return await _wait_for_indexes(ctx, args[0] if args else 300)


async def _await_index(ctx: CallContext, args: list) -> list[list[Any]]:
    return await _wait_for_indexes(ctx, args[1] if len(args) > 1 else 300)


def db_schema_procedures() -> list[VirtualProcedure]:
    return [
        VirtualProcedure("db.awaitIndexes", (), _await_indexes,
                         "db.awaitIndexes(timeOutSeconds = 300 :: INTEGER)",
                         "Wait for all indexes to come online.", "READ", Capability.PROCEDURES),
        VirtualProcedure("db.awaitIndex", (), _await_index,
                         "db.awaitIndex(indexName :: STRING, timeOutSeconds = 300 :: INTEGER)",
                         "Wait for an index to come online (the embedded database: waits for all of them).",
                         "READ", Capability.PROCEDURES),
        VirtualProcedure("db.labels", ("label",), _labels, "db.labels() :: (label :: STRING)",
                         "List all labels attached to nodes within a database.", "READ", Capability.PROCEDURES),
        VirtualProcedure("db.relationshipTypes", ("relationshipType",), _types,
                         "db.relationshipTypes() :: (relationshipType :: STRING)",
                         "List all types attached to relationships within a database.", "READ", Capability.PROCEDURES),
        VirtualProcedure("db.schema.nodeTypeProperties",
                         ("nodeType", "nodeLabels", "propertyName", "propertyTypes", "mandatory"),
                         _node_type_properties,
                         "db.schema.nodeTypeProperties() :: (nodeType :: STRING, nodeLabels :: LIST<STRING>, "
                         "propertyName :: STRING, propertyTypes :: LIST<STRING>, mandatory :: BOOLEAN)",
                         "Show the derived property schema of the nodes in tabular form.", "READ", Capability.PROCEDURES),
        VirtualProcedure("db.schema.relTypeProperties",
                         ("relType", "propertyName", "propertyTypes", "mandatory"), _rel_type_properties,
                         "db.schema.relTypeProperties() :: (relType :: STRING, propertyName :: STRING, "
                         "propertyTypes :: LIST<STRING>, mandatory :: BOOLEAN)",
                         "Show the derived property schema of the relationships in tabular form.", "READ",
                         Capability.PROCEDURES),
        VirtualProcedure("db.schema.visualization", ("nodes", "relationships"), _visualization,
                         "db.schema.visualization() :: (nodes :: LIST<NODE>, relationships :: LIST<RELATIONSHIP>)",
                         "Visualizes the schema of the data.", "READ", Capability.PROCEDURES),
    ]
