"""Connections to one of the two servers: a redis client for commands, and idle reply streams for
queries (`stream.py`), dropped when the server behind them restarts as a new process."""

from __future__ import annotations

from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.connection import UnixDomainSocketConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError

from core.errors import CypherError, unavailable
from proxy.backends.falkordb.errors import error_from_reply
from proxy.backends.falkordb.server import EmbeddedFalkorDB
from proxy.backends.falkordb.stream import ReplyStream


class Endpoint:
    """Connections to one server: a redis client for commands, idle reply streams for queries."""

    def __init__(self, server: EmbeddedFalkorDB, max_connections: int):
        self.server = server
        self.max_connections = max_connections
        pool = aioredis.BlockingConnectionPool(
            connection_class=UnixDomainSocketConnection, path=str(server.socket_path),
            password=server.password, max_connections=max_connections, timeout=None,
            socket_timeout=None,             # FalkorDB enforces query timeouts itself
            retry=Retry(NoBackoff(), 0))     # never re-send: a retried CREATE would run twice
        self.client = aioredis.Redis(connection_pool=pool)
        self.idle: list[ReplyStream] = []
        self._pid = server.pid

    async def _drop_stale(self) -> None:
        """Forget connections to an earlier process of the server (a rollback or an aborted
        write restarts the old primary as a new process)."""
        if self.server.pid != self._pid:
            self._pid = self.server.pid
            await self.reset()

    async def call(self, *args: Any) -> Any:
        """One RESP command; every failure becomes a `CypherError`."""
        await self._drop_stale()
        try:
            reply = await self.client.execute_command(*args)
        except ResponseError as exc:
            raise error_from_reply(str(exc)) from None
        except (RedisError, OSError) as exc:
            raise unavailable(f"Lost the embedded FalkorDB: {exc}") from None
        if isinstance(reply, list) and reply and isinstance(reply[-1], ResponseError):
            raise error_from_reply(str(reply[-1]))
        return reply

    async def stream(self) -> ReplyStream:
        await self._drop_stale()
        if self.idle:
            return self.idle.pop()
        try:
            return await ReplyStream.connect(str(self.server.socket_path), self.server.password)
        except (OSError, CypherError) as exc:
            raise unavailable(f"Lost the embedded FalkorDB: {exc}") from None

    async def release(self, stream: ReplyStream) -> None:
        if stream.idle and len(self.idle) < self.max_connections:
            self.idle.append(stream)
        else:
            await stream.close()

    async def reset(self) -> None:
        """Forget every connection (the server restarted or changed role)."""
        idle, self.idle = self.idle, []
        for stream in idle:
            await stream.close()
        await self.client.connection_pool.disconnect()

    async def close(self) -> None:
        await self.reset()
        await self.client.aclose(close_connection_pool=True)
