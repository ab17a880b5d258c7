"""One Bolt connection to the upstream Neo4j, from the client side: the proxy's own small client.

The proxy speaks Bolt to the upstream itself rather than through the official driver because it
can then hand back what the upstream sent as it arrived: `records()` returns RECORD messages
still in their chunks, ready to be written to a client that reads the same record encoding
(`proxy.packstream.record_encoding`), with no decoding or encoding in between. Summaries
(SUCCESS, FAILURE, IGNORED) are decoded; so are records wherever the proxy needs their values.

Requests are pipelined: `send` queues messages, the responses are read in order. One task uses
a connection at a time (the pool hands it out); `expecting` counts the responses not read yet,
so the pool can tell a connection that is clean from one abandoned mid-exchange. A read that is
interrupted (cancelled, timed out, cut) leaves the connection `broken`: it is closed, never reused.

A transaction's BEGIN (`begin`) waits to leave with the next request, and its reply is read
before any other, by whichever read comes first (`begun`): the code that sends a transaction's
first request (a RUN, probes, a COMMIT) need not know that BEGIN went with it. Once the upstream
has refused BEGIN, nothing but RESET goes out on the connection until the pool takes it back, so
no request meant for the transaction can run outside one.
"""

from __future__ import annotations

import asyncio
import platform
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proxy.backends.neo4j.errors import NOT_A_WRITER, UpstreamLost, from_failure, unreachable
from proxy.bolt import messages as m
from proxy.bolt.chunking import chunk
from proxy.bolt.handshake import MAGIC, HandshakeError, encode_varint, read_varint
from core.errors import CypherError
from proxy.packstream import Packer, PackStreamError, record_encoding, unpack_message

READ_SIZE = 1 << 18
USER_AGENT = "cypher-proxy/1.0"
#: Versions this client speaks, best first (5.5 does not exist on servers).
VERSIONS = ((6, 0), (5, 8), (5, 7), (5, 6), (5, 4), (5, 3), (5, 2), (5, 1), (5, 0), (4, 4))
_SLOT_5 = bytes((0, 8, 8, 5))             # 5.8 down to 5.0
_SLOT_44 = bytes((0, 0, 4, 4))
_SLOT_MANIFEST = bytes((0, 0, 1, 0xFF))
#: Handshake slots per record encoding the connection is for: the encoding's own versions first.
_OFFERS = {
    "bolt6": _SLOT_MANIFEST + _SLOT_5 + _SLOT_44 + bytes(4),
    "bolt5": _SLOT_5 + _SLOT_44 + bytes(8),
    "bolt4": _SLOT_44 + _SLOT_5 + bytes(8),
    "bolt4-utc": _SLOT_44 + _SLOT_5 + bytes(8),
}


_SUCCESS = bytes((m.SUCCESS,))


class Ignored(Exception):
    """The upstream answered IGNORED (an earlier request in the pipeline failed)."""


@dataclass(frozen=True, slots=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"

    @classmethod
    def parse(cls, text: str, default_port: int = 7687) -> "Address":
        host, _, port = text.rpartition(":")
        if not host or not port.isdigit():
            return cls(text.strip("[]"), default_port)
        return cls(host.strip("[]"), int(port))


async def connect(address: Address, *, auth: dict[str, Any], encoding: str, ssl_context: ssl.SSLContext | None,
                  routing: dict[str, Any] | None, timeout: float) -> "UpstreamConnection":
    """A logged-in connection to `address` (handshake, HELLO, LOGON within `timeout` seconds).

    Raises the upstream's `CypherError` if it refuses the login, `DatabaseUnavailable` if it
    cannot be reached."""
    writer = None
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(
                address.host, address.port, ssl=ssl_context, limit=READ_SIZE,
                server_hostname=address.host if ssl_context else None)
            version = await _handshake(reader, writer, encoding)
            connection = UpstreamConnection(reader, writer, address, version)
            await connection.login(auth, routing, utc_patch=encoding == "bolt4-utc")
            return connection
    except BaseException as error:
        if writer is not None:
            writer.close()
        if isinstance(error, (OSError, TimeoutError, asyncio.IncompleteReadError, HandshakeError, PackStreamError)):
            raise unreachable(str(address), error or "no answer") from error
        raise


async def _handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, encoding: str) -> tuple[int, int]:
    writer.write(MAGIC + _OFFERS[encoding])
    reply = await reader.readexactly(4)
    if reply == _SLOT_MANIFEST:
        offered = await _manifest_offers(reader)
        version = next((v for v in VERSIONS if any(v[0] == major and minor - span <= v[1] <= minor
                                                   for major, minor, span in offered)), None)
        if version is None:
            raise OSError("the server offers no Bolt version the proxy speaks")
        writer.write(bytes((0, 0, version[1], version[0])) + encode_varint(0))
        return version
    version = (reply[3], reply[2])
    if version not in VERSIONS:
        raise OSError(f"the server chose Bolt {version[0]}.{version[1]}, which was not offered")
    return version


async def _manifest_offers(reader: asyncio.StreamReader) -> list[tuple[int, int, int]]:
    count = await read_varint(reader)
    offers = []
    for _ in range(min(count, 64)):
        slot = await reader.readexactly(4)
        offers.append((slot[3], slot[2], slot[1]))
    await read_varint(reader)               # the server's capabilities: none used
    return offers


def message_end(buf: bytes | bytearray, p: int) -> tuple[int, int] | None:
    """`(end, signature)` of the framed message starting at `p` (NOOPs before it included),
    or None if it has not all arrived."""
    n = len(buf)
    while p + 2 <= n and not (buf[p] or buf[p + 1]):
        p += 2                                # NOOP
    if p + 4 > n:
        return None
    first = buf[p] << 8 | buf[p + 1]
    signature = buf[p + 3] if first >= 2 else -1
    start = p
    while p + 2 <= n:
        size = buf[p] << 8 | buf[p + 1]
        p += 2
        if size == 0:
            if signature < 0:
                signature = payload(buf, start, p)[1]
            return p, signature
        p += size
    return None


def payload(buf: bytes | bytearray, p: int, end: int) -> bytes:
    """The message framed in `buf[p:end]` without its chunk headers."""
    parts = []
    while p < end:
        size = buf[p] << 8 | buf[p + 1]
        parts.append(buf[p + 2:p + 2 + size])
        p += 2 + size
    return b"".join(parts)


class UpstreamConnection:
    """A negotiated, logged-in Bolt connection to one upstream server."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, address: Address,
                 version: tuple[int, int]):
        self._reader, self._writer = reader, writer
        self.address = address
        self.version = version
        self.utc_patch = False
        self.encoding = record_encoding(version, False)
        self._packer = Packer(version)
        self._buf = bytearray()
        self._pos = 0
        self._out: list[bytes] = []    # requests queued by `send`
        self.expecting = 0             # responses to requests sent and not read yet
        self.failed = False            # a FAILURE was read: the server ignores all until RESET
        self.broken = False            # an exchange was cut off: only good for closing
        self.lost = False              # ... by the server or the network (not by our side)
        self.read_timeout: float | None = None
        #: Event-loop time after which a silent server counts as lost (set per transaction).
        self.deadline: float | None = None
        self.server = ""
        #: The database the connection's work is for (None: the home database), and whom to tell,
        #: the moment the server answers that it takes no writes for it (before the client hears).
        self.database: str | None = None
        self.on_write_refused: Callable[[Address, str | None], None] | None = None
        self._begin_due = False        # a BEGIN's reply is still to be read, before any other
        #: The upstream's refusal of the transaction's BEGIN (cleared when the pool takes it back).
        self.begin_refusal: CypherError | None = None

    # ---- setup ----------------------------------------------------------------------

    async def login(self, auth: dict[str, Any], routing: dict[str, Any] | None, *, utc_patch: bool) -> None:
        extra: dict[str, Any] = {"user_agent": USER_AGENT}
        if routing is not None:                      # as the drivers: only for neo4j:// URIs
            extra["routing"] = routing
        if self.version >= (5, 3):
            extra["bolt_agent"] = {"product": USER_AGENT, "platform": platform.platform(),
                                   "language": "Python", "language_details": platform.python_version()}
        if utc_patch and self.version == (4, 4):
            extra["patch_bolt"] = ["utc"]
        if self.version < (5, 1):
            extra.update(auth)
            self.send(m.HELLO, extra)
        else:
            self.send(m.HELLO, extra)
            self.send(m.LOGON, auth)
        await self.flush()
        hello = await self.response()
        if self.version >= (5, 1):
            await self.response()
        self.server = str(hello.get("server", ""))
        if "utc" in (hello.get("patch_bolt") or ()):
            self.utc_patch = True
            self.encoding = record_encoding(self.version, True)
            self._packer = Packer(self.version, utc_patch=True)
        timeout = (hello.get("hints") or {}).get("connection.recv_timeout_seconds")
        if isinstance(timeout, int) and timeout > 0:
            self.read_timeout = float(timeout)       # the server promises NOOPs at least this often

    async def relogin(self, auth: dict[str, Any]) -> None:
        """LOGOFF + LOGON (Bolt 5.1+): the server checks the token again, on this connection."""
        self.send(m.LOGOFF)
        self.send(m.LOGON, auth)
        await self.flush()
        await self.response()
        await self.response()

    # ---- requests --------------------------------------------------------------------

    def send(self, signature: int, *fields: Any) -> None:
        """Queue one request (written by `flush`)."""
        if self.broken:
            raise UpstreamLost(str(self.address), "the connection broke earlier")
        if self.begin_refusal is not None and signature != m.RESET:
            raise self.begin_refusal
        self._out.append(chunk(self._packer.pack_message(signature, list(fields))))
        self.expecting += 1

    def begin(self, extra: dict[str, Any]) -> None:
        """Queue BEGIN: it leaves with the next request, and its reply is read first (`begun`)."""
        self.send(m.BEGIN, extra)
        self._begin_due = True

    async def begun(self) -> None:
        """Read BEGIN's reply if it is still due (writing what is queued first); raise the
        upstream's refusal, now and after."""
        if self._begin_due:
            self._begin_due = False
            try:
                await self.flush()
                await self.response()
            except CypherError as error:
                self.begin_refusal = error
        if self.begin_refusal is not None:
            raise self.begin_refusal

    async def flush(self) -> None:
        """Write the queued requests in one go (one system call, one segment for RUN + PULL)."""
        out, self._out = self._out, []
        try:
            self._writer.write(b"".join(out))
            await self._writer.drain()
        except BaseException as error:
            raise self._break(error) from error

    async def reset(self) -> None:
        """RESET and read every response still due: the connection is clean and ready again."""
        self.send(m.RESET)
        await self.flush()
        while self.expecting:
            try:
                await self.response()
            except (CypherError, Ignored):
                pass
            except _RecordsLeft:
                await self.skip_records()
        self.failed = False

    def close(self) -> None:
        self.broken = True
        self._writer.close()

    @property
    def reusable(self) -> bool:
        return not (self.broken or self.expecting or self._writer.is_closing() or self._reader.at_eof())

    # ---- responses -------------------------------------------------------------------

    async def response(self, wanted: tuple[bytes, ...] | None = None) -> dict[str, Any]:
        """The next response's SUCCESS metadata; raises the upstream's `CypherError` on FAILURE,
        `Ignored` on IGNORED, and `_RecordsLeft` if records of a result come first.

        `wanted`: the metadata keys the caller reads (None: all); a SUCCESS whose bytes hold none
        of them is read past undecoded, as `{}` (a summary's GQL statuses take ~5 µs to decode)."""
        if self._begin_due:
            await self.begun()
        while (found := message_end(self._buf, self._pos)) is None:
            await self._read_more()
        end, signature = found
        if signature == m.RECORD:
            raise _RecordsLeft
        start, self._pos = self._pos, end
        return self._summary(start, end, wanted)

    async def records(self, limit: int, wanted: tuple[bytes, ...] | None = None) -> tuple[bytes, int, Any]:
        """The next RECORD messages, framed as they arrived: up to `limit` (< 0: all that have
        arrived, at least one), then the response that ends them if it is here already.

        Returns `(framed, count, end)`: `end` is the SUCCESS metadata (decoded as `response`
        decodes it for `wanted`), a `CypherError` (FAILURE), an `Ignored`, or None when more
        records are to come."""
        if self._begin_due:
            await self.begun()
        buf = self._buf
        start = p = self._pos
        count = 0
        size = len(buf)
        while count != limit:
            if p + 4 <= size:                         # the common case, inline: a one-chunk RECORD
                end = p + 2 + (buf[p] << 8 | buf[p + 1])
                if buf[p + 3] == m.RECORD and end + 2 <= size and not (buf[end] or buf[end + 1]) and end > p + 3:
                    p = end + 2
                    count += 1
                    continue
            found = message_end(buf, p)               # NOOPs, chunked records, the summary, or not here yet
            if found is None:
                if count and limit < 0:
                    break
                if start:                             # keep the buffer small; offsets move
                    del buf[:start]
                    p -= start
                    start = self._pos = 0
                await self._read_more()
                size = len(buf)
                continue
            if found[1] != m.RECORD:
                break
            p = found[0]
            count += 1
        framed = bytes(memoryview(buf)[start:p])
        self._pos = p
        found = message_end(buf, p)
        outcome = None
        if found is not None and found[1] != m.RECORD:
            outcome = self._outcome(p, found[0], wanted)
        if self._pos == len(buf):
            buf.clear()
            self._pos = 0
        return framed, count, outcome

    async def skip_records(self) -> None:
        """Read past records nobody wants, up to the response that ends them."""
        while (await self.records(-1))[2] is None:
            pass

    def decode_records(self, framed: bytes) -> list[list[Any]]:
        """Rows of the framed RECORD messages `records()` returned."""
        rows = []
        p, size = 0, len(framed)
        while p < size:
            end = p + 2 + (framed[p] << 8 | framed[p + 1])
            if end > p + 2 and end + 2 <= size and not (framed[end] or framed[end + 1]):   # one chunk: the usual case
                body, p = framed[p + 2:end], end + 2
            else:                                      # NOOPs before it, or a record over several chunks
                end = message_end(framed, p)[0]
                body, p = payload(framed, p, end), end
            rows.append(unpack_message(body, self.version, self.utc_patch)[1][0])
        return rows

    def _outcome(self, start: int, end: int, wanted: tuple[bytes, ...] | None) -> Any:
        self._pos = end
        try:
            return self._summary(start, end, wanted)
        except (CypherError, Ignored) as error:
            return error

    def _summary(self, start: int, end: int, wanted: tuple[bytes, ...] | None) -> dict[str, Any]:
        message = payload(self._buf, _after_noops(self._buf, start), end)
        if wanted is not None and message[1:2] == _SUCCESS and not any(key in message for key in wanted):
            self.expecting -= 1
            return {}
        try:
            signature, fields = unpack_message(message, self.version, self.utc_patch)
        except PackStreamError as error:
            raise self._break(error) from error
        self.expecting -= 1
        if signature == m.SUCCESS and fields and isinstance(fields[0], dict):
            return fields[0]
        if signature == m.FAILURE:
            self.failed = True
            error = from_failure(fields[0] if fields and isinstance(fields[0], dict) else {})
            if error.code in NOT_A_WRITER and self.on_write_refused is not None:
                self.on_write_refused(self.address, self.database)
            raise error
        if signature == m.IGNORED:
            raise Ignored()
        raise self._break(f"unexpected message {m.name(signature)} from the server")

    async def _read_more(self) -> None:
        if self.broken:
            raise UpstreamLost(str(self.address), "the connection broke earlier")
        try:
            if (deadline := self._read_deadline()) is None:     # no timer to arm: the common case
                data = await self._reader.read(READ_SIZE)
            else:
                async with asyncio.timeout_at(deadline):
                    data = await self._reader.read(READ_SIZE)
        except BaseException as error:
            raise self._break(error) from error
        if not data:
            raise self._break("closed by the server")
        self._buf += data

    def _read_deadline(self) -> float | None:
        """When waiting for the server becomes giving up on it: twice the NOOP interval it
        promised, or the `deadline` of the transaction the connection serves."""
        deadlines = [self.deadline] if self.deadline is not None else []
        if self.read_timeout is not None:
            deadlines.append(asyncio.get_running_loop().time() + 2 * self.read_timeout)
        return min(deadlines, default=None)

    def _break(self, reason: object) -> BaseException:
        """Mark the connection broken and close it; what to raise for `reason`."""
        self.close()
        if isinstance(reason, BaseException) and not isinstance(reason, (OSError, TimeoutError, PackStreamError)):
            return reason                        # cancellation and the like propagate as they are
        self.lost = True
        return UpstreamLost(str(self.address), reason)


def _after_noops(buf: bytearray, p: int) -> int:
    while not (buf[p] or buf[p + 1]):
        p += 2
    return p


class _RecordsLeft(Exception):
    """A response was expected but records of a result came first."""
