"""Read a FalkorDB query reply row by row, so a huge result never sits in the proxy's memory.

FalkorDB answers `GRAPH.QUERY ... --compact` with one RESP reply: an error line, or an array of
[header, rows, statistics] (just [statistics] when the query returns nothing). redis-py parses a
reply whole. Here the envelope is read by hand, and each row, a complete RESP value of its own,
is parsed by hiredis when the client pulls it. What the client has not pulled yet waits in the
socket and in FalkorDB's output buffer: the backpressure reaches the database.

The connection speaks RESP3 (`HELLO 3`). FalkorDB's compact replies are the same in both
protocols except for the elements of a vector (`vecf32`), which it sends as doubles: RESP2 makes
them bulk strings that the proxy then parsed one by one (0.5 s for 2,000 vectors of 1,536 floats,
the largest part of reading them back); RESP3 sends `,<double>`, which hiredis turns into Python
floats in C, from the same shortest round-trip text, so the values are the same.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import hiredis

from proxy.backends.falkordb.errors import error_from_reply
from core.errors import database_error

_READ_SIZE = 1 << 16
#: Longest reply line kept (an error line echoes the query, which the guards cap at 1M chars).
MAX_LINE = 4 << 20


class ReplyCut(Exception):
    """FalkorDB closed the connection in the middle of a reply (see `FalkorDBResult`)."""


def _command(args: tuple[Any, ...]) -> bytes:
    parts = [b"*%d\r\n" % len(args)]
    for arg in args:
        data = arg if isinstance(arg, bytes) else str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    return b"".join(parts)


class ReplyStream:
    """One connection to the embedded FalkorDB, reading one query reply at a time.

    Usage: `names = await stream.query(...)`, then `rows(n)` until `remaining` is 0, then
    `statistics()`. After a cancelled or failed read the connection's position in the reply is
    unknown: `broken` is set and the connection must be closed, not reused.
    """

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self._reader, self._writer = reader, writer
        self._parser = hiredis.Reader()
        self.remaining = 0          # rows of the current reply not read yet
        self._statistics_due = False
        self.broken = False

    @classmethod
    async def connect(cls, socket_path: str, password: str | None = None) -> "ReplyStream":
        reader, writer = await asyncio.open_unix_connection(socket_path, limit=_READ_SIZE)
        stream = cls(reader, writer)
        hello = ("HELLO", 3) if password is None else ("HELLO", 3, "AUTH", "default", password)
        writer.write(_command(hello))
        try:
            reply = await stream._reply()
        except BaseException:
            await stream.close()
            raise
        if not isinstance(reply, dict):
            await stream.close()
            raise database_error(f"The embedded FalkorDB refused the proxy's login: {str(reply)[:80]!r}")
        return stream

    @property
    def idle(self) -> bool:
        """True between replies: the connection can serve another query."""
        return not (self.broken or self.remaining or self._statistics_due)

    async def query(self, *args: Any) -> list[str]:
        """Send one GRAPH.(RO_)QUERY and read up to the first row; returns the column names.

        A FalkorDB error reply raises its `CypherError`, leaving the connection idle.
        """
        with self._breaks_on_error():
            self._writer.write(_command(args))
            await self._writer.drain()
            first = await self._line()
            if first == b"*3":
                names = await self._header()
                self.remaining = int((await self._line())[1:])
            elif first == b"*1":
                names = []
            elif not first.startswith(b"-"):
                raise database_error(f"Unexpected reply from FalkorDB: {first[:40]!r}")
        if first.startswith(b"-"):
            raise error_from_reply(first[1:].decode("utf-8", "replace"))
        self._statistics_due = True
        return names

    async def rows(self, n: int) -> list[Any]:
        """Up to `n` more rows (`n < 0`: all that are left), as hiredis parses them."""
        out: list[Any] = []
        with self._breaks_on_error():
            while self.remaining and (n < 0 or len(out) < n):
                row = self._parser.gets()
                if row is False:
                    self._parser.feed(await self._read())
                    continue
                out.append(row)
                self.remaining -= 1
        return out

    async def statistics(self) -> list[bytes]:
        """Skip the rows left and return the statistics lines that end the reply."""
        while self.remaining:
            await self.rows(10_000)
        with self._breaks_on_error():
            while (stats := self._parser.gets()) is False:
                self._parser.feed(await self._read())
            self._statistics_due = False
        if isinstance(stats, hiredis.ReplyError):
            raise error_from_reply(str(stats))
        return stats

    async def close(self) -> None:
        self.broken = True
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (ConnectionError, OSError):
            pass

    # ---- reading

    @contextmanager
    def _breaks_on_error(self) -> Iterator[None]:
        """A read interrupted by anything (a RESET's cancellation, a lost socket) leaves the
        connection somewhere inside a reply: it can only be closed."""
        try:
            yield
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            self.broken = True
            raise ReplyCut() from exc
        except BaseException:
            self.broken = True
            raise

    async def _read(self) -> bytes:
        data = await self._reader.read(_READ_SIZE)
        if not data:
            raise ReplyCut()
        return data

    async def _reply(self) -> Any:
        """One whole reply, parsed by hiredis (an error reply as a `hiredis.ReplyError`)."""
        while (reply := self._parser.gets()) is False:
            self._parser.feed(await self._read())
        return reply

    async def _line(self) -> bytes:
        """One CRLF-terminated line; one longer than the read buffer (an error echoing a
        100,000-digit literal) is read in pieces, and cut at MAX_LINE bytes."""
        pieces: list[bytes] = []
        size = 0
        while True:
            try:
                piece = await self._reader.readuntil(b"\r\n")
            except asyncio.LimitOverrunError as exc:
                piece = await self._reader.readexactly(exc.consumed)
                if size < MAX_LINE:
                    pieces.append(piece)
                size += len(piece)
                continue
            pieces.append(piece[:-2])
            return b"".join(pieces)[:MAX_LINE]

    async def _header(self) -> list[str]:
        """`*K` then K pairs `[column type, name]`; only the names matter."""
        count = int((await self._line())[1:])
        names = []
        for _ in range(count):
            await self._line()                      # *2
            await self._line()                      # :type
            size = int((await self._line())[1:])    # $len
            names.append((await self._reader.readexactly(size + 2))[:-2].decode("utf-8", "replace"))
        return names

