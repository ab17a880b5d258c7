"""Bolt over WebSocket on the Bolt port (Neo4j Browser, the JavaScript driver in a page).

Binary frames carry the raw Bolt byte stream (magic, handshake, chunks), as Neo4j serves
it. `WebSocketStream` adapts an aiohttp WebSocket to the reader/writer pair that
`serve_bolt_stream` takes, so the Bolt state machine is the same one TCP clients get.
Each `drain()` sends what was written since the last one as one frame: the handshake
reply, which the JavaScript driver parses from a single buffer, is one write.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import WSMsgType, web

from proxy.bolt.chunking import MAX_MESSAGE_SIZE

BUFFER_LIMIT = 1024 * 1024        # bytes received but not yet read before frames wait
CLOSE_TIMEOUT = 10.0


class WebSocketStream:
    """A Bolt byte stream over one WebSocket: `readexactly` for the reader side,
    `write`/`drain`/`close`/`wait_closed`/`get_extra_info` for the writer side."""

    def __init__(self, ws: web.WebSocketResponse, request: web.Request):
        self._ws = ws
        self._transport = request.transport
        self._buffer = bytearray()
        self._eof = False
        self._data = asyncio.Event()        # set: the buffer has data, or the stream ended
        self._room = asyncio.Event()        # set: the buffer is below BUFFER_LIMIT
        self._room.set()
        self._pending: list[bytes] = []
        self._closing: asyncio.Future | None = None

    async def receive(self) -> None:
        """Move binary frames into the buffer until the socket closes; a text frame ends it."""
        try:
            async for message in self._ws:
                if message.type is not WSMsgType.BINARY:
                    break
                self._buffer += message.data
                self._data.set()
                if len(self._buffer) >= BUFFER_LIMIT:
                    self._room.clear()
                    await self._room.wait()
        finally:
            self._eof = True
            self._data.set()

    async def readexactly(self, n: int) -> bytes:
        while len(self._buffer) < n:
            if self._eof:
                raise asyncio.IncompleteReadError(bytes(self._buffer), n)
            self._data.clear()
            await self._data.wait()
        data = bytes(self._buffer[:n])
        del self._buffer[:n]
        if len(self._buffer) < BUFFER_LIMIT:
            self._room.set()
        return data

    def write(self, data: bytes) -> None:
        self._pending.append(data)

    async def drain(self) -> None:
        if self._pending:
            data, self._pending = b"".join(self._pending), []
            if self._ws.closed:
                raise ConnectionResetError("the WebSocket is closed")
            await self._ws.send_bytes(data)

    def close(self) -> None:
        if self._closing is None:
            self._closing = asyncio.ensure_future(self._close())

    async def wait_closed(self) -> None:
        if self._closing is not None:
            await self._closing

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default) if self._transport else default

    async def _close(self) -> None:
        try:
            await self.drain()
        except (ConnectionError, RuntimeError):
            pass
        await self._ws.close()


BoltServe = Callable[[Any, Any], Awaitable[None]]


async def serve_websocket(request: web.Request, serve_bolt: BoltServe,
                          opened: Callable[[web.WebSocketResponse], None]) -> web.WebSocketResponse:
    """Upgrade the request and serve Bolt over the WebSocket until either side closes."""
    ws = web.WebSocketResponse(max_msg_size=MAX_MESSAGE_SIZE, compress=False)
    await ws.prepare(request)
    opened(ws)
    stream = WebSocketStream(ws, request)
    receiving = asyncio.create_task(stream.receive())
    try:
        await serve_bolt(stream, stream)
    finally:
        receiving.cancel()
        await asyncio.gather(receiving, return_exceptions=True)
        stream.close()
        try:
            await asyncio.wait_for(stream.wait_closed(), CLOSE_TIMEOUT)
        except (asyncio.TimeoutError, ConnectionError):
            pass
    return ws
