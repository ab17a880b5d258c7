"""The MCP server (the `mcp` SDK's low-level `Server`) over the tool table, for any transport.

The transport decides whose session a tool call runs in: over HTTP the request's own (logged
on from its `Authorization` header, `proxy/http/mcp.py`), over stdio the one the command
logged on at start. Every failure is a tool error (`isError`), its text Neo4j's code and
message, `Neo.ClientError.Statement.SyntaxError: Invalid input ... (line 1, column 10 ...)`,
so the agent reads and fixes it as it would a driver's error; nothing a client sends ends the
server.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import Server

from proxy import __version__
from core.errors import CypherError, database_error
from proxy.json_values import UnsupportedValue
from proxy.mcp.settings import McpSettings
from proxy.mcp.tools import tools_for
from proxy.session import Session

log = logging.getLogger("proxy.mcp")

INSTRUCTIONS = ("A graph database queried with Cypher. Call get-schema first; then one read-cypher "
                "query usually answers a question.")

#: The session a tool call runs in, from the SDK's request context.
SessionFor = Callable[[Any], Session]


def tool_error(error: CypherError) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=f"{error.code}: {error.message}")],
                                is_error=True)


def build_server(settings: McpSettings, session_for: SessionFor) -> Server:
    tools = {spec.name: spec for spec in tools_for(settings)}
    listed = [spec.tool(settings.limits) for spec in tools.values()]

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        try:
            spec = tools.get(params.name)
            if spec is None:
                raise _unknown_tool(params.name, settings, list(tools))
            text = await spec.run(session_for(ctx), spec.call(params.arguments), settings.limits)
        except CypherError as exc:
            return tool_error(exc)
        except UnsupportedValue as exc:
            return tool_error(database_error(f"The result holds a value JSON cannot carry: {exc}"))
        except Exception:
            log.exception("MCP tool %s failed", params.name)
            return tool_error(database_error("An unexpected error occurred in the proxy; "
                                             "see the proxy's log for details."))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return Server("cypher-proxy", version=__version__, instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _unknown_tool(name: str, settings: McpSettings, offered: list[str]) -> CypherError:
    if name == "write-cypher" and settings.read_only:
        message = "write-cypher is not offered: this server is read-only (--mcp-read-only)."
    else:
        message = f"There is no tool {name!r}; the tools are {', '.join(offered)}."
    return CypherError("Neo.ClientError.Request.Invalid", message)
