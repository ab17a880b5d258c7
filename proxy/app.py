"""Assembles the server: backend, planner, Bolt and HTTP listeners; runs until SIGTERM/SIGINT.
`serve_mcp_stdio` assembles `cypher-proxy mcp`: the MCP tools on stdio over one session."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import socket
import ssl
import textwrap
from collections.abc import Callable

from core.backend import Backend, TxConfig
from core.dialect import Capability
from proxy.bolt.limits import BoltLimits
from proxy.bolt.server import start_bolt_server
from proxy.config import Config
from proxy.demo import SEED_QUERY, SEED_QUESTION
from core.errors import CypherError
from proxy.http.affinity import Affinity
from proxy.http.server import HttpFrontEnd
from proxy.logins import LoginGuard
from proxy.mcp.settings import McpSettings, ResultLimits
from proxy.session import PassThroughPlanner, Planner, Session

log = logging.getLogger("cypher_proxy")


def create_backend(config: Config) -> Backend:
    if config.backend == "neo4j":
        from proxy.backends.neo4j import Neo4jBackend
        return Neo4jBackend(config.upstream)
    from proxy.backends.falkordb.backend import FalkorDBBackend
    return FalkorDBBackend(config.data_dir / "falkordb", user=config.user, password=config.password,
                           idle_timeout=config.tx_idle_timeout or None, query_timeout=config.query_timeout,
                           max_unread_result=config.max_unread_result,
                           unread_result_timeout=config.unread_result_timeout)


def create_planner(config: Config, backend: Backend) -> Planner:
    """The extension planner over every extension whose store lives in the data directory.

    Built after the demo load / on start, so it sees the timeseries labels present then.
    """
    from extensions.planner.catalog import build_registry
    from extensions.compat import name_store
    from extensions.compat.apoc_upstream import ApocDetectingPlanner, WithoutApoc, lacking_apoc, without_apoc
    from extensions.planner.planner import ExtensionPlanner
    from extensions.planner.probe_cache import ProbeCache
    from extensions.temporal.kinds import KindStore
    cache = None
    if backend.state_ttl is None or config.probe_cache_ttl > 0:     # every write passes through the proxy
        cache = ProbeCache(ttl=config.probe_cache_ttl or None)
    registry = build_registry(config.data_dir, text_model=config.text_model)

    def planner(registry, dialect=backend.dialect) -> ExtensionPlanner:
        return ExtensionPlanner(registry, dialect=dialect, probe_cache=cache, constraints=name_store(config.data_dir),
                                datetime_kinds=KindStore(config.data_dir / "datetime-kinds.json"))

    if config.without_apoc:
        return WithoutApoc(planner(without_apoc(registry)))
    if backend.dialect.has(Capability.APOC):    # APOC served where the upstream database has none
        return ApocDetectingPlanner(planner(registry), planner(registry, lacking_apoc(backend.dialect)))
    return planner(registry)


def mcp_settings(config: Config) -> McpSettings:
    return McpSettings(read_only=config.mcp_read_only,
                       limits=ResultLimits(max_rows=config.mcp_max_rows, max_tokens=config.mcp_max_tokens))


def _ssl_context(config: Config) -> ssl.SSLContext | None:
    if not config.tls_cert:
        return None
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(config.tls_cert, config.tls_key)
    return context


async def _load_demo(config: Config, backend: Backend) -> None:
    """Load the Sodir sample graph into the data directory, once."""
    marker = config.data_dir / "demo-loaded"
    if marker.exists():
        log.info("demo graph already loaded in %s", config.data_dir)
        return
    from extensions.timeseries.store import default_root
    from proxy.demo.loader import load_demo
    credentials = await backend.authenticate(
        {"scheme": "basic", "principal": config.user, "credentials": config.password})

    async def run(query: str, params: dict) -> None:
        result = await backend.run(query, params, TxConfig(), credentials)
        await result.consume()

    counts = await load_demo(run, default_root(config.data_dir), progress=lambda line: log.info("%s", line))
    await backend.compact()          # e.g. a compact append-only file: the next start is quick
    marker.write_text(f"{counts}\n")


def check_ports_free(listeners: list[tuple[str, int, str]]) -> None:
    """Exit with a clear message if a listen address is taken: checked before the database
    starts and the demo loads, so a busy port costs nothing. `listeners`: (host, port, flag)."""
    for host, port, flag in listeners:
        if port == 0:
            continue
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        try:
            with socket.create_server((host, port), family=family):
                pass
        except OSError as exc:
            raise SystemExit(_port_message(host, port, flag, exc)) from None


def _port_message(host: str, port: int, flag: str, exc: OSError) -> str:
    env = "CYPHER_PROXY_" + flag.removeprefix("--").upper().replace("-", "_")
    reason = os.strerror(exc.errno) if exc.errno else str(exc)
    return (f"cypher-proxy: cannot listen on {host}:{port} ({reason}). Another server "
            f"(a Neo4j, or another cypher-proxy) may be using it; choose another address with "
            f"{flag} HOST:PORT or {env}.")


def _print_demo_help(uri: str, config: Config) -> None:
    password = config.password if config.password == Config.password else "(the one you set)"
    print(f"""
Sodir demo graph (contains data under the Norwegian licence for Open Government data (NLOD)
distributed by the Norwegian Offshore Directorate).

  URI:       {uri}
  user:      {config.user}
  password:  {password}

  Seed question: {SEED_QUESTION}
  One query answers it:

{textwrap.indent(SEED_QUERY, "    ")}
""", flush=True)


#: Allocations of container objects between two young-generation collections (CPython's default: 700).
GC_THRESHOLD = 50_000


def tune_garbage_collector() -> None:
    """Keep the cyclic garbage collector off the hot path.

    Rows, records and argument tuples are short-lived containers allocated by the hundred
    thousand; with CPython's default threshold the collector runs every 700 of them and its
    older generations walk every long-lived object of the server (measured: building 100k
    argument tuples took 84 ms, 6 ms without the collector). Objects alive once the server is
    ready (modules, stores, caches) are frozen out of its view, and young collections run
    every `GC_THRESHOLD` allocations.
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(GC_THRESHOLD, older, oldest)


async def serve(config: Config, *, demo: bool = False, affinity: Affinity | None = None,
                on_ready: Callable[[str], None] | None = None) -> None:
    """Run the proxy until SIGTERM/SIGINT; stops everything it started.

    As one of `--workers` (proxy/workers.py): `affinity` says which worker this is (it shares
    the ports the supervisor checked, and hands other workers' HTTP transactions to them), and
    `on_ready` gets the Bolt URI instead of the `ready:` line being printed.
    """
    reuse_port = affinity is not None
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    if not reuse_port:
        check_ports_free([(config.bolt_host, config.bolt_port, "--bolt"),
                          (config.http_host, config.http_port, "--http")])
    config.data_dir.mkdir(parents=True, exist_ok=True)
    backend = create_backend(config)
    await backend.start()
    try:
        if demo:
            await _load_demo(config, backend)
        planner = create_planner(config, backend)
        tls = _ssl_context(config)
        logins = LoginGuard(config.auth_max_failed_attempts, config.auth_lock_time)
        limits = BoltLimits(config.max_message_size, config.max_parameter_size, config.auth_timeout,
                            config.max_unauthenticated_bytes)

        def sessions() -> Session:
            return Session(backend, planner, logins=logins)

        http = HttpFrontEnd(sessions, tls=tls is not None, tx_idle_timeout=config.http_tx_timeout,
                            bolt_limits=limits, mcp=mcp_settings(config), affinity=affinity)
        await http.setup()
        try:
            try:
                server = await start_bolt_server(config.bolt_host, config.bolt_port, sessions, ssl_context=tls,
                                                 http_protocol=http.bolt_port_protocol, limits=limits,
                                                 reuse_port=reuse_port)
                host, port = server.sockets[0].getsockname()[:2]
                http.endpoints.bolt_port = port
                http_server = await http.listen(config.http_host, config.http_port, tls, reuse_port=reuse_port)
            except OSError as exc:        # taken since the check at start
                raise SystemExit(f"cypher-proxy: cannot listen: {exc}") from None
            http_host, http_port = http_server.sockets[0].getsockname()[:2]
            uri = f"{'bolt+s' if tls else 'bolt'}://{host}:{port}"
            if demo:
                _print_demo_help(uri, config)
            if config.backend == "falkordb":
                log.info("embedded FalkorDB login: user %r", config.user)
            log.info("HTTP APIs on %s://%s:%d", "https" if tls else "http", http_host, http_port)
            tune_garbage_collector()
            if on_ready is None:
                print(f"ready: {uri}", flush=True)       # at every log level: scripts wait for this line
            else:
                on_ready(uri)
            await stop.wait()
            log.info("shutting down")
            server.close()
        finally:
            await http.close()
    finally:
        await backend.stop()


async def serve_mcp_stdio(config: Config, *, connect: str | None = None) -> None:
    """`cypher-proxy mcp`: the MCP tools on stdin/stdout for the MCP client that started the
    process, until stdin closes (or SIGTERM/SIGINT). Queries go to a running proxy at `connect`
    (as they are: it evaluates the extensions), else to the database on the data directory,
    planned as `serve` plans them. The session logs on once, with --user/--password."""
    from proxy.mcp.stdio import serve_stdio
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, task.cancel)
    if connect:
        from proxy.backends.neo4j import Neo4jBackend
        backend: Backend = Neo4jBackend(connect)
    else:
        config.data_dir.mkdir(parents=True, exist_ok=True)
        backend = create_backend(config)
    await backend.start()
    try:
        planner = PassThroughPlanner() if connect else create_planner(config, backend)
        session = Session(backend, planner)
        try:
            await session.logon({"scheme": "basic", "principal": config.user, "credentials": config.password})
        except CypherError as exc:
            raise SystemExit(f"cypher-proxy mcp: cannot log in as {config.user!r}: {exc.message}") from None
        await serve_stdio(session, mcp_settings(config))
    except asyncio.CancelledError:
        log.info("stopped by a signal")
    finally:
        await backend.stop()


def event_loop_factory():
    """uvloop's event loop where it is installed (a default dependency on Linux), else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
