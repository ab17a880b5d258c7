"""`CALL db.ping()`: the liveness check drivers run before they trust a connection.

The neo4j Python driver 6.x over HTTP (`http://` URIs) runs it on the `system` database
for `verify_connectivity()`, `verify_authentication()` and `get_server_info()`. A real
Neo4j answers it itself, so the proxy answers it only in front of the embedded database.
"""

from __future__ import annotations

from typing import Any

from core.dialect import Capability
from extensions.registry import CallContext, VirtualProcedure


async def _ping(ctx: CallContext, args: list[Any]) -> list[list[Any]]:
    return [[True]]


DB_PING = VirtualProcedure(
    "db.ping", ("success",), _ping, signature="db.ping() :: (success :: BOOLEAN)",
    description="This procedure can be used by client side tooling to test whether they are correctly "
                "connected to a database.",
    stands_in_for=Capability.PROCEDURES)
