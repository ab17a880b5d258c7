"""MCP over stdio: the tools for an MCP client that starts `cypher-proxy mcp` as its server.

One client, one logged-on `Session` for every tool call. While it serves, the SDK points the
process's stdout at stderr, so nothing but protocol messages reaches the client.
"""

from __future__ import annotations

from mcp.server.stdio import stdio_server

from proxy.mcp.server import build_server
from proxy.mcp.settings import McpSettings
from proxy.session import Session


async def serve_stdio(session: Session, settings: McpSettings) -> None:
    """Serve until the client closes stdin."""
    server = build_server(settings, lambda ctx: session)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())
