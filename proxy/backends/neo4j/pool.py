"""Upstream connections kept open between queries: a pool per server, credentials and record encoding.

Every client's queries run upstream under that client's own credentials (the upstream decides
who may read what; the proxy stores no passwords), so a connection is logged in as one client
token and is only handed to queries with an equal token. It is also negotiated for one record
encoding (`proxy.packstream.record_encoding`), the one of the client it serves, so its records
can be relayed as bytes.

A connection goes back to the pool only clean: its responses all read, a FAILURE cleared with
RESET; one broken mid-exchange is closed. Idle connections the server closed are dropped when
found.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proxy.backends.neo4j.client import Address, UpstreamConnection, connect
from core.errors import CypherError

IDLE_PER_KEY = 16            # idle connections kept per (address, credentials, encoding)
KEYS = 256                   # keys kept at most (least recently used dropped)


@dataclass(frozen=True, slots=True)
class Credentials:
    """A client's auth token, comparable and hashable (its pool key); the backend's credential handle."""

    key: tuple
    token: dict[str, Any]

    @classmethod
    def of(cls, token: dict[str, Any]) -> "Credentials":
        return cls(tuple(sorted((name, repr(value)) for name, value in token.items())), dict(token))


class Pool:
    """Idle upstream connections, and the opening of new ones."""

    def __init__(self, *, ssl_context: ssl.SSLContext | None, routing: dict[str, Any] | None,
                 connect_timeout: float):
        self._ssl = ssl_context
        self._routing = routing            # HELLO's routing context (neo4j:// upstreams only)
        self._timeout = connect_timeout
        self._idle: OrderedDict[tuple, list[UpstreamConnection]] = OrderedDict()
        self._keys: dict[UpstreamConnection, tuple] = {}
        #: Told when a server refuses writes (`UpstreamConnection.on_write_refused`): the router.
        self.on_write_refused: Callable[[Address, str | None], None] | None = None

    async def acquire(self, address: Address, credentials: Credentials, encoding: str, *,
                      check_login: bool = False) -> UpstreamConnection:
        """A connection logged in with `credentials`; `check_login`: the server checks them now
        (a client logging in must not get in on an older login: its password may have changed)."""
        key = (address, credentials.key, encoding)
        idle = self._idle.get(key)
        while idle:
            connection = idle.pop()
            if not connection.reusable or (check_login and connection.version < (5, 1)):
                connection.close()
                continue
            if check_login:
                try:
                    await connection.relogin(credentials.token)
                except BaseException:
                    connection.close()
                    raise
            self._keys[connection] = key
            return connection
        connection = await connect(address, auth=credentials.token, encoding=encoding, ssl_context=self._ssl,
                                   routing=self._routing, timeout=self._timeout)
        connection.on_write_refused = self.on_write_refused
        self._keys[connection] = key
        return connection

    async def release(self, connection: UpstreamConnection) -> None:
        """Take a connection back: kept if it can be made clean, else closed."""
        key = self._keys.pop(connection, None)
        connection.deadline = None
        connection.begin_refusal = None        # (its transaction is over)
        if connection.failed and not connection.broken:
            with contextlib.suppress(CypherError, asyncio.CancelledError):
                await connection.reset()
        if connection.lost:                    # the server went away: its idle connections did too
            self.forget(connection.address)
        if key is None or not connection.reusable or connection.failed:
            connection.close()
            return
        idle = self._idle.setdefault(key, [])
        self._idle.move_to_end(key)
        if len(idle) < IDLE_PER_KEY:
            idle.append(connection)
        else:
            connection.close()
        while len(self._idle) > KEYS:
            for dropped in self._idle.popitem(last=False)[1]:
                dropped.close()

    def discard(self, connection: UpstreamConnection) -> None:
        self._keys.pop(connection, None)
        connection.close()

    def forget(self, address: Address) -> None:
        """Close the idle connections to a server found unreachable."""
        for key in [key for key in self._idle if key[0] == address]:
            for connection in self._idle.pop(key):
                connection.close()

    def close(self) -> None:
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()
        for connection in list(self._keys):
            connection.close()
        self._keys.clear()
