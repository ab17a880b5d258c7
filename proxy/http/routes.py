"""The URL table of each listener: the HTTP port's APIs and the Bolt port's own HTTP."""

from __future__ import annotations

import weakref

from aiohttp import web

from proxy.http.describe import DescribeEndpoint
from proxy.http.discovery import discovery
from proxy.http.mcp import McpEndpoint
from proxy.http.query_api import QueryApi
from proxy.http.tx_endpoint import TransactionalEndpoint
from proxy.http.websocket import BoltServe, serve_websocket


def setup_http_routes(app: web.Application, query_api: QueryApi, tx: TransactionalEndpoint,
                      describe: DescribeEndpoint, mcp: McpEndpoint) -> None:
    """The HTTP port: discovery, the Query API v2, the transactional endpoint, describe() and MCP."""
    add = app.router.add_route
    app.router.add_get("/", discovery)                       # (and HEAD)
    add("POST", "/db/{db}/query/v2", query_api.run)
    add("POST", "/db/{db}/query/v2/tx", query_api.begin)
    add("POST", "/db/{db}/query/v2/tx/{tx}", query_api.run_in_transaction)
    add("DELETE", "/db/{db}/query/v2/tx/{tx}", query_api.rollback)
    add("POST", "/db/{db}/query/v2/tx/{tx}/commit", query_api.commit)
    add("POST", "/db/{db}/tx/commit", tx.commit_now)        # before /tx/{tx}: "commit" is no id
    add("POST", "/db/{db}/tx", tx.begin)
    add("POST", "/db/{db}/tx/{tx}", tx.run)
    add("DELETE", "/db/{db}/tx/{tx}", tx.rollback)
    add("POST", "/db/{db}/tx/{tx}/commit", tx.commit)
    app.router.add_get("/describe", describe.describe)
    app.router.add_get("/db/{db}/describe", describe.describe)
    add("POST", "/mcp", mcp.handle)          # MCP's Streamable HTTP (GET: 405, no server-sent stream)


def setup_bolt_port_routes(app: web.Application, serve_bolt: BoltServe) -> None:
    """The Bolt port, as Neo4j serves it: `GET /` is discovery, or Bolt when it upgrades
    to a WebSocket (at any path: the JavaScript driver connects to `ws://host:port`).
    Open WebSockets are closed when the server shuts down."""
    sockets: weakref.WeakSet[web.WebSocketResponse] = weakref.WeakSet()

    async def discovery_or_websocket(request: web.Request) -> web.StreamResponse:
        if web.WebSocketResponse().can_prepare(request).ok:
            return await serve_websocket(request, serve_bolt, sockets.add)
        if request.path != "/":
            raise web.HTTPNotFound()
        return await discovery(request)

    async def close_sockets(app: web.Application) -> None:
        for ws in list(sockets):
            await ws.close(code=1001, message=b"server shutdown")

    app.router.add_get("/{path:.*}", discovery_or_websocket)
    app.on_shutdown.append(close_sockets)
