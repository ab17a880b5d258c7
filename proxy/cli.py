"""Command line: `cypher-proxy serve`, `cypher-proxy demo`, `cypher-proxy mcp`, `cypher-proxy ts import`.

Every `serve` flag can also be given as an environment variable `CYPHER_PROXY_<NAME>`
(e.g. `CYPHER_PROXY_DATA_DIR`); a flag on the command line wins.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path

from proxy.config import Config


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host.strip("[]") or "127.0.0.1", int(port)


def _env(name: str, default: str | None) -> str | None:
    return os.environ.get(f"CYPHER_PROXY_{name}", default)


_UNITS = {"": 1, "b": 1, "k": 1000, "kb": 1000, "kib": 1 << 10, "m": 1000**2, "mb": 1000**2,
          "mib": 1 << 20, "g": 1000**3, "gb": 1000**3, "gib": 1 << 30}


def _bytes(text: str) -> int:
    """`65536`, `64KiB`, `16MiB`, `1GB` (Neo4j's spelling) -> bytes."""
    number = text.strip().rstrip("bBiIkKmMgG ")
    unit = text.strip()[len(number):].strip().lower()
    try:
        return int(float(number) * _UNITS[unit])
    except (ValueError, KeyError):
        raise argparse.ArgumentTypeError(f"expected a size such as 65536, 64KiB or 16MiB, got {text!r}") from None


def _seconds(text: str) -> float:
    """`30`, `30s`, `2m` -> seconds."""
    text = text.strip().lower()
    scale = 60 if text.endswith("m") else 1
    try:
        return float(text.rstrip("sm")) * scale
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds such as 30 or 30s, got {text!r}") from None


def _size_text(n: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def add_server_arguments(parser: argparse.ArgumentParser, *, listen: bool = True) -> None:
    """The flags shared by `serve` and `demo` (a contract scripts rely on); `mcp` (on stdio) takes
    them without the listening ones (`listen=False`)."""
    defaults = Config()
    if listen:
        _add_listen_arguments(parser, defaults)
    parser.add_argument("--backend", choices=["falkordb", "neo4j"], default=_env("BACKEND", None),
                        help="graph database behind the proxy (default falkordb; neo4j if --upstream)")
    parser.add_argument("--upstream", default=_env("UPSTREAM", None), metavar="URI",
                        help="bolt:// or neo4j:// URI of a Neo4j server (implies --backend neo4j)")
    parser.add_argument("--data-dir", type=Path, default=Path(_env("DATA_DIR", "data")),
                        help="where the embedded database and the extension stores live (default ./data)")
    parser.add_argument("--user", default=_env("USER", defaults.user),
                        help="login of the embedded database (default neo4j)")
    parser.add_argument("--password", default=_env("PASSWORD", None),
                        help="password of the embedded database (default password; prefer "
                             "CYPHER_PROXY_PASSWORD or --password-file: a flag shows in `ps`)")
    parser.add_argument("--password-file", type=Path, default=_optional_path(_env("PASSWORD_FILE", None)),
                        metavar="FILE", help="read the password from the first line of FILE")
    parser.add_argument("--text-model", default=_env("TEXT_MODEL", None), metavar="PATH",
                        help="text_score model: a model2vec or sentence-transformers directory, or an "
                             ".onnx file (default: the built-in static MiniLM)")
    parser.add_argument("--probe-cache-ttl", type=float, metavar="SECONDS",
                        default=float(_env("PROBE_CACHE_TTL", str(defaults.probe_cache_ttl))),
                        help="behind an upstream Neo4j, reuse extension probe results for this long "
                             "(default 0: off; the embedded database always reuses them until a write)")
    parser.add_argument("--without-apoc", action="store_true", help=argparse.SUPPRESS)   # tests: a Neo4j stand-in
    parser.add_argument("--log-level", default=_env("LOG_LEVEL", defaults.log_level),
                        choices=["debug", "info", "warning", "error"])
    parser.add_argument("--tx-idle-timeout", type=float, metavar="SECONDS",
                        default=float(_env("TX_IDLE_TIMEOUT", str(defaults.tx_idle_timeout))),
                        help="roll back an explicit transaction idle this long (embedded database; "
                             "default 60, 0 = never)")
    _add_mcp_arguments(parser, defaults)
    limits = parser.add_argument_group("limits (what one client may cost; README, \"Limits\")")
    for flag, kind, help_text in _LIMIT_FLAGS:
        name = flag.removeprefix("--").replace("-", "_")
        default = getattr(defaults, name)
        shown = _size_text(default) if kind is _bytes else f"{default:g}"
        metavar = {_bytes: "SIZE", _seconds: "SECONDS"}.get(kind, "N")
        limits.add_argument(flag, type=kind, default=_env(name.upper(), shown), metavar=metavar,
                            help=f"{help_text} (default {shown})")


def _add_listen_arguments(parser: argparse.ArgumentParser, defaults: Config) -> None:
    parser.add_argument("--bolt", type=_address, metavar="HOST:PORT",
                        default=_address(_env("BOLT", f"{defaults.bolt_host}:{defaults.bolt_port}")),
                        help="Bolt listen address (default 127.0.0.1:7687)")
    parser.add_argument("--http", type=_address, metavar="HOST:PORT",
                        default=_address(_env("HTTP", f"{defaults.http_host}:{defaults.http_port}")),
                        help="HTTP listen address: Query API, transactional endpoint, /mcp (default 127.0.0.1:7474)")
    parser.add_argument("--http-tx-timeout", type=float, metavar="SECONDS",
                        default=float(_env("HTTP_TX_TIMEOUT", str(defaults.http_tx_timeout))),
                        help="roll back an HTTP transaction idle this long (default 30)")
    parser.add_argument("--workers", type=int, metavar="N", default=_optional_int(_env("WORKERS", None)),
                        help="server processes sharing the ports (default: one per core with --upstream; "
                             "the embedded database runs in one)")
    parser.add_argument("--tls-cert", type=Path, default=_optional_path(_env("TLS_CERT", None)),
                        help="PEM certificate: serve Bolt and HTTP over TLS (bolt+s://, wss://, https://)")
    parser.add_argument("--tls-key", type=Path, default=_optional_path(_env("TLS_KEY", None)),
                        help="PEM private key for --tls-cert")


def _add_mcp_arguments(parser: argparse.ArgumentParser, defaults: Config) -> None:
    mcp = parser.add_argument_group("MCP tools (/mcp on the HTTP port, `cypher-proxy mcp` on stdio)")
    mcp.add_argument("--mcp-read-only", action="store_true",
                     default=_env("MCP_READ_ONLY", "").lower() in ("1", "true", "yes"),
                     help="offer no write-cypher tool")
    mcp.add_argument("--mcp-max-rows", type=int, metavar="N",
                     default=int(_env("MCP_MAX_ROWS", str(defaults.mcp_max_rows))),
                     help=f"rows in one tool answer (default {defaults.mcp_max_rows})")
    mcp.add_argument("--mcp-max-tokens", type=int, metavar="N",
                     default=int(_env("MCP_MAX_TOKENS", str(defaults.mcp_max_tokens))),
                     help=f"cl100k tokens in one tool answer (default {defaults.mcp_max_tokens})")


_LIMIT_FLAGS = (
    ("--max-message-size", _bytes, "largest Bolt message; a bigger one gets a FAILURE"),
    ("--max-parameter-size", _bytes, "largest parameters of one query"),
    ("--auth-timeout", _seconds, "seconds a new connection has to log in"),
    ("--max-unauthenticated-bytes", _bytes, "bytes a connection may send before logging in"),
    ("--auth-max-failed-attempts", int, "failed logins in a row from one address before it is locked"),
    ("--auth-lock-time", _seconds, "seconds an address stays locked"),
    ("--query-timeout", _seconds, "seconds a query may run when the client sets no timeout"),
    ("--max-unread-result", _bytes, "bytes of a result a client may leave unread in the database..."),
    ("--unread-result-timeout", _seconds, "...for this many seconds before it is released"),
)


def _optional_path(value: str | None) -> Path | None:
    return Path(value) if value else None


def _optional_int(value: str | None) -> int | None:
    return int(value) if value else None


def worker_count(args: argparse.Namespace, config: Config) -> int:
    """How many server processes `serve` runs (proxy/workers.py): --workers, else one per core
    in front of an upstream; the embedded database (and the demo, which loads it) runs in one."""
    from proxy.workers import default_workers
    embedded = config.backend == "falkordb" or args.command == "demo"
    if args.workers is None:
        return 1 if embedded else default_workers()
    if args.workers < 1:
        raise SystemExit("cypher-proxy: --workers must be at least 1")
    if args.command == "demo" and args.workers > 1:
        raise SystemExit("cypher-proxy: the demo loads and serves its graph in one process: drop --workers")
    if embedded and args.workers > 1:
        raise SystemExit(
            "cypher-proxy: --workers needs --upstream: the embedded database runs in one process, which "
            "holds its write lock, its transactions and the caches its writes invalidate. Run it with "
            "--workers 1 (the default), and if one core is not enough, put a proxy with workers in front "
            "of it: cypher-proxy serve --upstream bolt://HOST:PORT --workers N")
    return args.workers


def config_from_args(args: argparse.Namespace) -> Config:
    backend = args.backend or ("neo4j" if args.upstream else "falkordb")
    if backend == "neo4j" and not args.upstream:
        raise SystemExit("cypher-proxy: --backend neo4j needs --upstream URI (e.g. bolt://localhost:7687)")
    if args.text_model and not Path(args.text_model).expanduser().is_dir():
        raise SystemExit(f"cypher-proxy: --text-model {args.text_model}: not a model directory")
    if args.mcp_max_rows < 1 or args.mcp_max_tokens < 200:
        raise SystemExit("cypher-proxy: --mcp-max-rows must be at least 1 and --mcp-max-tokens at least 200 "
                         "(the note saying what was cut takes ~50)")
    return Config(
        **_listen_config(args),
        backend=backend, upstream=args.upstream, data_dir=args.data_dir.resolve(),
        user=args.user, password=_password(args),
        log_level=args.log_level, tx_idle_timeout=args.tx_idle_timeout, text_model=args.text_model,
        probe_cache_ttl=args.probe_cache_ttl, mcp_read_only=args.mcp_read_only,
        without_apoc=getattr(args, "without_apoc", False),
        mcp_max_rows=args.mcp_max_rows, mcp_max_tokens=args.mcp_max_tokens,
        **{flag.removeprefix("--").replace("-", "_"): getattr(args, flag.removeprefix("--").replace("-", "_"))
           for flag, _, _ in _LIMIT_FLAGS},
    )


def _listen_config(args: argparse.Namespace) -> dict:
    """The listening part of the Config (none for `mcp`, which serves stdio)."""
    if not hasattr(args, "bolt"):
        return {}
    if bool(args.tls_cert) != bool(args.tls_key):
        raise SystemExit("cypher-proxy: --tls-cert and --tls-key go together")
    return dict(bolt_host=args.bolt[0], bolt_port=args.bolt[1], http_host=args.http[0], http_port=args.http[1],
                http_tx_timeout=args.http_tx_timeout, tls_cert=args.tls_cert, tls_key=args.tls_key)


def _password(args: argparse.Namespace) -> str:
    if args.password_file is None:
        return Config.password if args.password is None else args.password
    if args.password is not None:
        raise SystemExit("cypher-proxy: give --password or --password-file, not both")
    try:
        return args.password_file.read_text(encoding="utf-8").splitlines()[0]
    except (OSError, IndexError) as exc:
        raise SystemExit(f"cypher-proxy: cannot read a password from {args.password_file}: {exc}") from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cypher-proxy", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    add_server_arguments(commands.add_parser("serve", help="serve Bolt in front of a graph database"))
    add_server_arguments(commands.add_parser(
        "demo", help="load the Sodir sample graph (first run only), then serve it"))
    mcp = commands.add_parser("mcp", help="serve the MCP tools on stdio (for an MCP client to start)")
    add_server_arguments(mcp, listen=False)
    mcp.add_argument("--connect", metavar="URI", default=_env("CONNECT", None),
                     help="bolt:// URI of a running cypher-proxy to send the queries to (default: start "
                          "the database on --data-dir, which no running proxy may be using)")
    ts = commands.add_parser("ts", help="timeseries store commands").add_subparsers(dest="ts_command", required=True)
    from extensions.timeseries.importer import add_import_arguments
    add_import_arguments(ts.add_parser("import", help="import timeseries from CSV or Parquet"))
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "ts":
        from extensions.timeseries.importer import run_import
        return run_import(args) or 0
    config = config_from_args(args)
    logging.basicConfig(level=config.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    workers = worker_count(args, config) if args.command != "mcp" else 1
    if workers > 1:
        from proxy.workers import Supervisor
        return Supervisor(config, workers).run()
    from proxy.app import event_loop_factory, serve, serve_mcp_stdio
    main_task = (serve_mcp_stdio(config, connect=args.connect) if args.command == "mcp"
                 else serve(config, demo=args.command == "demo"))
    try:
        with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
            runner.run(main_task)
    except KeyboardInterrupt:
        pass
    return 0
