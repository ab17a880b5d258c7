"""Test double and helpers for the Bolt unit tests (no tests here).

`MemoryBackend` understands a handful of query shapes, enough to drive every Bolt
message path: lazy counting streams (backpressure), writes with counters and
transactions with rollback, errors, and a query that blocks until interrupted.
The real end-to-end path (FalkorDB behind the proxy) is tested elsewhere.
"""

from __future__ import annotations

import asyncio
import re
import struct
from typing import Any

from core.backend import Backend, Result, Summary, Transaction, TxConfig
from proxy.bolt.chunking import chunk, read_message
from proxy.bolt.server import start_bolt_server
from core.errors import syntax_error, unauthorized
from proxy.packstream import Packer, unpack_message
from proxy.session import Session

USER, PASSWORD = "neo4j", "password"

_RANGE = re.compile(r"UNWIND range\(1, (\d+|\$n)\) AS i RETURN i", re.I)
_CREATE = re.compile(r"CREATE \(:Item \{v: \$v\}\)", re.I)
_MATCH = "MATCH (n:Item) RETURN n.v AS v"
_ECHO = "RETURN $x AS x"
_SLEEP = "CALL sleep()"


class MemoryResult(Result):
    """Rows from a generator, produced only as they are fetched."""

    def __init__(self, keys: list[str], rows, summary: Summary, backend: "MemoryBackend"):
        self.keys = keys
        self._rows = iter(rows)
        self._summary = summary
        self._backend = backend

    async def fetch(self, n: int) -> list[list[Any]]:
        self._backend.fetch_sizes.append(n)
        out = []
        for row in self._rows:
            out.append(row)
            self._backend.rows_produced += 1
            if len(out) == n:
                break
        await asyncio.sleep(0)
        return out

    async def consume(self) -> Summary:
        self._rows = iter(())
        return self._summary


class MemoryTransaction(Transaction):
    def __init__(self, backend: "MemoryBackend", config: TxConfig):
        self.backend = backend
        self.config = config
        self.items = list(backend.items)

    async def begun(self) -> None:
        self.backend.events.append("begun")
        if self.backend.begin_refusal is not None:
            raise self.backend.begin_refusal

    async def run(self, query: str, params: dict[str, Any]) -> Result:
        self.backend.events.append("run")
        return await self.backend.execute(query, params, self.items, bookmark=False)

    async def commit(self) -> str | None:
        self.backend.items = self.items
        self.backend.commits += 1
        return f"FB:tx{self.backend.commits}"

    async def rollback(self) -> None:
        self.backend.rollbacks += 1


class MemoryBackend(Backend):
    kind = "memory"
    default_database = "neo4j"

    def __init__(self):
        super().__init__()
        self.items: list[Any] = []
        self.commits = self.rollbacks = 0
        self.rows_produced = 0
        self.fetch_sizes: list[int] = []
        self.configs: list[TxConfig] = []
        self.sleeping = asyncio.Event()
        self.begin_refusal: Exception | None = None    # what `begun` raises (a database refusing BEGIN)
        self.events: list[str] = []                     # "begin", "begun", "run", in the order they came

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def authenticate(self, auth: dict[str, Any]) -> Any:
        if auth.get("scheme") == "basic" and (auth.get("principal"), auth.get("credentials")) == (USER, PASSWORD):
            return auth["principal"]
        raise unauthorized()

    async def run(self, query, params, config, credentials) -> Result:
        self.configs.append(config)
        items = list(self.items)
        result = await self.execute(query, params, items, bookmark=True)
        self.items = items
        return result

    async def begin(self, config: TxConfig, credentials: Any) -> Transaction:
        self.configs.append(config)
        self.events.append("begin")
        return MemoryTransaction(self, config)

    async def databases(self, credentials: Any) -> list[str]:
        return ["neo4j", "other"]

    async def execute(self, query: str, params: dict, items: list, *, bookmark: bool) -> Result:
        db = self.configs[-1].database or self.default_database if self.configs else self.default_database
        summary = Summary(database=db, bookmark="FB:auto" if bookmark else None)
        if match := _RANGE.fullmatch(query):
            count = params["n"] if match.group(1) == "$n" else int(match.group(1))
            return MemoryResult(["i"], ([i] for i in range(1, count + 1)), summary, self)
        if _CREATE.fullmatch(query):
            items.append(params["v"])
            summary.query_type = "w"
            summary.stats = {"nodes-created": 1, "labels-added": 1, "properties-set": 1}
            return MemoryResult([], (), summary, self)
        if query == _MATCH:
            return MemoryResult(["v"], [[v] for v in list(items)], summary, self)
        if query == _ECHO:
            return MemoryResult(["x"], [[params["x"]]], summary, self)
        if query == _SLEEP:
            self.sleeping.set()
            await asyncio.sleep(3600)
        if query.startswith("BOOM"):
            raise RuntimeError("backend exploded")
        raise syntax_error(f"Invalid input '{query[:20]}': the memory test backend does not know it.")


class BoltServer:
    """An in-process Bolt server on a free port over a fresh MemoryBackend."""

    def __init__(self, **kwargs):
        self.kwargs = kwargs
        self.backend = MemoryBackend()
        self.server: asyncio.Server | None = None

    async def __aenter__(self) -> "BoltServer":
        self.server = await start_bolt_server("127.0.0.1", 0, lambda: Session(self.backend), **self.kwargs)
        return self

    async def __aexit__(self, *exc) -> None:
        assert self.server
        self.server.close()
        await self.server.wait_closed()

    @property
    def port(self) -> int:
        assert self.server
        return self.server.sockets[0].getsockname()[1]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


# ---- raw Bolt client for byte-level tests -------------------------------------------------

MAGIC = b"\x60\x60\xb0\x17"


def slots(*versions: tuple[int, int, int]) -> bytes:
    """Handshake slots from (major, minor, range) triples, padded to four."""
    raw = b"".join(bytes((0, r, mi, ma)) for ma, mi, r in versions)
    return raw + b"\x00" * (16 - len(raw))


class RawClient:
    """An asyncio Bolt client that speaks raw messages (for byte-level protocol tests)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 version: tuple[int, int] = (5, 4)):
        self.reader, self.writer, self.version = reader, writer, version
        self.packer = Packer(version)

    @classmethod
    async def connect(cls, port: int, version: tuple[int, int] = (5, 4), *, hello: bool = True) -> "RawClient":
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(MAGIC + slots((version[0], version[1], 0)))
        assert await reader.readexactly(4) == bytes((0, 0, version[1], version[0]))
        client = cls(reader, writer, version)
        if hello:
            auth = {"scheme": "basic", "principal": USER, "credentials": PASSWORD}
            if version >= (5, 1):
                client.send(0x01, {"user_agent": "raw/1"})
                client.send(0x6A, auth)
                assert (await client.recv())[0] == 0x70
            else:
                client.send(0x01, {"user_agent": "raw/1", **auth})
            assert (await client.recv())[0] == 0x70
        return client

    def send(self, signature: int, *fields: Any) -> None:
        self.writer.write(chunk(self.packer.pack_message(signature, list(fields))))

    def pipeline(self, *messages: tuple[Any, ...]) -> None:
        """Send `(signature, *fields)` messages in one write, as drivers pipeline them."""
        self.writer.write(b"".join(chunk(self.packer.pack_message(sig, list(fields))) for sig, *fields in messages))

    async def recv(self, timeout: float = 10.0) -> tuple[int, list]:
        data = await asyncio.wait_for(read_message(self.reader), timeout)
        return unpack_message(data, self.version, False)

    async def recv_until_summary(self) -> list[tuple[int, list]]:
        out = []
        while True:
            msg = await self.recv()
            out.append(msg)
            if msg[0] != 0x71:
                return out

    async def closed(self, timeout: float = 10.0) -> bool:
        """True once the server has closed the connection (EOF); False if it stays open."""
        try:
            while await asyncio.wait_for(self.reader.read(65536), timeout):
                pass
        except asyncio.TimeoutError:          # a subclass of OSError: test it first
            return False
        except (ConnectionError, OSError):
            pass
        return True

    def close(self) -> None:
        self.writer.close()


def u16(n: int) -> bytes:
    return struct.pack(">H", n)


__all__ = ["BoltServer", "MemoryBackend", "RawClient", "MAGIC", "slots", "USER", "PASSWORD", "u16"]
