"""The embedded FalkorDB backend: launches the server, speaks RESP on its Unix socket.

Talks raw `redis.asyncio` (hiredis) rather than the `falkordb` client: the proxy serialises
parameters and converts values itself (`falkordb_values`), and decoding the compact reply
directly is several times faster than the client's per-cell coroutines.

FalkorDB has no multi-statement transactions. This backend provides them with a per-graph
single-writer lock plus a snapshot: the first statement of a transaction that may write takes
the lock and copies the graph (`GRAPH.COPY`); COMMIT drops the copy, ROLLBACK renames it back
over the graph. Auto-commit writes take the same lock, so a rollback never erases another
client's write. Reads never wait (they may see a running transaction's writes).
"""

from __future__ import annotations

import asyncio
import hmac
import itertools
import re
import time
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis
from redis.asyncio.connection import UnixDomainSocketConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import RedisError, ResponseError

from proxy.backends.base import Backend, ListResult, Result, Summary, Transaction, TxConfig
from proxy.backends.falkordb_server import EmbeddedFalkorDB
from proxy.backends.falkordb_stream import ReplyStream
from proxy.backends.falkordb_params import inline_params, placeholders
from proxy.backends.falkordb_values import (
    Schema, SchemaMiss, decode, decode_row, encode_params, error_from_reply, parse_plan,
    parse_stats, plan_query_type,
)
from proxy.errors import CypherError, database_error, syntax_error, unauthorized

MAX_QUERY_CHARS = 1_000_000
#: FalkorDB's parse time doubles per nesting level and ignores timeouts (depth 15 ~ 60 ms).
MAX_NESTING = 15
_MAX_TIMEOUT_MS = 120_000            # the server's TIMEOUT_MAX
SNAPSHOT_PREFIX = "__proxy_tx_snapshot__:"

_LEXEME = re.compile(r"""'(?:[^'\\]|\\.)*'?|"(?:[^"\\]|\\.)*"?|`[^`]*`?|//[^\n]*|/\*.*?(?:\*/|$)""", re.S)
_WRITE = re.compile(r"(?<![\w.$])(?:CREATE|MERGE|SET|DELETE|REMOVE|DROP|CALL\s+db\.idx\.)(?!\w)", re.I)
_SCHEMA = re.compile(r"(?<![\w.$])(?:INDEX|CONSTRAINT|CALL\s+db\.idx\.)(?!\w)", re.I)
_PREFIX = re.compile(r"\s*(EXPLAIN|PROFILE)(?!\w)", re.I)


def _code_only(query: str) -> str:
    """The query with strings, quoted names and comments blanked out (same length)."""
    return _LEXEME.sub(lambda m: " " * len(m.group()), query)


def _check_query(query: str, code: str) -> None:
    """Refuse what would stall FalkorDB's parser before it can time out."""
    if len(query) > MAX_QUERY_CHARS:
        raise syntax_error(f"The query is {len(query):,} characters long; the embedded FalkorDB "
                           f"accepts at most {MAX_QUERY_CHARS:,}. Pass large values as parameters.")
    depth = deepest = 0
    for char in code:
        if char in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in ")]}":
            depth -= 1
    if deepest > MAX_NESTING:
        raise syntax_error(f"The query nests brackets {deepest} levels deep; the embedded FalkorDB "
                           f"accepts at most {MAX_NESTING} (its parse time doubles with every level). "
                           "Pass deeply nested values as parameters.")


class _Statement:
    """One client query, analysed once: command, text to send and whether it may write."""

    def __init__(self, query: str, params: dict[str, Any] | None, mode: str):
        code = _code_only(query)
        _check_query(query, code)
        prefix = _PREFIX.match(code)
        self.command = "GRAPH.QUERY"
        self.body = query
        if prefix:
            self.command = f"GRAPH.{prefix.group(1).upper()}"
            self.body = query[prefix.end():]
            code = code[prefix.end():]
        if self.command == "GRAPH.EXPLAIN":       # Neo4j plans without values (mcp-neo4j-cypher relies on it)
            params = {**placeholders(self.body, code), **(params or {})}
        inlined = inline_params(self.body, code, params)
        if inlined.renames:
            self.body = inlined.query
            try:
                _check_query(self.body, _code_only(self.body))
            except CypherError as exc:
                raise syntax_error(f"{exc.message} (FalkorDB takes temporal, point and NaN parameters "
                                   "only as expressions in the query text, so they count here: send "
                                   "large ones as ISO 8601 strings and convert in the query, e.g. "
                                   "date(r.on).)") from None
        self.column = inlined.column
        self.text = encode_params(inlined.params) + self.body
        try:
            self.text.encode()
        except UnicodeEncodeError as exc:
            raise CypherError("Neo.ClientError.Statement.TypeError",
                              f"The query or its parameters contain {exc.object[exc.start]!r}, which is "
                              "not valid Unicode text (a lone surrogate).") from None
        self.schema = bool(_SCHEMA.search(code))
        self.may_write = mode != "r" and bool(_WRITE.search(code)) and self.command != "GRAPH.EXPLAIN"
        if mode == "r" and self.command == "GRAPH.QUERY":
            self.command = "GRAPH.RO_QUERY"


class _Graph:
    """Per-graph state: the single-writer lock and the id -> name schema cache."""

    def __init__(self, name: str):
        self.name = name
        self.lock = asyncio.Lock()
        self.schema = Schema()
        self.snapshot = SNAPSHOT_PREFIX + name


class FalkorDBResult(Result):
    """Records of one reply, read from its connection as they are fetched (`ReplyStream`).

    The statistics come at the end of FalkorDB's reply, so the summary is complete once the
    rows are read. A read-only result abandoned before its end closes its connection instead
    of reading the rest; a writing one is read to the end for its counters.
    """

    def __init__(self, backend: FalkorDBBackend, graph: _Graph, statement: _Statement,
                 keys: list[str], stream: ReplyStream, summary: Summary):
        self.keys = keys
        self._backend, self._graph, self._statement = backend, graph, statement
        self._stream: ReplyStream | None = stream
        self._summary = summary

    async def fetch(self, n: int) -> list[list[Any]]:
        if self._stream is None:
            return []
        raw = await self._stream.rows(n)
        while True:
            try:
                batch = [decode_row(row, self._graph.schema) for row in raw]
                break
            except SchemaMiss:
                await self._backend._refresh_schema(self._graph)
        if not self._stream.remaining:
            await self._finish()
        return batch

    async def consume(self) -> Summary:
        if self._stream is not None:
            await self._finish()
        return self._summary

    async def _finish(self) -> None:
        stream, self._stream = self._stream, None
        try:
            if stream.broken or (stream.remaining and not self._statement.may_write):
                stream.broken = True          # nothing to count (or no way to): drop the connection
                stats: list = []
            else:
                stats = await stream.statistics()
        finally:
            await self._backend._release_stream(stream)
        self._summary.stats = parse_stats(stats)
        self._summary.query_type = _query_type(self._statement, self.keys, self._summary.stats)


class FalkorDBBackend(Backend):
    """Embedded FalkorDB over RESP; database `neo4j` is the graph key `neo4j`."""

    kind = "falkordb"
    default_database = "neo4j"

    def __init__(self, data_dir: Path, *, user: str = "neo4j", password: str = "password",
                 persistent: bool = True, max_connections: int = 8, lock_timeout: float = 60.0):
        super().__init__()
        self.server = EmbeddedFalkorDB(data_dir, persistent=persistent)
        self._user, self._password = user, password
        self._max_connections = max_connections
        self.lock_timeout = lock_timeout
        self._client: aioredis.Redis | None = None
        self._idle_streams: list[ReplyStream] = []
        self._graphs: dict[str, _Graph] = {}
        self._bookmarks = itertools.count(1)

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._client is not None:
            return
        await self.server.start()
        pool = aioredis.BlockingConnectionPool(
            connection_class=UnixDomainSocketConnection, path=str(self.server.socket_path),
            max_connections=self._max_connections, timeout=None,
            socket_timeout=None,             # FalkorDB enforces query timeouts itself
            retry=Retry(NoBackoff(), 0))     # never re-send: a retried CREATE would run twice
        self._client = aioredis.Redis(connection_pool=pool)
        await self._recover_snapshots()
        await self._call("GRAPH.QUERY", self.default_database, "RETURN 1")   # creates the key

    async def stop(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose(close_connection_pool=True)
        streams, self._idle_streams = self._idle_streams, []
        for stream in streams:
            await stream.close()
        await self.server.stop()
        self._graphs.clear()

    async def _recover_snapshots(self) -> None:
        """A snapshot left by a crash belongs to a transaction that never committed: restore it."""
        for key in await self._call("GRAPH.LIST"):
            key = key.decode()
            if key.startswith(SNAPSHOT_PREFIX):
                await self._call("RENAME", key, key[len(SNAPSHOT_PREFIX):])

    # ------------------------------------------------------------------ Backend API

    async def authenticate(self, auth: dict[str, Any]) -> Any:
        principal, credentials = auth.get("principal"), auth.get("credentials")
        if (auth.get("scheme") != "basic" or not isinstance(principal, str)
                or not isinstance(credentials, str)):
            raise unauthorized()
        ok_user = hmac.compare_digest(principal.encode(), self._user.encode())
        ok_password = hmac.compare_digest(credentials.encode(), self._password.encode())
        if not (ok_user and ok_password):
            raise unauthorized()
        return principal

    async def databases(self, credentials: Any) -> list[str]:
        names = [key.decode() for key in await self._call("GRAPH.LIST")]
        graphs = sorted(n for n in names if not n.startswith(SNAPSHOT_PREFIX) and n != self.default_database)
        return [self.default_database, *graphs]

    async def run(self, query: str, params: dict[str, Any], config: TxConfig, credentials: Any) -> Result:
        graph = await self._graph(config.database)
        statement = _Statement(query, params, config.mode)
        timeout_ms = _timeout_ms(config.timeout)
        if statement.may_write:
            await self._acquire(graph, config.timeout)
            try:
                result = await self._execute(graph, statement, timeout_ms)
            finally:
                graph.lock.release()
                self.note_write(graph.name)
        else:
            result = await self._execute(graph, statement, timeout_ms)
        result._summary.bookmark = self.next_bookmark()
        return result

    async def begin(self, config: TxConfig, credentials: Any) -> Transaction:
        return FalkorDBTransaction(self, await self._graph(config.database), config)

    def next_bookmark(self) -> str:
        return f"FB:{next(self._bookmarks)}"

    # ------------------------------------------------------------------ internals

    async def _graph(self, database: str | None) -> _Graph:
        name = database or self.default_database
        if name != self.default_database and (
                name.startswith(SNAPSHOT_PREFIX) or name.encode() not in await self._call("GRAPH.LIST")):
            raise CypherError("Neo.ClientError.Database.DatabaseNotFound",
                              f"Database does not exist. Database name: '{name}'.")
        if name not in self._graphs:
            self._graphs[name] = _Graph(name)
        return self._graphs[name]

    async def _acquire(self, graph: _Graph, timeout: float | None) -> None:
        wait = self.lock_timeout if not timeout else min(timeout, self.lock_timeout)
        try:
            await asyncio.wait_for(graph.lock.acquire(), wait)
        except asyncio.TimeoutError:
            raise CypherError("Neo.TransientError.Transaction.LockAcquisitionTimeout",
                              f"Waited {wait:g} s for the write lock of database '{graph.name}': "
                              "another transaction is writing to it. Retry later.") from None

    async def _call(self, *args: Any) -> Any:
        """One RESP command; every failure becomes a `CypherError`."""
        if self._client is None:
            raise database_error("The embedded FalkorDB is not running.")
        try:
            reply = await self._client.execute_command(*args)
        except ResponseError as exc:
            raise error_from_reply(str(exc)) from None
        except RedisError as exc:
            raise database_error(f"Lost the embedded FalkorDB: {exc}") from None
        if isinstance(reply, list) and reply and isinstance(reply[-1], ResponseError):
            raise error_from_reply(str(reply[-1]))
        return reply

    async def _open_stream(self) -> ReplyStream:
        if self._client is None:
            raise database_error("The embedded FalkorDB is not running.")
        if self._idle_streams:
            return self._idle_streams.pop()
        try:
            return await ReplyStream.connect(str(self.server.socket_path))
        except OSError as exc:
            raise database_error(f"Lost the embedded FalkorDB: {exc}") from None

    async def _release_stream(self, stream: ReplyStream) -> None:
        if stream.idle and self._client is not None and len(self._idle_streams) < self._max_connections:
            self._idle_streams.append(stream)
        else:
            await stream.close()

    async def _execute(self, graph: _Graph, statement: _Statement, timeout_ms: int | None) -> Result:
        summary = Summary(database=graph.name)
        if statement.command in ("GRAPH.EXPLAIN", "GRAPH.PROFILE"):
            reply = await self._call(statement.command, graph.name, statement.text)
            plan = parse_plan(reply, profile=statement.command == "GRAPH.PROFILE")
            summary.query_type = plan_query_type(plan)
            if statement.command == "GRAPH.EXPLAIN":
                summary.plan = plan
            else:
                summary.profile = plan
            return ListResult([], [], summary)
        args = [statement.command, graph.name, statement.text, "--compact"]
        if timeout_ms:
            args += ["timeout", timeout_ms]
        stream = await self._open_stream()
        try:
            names = await stream.query(*args)
        finally:
            if stream.idle or stream.broken:          # an error reply, or a lost connection
                await self._release_stream(stream)
        keys = [statement.column(name) for name in names]
        summary.query_type = _query_type(statement, keys, {})
        return FalkorDBResult(self, graph, statement, keys, stream, summary)

    async def constraint(self, database: str, action: str, kind: str, entity: str, label: str,
                         properties: tuple[str, ...]) -> None:
        """`GRAPH.CONSTRAINT CREATE|DROP <graph> UNIQUE|MANDATORY NODE|RELATIONSHIP <label>
        PROPERTIES <n> <p>...` (FalkorDB has constraints only as this command; it builds them in
        the background, see `db.constraints()` for their status)."""
        graph = await self._graph(database)
        await self._call("GRAPH.CONSTRAINT", action, graph.name, kind, entity, label, "PROPERTIES",
                         len(properties), *properties)
        self.note_write(graph.name)

    async def _refresh_schema(self, graph: _Graph) -> None:
        tables = []
        for procedure in ("db.labels", "db.relationshipTypes", "db.propertyKeys"):
            reply = await self._call("GRAPH.RO_QUERY", graph.name, f"CALL {procedure}()", "--compact")
            tables.append([decode(row[0], graph.schema) for row in reply[1]])
        graph.schema = Schema(*tables)


def _timeout_ms(seconds: float | None) -> int | None:
    if not seconds or seconds <= 0:
        return None
    return max(1, min(_MAX_TIMEOUT_MS, round(seconds * 1000)))


def _query_type(statement: _Statement, keys: list[str], stats: dict[str, int]) -> str:
    if statement.schema or any(k.startswith(("indexes", "constraints")) for k in stats):
        return "s"
    if statement.may_write or stats:
        return "rw" if keys else "w"
    return "r"


class FalkorDBTransaction(Transaction):
    """An explicit transaction: lock + lazy snapshot on the first statement that may write."""

    def __init__(self, backend: FalkorDBBackend, graph: _Graph, config: TxConfig):
        self._backend, self._graph, self._config = backend, graph, config
        self._deadline = time.monotonic() + config.timeout if config.timeout else None
        self._holding = False
        self._open = True
        self._timed_out = False
        self._watchdog: asyncio.TimerHandle | None = None

    async def run(self, query: str, params: dict[str, Any]) -> Result:
        await self._check_open()
        statement = _Statement(query, params, self._config.mode)
        if statement.may_write and not self._holding:
            await self._backend._acquire(self._graph, self._remaining())
            self._holding = self.wrote = True
            try:
                await self._backend._call("GRAPH.COPY", self._graph.name, self._graph.snapshot)
            except BaseException:
                self._release()
                raise
            if self._deadline is not None:
                self._watchdog = asyncio.get_running_loop().call_later(
                    self._remaining(), lambda: asyncio.ensure_future(self._expire()))
        try:
            return await self._backend._execute(self._graph, statement, _timeout_ms(self._remaining()))
        except CypherError as exc:
            if exc.code == "Neo.ClientError.Transaction.TransactionTimedOut":
                await self._expire()
            raise

    async def commit(self) -> str | None:
        await self._check_open()
        self._open = False
        if self._holding:
            try:
                await self._backend._call("GRAPH.DELETE", self._graph.snapshot)
            finally:
                self._release()
        return self._backend.next_bookmark()

    async def rollback(self) -> None:
        if not self._open:
            return
        self._open = False
        if self._holding:
            try:
                await self._backend._call("RENAME", self._graph.snapshot, self._graph.name)
            finally:
                self._graph.schema = Schema()        # ids created by this tx are gone
                self._release()

    async def _expire(self) -> None:
        """The transaction outlived its timeout: roll it back so it stops blocking writers."""
        if self._open:
            self._timed_out = True
            await self.rollback()

    async def _check_open(self) -> None:
        if self._open and self._deadline is not None and time.monotonic() >= self._deadline:
            await self._expire()
        if self._timed_out:
            raise CypherError("Neo.ClientError.Transaction.TransactionTimedOut",
                              f"The transaction has been terminated: it exceeded its timeout of "
                              f"{self._config.timeout:g} s and was rolled back.")
        if not self._open:
            raise CypherError("Neo.ClientError.Transaction.TransactionNotFound",
                              "The transaction has already been committed or rolled back.")

    def _remaining(self) -> float | None:
        return None if self._deadline is None else max(0.001, self._deadline - time.monotonic())

    def _release(self) -> None:
        if self.wrote:
            self._backend.note_write(self._graph.name)
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._holding:
            self._holding = False
            self._graph.lock.release()
