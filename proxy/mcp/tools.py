"""The MCP tools: Cypher and describe() for agents, each run through a logged-on `Session`.

Named as Neo4j's official MCP server names its tools (`get-schema`, `read-cypher`,
`write-cypher`, with `query` and `params` arguments), so prompts written for it work unchanged;
`explain-cypher` checks a query without running it. A tool runs its Cypher with
`Session.run`, the path the Query API takes (planner, extensions, guards, `--query-timeout`):
`read-cypher` in a read transaction, where the backend refuses a write with its access-mode
error. The descriptions teach only what an agent cannot guess: the extensions, in one line
each (`get-schema` returns the rest), within a token budget measured by the tests.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import mcp.types as types

from core.backend import TxConfig
from core.errors import CypherError
from proxy.front_ends import consume_quietly, describe_text
from proxy.mcp.results import FORMATS, counters_line, notification_lines, render_result
from proxy.mcp.settings import McpSettings, ResultLimits
from proxy.session import Session


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool's arguments, checked against its input schema."""

    query: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    database: str | None = None
    format: str = "json"
    types: list[str] | None = None

    def config(self, mode: str) -> TxConfig:
        return TxConfig(database=self.database, mode=mode)


Run = Callable[[Session, ToolCall, ResultLimits], Awaitable[str]]


async def _get_schema(session: Session, call: ToolCall, limits: ResultLimits) -> str:
    return await describe_text(session, call.database, call.types)


async def _rows(session: Session, call: ToolCall, limits: ResultLimits, mode: str) -> list[str]:
    result = await session.run(call.query, call.params, call.config(mode))
    try:
        rendered = await render_result(result, limits, call.format)
    finally:
        await consume_quietly(result)
    return rendered.lines + notification_lines(rendered.summary) + (
        [counters_line(rendered.summary)] if mode == "w" else [])


async def _read_cypher(session: Session, call: ToolCall, limits: ResultLimits) -> str:
    return "\n".join(await _rows(session, call, limits, "r"))


async def _write_cypher(session: Session, call: ToolCall, limits: ResultLimits) -> str:
    return "\n".join(await _rows(session, call, limits, "w"))


_EXPLAINED = re.compile(r"\s*EXPLAIN\b", re.IGNORECASE)
_QUERY_TYPES = {"r": "a read query", "w": "a write query", "rw": "a query that reads and writes",
                "s": "a schema command"}


async def _explain_cypher(session: Session, call: ToolCall, limits: ResultLimits) -> str:
    query = call.query if _EXPLAINED.match(call.query) else "EXPLAIN " + call.query
    result = await session.run(query, call.params, call.config("r"))
    summary = await result.consume()
    lines = [f"valid: {_QUERY_TYPES.get(summary.query_type, summary.query_type)}"]
    if summary.plan is not None:
        lines.append("plan: " + plan_text(summary.plan))
    return "\n".join(lines + notification_lines(summary))


def plan_text(plan: dict[str, Any]) -> str:
    """A plan tree on one line, root first: `Results <- Aggregate <- (A | B)`."""
    details = plan.get("arguments", {}).get("Details")
    text = plan.get("operatorType", "?") + (f" {details}" if details else "")
    children = [plan_text(child) for child in plan.get("children", [])]
    if len(children) == 1:
        return f"{text} <- {children[0]}"
    return f"{text} <- ({' | '.join(children)})" if children else text


# ---- the table --------------------------------------------------------------------------

_QUERY = {"type": "string", "description": "Cypher"}
_PARAMS = {"type": "object", "description": "values for $name parameters"}
_DATABASE = {"type": "string"}                       # default: the home database
_FORMAT = {"enum": list(FORMATS), "description": "rows as JSON arrays (default) or CSV"}
_TYPES = {"type": "array", "items": {"type": "string"},
          "description": "node types to detail: properties, values, connections, timeseries channels"}

_CYPHER = ("Standard Cypher, plus extensions (see get-schema): ts_avg/ts_sum/ts_min/ts_max/"
           "ts_count(p.channel, from?, to?) over timeseries, dates 'YYYY', 'YYYY-M', 'YYYY-M-D'; "
           "distance(a, b) in metres, contains/intersects(a, b), area(g) on points and geometry; "
           "text_score(n, 'prop', 'text') similarity; CALL pagerank({{...}}) YIELD node, score. Pass values as $params.")
_ROWS = ("Rows come as JSON arrays, one a line after the column names; at most {rows} rows or "
         "{tokens} tokens, a last line in [brackets] says what was cut and how to page.")


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...]
    writes: bool
    run: Run

    def tool(self, limits: ResultLimits) -> types.Tool:
        """As `tools/list` shows it; annotations left at the spec's defaults are not sent."""
        hints = (types.ToolAnnotations(open_world_hint=False) if self.writes
                 else types.ToolAnnotations(read_only_hint=True, open_world_hint=False))
        return types.Tool(name=self.name, input_schema=self.schema, annotations=hints,
                          description=self.description.format(rows=limits.max_rows, tokens=limits.max_tokens))

    @property
    def schema(self) -> dict[str, Any]:
        required = {"required": list(self.required)} if self.required else {}
        return {"type": "object", "properties": self.properties, **required, "additionalProperties": False}

    def call(self, arguments: dict[str, Any] | None) -> ToolCall:
        """The arguments as a `ToolCall`; a CypherError (Request.Invalid) says what is wrong."""
        arguments = arguments or {}
        error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(self.schema).iter_errors(arguments))
        if error is not None:
            where = "".join(f"[{p!r}]" for p in error.absolute_path)
            raise CypherError("Neo.ClientError.Request.Invalid",
                              f"Invalid arguments for {self.name}{' ' + where if where else ''}: {error.message}")
        return ToolCall(**arguments)


TOOLS = (
    ToolSpec("get-schema",
             "The graph in a few hundred tokens: node types with sizes and flags (ts = timeseries, "
             "geometry, location, text), connections, conventions and the Cypher extensions. Call "
             "it first; `types` details the types you will query.",
             {"types": _TYPES, "database": _DATABASE}, (), False, _get_schema),
    ToolSpec("read-cypher",
             "Run a read-only Cypher query (a read transaction: writes are refused). " + _CYPHER + " "
             + _ROWS, {"query": _QUERY, "params": _PARAMS, "database": _DATABASE, "format": _FORMAT},
             ("query",), False, _read_cypher),
    ToolSpec("write-cypher",
             "Run a Cypher query that writes (CREATE, MERGE, SET, DELETE, schema commands); answers "
             "its rows like read-cypher, then the update counts.",
             {"query": _QUERY, "params": _PARAMS, "database": _DATABASE, "format": _FORMAT},
             ("query",), True, _write_cypher),
    ToolSpec("explain-cypher",
             "Check a Cypher query without running it (EXPLAIN): whether it reads or writes, its "
             "plan and warnings; a mistake comes back as an error with its line and column.",
             {"query": _QUERY, "params": _PARAMS, "database": _DATABASE}, ("query",), False, _explain_cypher),
)


def tools_for(settings: McpSettings) -> tuple[ToolSpec, ...]:
    """The tools a server offers: without write-cypher when read-only."""
    return tuple(t for t in TOOLS if not (t.writes and settings.read_only))
