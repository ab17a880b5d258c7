"""What an MCP server offers and how much one answer may hold (from `--mcp-*`). Kept apart from
the SDK: importing `mcp` takes ~1 s, which a proxy that no agent asks should not spend at start."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class ResultLimits:
    """How much of a result one tool answer holds (`--mcp-max-rows`, `--mcp-max-tokens`)."""

    max_rows: int = 100
    max_tokens: int = 4000


@dataclass(frozen=True, slots=True)
class McpSettings:
    read_only: bool = False                     # --mcp-read-only: no write-cypher
    limits: ResultLimits = field(default_factory=ResultLimits)
