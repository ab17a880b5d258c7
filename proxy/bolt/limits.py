"""What one Bolt client may cost the server: message sizes and the unauthenticated budget.

Defaults follow Neo4j where Neo4j has the setting (30 s and 8 KiB before authentication:
`internal.server.bolt.unauth_connection_timeout` / `unauth_max_inbound_bytes`); the others are
sized for a Python server in front of an embedded database (README, "Limits").
"""

from __future__ import annotations

from dataclasses import dataclass

from core.errors import CypherError

MiB = 1 << 20


@dataclass(frozen=True, slots=True)
class BoltLimits:
    max_message_size: int = 64 * MiB        # bigger messages are skipped and answered with a FAILURE
    max_parameter_size: int = 16 * MiB      # bytes of one RUN's parameters
    auth_timeout: float = 30.0              # seconds from connecting (or LOGOFF) to logging in
    max_unauthenticated_bytes: int = 8 << 10  # bytes a client may send before it has logged in


def query_size(message: bytes) -> int:
    """Bytes of the query string of a RUN message (`B3 10 <string> ...`), read from its header,
    so the parameters' size is known before anything is decoded."""
    marker = message[2] if len(message) > 2 else 0
    if 0x80 <= marker <= 0x8F:
        return marker - 0x80
    width = {0xD0: 1, 0xD1: 2, 0xD2: 4}.get(marker, 0)
    return int.from_bytes(message[3:3 + width], "big") if width else 0


def too_large(what: str, size: int, limit: int, flag: str, advice: str) -> CypherError:
    """The FAILURE for a message or parameters over a limit (GQL 22N56, as Neo4j reports it)."""
    return CypherError("Neo.ClientError.Request.Invalid",
                       f"The {what} is {size / MiB:.1f} MiB; this server accepts at most "
                       f"{limit / MiB:g} MiB ({flag}). {advice}",
                       gql_status="22N56",
                       description="error: data exception - protocol message length limit overflow")
