"""The embedded FalkorDB backend: launches the servers, speaks RESP on their Unix sockets.

Talks raw `redis.asyncio` (hiredis) rather than the `falkordb` client: the proxy serialises
parameters and converts values itself (`falkordb.values`), and decoding the compact reply
directly is several times faster than the client's per-cell coroutines.

FalkorDB has no multi-statement transactions. The proxy provides them with a primary and a
held replica (`falkordb/pair.py`, `falkordb/tx.py`): a write transaction holds the replica at
the committed state; COMMIT releases it, ROLLBACK promotes it. Every write (auto-commit or in a
transaction) takes one writer lock, so a rollback never erases another client's write. A
write still running past its timeout is undone the same way (`_bounded_write`): FalkorDB
itself stops a query only while it reads.

Reads never wait for the writer lock. While a transaction holds the replica, other clients'
reads go to the replica, which is the committed state (read committed); a transaction's own
reads go to the primary and see its writes. Reads are sent as `GRAPH.RO_QUERY`: FalkorDB itself
refuses one that writes, and the statement is re-run as a write (`statement.read_first`), so a
write the query's analysis missed still takes the lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import itertools
import logging
import re
from collections import OrderedDict
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from redis.exceptions import RedisError, ResponseError

from core.backend import Backend, ListResult, Result, Summary, Transaction, TxConfig, before_write
from proxy.backends.falkordb.dialect import FALKORDB
from proxy.backends.falkordb.endpoint import Endpoint
from proxy.backends.falkordb.errors import ACCESS_MODE, COMPILE_TIME, TIMED_OUT
from proxy.backends.falkordb.graph import SYSTEM_KEY, Graph
from proxy.backends.falkordb.pair import ServerPair
from proxy.backends.falkordb.recovery import name_tables
from proxy.backends.falkordb.result import FalkorDBResult, query_type
from proxy.backends.falkordb.statement import Statement, analysed, read_first
from proxy.backends.falkordb.stream import ReplyCut, ReplyStream
from proxy.backends.falkordb.tx import FalkorDBTransaction, WriteAborted
from proxy.backends.falkordb.upkeep import CONSTRAINED_KEYS, register_types_query, sweep_query, touch_query
from proxy.backends.falkordb.values import (
    Schema, decode, parse_plan, plan_query_type,
)
from core.errors import CypherError, unauthorized, unavailable

log = logging.getLogger("proxy.falkordb")
_MAX_TIMEOUT_MS = 120_000            # the server's TIMEOUT_MAX
#: Graph keys the earlier GRAPH.COPY transactions left behind; dropped at start (see `start`).
SNAPSHOT_PREFIX = "__proxy_tx_snapshot__:"
READY_TIMEOUT = 30.0                 # seconds a request waits for a restarting database
TIMEOUT_GRACE = 1.0                    # seconds past its timeout before a query is ended by the proxy
CRASH_LIMIT = 2                        # crashes of the database after which a statement is refused
_CRASHES_KEPT = 1_000                  # statements whose crashes are remembered (the most recent)
#: The bookmarks `next_bookmark` issues.
_BOOKMARK = re.compile(r"FB:[0-9]{1,19}")
#: The only way a statement creates a vector (`Backend.vectors_written`).
_STORES_VECTOR = re.compile(r"vecf32", re.I).search
#: True in a task that holds the writer lock through `excluding_writes`: its write takes it no more.
_EXCLUDING_WRITES: ContextVar[bool] = ContextVar("excluding_writes", default=False)


class InFlight:
    """A count of requests on their way, and a wait for none."""

    def __init__(self) -> None:
        self.count = 0
        self._none = asyncio.Event()
        self._none.set()

    @contextlib.contextmanager
    def running(self):
        self.count += 1
        self._none.clear()
        try:
            yield
        finally:
            self.count -= 1
            if not self.count:
                self._none.set()

    async def idle(self) -> None:
        await self._none.wait()


class FalkorDBBackend(Backend):
    """Embedded FalkorDB over RESP; database `neo4j` is the graph key `neo4j`."""

    dialect = FALKORDB
    default_database = "neo4j"
    versioned_reads = True        # every write passes through the proxy; a reply holds all rows

    def __init__(self, data_dir: Path, *, user: str = "neo4j", password: str = "password",
                 persistent: bool = True, max_connections: int = 8, lock_timeout: float = 60.0,
                 idle_timeout: float | None = 60.0, query_timeout: float = 30.0,
                 max_unread_result: int = 64 << 20, unread_result_timeout: float = 30.0):
        super().__init__()
        self.pair = ServerPair(data_dir, persistent=persistent, on_restart=self._on_restart,
                               graph_keys=(self.default_database, SYSTEM_KEY))
        self.query_timeout = query_timeout
        self.max_unread_result, self.unread_result_timeout = max_unread_result, unread_result_timeout
        self._limits_set_on: tuple[int, str] | None = None     # (generation, primary) last limited
        self._user, self._password = user, password
        self._max_connections = max_connections
        self.lock_timeout = lock_timeout
        self.idle_timeout = idle_timeout
        self._writer = asyncio.Lock()
        #: reads sent to the primary while no transaction held the replica, not answered yet
        self._primary_reads = InFlight()
        self._endpoints: dict[str, Endpoint] = {}
        self._graphs: dict[str, Graph] = {}
        self._bookmarks = itertools.count(1)
        self._started = False
        #: How often each statement (by its text with parameters) ended with the server crashing.
        self._crashes: OrderedDict[int, int] = OrderedDict()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        if self._started:
            return
        await self.pair.start()
        self._started = True
        self._endpoints = {s.name: Endpoint(s, self._max_connections) for s in (self.pair.primary, self.pair.replica)}
        await self._apply_limits()
        await self._drop_old_snapshots()
        await self._sweep_touch_nodes()

    async def stop(self) -> None:
        if not self._started:
            return
        self._started = False
        for endpoint in self._endpoints.values():
            await endpoint.close()
        self._endpoints = {}
        await self.pair.stop()
        self._graphs.clear()

    async def _apply_limits(self) -> None:
        """The default query timeout and the unread-result limit, on the primary (again after a
        restart or a promotion). Redis disconnects a connection whose unsent reply stays above
        `max_unread_result` bytes for `unread_result_timeout` seconds (checked every 100 ms even
        while nothing is written), which releases the result. (Settings, not runtime commands,
        belong in the servers' configuration: commands sent to a syncing replica upset it.)"""
        key = (self.pair.generation, self.pair.primary.name)
        timeout_ms = _timeout_ms(self.query_timeout) or _MAX_TIMEOUT_MS
        primary = self._primary()
        await primary.call("GRAPH.CONFIG", "SET", "TIMEOUT_MAX", max(timeout_ms, _MAX_TIMEOUT_MS))
        await primary.call("GRAPH.CONFIG", "SET", "TIMEOUT_DEFAULT", timeout_ms)
        await primary.call("CONFIG", "SET", "client-output-buffer-limit",
                           f"normal 0 {self.max_unread_result} {max(1, round(self.unread_result_timeout))}")
        self._limits_set_on = key

    async def reply_cut(self, endpoint: Endpoint) -> CypherError:
        """Why a reply stopped half-way: the unread-result limit if the server still answers."""
        try:
            await asyncio.wait_for(endpoint.call("PING"), 5)
        except (CypherError, asyncio.TimeoutError):
            return unavailable("Lost the embedded FalkorDB in the middle of a reply.")
        return CypherError("Neo.ClientError.Transaction.TransactionTimedOut",
                           f"The rest of this result was released unread: it held more than "
                           f"{self.max_unread_result / 2**20:g} MiB in the database for more than "
                           f"{self.unread_result_timeout:g} s without being pulled "
                           "(--max-unread-result, --unread-result-timeout). Pull results as you "
                           "run them, or page them with SKIP/LIMIT.")

    async def compact(self) -> None:
        """Rewrite the primary's append-only file now (after a bulk load: restarts stay fast)."""
        await self._primary().call("BGREWRITEAOF")

    async def _drop_old_snapshots(self) -> None:
        """Earlier versions copied the graph per transaction; a copy left by a crash could be
        stale (the copy step could be interrupted), so restoring it might undo acknowledged
        writes. It is dropped instead, and the drop is logged."""
        for key in await self._primary().call("GRAPH.LIST"):
            if key.decode().startswith(SNAPSHOT_PREFIX):
                await self._primary().call("GRAPH.DELETE", key)

    async def _sweep_touch_nodes(self) -> None:
        """Delete any node of the proxy's own that a crash left (`falkordb.upkeep.sweep_query`):
        a client must never see or count one."""
        primary = self._primary()
        for key in await primary.call("GRAPH.LIST"):
            labels = _column(await primary.call("GRAPH.RO_QUERY", key, "CALL db.labels()"))
            query = sweep_query(labels)
            if query:
                reply = await primary.call("GRAPH.QUERY", key, query)
                if any(line.startswith(b"Nodes deleted") for line in reply[-1]):
                    log.warning("removed a node the proxy had left in graph %r (a crash while it grew the "
                                "label matrices)", key.decode())

    async def _on_restart(self) -> None:
        for endpoint in self._endpoints.values():
            await endpoint.reset()
        self.forget_schemas()

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

    def check_query(self, query: str, params: dict[str, Any]) -> None:
        """The client's query, before the planner rewrites it: its analysis (cached by text) is
        what the statement reuses when the planner passes the text through (`falkordb.statement`)."""
        analysed(query, params).check(params, before_planning=True)

    async def databases(self, credentials: Any) -> list[str]:
        names = [key.decode() for key in await self._primary().call("GRAPH.LIST")]
        graphs = sorted(n for n in names if not n.startswith(SNAPSHOT_PREFIX)
                        and n not in (self.default_database, SYSTEM_KEY))
        return [self.default_database, *graphs]

    async def run(self, query: str, params: dict[str, Any], config: TxConfig, credentials: Any) -> Result:
        graph = await self._graph(config.database)

        async def read(statement: Statement) -> Result:
            return await self.execute(graph, statement, config.timeout)

        async def write(statement: Statement) -> Result:
            before_write()
            await self.acquire_writer(config.timeout)
            try:
                if self.pair.names_lost:
                    await self.pair.heal_lost_names()
                with self.changing(graph.name):
                    return await self.execute(graph, statement, config.timeout)
            finally:
                self.release_writer()

        statement = await self.prepare(query, params, config.mode)
        return self._bookmarked(await read_first(statement, config.mode, read, write))

    async def begin(self, config: TxConfig, credentials: Any) -> Transaction:
        return FalkorDBTransaction(self, await self._graph(config.database), config, self.idle_timeout)

    def next_bookmark(self) -> str:
        return f"FB:{next(self._bookmarks)}"

    def check_bookmarks(self, bookmarks: tuple[str, ...]) -> None:
        """Every write is applied before its bookmark is issued, so any bookmark of ours is
        satisfied; anything else was not issued here (Neo4j: InvalidBookmark, no retry)."""
        for bookmark in bookmarks:
            if not isinstance(bookmark, str) or not _BOOKMARK.fullmatch(bookmark):
                shown = repr(bookmark) if len(repr(bookmark)) <= 200 else repr(bookmark)[:200] + "..."
                raise CypherError("Neo.ClientError.Transaction.InvalidBookmark",
                                  f"Supplied bookmark {shown} was not issued by this server: its bookmarks "
                                  "look like 'FB:<number>'. Pass on only bookmarks the server returned, "
                                  "unchanged.")

    # ------------------------------------------------------------------ for transactions

    async def prepare(self, query: str, params: dict[str, Any] | None, mode: str) -> Statement:
        """The statement to send, built in a worker thread when the parameters are bulky
        (writing them into the query header takes ~0.2 s per million numbers) or the text is
        long (its analysis parses it when it may write: ~3 s for 600 KB)."""
        bulky = sum(len(v) for v in (params or {}).values() if isinstance(v, (list, tuple, dict, str)))
        if bulky > _BULKY_ITEMS or len(query) > _LONG_TEXT:
            return await asyncio.to_thread(Statement, query, params, mode)
        return Statement(query, params, mode)

    async def acquire_writer(self, tx_remaining: float | None) -> None:
        """Wait for the writer lock, at most `lock_timeout` (a TransientError: retry) or what is
        left of the transaction's own timeout (LockClientStopped: a ClientError, no retry)."""
        if _EXCLUDING_WRITES.get():
            return
        stopped_by_tx = tx_remaining is not None and tx_remaining < self.lock_timeout
        wait = tx_remaining if stopped_by_tx else self.lock_timeout
        try:
            await asyncio.wait_for(self._writer.acquire(), wait)
        except asyncio.TimeoutError:
            if stopped_by_tx:
                raise CypherError("Neo.ClientError.Transaction.LockClientStopped",
                                  f"The transaction's timeout ran out after {wait:g} s waiting for the "
                                  "write lock: another transaction is writing.") from None
            raise CypherError("Neo.TransientError.Transaction.LockAcquisitionTimeout",
                              f"Waited {wait:g} s for the write lock: another transaction is writing. "
                              "Retry later.") from None

    def release_writer(self) -> None:
        if not _EXCLUDING_WRITES.get():
            self._writer.release()

    async def primary_reads_answered(self) -> None:
        """Wait until the reads sent to the primary before a transaction held the replica are
        answered: a transaction's first write waits for them, so that none runs after it on the
        primary and reads what it has not committed (reads sent since go to the replica)."""
        await self._primary_reads.idle()

    @contextlib.asynccontextmanager
    async def excluding_writes(self, timeout: float | None):
        if _EXCLUDING_WRITES.get():
            yield
            return
        await self.acquire_writer(timeout)
        token = _EXCLUDING_WRITES.set(True)
        try:
            yield
        finally:
            _EXCLUDING_WRITES.reset(token)
            self.release_writer()

    def forget_schemas(self) -> None:
        """Ids of labels, types and keys may have changed, and label matrices may lag (a
        rollback or a restart)."""
        for graph in self._graphs.values():
            graph.schema = Schema()
            graph.labels_may_lag = True
            graph.names = None

    async def execute(self, graph: Graph, statement: Statement, timeout: float | None,
                      tx: FalkorDBTransaction | None = None) -> Result:
        """Send one statement to the server it belongs on (see the module docstring)."""
        if graph.system and statement.may_write:
            raise _not_a_system_command(statement)
        if self._crashes.get(hash(statement.text), 0) >= CRASH_LIMIT:
            raise _crashes_the_database()
        await self._ready()
        if self._limits_set_on != (self.pair.generation, self.pair.primary.name):
            await self._apply_limits()                          # a restart or a promotion
        names_before = await self._upkeep(graph, statement) if statement.may_write else None
        if statement.may_write and _STORES_VECTOR(statement.body):
            self.note_vector_write(graph.name)
        reads_committed = self.pair.held and not statement.may_write and (tx is None or not tx.holds_replica)
        endpoint = self._replica() if reads_committed else self._primary()
        another_writer_may_start = not statement.may_write and not reads_committed and (tx is None or not tx.wrote)
        with self._primary_reads.running() if another_writer_may_start else contextlib.nullcontext():
            return await self._send(graph, statement, endpoint, timeout, tx, names_before)

    async def _send(self, graph: Graph, statement: Statement, endpoint: Endpoint, timeout: float | None,
                    tx: FalkorDBTransaction | None, names_before) -> Result:
        summary = Summary(database=graph.name)
        if statement.command in ("GRAPH.EXPLAIN", "GRAPH.PROFILE"):
            try:
                reply = await endpoint.call(statement.command, graph.key, statement.text)
            finally:
                await self.check_names(graph, names_before)   # PROFILE: no counters to tell
            plan = parse_plan(reply, profile=statement.command == "GRAPH.PROFILE")
            summary.query_type = plan_query_type(plan)
            if statement.command == "GRAPH.EXPLAIN":
                summary.plan = plan
            else:
                summary.profile = plan
            return ListResult([], [], summary)
        args = [statement.command, graph.key, statement.text, "--compact"]
        timeout_ms = _timeout_ms(timeout)
        if timeout_ms:
            args += ["timeout", timeout_ms]
        stream = await endpoint.stream()
        try:
            bound = timeout or self.query_timeout
            if statement.may_write and bound:
                names = await self._bounded_write(stream, args, bound, tx, statement)
            elif bound:
                names = await read_within(stream, args, bound)
            else:
                names = await stream.query(*args)
        except (OSError, asyncio.IncompleteReadError, ReplyCut) as exc:
            raise await self._lost(endpoint, statement, exc) from None
        except CypherError as exc:
            if graph.system and exc.code == ACCESS_MODE:
                raise _not_a_system_command(statement) from None
            if not isinstance(exc, WriteAborted):    # (that one switched to the replica)
                await self.check_names(graph, names_before)
            raise
        finally:
            if stream.idle or stream.broken:          # an error reply, or a lost connection
                await endpoint.release(stream)
        keys = [statement.column(name) for name in names]
        summary.query_type = query_type(statement, keys, {})
        return FalkorDBResult(self, graph, statement, keys, endpoint, stream, summary, tx, names_before)

    async def _bounded_write(self, stream: ReplyStream, args: list, timeout: float,
                             tx: FalkorDBTransaction | None, statement: Statement) -> list[str]:
        """Run a write (with the writer lock held) and end it at `timeout`, as Neo4j does:
        FalkorDB stops a query only while it reads, so past the timeout (and a grace for
        FalkorDB's own error) the proxy undoes the write with `ServerPair.abort_write`. The
        timeout also covers waiting for the replica that makes this possible (`write_mark`)."""
        held = tx is not None and tx.holds_replica
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout + TIMEOUT_GRACE
        mark = None if held else await self.pair.write_mark(within=timeout)
        reply = asyncio.ensure_future(stream.query(*args))
        reply.add_done_callback(lambda done: done.cancelled() or done.exception())   # read here or by the caller
        try:
            try:
                return await asyncio.wait_for(asyncio.shield(reply), deadline - loop.time())
            except asyncio.TimeoutError:
                pass
            except CypherError as exc:
                if statement.creates and exc.code not in COMPILE_TIME:      # ids undone: realign
                    if held:
                        self.pair.ids_undone = True          # (the transaction's end does it)
                    else:
                        await self.pair.discard_failed_write(mark)
                raise
            if not await self.pair.abort_write(mark, reply):
                return await reply                          # it reached the replica: committed
            self.forget_schemas()
            raise WriteAborted(f"The transaction has been terminated and rolled back: a write ran past "
                               f"its timeout of {timeout:g} s. The embedded FalkorDB cannot stop a "
                               "write that is changing the graph, so the proxy undid it by switching "
                               "to its replica. Write less per statement (CALL {} IN TRANSACTIONS), "
                               "or raise the timeout.")
        finally:
            if not reply.done():
                reply.cancel()
                await asyncio.gather(reply, return_exceptions=True)

    async def _lost(self, endpoint: Endpoint, statement: Statement, exc: BaseException) -> CypherError:
        """The connection broke mid-statement. If the server crashed, the statement is counted:
        one that crashed it `CRASH_LIMIT` times is refused from then on, rather than retried by
        the driver into a restart loop that stops everyone's work (a FalkorDB bug it hits)."""
        for _ in range(50):                   # the exit is seen within milliseconds of the cut
            if endpoint.server.crashed:
                key = hash(statement.text)
                self._crashes[key] = self._crashes.pop(key, 0) + 1
                while len(self._crashes) > _CRASHES_KEPT:
                    self._crashes.popitem(last=False)
                if self._crashes[key] >= CRASH_LIMIT:
                    log.error("a statement crashed the embedded FalkorDB %d times; it is refused from now on",
                              CRASH_LIMIT)
                    return _crashes_the_database()
                break
            if not endpoint.server.running:
                break
            await asyncio.sleep(0.01)
        return unavailable(f"Lost the embedded FalkorDB: {exc!r}")

    # ------------------------------------------------------------------ FalkorDB's bookkeeping

    async def _upkeep(self, graph: Graph, statement: Statement) -> set[str] | None:
        """Before a write (writer lock held), what FalkorDB 4.16 gets wrong (falkordb/upkeep.py):
        grow the label matrices before a delete; if the write may add a name, the primary's
        names now (for `check_names` once it ended), else None."""
        if statement.deletes and graph.labels_may_lag:
            await self._grow_label_matrices(graph)
        if statement.creates:
            graph.labels_may_lag = True
            await self._register_merged_types(graph, statement)
        names = statement.names()
        if names is not None and graph.names is not None and names <= graph.names:
            return None
        graph.names = await self._primary_names(graph)
        return None if names is not None and names <= graph.names else graph.names

    async def _register_merged_types(self, graph: Graph, statement: Statement) -> None:
        """Put the relationship types a MERGE names in the schema before it runs (FalkorDB drops
        rows of a MERGE whose type is new; falkordb/upkeep.py). Asked of the primary each time:
        a rolled-back transaction takes the types it added with it."""
        types = statement.merged_types()
        if not types:
            return
        primary = self._primary()
        try:
            known = set(_column(await primary.call("GRAPH.RO_QUERY", graph.key, "CALL db.relationshipTypes()")))
        except CypherError as exc:                  # no such graph yet: no types
            if exc.code.startswith("Neo.TransientError."):
                raise
            known = set()
        query = register_types_query(types - known)
        if query:
            await primary.call("GRAPH.QUERY", graph.key, query)

    async def check_names(self, graph: Graph, before: set[str] | None) -> None:
        """After a write that may have added a name and failed or changed nothing (so its effects
        carried no name): if the primary's names grew, the replica lacks one; heal it."""
        if before is None:
            return
        try:
            graph.names = await self._primary_names(graph)
            if graph.names - before:
                await self.pair.heal_lost_names()
        except CypherError as exc:
            log.warning("could not compare the embedded database's names after a write: %s", exc.message)

    async def _primary_names(self, graph: Graph) -> set[str]:
        try:
            tables = await name_tables(self._primary().client, [graph.key])
        except ResponseError:                       # no such graph yet: no names
            return set()
        except (RedisError, OSError) as exc:
            raise unavailable(f"Lost the embedded FalkorDB: {exc}") from None
        return {name.decode() for table in tables for name in table}

    async def _grow_label_matrices(self, graph: Graph) -> None:
        primary = self._primary()
        try:
            tables = [_column(await primary.call("GRAPH.RO_QUERY", graph.key, query))
                      for query in ("CALL db.labels()", CONSTRAINED_KEYS, "CALL db.propertyKeys()")]
            query = touch_query(*tables)
            if query:
                await primary.call("GRAPH.QUERY", graph.key, query)
        except CypherError as exc:
            if exc.code.startswith("Neo.TransientError."):
                raise
            log.warning("could not grow the label matrices of graph %r before a delete: %s", graph.key, exc.message)
        graph.labels_may_lag = False

    # ------------------------------------------------------------------ internals

    def _primary(self) -> Endpoint:
        return self._endpoints[self.pair.primary.name]

    def _replica(self) -> Endpoint:
        return self._endpoints[self.pair.replica.name]

    async def _ready(self) -> None:
        if not self._started:
            raise unavailable("The embedded FalkorDB is not running.")
        if not self.pair.ready.is_set():
            try:
                await asyncio.wait_for(self.pair.ready.wait(), READY_TIMEOUT)
            except asyncio.TimeoutError:
                raise unavailable(f"The embedded FalkorDB is restarting and was not back within "
                                  f"{READY_TIMEOUT:g} s.") from None

    def _bookmarked(self, result: Result) -> Result:
        result._summary.bookmark = self.next_bookmark()
        return result

    async def _graph(self, database: str | None) -> Graph:
        name = database or self.default_database
        if name.lower() in ("system", self.default_database):
            name = name.lower()
        else:
            name = await self._graph_key(name)
        if name not in self._graphs:
            self._graphs[name] = Graph(name)
        return self._graphs[name]

    async def _graph_key(self, name: str) -> str:
        """The graph key of database `name`, matched as Neo4j matches names: ignoring case."""
        keys = [key.decode() for key in await self._primary().call("GRAPH.LIST")]
        found = [k for k in keys if k.lower() == name.lower() and not k.startswith(SNAPSHOT_PREFIX)]
        if not found:
            raise CypherError("Neo.ClientError.Database.DatabaseNotFound",
                              f"Database does not exist. Database name: '{name}'.")
        return name if name in found else found[0]

    async def constraint(self, database: str, action: str, kind: str, entity: str, label: str,
                         properties: tuple[str, ...]) -> None:
        """`GRAPH.CONSTRAINT CREATE|DROP <graph> UNIQUE|MANDATORY NODE|RELATIONSHIP <label>
        PROPERTIES <n> <p>...` (FalkorDB has constraints only as this command; it builds them in
        the background, see `db.constraints()` for their status)."""
        graph = await self._graph(database)
        await self._ready()
        if not self._writer.locked():      # (a schema transaction that wrote holds it: its hold rebuilt)
            await self.acquire_writer(None)
            try:
                await self.pair.rebuild_loaded_indexes(self.query_timeout)    # before the replica applies it
            finally:
                self.release_writer()
        await self._primary().call("GRAPH.CONSTRAINT", action, graph.key, kind, entity, label, "PROPERTIES",
                                   len(properties), *properties)
        self.note_write(graph.name)

    async def refresh_schema(self, graph: Graph) -> None:
        tables = []
        for procedure in ("db.labels", "db.relationshipTypes", "db.propertyKeys"):
            reply = await self._primary().call("GRAPH.RO_QUERY", graph.key, f"CALL {procedure}()", "--compact")
            tables.append([decode(row[0], graph.schema) for row in reply[1]])
        graph.schema = Schema(*tables)


async def read_within(stream: ReplyStream, args: list, timeout: float) -> list[str]:
    """FalkorDB checks a read's timeout between records: a traversal that finds none for a long
    time answers late. The client gets its answer at the timeout (and a grace); FalkorDB
    finishes the read on its own, its connection closed."""
    try:
        return await asyncio.wait_for(stream.query(*args), timeout + TIMEOUT_GRACE)
    except asyncio.TimeoutError:
        raise CypherError(TIMED_OUT, f"The transaction has been terminated: the query ran past its "
                          f"timeout of {timeout:g} s.") from None


def _column(reply: list) -> list[str]:
    """The first column of a (non-compact) FalkorDB reply's rows."""
    return [row[0].decode() for row in reply[1]]


def _crashes_the_database() -> CypherError:
    return CypherError("Neo.DatabaseError.Statement.ExecutionFailed",
                       f"This statement crashed the embedded FalkorDB {CRASH_LIMIT} times (a bug of the "
                       "database, which restarted each time), so the proxy no longer runs it: retrying "
                       "cannot succeed. Write it another way (split it, or avoid the construct it "
                       "crashes on), or run it against Neo4j (--upstream).")


def _not_a_system_command(statement: Statement) -> CypherError:
    return CypherError("Neo.ClientError.Statement.UnsupportedAdministrationCommand",
                       "Not a recognised system command or procedure. This Cypher command can only be "
                       f"executed in a user database: {statement.body.strip()[:200]}")


#: Parameters with more items than this, or a longer text, are prepared off the event loop.
_BULKY_ITEMS = 100_000
_LONG_TEXT = 65_536


def _timeout_ms(seconds: float | None) -> int | None:
    if not seconds or seconds <= 0:
        return None
    return max(1, min(_MAX_TIMEOUT_MS, round(seconds * 1000)))
