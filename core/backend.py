"""The one interface every graph database backend implements.

The session layer and the planner talk only to these classes; `falkordb.py` and
`neo4j/` are the two real implementations. A `Result` streams: `fetch(n)` pulls at
most `n` records from the database so the wire can apply backpressure.
"""

from __future__ import annotations

import contextlib
import time
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Hashable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from core.dialect import Dialect
from core.errors import CypherError

STAT_KEYS = (
    "nodes-created", "nodes-deleted", "relationships-created", "relationships-deleted",
    "properties-set", "labels-added", "labels-removed", "indexes-added", "indexes-removed",
    "constraints-added", "constraints-removed", "system-updates",
)


class WriteInOptimisticRead(Exception):
    """A statement run as an optimistic read (`optimistic_read`) is about to write: nothing has
    been written; run it again with other writes excluded (extensions/planner/runners.py)."""


_OPTIMISTIC = ContextVar("optimistic_read", default=False)


@contextlib.contextmanager
def optimistic_read():
    """Statements run in the block may be run again, so none may write (`before_write`)."""
    token = _OPTIMISTIC.set(True)
    try:
        yield
    finally:
        _OPTIMISTIC.reset(token)


def before_write() -> None:
    """Called by a backend before a statement writes: refuses it in an optimistic read."""
    if _OPTIMISTIC.get():
        raise WriteInOptimisticRead


@dataclass(slots=True)
class TxConfig:
    """What a client asks of a transaction (Bolt BEGIN/RUN extra, HTTP body)."""

    database: str | None = None
    bookmarks: tuple[str, ...] = ()
    mode: str = "w"                       # "r" or "w"
    timeout: float | None = None          # seconds
    metadata: dict[str, Any] | None = None
    imp_user: str | None = None
    #: The notification filters asked for (`notifications_minimum_severity`,
    #: `notifications_disabled_classifications`), in the transaction or at HELLO.
    notifications: dict[str, Any] | None = None
    #: The record encoding the client reads (`proxy.packstream.record_encoding`; None: it
    #: decodes nothing as Bolt): a backend that can keep records as the bytes it received
    #: asks for them in this encoding, so they pass through unchanged.
    encoding: str | None = None
    #: The client's PULL is already on its way behind the RUN (drivers pipeline them): a backend
    #: may send the first PULL with the RUN. False when a RUN came alone: an upstream then runs
    #: nothing to its end (an auto-commit write does not commit) before the client asks.
    pull_with_run: bool = True

    def __post_init__(self) -> None:
        # Neo4j database names are case-insensitive (normalised to lower case): `SYSTEM` is `system`.
        if self.database:
            self.database = self.database.lower()


@dataclass(slots=True)
class Summary:
    """What is known once a result is fully consumed (Bolt's final PULL/DISCARD SUCCESS)."""

    database: str
    query_type: str = "r"                 # "r", "w", "rw" or "s"
    stats: dict[str, int] = field(default_factory=dict)   # only non-zero STAT_KEYS
    bookmark: str | None = None           # auto-commit results only
    plan: dict[str, Any] | None = None
    profile: dict[str, Any] | None = None
    notifications: list[dict[str, Any]] = field(default_factory=list)

    @property
    def contains_updates(self) -> bool:
        return any(v for k, v in self.stats.items() if k != "system-updates")


class Result(ABC):
    """A running query's records, pulled in batches.

    A result may also offer its records as the framed Bolt RECORD messages the database sent
    (`framed_encoding` names their encoding): the Bolt front end then relays them as bytes to
    a client that reads that encoding, instead of decoding and encoding them again.
    """

    keys: list[str]
    #: The record encoding of `fetch_framed` (`proxy.packstream.record_encoding`); None: none.
    framed_encoding: str | None = None

    @abstractmethod
    async def fetch(self, n: int) -> list[list[Any]]:
        """Up to `n` more records (`n < 0`: all that are left); an empty list once exhausted."""

    @abstractmethod
    async def consume(self) -> Summary:
        """Discard what is left and return the summary. Safe to call more than once."""

    async def fetch_framed(self, n: int) -> tuple[bytes, int, bool]:
        """Up to `n` more records (`n < 0`: what has arrived, at least one) as framed RECORD
        messages in `framed_encoding`: `(bytes, how many, whether more may follow)`."""
        raise NotImplementedError(f"{type(self).__name__} has no framed records")

    async def abandon(self) -> None:
        """The client gave the result up (RESET, ROLLBACK, a closed connection): release what it
        holds. A backend that can roll back an auto-commit query not yet read to its end does
        (Neo4j does on RESET); by default the rest is discarded."""
        await self.consume()


async def read_rows(result: Result) -> list[list[Any]]:
    """All of a result's rows, its summary read."""
    rows = await result.fetch(-1)
    await result.consume()
    return rows


class MappedRows(Result):
    """`result` with each fetched row changed in place by `map_row`; everything else is the
    wrapped result's (a result wrapper's one job, e.g. typing the date-times it returns)."""

    def __init__(self, result: Result):
        self._result = result
        self.keys = result.keys

    def __getattr__(self, name: str) -> Any:
        return getattr(self._result, name)

    @abstractmethod
    def map_row(self, row: list[Any]) -> None: ...

    async def fetch(self, n: int) -> list[list[Any]]:
        rows = await self._result.fetch(n)
        for row in rows:
            self.map_row(row)
        return rows

    async def consume(self) -> Summary:
        return await self._result.consume()

    async def abandon(self) -> None:
        await self._result.abandon()


class Transaction(ABC):
    """An explicit transaction: statements run in it see each other's writes."""

    #: True once a statement that may write has run in it (its reads then see private state).
    wrote: bool = False

    async def begun(self) -> None:
        """Wait until the database confirms the transaction began; raise its refusal if it did not.

        A backend may send BEGIN with the transaction's first request instead of on its own (the
        Neo4j backend does: one round trip less); its first `run` or `commit` then reads BEGIN's
        reply first, and raises its refusal. By default the transaction began in `Backend.begin`."""

    @abstractmethod
    async def run(self, query: str, params: dict[str, Any]) -> Result: ...

    async def read_together(self, queries: list[tuple[str, dict[str, Any]]]) -> list[list[list[Any]]]:
        """The rows of independent read-only queries, in order (`Backend.read_together`)."""
        return [await read_rows(await self.run(query, params)) for query, params in queries]

    @abstractmethod
    async def commit(self) -> str | None:
        """Commit; returns the bookmark."""

    @abstractmethod
    async def rollback(self) -> None: ...

    def working(self) -> contextlib.AbstractContextManager:
        """Mark the proxy at work on a client's request in this transaction (a statement from RUN
        to its reply, through its probes, computing and binding; a PULL or DISCARD): an idle
        timeout does not count that time. A no-op for backends without one."""
        return contextlib.nullcontext()

    async def exclude_writes(self) -> None:
        """From now until it ends, no other transaction writes: a statement about to write has
        its probes read the state it writes to (`Backend.versioned_reads`)."""


class Backend(ABC):
    """A graph database the proxy forwards standard Cypher to."""

    #: What the database does natively and the forms the proxy writes for it: the planner, the
    #: bridge rules and the compat registry ask it (`core/dialect.py`).
    dialect: Dialect
    #: Name reported as the home / default database.
    default_database: str = "neo4j"

    #: Whether `read_version` tells when what a read sees changes: true where every write passes
    #: through the proxy and a query's rows are all read when `run` returns (the embedded
    #: database), so a query whose probes and statement read at different times can tell whether
    #: a write came between them (extensions/planner/runners.py, `consistently`).
    versioned_reads: bool = False

    def __init__(self) -> None:
        self._writes: Counter[str] = Counter()
        self._changing: Counter[str] = Counter()
        self._vectors_written: set[str] = set()

    @abstractmethod
    async def start(self) -> None:
        """Connect (and for the embedded database, launch it). Idempotent."""

    @abstractmethod
    async def stop(self) -> None:
        """Disconnect and stop anything `start` launched."""

    @abstractmethod
    async def authenticate(self, auth: dict[str, Any]) -> Any:
        """Check a Bolt auth token (`scheme`, `principal`, `credentials`).

        Returns an opaque credential handle passed back to `run`/`begin`, or raises
        `CypherError` with `Neo.ClientError.Security.Unauthorized`.
        """

    @abstractmethod
    async def run(self, query: str, params: dict[str, Any], config: TxConfig, credentials: Any) -> Result:
        """Run one auto-commit query."""

    @abstractmethod
    async def begin(self, config: TxConfig, credentials: Any) -> Transaction:
        """Open an explicit transaction (confirmed by the database at `Transaction.begun`)."""

    async def read_together(self, queries: list[tuple[str, dict[str, Any]]], config: TxConfig,
                            credentials: Any) -> list[list[list[Any]]]:
        """The rows of independent read-only queries (the planner's probes), in order; the first
        that fails raises. A backend that can send them all before reading the first answer does
        (one round trip to an upstream); by default they run one after the other."""
        return [await read_rows(await self.run(query, params, config, credentials)) for query, params in queries]

    def check_query(self, query: str, params: dict[str, Any]) -> None:
        """Refuse (raise `CypherError`) a query this database could not survive, before the
        planner or the database reads it. Linear in the query; a backend may keep what it learns
        of the text for running it (the FalkorDB backend does, by text). By default nothing is
        refused."""

    async def constraint(self, database: str, action: str, kind: str, entity: str, label: str,
                         properties: tuple[str, ...]) -> None:
        """CREATE or DROP a UNIQUE / MANDATORY constraint natively (backends whose Cypher has no
        constraint commands, where the proxy translates Neo4j's)."""
        raise CypherError("Neo.ClientError.Statement.UnsupportedOperation",
                          f"The {self.dialect.name} backend takes constraint commands in Cypher.")

    async def compact(self) -> None:
        """Make the database's files compact after a bulk load (a no-op where that is not ours)."""

    async def databases(self, credentials: Any) -> list[str]:
        """Names of the databases a client may select (for SHOW DATABASES and routing)."""
        return [self.default_database]

    def check_bookmarks(self, bookmarks: tuple[str, ...]) -> None:
        """Raise `Neo.ClientError.Transaction.InvalidBookmark` for a bookmark this backend cannot
        have issued. A Neo4j backend checks its own bookmarks, so by default nothing is checked."""

    #: Seconds after which graph-derived caches expire even without a write through the proxy
    #: (None: never; right when every write passes through the proxy, as with the embedded database).
    state_ttl: float | None = None

    def graph_state(self, database: str | None) -> Hashable:
        """A token that changes whenever `database` may have changed.

        Caches of data derived from the graph (geometry indexes, embeddings, projections,
        describe()) key on it: every write that passes through the proxy changes it, and
        with `state_ttl` set it also changes at least that often.
        """
        writes = self._writes[database or self.default_database]
        if self.state_ttl is None:
            return writes
        return writes, int(time.monotonic() // self.state_ttl)

    def note_write(self, database: str | None) -> None:
        """Record that a write to `database` passed through the proxy (see `graph_state`)."""
        self._writes[database or self.default_database] += 1

    @contextlib.contextmanager
    def changing(self, database: str | None):
        """Around a write whose changes reads may see before it returns; it is noted at the end."""
        database = database or self.default_database
        self._changing[database] += 1
        try:
            yield
        finally:
            self._changing[database] -= 1
            self.note_write(database)

    def read_version(self, database: str | None) -> Hashable | None:
        """A token that stays the same as long as what reads of `database` see does; None while a
        write may be changing it (meaningful with `versioned_reads`)."""
        database = database or self.default_database
        return None if self._changing[database] else self._writes[database]

    def excluding_writes(self, timeout: float | None) -> contextlib.AbstractAsyncContextManager:
        """No auto-commit write or transaction writes until the block ends (`versioned_reads`);
        `timeout`: the client's, for the wait."""
        return contextlib.nullcontext()

    def note_vector_write(self, database: str | None) -> None:
        """Record, before it runs, that a statement that may store a vector (FalkorDB's `vecf32`)
        is about to write to `database` (see `vectors_written`)."""
        self._vectors_written.add(database or self.default_database)

    def vectors_written(self, database: str | None) -> bool:
        """Whether a statement that may store a vector has run on `database` since the proxy
        started: until one has, no write can have stored one (copying needs one stored before),
        so what was found of the graph's vectors still holds after any number of writes."""
        return (database or self.default_database) in self._vectors_written



class ListResult(Result):
    """A result whose records are already in memory (virtual procedures, small local answers)."""

    def __init__(self, keys: list[str], records: list[list[Any]], summary: Summary):
        self.keys = keys
        self._records = records
        self._pos = 0
        self._summary = summary

    async def fetch(self, n: int) -> list[list[Any]]:
        end = len(self._records) if n < 0 else min(len(self._records), self._pos + n)
        batch = self._records[self._pos:end]
        self._pos = end
        return batch

    async def consume(self) -> Summary:
        self._pos = len(self._records)
        return self._summary
