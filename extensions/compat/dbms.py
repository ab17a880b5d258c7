"""`dbms.*` and `tx.*` procedures Neo4j tools call at start-up (Browser, neo4j-graphrag).

The proxy reports itself as Neo4j 5.26 community: new enough for every tool's version check
(neo4j-graphrag needs >= 5.18.1, dynamic labels >= 5.24), and older than 2026.01 so tools do not
send Cypher 25-only clauses (SEARCH).
"""

from __future__ import annotations

from typing import Any

from extensions.registry import CallContext, VirtualProcedure
from core.dialect import Capability, Dialect
from core.errors import CypherError

NEO4J_VERSION = "5.26.0"
NEO4J_EDITION = "community"


def neo4j_cypher(dialect: Dialect | None) -> bool:
    """Whether the shims write their queries in Neo4j's Cypher (behind a Neo4j without APOC,
    `apoc_upstream.py`) rather than the embedded FalkorDB's: the one dialect test of the schema
    reads, the catalog and the APOC map functions."""
    return dialect is not None and dialect.has(Capability.NEO4J_CYPHER)

#: What `dbms.clientConfig()` reports (Neo4j Browser reads these at start-up).
CLIENT_CONFIG = (
    ("browser.allow_outgoing_connections", "Allow Browser to fetch remote content (guides, images).", "false"),
    ("browser.credential_timeout", "How long Browser keeps credentials when idle.", "0s"),
    ("browser.retain_connection_credentials", "Whether Browser keeps the credentials.", "true"),
    ("browser.retain_editor_history", "Whether Browser keeps the editor history.", "true"),
    ("browser.remote_content_hostname_whitelist", "Hosts Browser may fetch content from.", "guides.neo4j.com,localhost"),
    ("browser.post_connect_cmd", "A command Browser runs after connecting.", ""),
    ("client.allow_telemetry", "Whether clients may send telemetry.", "false"),
    ("dbms.security.auth_enabled", "Whether users must log in.", "true"),
    ("initial.dbms.default_database", "The default database.", "neo4j"),
)


async def _components(ctx: CallContext, args: list) -> list[list[Any]]:
    return [["Neo4j Kernel", [NEO4J_VERSION], NEO4J_EDITION]]


async def _current_user(ctx: CallContext, args: list) -> list[list[Any]]:
    return [[ctx.user or "neo4j", ["admin", "PUBLIC"], []]]


async def _client_config(ctx: CallContext, args: list) -> list[list[Any]]:
    return [[name, description, value, False] for name, description, value in CLIENT_CONFIG]


async def _metadata(ctx: CallContext, args: list) -> list[list[Any]]:
    return [[ctx.metadata]]


#: The rewritten APOC procedures that write (the others read).
_APOC_WRITES = ("apoc.merge.", "apoc.create.", "apoc.refactor.")


async def procedure_rows(ctx: CallContext) -> list[dict[str, Any]]:
    """Every procedure a client can CALL here: the proxy's (virtual and algorithm procedures, from
    the registry) and, where the graph is readable, the backend's own that the proxy does not shadow."""
    rows: dict[str, dict[str, Any]] = {}
    for v in ctx.registry.virtual_procedures(ctx.dialect):
        if v.callable:
            rows[v.name] = {"name": v.name, "signature": v.signature or f"{v.name}()",
                            "description": v.description, "mode": v.mode}
    for r in ctx.registry.rewrites(ctx.dialect):
        rows[r.name] = {"name": r.name, "signature": r.signature, "description": r.description,
                        "mode": "WRITE" if r.name.startswith(_APOC_WRITES) else "READ"}
    for p in ctx.registry.procedures():
        rows[p.name] = {"name": p.name, "signature": p.signature or f"{p.name}(config :: MAP)",
                        "description": f"Graph algorithm: {p.name}, yields {', '.join(p.yields)}.",
                        "mode": "READ"}
    for name, mode in await _backend_procedures(ctx):
        rows.setdefault(name, {"name": name, "signature": f"{name}()", "description": "", "mode": mode})
    return [rows[name] for name in sorted(rows)]


async def _backend_procedures(ctx: CallContext) -> list[tuple[str, str]]:
    if ctx.dialect.procedure_list is None:
        return []
    try:
        return [(row[0], row[1]) for row in await ctx.graph.read(ctx.dialect.procedure_list, {})]
    except CypherError:          # no graph to ask (database `system`): the proxy's own only
        return []


async def _procedures(ctx: CallContext, args: list) -> list[list[Any]]:
    return [[p["name"], p["signature"], p["description"], p["mode"], [], p["name"].startswith("dbms.")]
            for p in await procedure_rows(ctx)]


def dbms_procedures() -> list[VirtualProcedure]:
    return [
        VirtualProcedure("dbms.components", ("name", "versions", "edition"), _components,
                         "dbms.components() :: (name :: STRING, versions :: LIST<STRING>, edition :: STRING)",
                         "List DBMS components and their versions.", "DBMS", Capability.PROCEDURES),
        VirtualProcedure("dbms.showCurrentUser", ("username", "roles", "flags"), _current_user,
                         "dbms.showCurrentUser() :: (username :: STRING, roles :: LIST<STRING>, flags :: LIST<STRING>)",
                         "Show the current user.", "DBMS", Capability.PROCEDURES),
        VirtualProcedure("dbms.security.showCurrentUser", ("username", "roles", "flags"), _current_user,
                         "dbms.security.showCurrentUser() :: (username :: STRING, roles :: LIST<STRING>, "
                         "flags :: LIST<STRING>)", "Show the current user.", "DBMS", Capability.PROCEDURES),
        VirtualProcedure("dbms.clientConfig", ("name", "description", "value", "dynamic"), _client_config,
                         "dbms.clientConfig() :: (name :: STRING, description :: STRING, value :: STRING, "
                         "dynamic :: BOOLEAN)", "Return the settings clients may read.", "DBMS", Capability.PROCEDURES),
        VirtualProcedure("dbms.procedures", ("name", "signature", "description", "mode",
                                             "defaultBuiltInRoles", "worksOnSystem"), _procedures,
                         "dbms.procedures() :: (name :: STRING, signature :: STRING, description :: STRING, "
                         "mode :: STRING, defaultBuiltInRoles :: LIST<STRING>, worksOnSystem :: BOOLEAN)",
                         "List all procedures in the DBMS.", "DBMS", Capability.PROCEDURES),
        VirtualProcedure("tx.getMetaData", ("metadata",), _metadata,
                         "tx.getMetaData() :: (metadata :: MAP)",
                         "Provides attached transaction metadata.", "DBMS", Capability.PROCEDURES),
    ]

