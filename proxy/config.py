"""Server configuration: one dataclass, filled from CLI flags and CYPHER_PROXY_* variables."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass
class Config:
    bolt_host: str = "127.0.0.1"
    bolt_port: int = 7687
    http_host: str = "127.0.0.1"
    http_port: int = 7474
    http_tx_timeout: float = 30.0        # seconds an idle HTTP transaction stays open
    backend: str = "falkordb"            # "falkordb" or "neo4j"
    upstream: str | None = None          # bolt:// or neo4j:// URI of a Neo4j server
    data_dir: Path = Path("data")
    user: str = "neo4j"                  # login for the embedded database
    password: str = "password"
    tls_cert: Path | None = None
    tls_key: Path | None = None
    log_level: str = "info"
    #: Seconds an explicit transaction may sit idle before it is rolled back (0: never); on the
    #: embedded database a writing transaction blocks every other writer while it is open.
    tx_idle_timeout: float = 60.0
    text_model: str | None = None        # text_score model directory (None: the shipped default)
    #: Probe results are reused while the graph is unchanged; behind an upstream Neo4j (whose other
    #: writers the proxy cannot see) only for this many seconds, and not at all when 0.
    probe_cache_ttl: float = 0.0
    #: Tests only: present the embedded database as a Neo4j without APOC (extensions/compat/apoc_upstream.py).
    without_apoc: bool = False
    # What one client may cost (README, "Limits"); Neo4j's defaults where Neo4j has the setting.
    max_message_size: int = 64 << 20            # bytes of one Bolt message
    max_parameter_size: int = 16 << 20          # bytes of one query's parameters
    auth_timeout: float = 30.0                  # seconds to log in (Neo4j: 30 s)
    max_unauthenticated_bytes: int = 8 << 10    # bytes before logging in (Neo4j: 8 KiB)
    auth_max_failed_attempts: int = 3           # then refused for auth_lock_time (Neo4j: 3)
    auth_lock_time: float = 5.0                 # seconds (Neo4j: 5 s)
    query_timeout: float = 30.0                 # seconds, when the client sets no timeout
    max_unread_result: int = 64 << 20           # bytes of a result the client has not pulled,
    unread_result_timeout: float = 30.0         # ... held longer than this, are released
    # MCP (`/mcp` on the HTTP port, `cypher-proxy mcp` on stdio)
    mcp_read_only: bool = False                 # no write-cypher tool
    mcp_max_rows: int = 100                     # rows in one tool answer ...
    mcp_max_tokens: int = 4000                  # ... and cl100k tokens
