"""What a client sees when the upstream Neo4j fails: its own FAILURE, or a lost connection.

A FAILURE from the upstream becomes a `CypherError` with the upstream's code, message and GQL
status, so the client's driver raises the exception Neo4j would have made it raise.

An upstream that cannot be reached before any work began is `DatabaseUnavailable` (a transient
error: drivers retry managed transactions). An upstream connection lost *after* work began
(mid-stream, mid-transaction) is `UpstreamLost`: the Bolt front end closes the client's
connection without an answer, so the driver raises `ServiceUnavailable` / `SessionExpired`,
exactly as when the Neo4j it talked to dies.
"""

from __future__ import annotations

from typing import Any

from core.errors import CypherError, DatabaseLost

DATABASE_UNAVAILABLE = "Neo.TransientError.General.DatabaseUnavailable"
UNKNOWN_ERROR = "Neo.DatabaseError.General.UnknownError"
#: Codes after which a driver forgets the writer it used (the leader moved or the database is read-only).
NOT_A_WRITER = frozenset({"Neo.ClientError.Cluster.NotALeader",
                          "Neo.ClientError.General.ForbiddenOnReadOnlyDatabase"})


class UpstreamLost(DatabaseLost):
    """The upstream connection broke while a client's work was on it."""

    def __init__(self, address: str, reason: object):
        super().__init__(DATABASE_UNAVAILABLE, f"The connection to the upstream Neo4j at {address} was lost: "
                                               f"{reason or 'closed by the server'}")


def unreachable(address: str, reason: object) -> CypherError:
    return CypherError(DATABASE_UNAVAILABLE, f"Cannot reach the upstream Neo4j at {address}: {reason}")


def from_failure(meta: dict[str, Any]) -> CypherError:
    """A FAILURE's metadata as a `CypherError`: `code`/`message` up to Bolt 5.6, GQL fields from 5.7."""
    code = meta.get("neo4j_code") or meta.get("code") or UNKNOWN_ERROR
    message = str(meta.get("message", ""))
    status, description = meta.get("gql_status"), meta.get("description")
    if isinstance(description, str):
        description = description.removesuffix(f". {message}")
    return CypherError(str(code), message, gql_status=status, description=description)
