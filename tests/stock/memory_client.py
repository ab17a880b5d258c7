"""mcp-neo4j-memory over stdio, as an agent's MCP host runs it: create entities, relations and
observations, then search the memory with fulltext queries in Lucene's syntax and read it back.
Usage: python memory_client.py BOLT_URI QUERY...; prints one JSON object."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ENTITIES = [{"name": "Ada Lovelace", "type": "Person", "observations": ["wrote the first program"]},
            {"name": "Charles Babbage", "type": "Person", "observations": ["designed the Analytical Engine"]},
            {"name": "London", "type": "City", "observations": ["capital of England"]}]
RELATIONS = [{"source": "Ada Lovelace", "target": "Charles Babbage", "relationType": "WORKED_WITH"},
             {"source": "Ada Lovelace", "target": "London", "relationType": "LIVED_IN"}]


def _json(result) -> object:
    if result.isError:
        return {"error": "".join(c.text for c in result.content if hasattr(c, "text"))}
    if result.structuredContent is not None:
        return result.structuredContent
    return json.loads("".join(c.text for c in result.content if hasattr(c, "text")))


async def main() -> None:
    uri, queries = sys.argv[1], sys.argv[2:]
    server = StdioServerParameters(
        command=str(Path(sys.executable).parent / "mcp-neo4j-memory"),
        args=["--transport", "stdio", "--db-url", uri, "--username", "neo4j", "--password", "password",
              "--database", "neo4j"],
        env={k: v for k, v in os.environ.items() if not k.startswith("NEO4J_")})
    out: dict = {}
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            out["tools"] = sorted(t.name for t in (await session.list_tools()).tools)
            out["created"] = _json(await session.call_tool("create_entities", {"entities": ENTITIES}))
            out["related"] = _json(await session.call_tool("create_relations", {"relations": RELATIONS}))
            out["observed"] = _json(await session.call_tool("add_observations", {"observations": [
                {"entityName": "London", "observations": ["home of the Royal Society"]}]}))
            out["search"] = {q: _json(await session.call_tool("search_memories", {"query": q})) for q in queries}
            out["found"] = _json(await session.call_tool("find_memories_by_name", {"names": ["London"]}))
            out["graph"] = _json(await session.call_tool("read_graph", {}))
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    asyncio.run(main())
