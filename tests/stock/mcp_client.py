"""mcp-neo4j-cypher over stdio, as an MCP client runs it: list the tools, get the schema, a
parameterised read, an extension (ts_avg) read, a write, and a write refused by the read tool.
Usage: python mcp_client.py BOLT_URI READ_QUERY EXTENSION_QUERY [SERVER ARGS...]; prints one JSON
object."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def _text(result) -> dict:
    return {"error": result.isError, "text": "".join(c.text for c in result.content if hasattr(c, "text"))}


async def main() -> None:
    uri, read_query, extension_query = sys.argv[1:4]
    server = StdioServerParameters(
        command=str(Path(sys.executable).parent / "mcp-neo4j-cypher"),
        args=["--transport", "stdio", "--db-url", uri, "--username", "neo4j", "--password", "password",
              "--database", "neo4j", *sys.argv[4:]],
        env={k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")})
    out = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
            out["schema"] = _text(await session.call_tool("get_neo4j_schema", {}))
            out["read"] = _text(await session.call_tool(
                "read_neo4j_cypher", {"query": read_query, "params": {"title": "TROLL"}}))
            out["extension"] = _text(await session.call_tool("read_neo4j_cypher", {"query": extension_query}))
            out["write"] = _text(await session.call_tool(
                "write_neo4j_cypher", {"query": "CREATE (:StockNote {text: $text})", "params": {"text": "hi"}}))
            out["refused"] = _text(await session.call_tool(
                "read_neo4j_cypher", {"query": "CREATE (:StockNote {text: 'no'})"}))
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    asyncio.run(main())
