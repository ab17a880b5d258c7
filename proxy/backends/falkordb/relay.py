"""The replication link between the embedded primary and its replica, owned by the proxy.

The replica runs `REPLICAOF 127.0.0.1 <relay port>`; the relay forwards bytes between it and
the primary's Unix socket. While a write transaction is open the relay *holds* the primary's
stream: what the primary sends is kept in memory (it costs what the transaction writes) and
the replica stays exactly at the last committed state. COMMIT releases the held bytes (the
replica catches up); ROLLBACK discards them, and the replica, still at the state before the
transaction, becomes the primary (see `falkordb/pair.py`).

The replica's side of the link never sees a byte of an uncommitted transaction, and the relay
is the only path between the two servers, so this is where "held" is enforced.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

log = logging.getLogger("proxy.falkordb")

_READ_SIZE = 1 << 16


class _Link:
    """One replica connection and its upstream connection to the primary."""

    def __init__(self, relay: "Relay", down_reader: asyncio.StreamReader, down: asyncio.StreamWriter):
        self.relay = relay
        self.down_reader, self.down = down_reader, down
        self.held: list[bytes] = []
        self.tasks: list[asyncio.Task] = []

    async def run(self, upstream: Path) -> None:
        try:
            up_reader, up = await asyncio.open_unix_connection(str(upstream), limit=_READ_SIZE)
        except OSError as exc:               # (stopping: the primary stopped before its replica)
            (log.debug if self.relay.stopping else log.warning)("replication relay: cannot reach the primary: %s", exc)
            self.down.close()
            return
        self.tasks = [asyncio.create_task(self._pump(self.down_reader, up, hold=False)),
                      asyncio.create_task(self._pump(up_reader, self.down, hold=True))]
        try:
            await asyncio.wait(self.tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in self.tasks:
                task.cancel()
            await asyncio.gather(*self.tasks, return_exceptions=True)
            for writer in (up, self.down):
                writer.close()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, *, hold: bool) -> None:
        while data := await reader.read(_READ_SIZE):
            if hold and self.relay.holding:
                self.held.append(data)
                continue
            writer.write(data)
            await writer.drain()

    def release(self) -> None:
        """Send what was held; the replica applies it in order before anything newer."""
        data, self.held = b"".join(self.held), []
        if data and not self.down.is_closing():
            self.down.write(data)

    def discard(self) -> None:
        self.held = []
        for task in self.tasks:
            task.cancel()
        self.down.close()


class Relay:
    """A TCP listener on loopback forwarding replica connections to `upstream` (a Unix socket)."""

    def __init__(self, upstream: Path):
        self.upstream = upstream
        self.holding = False
        self.stopping = False                # the servers are stopping (`ServerPair.stop`)
        self._links: set[_Link] = set()
        self._serving: set[asyncio.Task] = set()
        self._server: asyncio.Server | None = None

    async def start(self) -> int:
        """Listen on 127.0.0.1; returns the port the replica must be pointed at."""
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return self._server.sockets[0].getsockname()[1]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._server is None:             # accepted just before `stop` closed the listener
            writer.close()
            return
        link = _Link(self, reader, writer)
        self._links.add(link)
        self._serving.add(asyncio.current_task())
        try:
            await link.run(self.upstream)
        except asyncio.CancelledError:
            writer.close()                   # stopping: nobody awaits this task
        finally:
            self._links.discard(link)
            self._serving.discard(asyncio.current_task())

    def hold(self) -> None:
        """From now on, keep what the primary sends away from the replica."""
        self.holding = True

    def release(self) -> None:
        """Forward everything held and stop holding (COMMIT)."""
        self.holding = False
        for link in self._links:
            link.release()

    def redirect(self, upstream: Path) -> None:
        """Drop what is held and every link (ROLLBACK); new links go to `upstream`."""
        self.holding = False
        self.upstream = upstream
        for link in list(self._links):
            link.discard()

    @property
    def held_bytes(self) -> int:
        return sum(len(chunk) for link in self._links for chunk in link.held)

    async def stop(self) -> None:
        self.redirect(self.upstream)
        if self._server is not None:
            self._server.close()
            self._server = None
            await asyncio.sleep(0)           # handlers of connections accepted just now start and close
        for task in list(self._serving):
            task.cancel()
        await asyncio.gather(*self._serving, return_exceptions=True)
