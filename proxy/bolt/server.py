"""The Bolt listener: accept, negotiate a version, hand the socket to a `BoltConnection`.

The Bolt port also speaks HTTP, as Neo4j's does: the first bytes of each connection
(after TLS, if configured) decide. The Bolt magic goes to the Bolt state machine; an HTTP
GET (or HEAD, OPTIONS) request goes to the HTTP front end (discovery, Bolt over
WebSocket); anything else is closed. Whatever one client sends (garbage, a wrong magic,
an oversized message) only ever closes that client's connection; the listener keeps serving.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Callable

from proxy.bolt.connection import BoltConnection
from proxy.bolt.handshake import MAGIC, HandshakeError, negotiate
from proxy.bolt.limits import BoltLimits
from proxy.session import Session

log = logging.getLogger("proxy.bolt")

HANDSHAKE_TIMEOUT = 30.0     # seconds a new socket may take to complete the handshake


async def serve_bolt_stream(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                            session_factory: Callable[[], Session], *,
                            routing_address: str | None = None,
                            limits: BoltLimits = BoltLimits()) -> None:
    """Serve one Bolt byte stream (TCP, TLS or an adapted WebSocket) until it ends."""
    peer = writer.get_extra_info("peername")
    try:
        negotiated = await asyncio.wait_for(negotiate(reader, writer), HANDSHAKE_TIMEOUT)
    except (HandshakeError, asyncio.IncompleteReadError, asyncio.TimeoutError,
            ConnectionError, OSError) as exc:
        log.info("bolt handshake with %s failed: %s", peer, exc or type(exc).__name__)
        writer.close()
        return
    connection = BoltConnection(reader, writer, session_factory(), negotiated.version,
                                manifest=negotiated.manifest, routing_address=routing_address,
                                limits=limits, peer=_host(peer))
    log.debug("%s: %s speaks Bolt %d.%d", connection.connection_id, peer, *negotiated.version)
    await connection.serve()


def _host(peer) -> str | None:
    """The client's address without its port (what login throttling counts by)."""
    if isinstance(peer, (tuple, list)) and peer:
        return str(peer[0])
    return str(peer) if peer else None


#: How the HTTP requests the Bolt port serves begin: discovery, WebSocket upgrade, CORS preflight.
_HTTP_STARTS = (b"GET ", b"HEAD", b"OPTI")


class _PortSniffer(asyncio.Protocol):
    """Reads a connection's first four bytes, then hands the connection to the protocol
    they call for (the bytes read so far included)."""

    def __init__(self, bolt: Callable[[], asyncio.Protocol],
                 http: Callable[[], asyncio.Protocol] | None):
        self._bolt, self._http = bolt, http
        self._head = b""
        self._transport: asyncio.Transport | None = None
        self._timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport          # type: ignore[assignment]
        self._timer = asyncio.get_running_loop().call_later(HANDSHAKE_TIMEOUT, transport.close)

    def data_received(self, data: bytes) -> None:
        self._head += data
        if len(self._head) < len(MAGIC):
            return
        start = self._head[:len(MAGIC)]
        if start == MAGIC:
            factory = self._bolt
        elif self._http is not None and start in _HTTP_STARTS:
            factory = self._http
        else:
            log.info("closing a connection from %s that speaks neither Bolt nor HTTP (%r)",
                     self._transport.get_extra_info("peername"), start)
            self._transport.close()
            return
        self._timer.cancel()
        protocol = factory()
        self._transport.set_protocol(protocol)
        protocol.connection_made(self._transport)
        protocol.data_received(self._head)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._timer is not None:
            self._timer.cancel()


async def start_bolt_server(host: str, port: int, session_factory: Callable[[], Session], *,
                            ssl_context: ssl.SSLContext | None = None,
                            routing_address: str | None = None,
                            http_protocol: Callable[[], asyncio.Protocol] | None = None,
                            limits: BoltLimits = BoltLimits(), reuse_port: bool = False) -> asyncio.Server:
    """Listen for Bolt clients (TLS when `ssl_context` is given: bolt+s://).

    `routing_address` ("host:port") is what ROUTE tells clients to connect to; by default
    the address the client reached this server on. Connections that start with an HTTP
    request go to `http_protocol` (none: they are closed). `reuse_port`: share the port with
    the other `--workers` (SO_REUSEPORT).
    """
    async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await serve_bolt_stream(reader, writer, session_factory, routing_address=routing_address,
                                    limits=limits)
        except asyncio.CancelledError:
            # Nobody awaits this task; asyncio's stream callback would log the cancellation.
            writer.close()
        except Exception:
            log.exception("bolt connection from %s failed", writer.get_extra_info("peername"))
            writer.close()

    def bolt_protocol() -> asyncio.Protocol:
        return asyncio.StreamReaderProtocol(asyncio.StreamReader(), on_connect)

    return await asyncio.get_running_loop().create_server(
        lambda: _PortSniffer(bolt_protocol, http_protocol), host, port, ssl=ssl_context, reuse_port=reuse_port)
