"""Byte-level Bolt checks over raw sockets: handshakes as real clients send them, the message state
machine (pipelining, FAILED -> IGNORED until RESET, RESET while streaming, GOODBYE).

Messages are built with `proxy.packstream.Packer` and framed with `proxy.bolt.chunking`, so the
checks speak Bolt exactly as the bytes on the wire say, independent of any driver.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from conformance.report import Section
from proxy.bolt.chunking import chunk, read_message
from proxy.packstream import Packer, unpack_message

MAGIC = bytes.fromhex("6060B017")
MANIFEST_SLOT = bytes.fromhex("000001FF")
TIMEOUT = 10.0

HELLO, GOODBYE, RESET, RUN, BEGIN, COMMIT, ROLLBACK = 0x01, 0x02, 0x0F, 0x10, 0x11, 0x12, 0x13
DISCARD, PULL, LOGON = 0x2F, 0x3F, 0x6A
SUCCESS, RECORD, IGNORED, FAILURE = 0x70, 0x71, 0x7E, 0x7F
NAMES = {SUCCESS: "SUCCESS", RECORD: "RECORD", IGNORED: "IGNORED", FAILURE: "FAILURE"}


def _versions(*spec: str) -> frozenset[tuple[int, int]]:
    """'5.8-5.6' / '4.4' strings as a set of (major, minor)."""
    out = set()
    for item in spec:
        hi, _, lo = item.partition("-")
        major, top = map(int, hi.split("."))
        bottom = int(lo.split(".")[1]) if lo else top
        out |= {(major, m) for m in range(bottom, top + 1)}
    return frozenset(out)


@dataclass(frozen=True)
class Client:
    """One real client's handshake (docs/bolt-and-http-notes.md section 1, version table)."""

    name: str
    slots: bytes
    accepts: frozenset[tuple[int, int]]


_SLOTS_5_28 = MANIFEST_SLOT + bytes.fromhex("00080805 00020404 00000003")
CLIENTS = [
    Client("Python 5.28", _SLOTS_5_28, _versions("5.8-5.0", "4.4-4.2", "3.0")),
    Client("Python 6.x", _SLOTS_5_28, _versions("6.1-6.0", "5.8-5.0", "4.4-4.2", "3.0")),
    Client("JS 5.28", _SLOTS_5_28, _versions("5.8-5.6", "5.4-5.0", "4.4-4.2", "3.0")),
    Client("JS 5.26 (Neo4j Browser)", bytes.fromhex("00070705 00020404 00000104 00000003"),
           _versions("5.7-5.0", "4.4-4.1", "3.0")),
    Client("legacy-only 5.x (no manifest)", bytes.fromhex("00080805 00020404 00000000 00000000"),
           _versions("5.8-5.0", "4.4-4.2")),
]


class Bolt:
    """A raw Bolt connection: handshake, send (pipelined) messages, read replies."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        self.reader, self.writer = reader, writer
        self.version: tuple[int, int] = (5, 0)

    @classmethod
    async def connect(cls, host: str, port: int) -> Bolt:
        return cls(*await asyncio.wait_for(asyncio.open_connection(host, port), TIMEOUT))

    async def read(self, n: int) -> bytes:
        return await asyncio.wait_for(self.reader.readexactly(n), TIMEOUT)

    async def varint(self) -> int:
        value, shift = 0, 0
        while True:
            byte = (await self.read(1))[0]
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    async def handshake(self, client: Client) -> tuple[tuple[int, int], list[tuple[int, int]] | None]:
        """Negotiate as `client` would; returns (version used, manifest offers or None).

        Raises ValueError when the reply is not acceptable to the client.
        """
        self.writer.write(MAGIC + client.slots)
        reply = await self.read(4)
        if reply == MANIFEST_SLOT:
            if not client.slots.startswith(MANIFEST_SLOT):
                raise ValueError("manifest reply to a client that did not ask for one")
            offers = []
            for _ in range(await self.varint()):
                _, span, minor, major = await self.read(4)
                offers += [(major, m) for m in range(minor - span, minor + 1)]
            await self.varint()                                        # capabilities
            usable = sorted(set(offers) & client.accepts, reverse=True)
            if not usable:
                raise ValueError(f"manifest offers {offers}, none usable by {client.name}")
            self.version = usable[0]
            self.writer.write(bytes((0, 0, self.version[1], self.version[0])) + b"\x00")
            return self.version, offers
        self.version = (reply[3], reply[2])
        if reply[:2] != b"\x00\x00" or self.version not in client.accepts:
            raise ValueError(f"reply {reply.hex()} is not a version {client.name} accepts")
        return self.version, None

    def send(self, *messages: tuple[int, list]) -> None:
        """Queue messages in one write (pipelined)."""
        packer = Packer(self.version)
        self.writer.write(b"".join(chunk(packer.pack_message(sig, fields)) for sig, fields in messages))

    async def recv(self) -> tuple[int, list]:
        data = await asyncio.wait_for(read_message(self.reader), TIMEOUT)
        return unpack_message(data, self.version)

    async def recv_n(self, n: int) -> list[tuple[int, list]]:
        return [await self.recv() for _ in range(n)]

    async def closed(self) -> bool:
        """True when the server closes the connection (EOF or reset) within the timeout."""
        try:
            while await asyncio.wait_for(self.reader.read(65536), TIMEOUT):
                pass
            return True
        except (ConnectionError, asyncio.IncompleteReadError):
            return True
        except TimeoutError:
            return False

    def close(self) -> None:
        self.writer.close()

    def login_messages(self, user: str, password: str) -> list[tuple[int, list]]:
        """HELLO (+ LOGON from 5.1; credentials in HELLO before)."""
        hello = {"user_agent": "conformance/1.0"}
        auth = {"scheme": "basic", "principal": user, "credentials": password}
        if self.version >= (5, 1):
            return [(HELLO, [hello]), (LOGON, [auth])]
        return [(HELLO, [{**hello, **auth}])]


def run_msg(query: str, params: dict | None = None, extra: dict | None = None) -> tuple[int, list]:
    return RUN, [query, params or {}, extra or {}]


def pull(n: int = -1) -> tuple[int, list]:
    return PULL, [{"n": n}]


def _sigs(replies: list[tuple[int, list]]) -> list[str]:
    return [NAMES.get(sig, hex(sig)) for sig, _ in replies]


async def _recovers_after_reset(bolt, value: int) -> None:
    """RESET, then a query on the same connection works again."""
    bolt.send((RESET, []), run_msg(f"RETURN {value} AS v"), pull())
    replies = await bolt.recv_n(4)
    assert _sigs(replies) == ["SUCCESS", "SUCCESS", "RECORD", "SUCCESS"], _sigs(replies)
    assert replies[2][1] == [[value]]


class ProtocolChecks:
    """Every check opens its own connection; `run()` fills the section."""

    def __init__(self, host: str, port: int, user: str, password: str, section: Section):
        self.host, self.port, self.user, self.password = host, port, user, password
        self.section = section

    async def session(self, client: Client = CLIENTS[0]) -> Bolt:
        """A connection that is logged in (READY)."""
        bolt = await Bolt.connect(self.host, self.port)
        await bolt.handshake(client)
        login = bolt.login_messages(self.user, self.password)
        bolt.send(*login)
        replies = await bolt.recv_n(len(login))
        if _sigs(replies) != ["SUCCESS"] * len(login):
            raise ValueError(f"login failed: {replies}")
        return bolt

    async def run(self) -> None:
        for client in CLIENTS:
            await self._guard(f"handshake + query as {client.name}", self.client_round_trip(client))
        for name, check in [
            ("wrong magic closes the connection", self.wrong_magic),
            ("no common version: 00 00 00 00 then close", self.no_common_version),
            ("HELLO/LOGON/RUN/PULL pipelined in one write", self.pipelining),
            ("FAILURE -> IGNORED until RESET, then READY", self.failed_until_reset),
            ("RESET while streaming (after a partial PULL)", self.reset_while_streaming),
            ("explicit transaction BEGIN/RUN/PULL/COMMIT, ROLLBACK", self.transaction),
            ("NOOP chunks between messages are ignored", self.noop),
            ("FAILURE metadata has the fields of the negotiated version", self.failure_metadata),
            ("message before HELLO closes the connection", self.wrong_state),
            ("GOODBYE: no reply, connection closed", self.goodbye),
        ]:
            await self._guard(name, check())

    async def _guard(self, name: str, check) -> None:
        try:
            detail = await check
            self.section.check(name, True, detail or "")
        except (TimeoutError, AssertionError, ValueError, OSError, asyncio.IncompleteReadError) as exc:
            self.section.check(name, False, f"{type(exc).__name__}: {exc}")

    async def client_round_trip(self, client: Client) -> str:
        bolt = await Bolt.connect(self.host, self.port)
        try:
            version, offers = await bolt.handshake(client)
            assert version != (5, 5), "negotiated 5.5, which no server may pick"
            assert offers is None or (5, 5) not in offers, "manifest offers 5.5"
            bolt.send(*bolt.login_messages(self.user, self.password), run_msg("RETURN 1 AS one"), pull())
            replies = await bolt.recv_n(len(bolt.login_messages(self.user, self.password)) + 3)
            assert _sigs(replies)[-3:] == ["SUCCESS", "RECORD", "SUCCESS"], _sigs(replies)
            assert replies[-2][1] == [[1]], replies[-2]
            hello = replies[0][1][0]
            if offers is not None and version >= (5, 7):
                assert hello.get("protocol_version") == f"{version[0]}.{version[1]}", \
                    f"HELLO SUCCESS protocol_version {hello.get('protocol_version')!r}"
            how = "manifest" if offers is not None else "legacy"
            return f"Bolt {version[0]}.{version[1]} ({how}), server {hello.get('server')!r}"
        finally:
            bolt.close()

    async def wrong_magic(self) -> None:
        bolt = await Bolt.connect(self.host, self.port)
        bolt.writer.write(b"GARBAGE!" + bytes(12))
        assert await bolt.closed(), "connection left open"

    async def no_common_version(self) -> None:
        bolt = await Bolt.connect(self.host, self.port)
        bolt.writer.write(MAGIC + bytes.fromhex("00000001") + bytes(12))
        assert await bolt.read(4) == bytes(4), "expected 00 00 00 00"
        assert await bolt.closed(), "connection left open"

    async def pipelining(self) -> None:
        bolt = await Bolt.connect(self.host, self.port)
        try:
            await bolt.handshake(CLIENTS[-1])
            login = bolt.login_messages(self.user, self.password)
            bolt.send(*login, run_msg("UNWIND [1, 2, 3] AS x RETURN x"), pull())
            sigs = _sigs(await bolt.recv_n(len(login) + 5))
            assert sigs == ["SUCCESS"] * len(login) + ["SUCCESS", "RECORD", "RECORD", "RECORD", "SUCCESS"], sigs
        finally:
            bolt.close()

    async def failed_until_reset(self) -> None:
        bolt = await self.session()
        try:
            bolt.send(run_msg("RETURN ("), pull(), run_msg("RETURN 1"), pull())
            sigs = _sigs(await bolt.recv_n(4))
            assert sigs == ["FAILURE", "IGNORED", "IGNORED", "IGNORED"], sigs
            await _recovers_after_reset(bolt, 2)
        finally:
            bolt.close()

    async def reset_while_streaming(self) -> None:
        bolt = await self.session()
        try:
            bolt.send(run_msg("UNWIND range(1, 100) AS x RETURN x"), pull(10))
            replies = await bolt.recv_n(12)
            assert _sigs(replies) == ["SUCCESS"] + ["RECORD"] * 10 + ["SUCCESS"], _sigs(replies)
            assert replies[-1][1][0].get("has_more") is True, replies[-1]
            await _recovers_after_reset(bolt, 3)
        finally:
            bolt.close()

    async def transaction(self) -> None:
        bolt = await self.session()
        try:
            bolt.send((BEGIN, [{}]), run_msg("RETURN 4 AS four"), pull(), (COMMIT, []))
            replies = await bolt.recv_n(5)
            assert _sigs(replies) == ["SUCCESS", "SUCCESS", "RECORD", "SUCCESS", "SUCCESS"], _sigs(replies)
            bolt.send((BEGIN, [{}]), run_msg("RETURN 5"), (DISCARD, [{"n": -1}]), (ROLLBACK, []))
            assert _sigs(await bolt.recv_n(4)) == ["SUCCESS"] * 4
        finally:
            bolt.close()

    async def noop(self) -> None:
        bolt = await self.session()
        try:
            bolt.writer.write(b"\x00\x00\x00\x00")
            bolt.send(run_msg("RETURN 6"), pull())
            assert _sigs(await bolt.recv_n(3)) == ["SUCCESS", "RECORD", "SUCCESS"]
        finally:
            bolt.close()

    async def failure_metadata(self) -> str:
        seen = []
        older = Client("5.4-only", bytes.fromhex("00040405") + bytes(12), _versions("5.4-5.0"))
        for client in (CLIENTS[0], older):           # GQL-style (5.7+) and {code, message}
            bolt = await self.session(client)
            try:
                bolt.send(run_msg("RETURN ("))
                sig, fields = await bolt.recv()
                assert sig == FAILURE, NAMES.get(sig)
                meta = fields[0]
                need = ({"neo4j_code", "message", "gql_status", "description"} if bolt.version >= (5, 7)
                        else {"code", "message"})
                assert need <= set(meta), f"Bolt {bolt.version}: missing {need - set(meta)}"
                seen.append(f"{bolt.version[0]}.{bolt.version[1]}")
            finally:
                bolt.close()
        return "checked at Bolt " + ", ".join(seen)

    async def wrong_state(self) -> None:
        bolt = await Bolt.connect(self.host, self.port)
        await bolt.handshake(CLIENTS[-1])
        bolt.send(pull())
        try:
            sig, _ = await bolt.recv()
            assert sig == FAILURE, f"got {NAMES.get(sig)}"
        except asyncio.IncompleteReadError:
            pass                                       # closing without a FAILURE is also fine
        assert await bolt.closed(), "connection left open"

    async def goodbye(self) -> None:
        bolt = await self.session()
        bolt.send((GOODBYE, []))
        data = await asyncio.wait_for(bolt.reader.read(), TIMEOUT)
        assert data == b"", f"unexpected bytes {data[:20].hex()}"


def run_protocol(section: Section, host: str, port: int, user: str, password: str) -> None:
    asyncio.run(ProtocolChecks(host, port, user, password, section).run())
