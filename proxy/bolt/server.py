"""The Bolt listener: accept, negotiate a version, hand the socket to a `BoltConnection`.

Whatever one client sends (garbage, a wrong magic, an oversized message) only ever
closes that client's connection; the listener keeps serving.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from typing import Callable

from proxy.bolt.connection import BoltConnection
from proxy.bolt.handshake import HandshakeError, negotiate
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


async def start_bolt_server(host: str, port: int, session_factory: Callable[[], Session], *,
                            ssl_context: ssl.SSLContext | None = None,
                            routing_address: str | None = None,
                            limits: BoltLimits = BoltLimits()) -> asyncio.Server:
    """Listen for Bolt clients (TLS when `ssl_context` is given: bolt+s://).

    `routing_address` ("host:port") is what ROUTE tells clients to connect to; by default
    the address the client reached this server on.
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

    return await asyncio.start_server(on_connect, host, port, ssl=ssl_context)
