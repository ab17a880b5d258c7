"""SHOW commands on a backend without them, with Neo4j 5's columns.

Each is a virtual procedure named "SHOW <WHAT>" (not callable by CALL) whose rows carry every
column `YIELD *` shows; `shown` are the columns without YIELD. The planner binds the rows and
runs YIELD / WHERE / RETURN in the database like any CALL (`probe.plan_show`). Each procedure
gets two arguments: the filter word before the object (`VECTOR` in SHOW VECTOR INDEXES) and the
name in `SHOW DATABASE name`.
"""

from __future__ import annotations

from typing import Any

from extensions.registry import CallContext, VirtualProcedure
from core.dialect import Capability
from core.errors import CypherError

from ..bridges import apoc_functions
from . import apoc_maps
from .dbms import procedure_rows
from .schema_catalog import CONSTRAINT_TYPES, Entry, NameStore, read_catalog

DATABASE_COLUMNS = ("name", "type", "aliases", "access", "address", "role", "writer", "requestedStatus",
                    "currentStatus", "statusMessage", "default", "home", "constituents", "databaseID",
                    "serverID", "currentPrimariesCount", "currentSecondariesCount", "requestedPrimariesCount",
                    "requestedSecondariesCount", "lastCommittedTxn", "replicationLag", "creationTime",
                    "lastStartTime", "lastStopTime", "store", "options")
INDEX_COLUMNS = ("id", "name", "state", "populationPercent", "type", "entityType", "labelsOrTypes",
                 "properties", "indexProvider", "owningConstraint", "lastRead", "readCount",
                 "trackedSince", "options", "failureMessage", "createStatement")
CONSTRAINT_COLUMNS = ("id", "name", "type", "entityType", "labelsOrTypes", "properties", "ownedIndex",
                      "propertyType", "options", "createStatement")
PROCEDURE_COLUMNS = ("name", "description", "mode", "worksOnSystem", "signature", "argumentDescription",
                     "returnDescription", "admin", "rolesExecution", "rolesBoostedExecution",
                     "isDeprecated", "deprecatedBy", "option")
FUNCTION_COLUMNS = ("name", "category", "description", "signature", "isBuiltIn", "argumentDescription",
                    "returnDescription", "aggregating", "rolesExecution", "rolesBoostedExecution",
                    "isDeprecated", "deprecatedBy")
USER_COLUMNS = ("user", "roles", "passwordChangeRequired", "suspended", "home")

#: SHOW <kind> INDEXES / CONSTRAINTS filter words -> the types they keep.
INDEX_FILTERS = {"RANGE": {"RANGE"}, "BTREE": {"RANGE"}, "TEXT": {"TEXT"}, "POINT": {"POINT"},
                 "VECTOR": {"VECTOR"}, "FULLTEXT": {"FULLTEXT"}, "LOOKUP": set()}
CONSTRAINT_FILTERS = {
    "UNIQUE": {"UNIQUENESS", "RELATIONSHIP_UNIQUENESS"}, "NODE UNIQUE": {"UNIQUENESS"},
    "RELATIONSHIP UNIQUE": {"RELATIONSHIP_UNIQUENESS"}, "REL UNIQUE": {"RELATIONSHIP_UNIQUENESS"},
    "KEY": {"NODE_KEY", "RELATIONSHIP_KEY"}, "NODE KEY": {"NODE_KEY"},
    "EXIST": {"NODE_PROPERTY_EXISTENCE", "RELATIONSHIP_PROPERTY_EXISTENCE"},
    "EXISTENCE": {"NODE_PROPERTY_EXISTENCE", "RELATIONSHIP_PROPERTY_EXISTENCE"},
    "NODE EXISTENCE": {"NODE_PROPERTY_EXISTENCE"}, "RELATIONSHIP EXISTENCE": {"RELATIONSHIP_PROPERTY_EXISTENCE"},
}


def _database_row(name: str, home: str) -> list[Any]:
    system = name == "system"
    row = {"name": name, "type": "system" if system else "standard", "aliases": [], "access": "read-write",
           "address": "localhost:7687", "role": "primary", "writer": True, "requestedStatus": "online",
           "currentStatus": "online", "statusMessage": "", "default": name == home, "home": name == home,
           "constituents": [], "databaseID": name, "serverID": "cypher-proxy", "currentPrimariesCount": 1,
           "currentSecondariesCount": 0, "requestedPrimariesCount": None, "requestedSecondariesCount": None,
           "lastCommittedTxn": None, "replicationLag": 0, "creationTime": None, "lastStartTime": None,
           "lastStopTime": None, "store": "falkordb", "options": {}}
    return [row[c] for c in DATABASE_COLUMNS]


async def _databases(ctx: CallContext, args: list) -> list[list[Any]]:
    names = await ctx.databases() if ctx.databases else [ctx.home_database]
    wanted = args[1]
    return [_database_row(name, ctx.home_database) for name in [*names, "system"]
            if wanted is None or name.lower() == str(wanted).lower()]


async def _home_database(ctx: CallContext, args: list) -> list[list[Any]]:
    return [_database_row(ctx.home_database, ctx.home_database)]


async def _current_user(ctx: CallContext, args: list) -> list[list[Any]]:
    return [[ctx.user or "neo4j", ["admin", "PUBLIC"], False, False, None]]


async def _procedures(ctx: CallContext, args: list) -> list[list[Any]]:
    return [[p["name"], p["description"], p["mode"], p["name"].startswith("dbms."), p["signature"], [], [],
             p["mode"] == "DBMS", None, None, False, None, False] for p in await procedure_rows(ctx)]


async def _functions(ctx: CallContext, args: list) -> list[list[Any]]:
    kind = args[0]
    rows = []
    if kind != "BUILT IN":
        rows += [[e.name, "Extension", e.signature, e.signature or f"{e.name}()", False, [], "", False,
                  None, None, False, None] for e in ctx.registry]
    if kind != "BUILT IN" and not ctx.dialect.has(Capability.APOC):
        rows += [[f.name, "APOC", f.description, f.signature, False, [], "", False, None, None, False, None]
                 for f in [*apoc_functions.listed(), *apoc_maps.listed()]]
    if kind != "USER DEFINED" and ctx.dialect.function_list is not None:
        try:
            native = await ctx.graph.read(ctx.dialect.function_list, {})
        except CypherError:          # no graph to ask (database `system`)
            native = []
        rows += [[name, "", "", f"{name}()", True, [], "", aggregation in (True, "true"),
                  None, None, False, None] for name, internal, aggregation in native
                 if internal not in (True, "true") and (name.isidentifier() or "." in name)]
    return sorted(rows, key=lambda r: r[0].lower())


def _index_row(number: int, entry: Entry) -> list[Any]:
    d = entry.definition
    return [number, entry.name, entry.state, 100.0, d.kind, d.entity, list(d.labels), list(d.properties),
            entry.options.get("indexProvider", "range-1.0"), entry.owner, None, 0, None, entry.options,
            "", _create_statement(entry)]


def _constraint_row(number: int, entry: Entry) -> list[Any]:
    d = entry.definition
    return [number, entry.name, CONSTRAINT_TYPES[(d.kind, d.entity)], d.entity, list(d.labels),
            list(d.properties), entry.owner, None, {}, _create_statement(entry)]


def _create_statement(entry: Entry) -> str:
    d = entry.definition
    var = "n" if d.entity == "NODE" else "r"
    pattern = (f"(n:{'|'.join(f'`{label}`' for label in d.labels)})" if d.entity == "NODE"
               else f"()-[r:`{d.labels[0]}`]-()")
    props = ", ".join(f"{var}.`{p}`" for p in d.properties)
    if d.what == "CONSTRAINT":
        return f"CREATE CONSTRAINT `{entry.name}` FOR {pattern} REQUIRE ({props}) IS {d.kind}"
    kind = "" if d.kind == "RANGE" else f"{d.kind} "
    on = f"EACH [{props}]" if d.kind == "FULLTEXT" else f"({props})"
    return f"CREATE {kind}INDEX `{entry.name}` FOR {pattern} ON {on}"


def show_procedures(names: NameStore) -> list[VirtualProcedure]:
    """The SHOW commands, reading index and constraint names from `names`."""

    async def indexes(ctx: CallContext, args: list) -> list[list[Any]]:
        catalog = await read_catalog(ctx.graph, names)
        keep = INDEX_FILTERS.get(args[0] or "")
        return [_index_row(i + 1, e) for i, e in enumerate(catalog.indexes)
                if keep is None or e.definition.kind in keep]

    async def constraints(ctx: CallContext, args: list) -> list[list[Any]]:
        catalog = await read_catalog(ctx.graph, names)
        keep = CONSTRAINT_FILTERS.get(args[0] or "")
        rows = [_constraint_row(i + 1, e) for i, e in enumerate(catalog.constraints)]
        return [r for r in rows if keep is None or r[2] in keep]

    def show(what: str, columns: tuple, shown: tuple, answer, description: str) -> VirtualProcedure:
        return VirtualProcedure(f"SHOW {what}", columns, answer, f"SHOW {what}", description, "DBMS",
                                Capability.PROCEDURES, shown=shown)

    return [
        show("DATABASES", DATABASE_COLUMNS, DATABASE_COLUMNS[:13], _databases, "The databases."),
        show("DEFAULT DATABASE", DATABASE_COLUMNS, DATABASE_COLUMNS[:10] + ("constituents",),
             _home_database, "The default database."),
        show("HOME DATABASE", DATABASE_COLUMNS, DATABASE_COLUMNS[:10] + ("constituents",),
             _home_database, "The home database of the current user."),
        show("CURRENT USER", USER_COLUMNS, USER_COLUMNS, _current_user, "The current user."),
        show("PROCEDURES", PROCEDURE_COLUMNS, PROCEDURE_COLUMNS[:4], _procedures, "The procedures."),
        show("FUNCTIONS", FUNCTION_COLUMNS, FUNCTION_COLUMNS[:3], _functions, "The functions."),
        show("INDEXES", INDEX_COLUMNS, INDEX_COLUMNS[:12], indexes, "The indexes."),
        show("CONSTRAINTS", CONSTRAINT_COLUMNS, CONSTRAINT_COLUMNS[:8], constraints, "The constraints."),
    ]

