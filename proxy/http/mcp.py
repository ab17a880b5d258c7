"""MCP's Streamable HTTP at `/mcp` on the HTTP port: the `mcp` SDK's transport behind our auth.

Each request is authenticated like the other HTTP endpoints (Basic or Bearer, passed to the
backend as the login; 401 with a Neo4j error body otherwise), read within the same body limit,
and handed to the SDK's session manager with its logged-on `Session` in the ASGI scope's
`state`, where the tool calls it carries find it. The manager is stateless (every POST stands
alone, as every Query API request does: no MCP session to expire or to steal) and answers with
plain JSON rather than an SSE stream. Only POST is served: the tools send the client nothing
unasked, so a GET for a server-sent stream is answered 405, as the specification allows.

The SDK speaks ASGI and the proxy aiohttp; `call_asgi` bridges one plain HTTP request (no
WebSocket, no lifespan), which is all this transport needs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aiohttp import web

from proxy.http.api import HttpApi
from proxy.http.body import read_body
from proxy.mcp.settings import McpSettings

# The SDK logs every stateless request at INFO ("Terminating session: None"): noise at the
# proxy's default level; its warnings and errors still show.
logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)

#: The key of the request's logged-on `Session` in the ASGI scope's `state`.
SESSION_KEY = "cypher_proxy_session"

Asgi = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[dict]], Callable[[dict], Awaitable[None]]],
                Awaitable[None]]


def _session_of(ctx: Any):
    return ctx.request.scope["state"][SESSION_KEY]


class McpEndpoint(HttpApi):
    """`POST /mcp`: MCP's Streamable HTTP transport."""

    def __init__(self, *args: Any, settings: McpSettings, max_body: int):
        super().__init__(*args)
        self._settings, self._max_body = settings, max_body
        self._manager: Any = None
        self._starting = asyncio.Lock()
        self._stop = asyncio.Event()
        self._task: asyncio.Task | None = None

    async def handle(self, request: web.Request) -> web.StreamResponse:
        session = await self.logon(request)
        body = await read_body(request)
        manager = await self._running_manager()
        return await call_asgi(manager.handle_request, request, body, {SESSION_KEY: session})

    async def _running_manager(self) -> Any:
        """The SDK's session manager, made and started by the first request: importing the SDK
        takes ~1 s (done in a thread, off the event loop), which a proxy no agent asks should
        not spend at start. It runs in a task of its own (its task group) until `close`."""
        async with self._starting:
            if self._manager is None:
                manager = await asyncio.to_thread(_new_manager, self._settings, self._max_body)
                started = asyncio.Event()

                async def run() -> None:
                    async with manager.run():
                        started.set()
                        await self._stop.wait()

                self._task = asyncio.create_task(run(), name="mcp-session-manager")
                ready = asyncio.ensure_future(started.wait())
                await asyncio.wait({self._task, ready}, return_when=asyncio.FIRST_COMPLETED)
                if not started.is_set():            # it failed to start: say why, try again next time
                    ready.cancel()
                    self._task.result()
                self._manager = manager
        return self._manager

    async def close(self) -> None:
        if self._task is not None:
            self._stop.set()
            with contextlib.suppress(Exception):
                await self._task


def _new_manager(settings: McpSettings, max_body: int) -> Any:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    from proxy.mcp.server import build_server
    return StreamableHTTPSessionManager(build_server(settings, _session_of), json_response=True, stateless=True,
                                        max_request_body_size=max_body)


def _scope(request: web.Request, state: dict[str, Any]) -> dict[str, Any]:
    peer = request.transport.get_extra_info("peername") if request.transport else None
    sock = request.transport.get_extra_info("sockname") if request.transport else None
    return {
        "type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": f"{request.version.major}.{request.version.minor}",
        "method": request.method, "scheme": request.scheme, "root_path": "",
        "path": request.path, "raw_path": request.raw_path.split("?", 1)[0].encode(),
        "query_string": request.query_string.encode(),
        "headers": [(k.lower(), v) for k, v in request.raw_headers],
        "client": tuple(peer[:2]) if peer else None, "server": tuple(sock[:2]) if sock else None,
        "state": state,
    }


async def call_asgi(app: Asgi, request: web.Request, body: bytes, state: dict[str, Any]) -> web.StreamResponse:
    """Serve one HTTP request, whose `body` was read already, with the ASGI application `app`."""
    response: web.StreamResponse | None = None
    body_sent = False
    finished = asyncio.Event()

    async def receive() -> dict:
        nonlocal body_sent
        if not body_sent:
            body_sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await finished.wait()                      # nothing more comes until the exchange ends
        return {"type": "http.disconnect"}

    async def send(message: dict) -> None:
        nonlocal response
        if message["type"] == "http.response.start":
            response = web.StreamResponse(status=message["status"])
            for name, value in message.get("headers", []):
                response.headers.add(name.decode("latin-1"), value.decode("latin-1"))
            await response.prepare(request)
        elif message["type"] == "http.response.body" and response is not None:
            await response.write(message.get("body", b""))
            if not message.get("more_body", False):
                await response.write_eof()

    try:
        await app(_scope(request, state), receive, send)
    finally:
        finished.set()
    if response is None:
        raise web.HTTPInternalServerError(reason="The MCP transport sent no response")
    return response
