"""Assembles the HTTP front end: two aiohttp applications on the proxy's one event loop.

- The HTTP port (`--http`, default 7474): discovery, the Query API v2, the
  transactional endpoint, `GET /describe`, and MCP's Streamable HTTP at `/mcp`.
- The Bolt port's HTTP side: `proxy/bolt/server.py` hands over every connection whose
  first bytes are an HTTP request; `GET /` answers discovery or upgrades to Bolt over
  WebSocket.

With `--workers`, requests that belong to another worker's transaction are handed to it
(`affinity.py`). With `--tls-cert` both listeners speak TLS (https://, wss://). A client that sends no
complete request head within `request_timeout` seconds is disconnected; request bodies
have their own timeout (`body.BODY_TIMEOUT`).
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import Callable

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from proxy.bolt.limits import BoltLimits
from proxy.bolt.server import serve_bolt_stream
from proxy.http.affinity import Affinity
from proxy.http.auth import AuthCache
from proxy.http.body import MAX_BODY
from proxy.http.describe import DescribeEndpoint
from proxy.http.discovery import ENDPOINTS, Endpoints
from proxy.http.mcp import McpEndpoint
from proxy.http.middleware import allow_any_origin, neo4j_errors
from proxy.http.query_api import QueryApi
from proxy.http.routes import setup_bolt_port_routes, setup_http_routes
from proxy.http.transactions import IDLE_TIMEOUT, TransactionRegistry
from proxy.http.tx_endpoint import TransactionalEndpoint
from proxy.mcp.settings import McpSettings
from proxy.session import Session

REQUEST_TIMEOUT = 30.0      # seconds for a request head (and between requests on a kept-alive connection)
SHUTDOWN_TIMEOUT = 10.0     # seconds running requests get to finish when the server stops


class _MalformedRequestsAreInfo(logging.Filter):
    """aiohttp logs a malformed request (answered 400) as an ERROR with a traceback: garbage from
    one client would flood the log with what look like server faults. One INFO line instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, HttpProcessingError):
            record.msg, record.args = "%s: %s", (record.getMessage(), exc.message.strip().splitlines()[0])
            record.levelno, record.levelname, record.exc_info, record.exc_text = logging.INFO, "INFO", None, None
        return True


logging.getLogger("aiohttp.server").addFilter(_MalformedRequestsAreInfo())


class HttpFrontEnd:
    """The HTTP port and the Bolt port's HTTP side, sharing sessions, auth and transactions."""

    def __init__(self, session_factory: Callable[[], Session], *, tls: bool = False,
                 tx_idle_timeout: float = IDLE_TIMEOUT, request_timeout: float = REQUEST_TIMEOUT,
                 max_body: int = MAX_BODY, bolt_limits: BoltLimits = BoltLimits(),
                 mcp: McpSettings = McpSettings(), affinity: Affinity | None = None):
        self.endpoints = Endpoints(tls=tls)
        self.affinity = affinity
        auth = AuthCache()

        def registry() -> TransactionRegistry:
            return TransactionRegistry(tx_idle_timeout, ids=affinity.transaction_ids() if affinity else None)
        self.query_api = QueryApi(session_factory, auth, registry())
        self.tx_endpoint = TransactionalEndpoint(session_factory, auth, registry())
        describe = DescribeEndpoint(session_factory, auth, self.query_api.transactions)
        self.mcp = McpEndpoint(session_factory, auth, self.query_api.transactions, settings=mcp, max_body=max_body)

        async def serve_bolt(reader, writer) -> None:
            await serve_bolt_stream(reader, writer, session_factory, limits=bolt_limits)

        http_app = self._application(max_body)
        if affinity is not None:
            http_app.middlewares.append(affinity.middleware)
        setup_http_routes(http_app, self.query_api, self.tx_endpoint, describe, self.mcp)
        bolt_app = self._application(max_body)
        setup_bolt_port_routes(bolt_app, serve_bolt)
        runner_options = dict(handle_signals=False, access_log=None, keepalive_timeout=request_timeout,
                              shutdown_timeout=SHUTDOWN_TIMEOUT)
        self._runners = [web.AppRunner(http_app, **runner_options), web.AppRunner(bolt_app, **runner_options)]
        self._servers: list[asyncio.Server] = []

    def _application(self, max_body: int) -> web.Application:
        app = web.Application(middlewares=[neo4j_errors], client_max_size=max_body)
        app[ENDPOINTS] = self.endpoints
        app.on_response_prepare.append(allow_any_origin)
        return app

    async def setup(self) -> None:
        for runner in self._runners:
            await runner.setup()

    @property
    def bolt_port_protocol(self) -> Callable[[], asyncio.Protocol]:
        """The protocol factory for HTTP connections arriving on the Bolt port (after `setup`)."""
        return self._runners[1].server

    async def listen(self, host: str, port: int, ssl_context: ssl.SSLContext | None = None, *,
                     reuse_port: bool = False) -> asyncio.Server:
        """Serve the HTTP APIs on host:port (after `setup`); `reuse_port`: SO_REUSEPORT."""
        server = await asyncio.get_running_loop().create_server(
            self._runners[0].server, host, port, ssl=ssl_context, reuse_port=reuse_port)
        self._servers.append(server)
        self.endpoints.http_port = server.sockets[0].getsockname()[1]
        if self.affinity is not None:       # where the other workers hand over this one's requests
            self._servers.append(await asyncio.get_running_loop().create_unix_server(
                self._runners[0].server, str(self.affinity.socket(self.affinity.index))))
        return server

    async def close(self) -> None:
        """Stop listening, end open requests and roll back open HTTP transactions."""
        for server in self._servers:
            server.close()
        for runner in self._runners:
            await runner.cleanup()
        if self.affinity is not None:
            await self.affinity.close()
        await self.mcp.close()
        await self.query_api.transactions.close()
        await self.tx_endpoint.transactions.close()
