"""What the HTTP and MCP front ends both do through a `Session`: read describe()'s text, and
release a result whatever state it is in. Here, not in `proxy/http/`, so that the MCP server
(`proxy/mcp/`), which `/mcp` hosts, needs nothing of the HTTP package."""

from __future__ import annotations

from typing import Any

from core.backend import TxConfig
from proxy.session import Session

_QUERY = "CALL describe($options)"


async def describe_text(session: Session, database: str | None, types: list[str] | None) -> str:
    """describe()'s text (with `types`: their detail), read in a read transaction."""
    config = TxConfig(database=database, mode="r")
    result = await session.run(_QUERY, {"options": {"types": types or None}}, config)
    rows = await result.fetch(-1)
    await result.consume()
    return rows[0][0]


async def consume_quietly(result: Any) -> None:
    """Release what the backend holds for a result (safe after it was consumed)."""
    try:
        await result.consume()
    except Exception:
        pass
