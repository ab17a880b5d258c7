"""A client session: who is logged in, which transaction is open, where queries go.

One `Session` per Bolt connection (and per HTTP transaction). It knows the backend
and the planner but nothing of the wire format; the Bolt and HTTP front ends drive it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Hashable
from typing import Any, Protocol

from core.backend import Backend, Result, Summary, Transaction, TxConfig
from core.errors import CypherError
from proxy.logins import LoginGuard

#: Queries longer than this are checked off the event loop (the check is linear, ~0.5 µs a char).
_CHECK_IN_THREAD_CHARS = 65_536


class Runner(Protocol):
    """Where the planner sends the queries it makes: an open transaction or auto-commit."""

    backend: Backend
    #: The database the queries go to.
    database: str
    #: Who runs them (and their backend credential handle), and the transaction metadata
    #: sent with BEGIN (or RUN, auto-commit).
    user: str | None
    credentials: Any
    metadata: dict[str, Any] | None

    async def run(self, query: str, params: dict[str, Any]) -> Result: ...

    def graph_state(self) -> Hashable | None:
        """`Backend.graph_state` of the database, or None if these queries see private writes."""

    def read_version(self) -> Hashable | None:
        """`Backend.read_version` for these queries (the same while nothing they may see changes)."""

    def excluding_writes(self, writes: bool) -> contextlib.AbstractAsyncContextManager:
        """No one else writes until the block ends; for a block that `writes` in a transaction,
        until the transaction ends."""


class Planner(Protocol):
    """Turns one client query into backend queries (see `extensions/planner/planner.py`)."""

    async def execute(self, query: str, params: dict[str, Any], runner: Runner) -> Result: ...


class PassThroughPlanner:
    """Sends every query to the backend unchanged."""

    async def execute(self, query: str, params: dict[str, Any], runner: Runner) -> Result:
        return await runner.run(query, params)


class SessionRunner:
    """A `Runner` for one client query: into the open transaction `tx`, or auto-commit with
    `config` when there is none."""

    def __init__(self, backend: Backend, config: TxConfig, credentials: Any, user: str | None = None,
                 tx: Transaction | None = None):
        self.backend = backend
        self.database = config.database or backend.default_database
        self.user = user
        self.metadata = config.metadata
        self.credentials = credentials
        self._config = config
        self._tx = tx

    async def run(self, query: str, params: dict[str, Any]) -> Result:
        if self._tx is None:
            return await self.backend.run(query, params, self._config, self.credentials)
        return await self._tx.run(query, params)

    async def read_together(self, queries: list[tuple[str, dict[str, Any]]]) -> list[list[list[Any]]]:
        """The rows of independent read-only queries (`Backend.read_together`)."""
        if self._tx is None:
            return await self.backend.read_together(queries, self._config, self.credentials)
        return await self._tx.read_together(queries)

    def graph_state(self) -> Hashable | None:
        if self._tx is not None and self._tx.wrote:
            return None
        return self.backend.graph_state(self.database)

    def read_version(self) -> Hashable | None:
        if self._tx is not None and self._tx.wrote:
            return "own writes"              # it holds the writer lock: no one else writes
        return self.backend.read_version(self.database)

    def excluding_writes(self, writes: bool) -> contextlib.AbstractAsyncContextManager:
        if self._tx is not None and (writes or self._tx.wrote):   # it writes anyway (or holds the lock)
            return _held_by(self._tx)
        return self.backend.excluding_writes(self._config.timeout)


@contextlib.asynccontextmanager
async def _held_by(tx: Transaction):
    """`Transaction.exclude_writes`, for the rest of `tx`."""
    await tx.exclude_writes()
    yield


class _WorkingResult(Result):
    """A result in an explicit transaction: while the proxy fetches its records for the client,
    the transaction is not idle (`Transaction.working`)."""

    def __init__(self, result: Result, tx: Transaction):
        self._result, self._tx = result, tx

    @property
    def keys(self) -> list[str]:
        return self._result.keys

    async def fetch(self, n: int) -> list[list[Any]]:
        with self._tx.working():
            return await self._result.fetch(n)

    async def consume(self) -> Summary:
        with self._tx.working():
            return await self._result.consume()

    async def abandon(self) -> None:
        await self._result.abandon()


class Session:
    """Authentication and transaction state of one client connection."""

    def __init__(self, backend: Backend, planner: Planner | None = None, *,
                 logins: LoginGuard | None = None):
        self.backend = backend
        self.planner = planner or PassThroughPlanner()
        self._logins = logins or LoginGuard()       # the server shares one across sessions
        self.credentials: Any = None
        self.user: str | None = None
        self._tx: Transaction | None = None
        self._tx_config: TxConfig | None = None

    @property
    def authenticated(self) -> bool:
        return self.user is not None

    @property
    def database(self) -> str:
        """The database the open transaction (or the next query) uses."""
        if self._tx_config and self._tx_config.database:
            return self._tx_config.database
        return self.backend.default_database

    async def logon(self, auth: dict[str, Any], source: str | None = None) -> None:
        """Log in with a Bolt auth token; `source` is the client's address (for throttling)."""
        user = str(auth.get("principal") or "")
        self._logins.check(source, user)
        try:
            self.credentials = await self.backend.authenticate(auth)
        except CypherError as exc:
            if exc.code == "Neo.ClientError.Security.Unauthorized":
                self._logins.failed(source, user)
            raise
        self._logins.succeeded(source, user)
        self.user = user

    async def logoff(self) -> None:
        await self.reset()
        self.credentials = None
        self.user = None

    async def run(self, query: str, params: dict[str, Any], config: TxConfig | None = None) -> Result:
        """Run a query in the open transaction, or auto-commit with `config`."""
        tx = self._tx
        if tx is None:
            return await self._run(query, params, config)
        with tx.working():                           # the client waits on the proxy: not idle
            return _WorkingResult(await self._run(query, params, config), tx)

    async def _run(self, query: str, params: dict[str, Any], config: TxConfig | None) -> Result:
        params = params or {}
        if len(query) > _CHECK_IN_THREAD_CHARS:
            await asyncio.to_thread(self.backend.check_query, query, params)
        else:
            self.backend.check_query(query, params)
        if self._tx is None and config is not None:
            self.backend.check_bookmarks(config.bookmarks)
        config = self._tx_config if self._tx is not None else config or TxConfig()
        runner = SessionRunner(self.backend, config, self.credentials, self.user, self._tx)
        return await self.planner.execute(query, params, runner)

    async def begin(self, config: TxConfig, *, wait: bool = True) -> None:
        """Open a transaction; `wait`: until the database confirms it (else see `begun`)."""
        if self._tx is not None:
            raise CypherError("Neo.ClientError.Transaction.TransactionStartFailed",
                              "A transaction is already open in this session.")
        self.backend.check_bookmarks(config.bookmarks)
        self._tx = await self.backend.begin(config, self.credentials)
        self._tx_config = config
        if wait:
            await self.begun()

    async def begun(self) -> None:
        """Wait until the database confirms that the open transaction began (its first query may
        have learnt it already). If the database refused it, the session has no transaction any
        more, as if BEGIN had never succeeded, and the refusal is raised."""
        if self._tx is None:
            return
        try:
            await self._tx.begun()
        except CypherError:
            await self.reset()
            raise

    async def commit(self) -> str | None:
        tx = self._take_tx()
        return await tx.commit()

    async def rollback(self) -> None:
        tx = self._take_tx()
        await tx.rollback()

    async def reset(self) -> None:
        """Roll back whatever is open; used by RESET, LOGOFF and connection close."""
        if self._tx is not None:
            tx = self._take_tx()
            try:
                await tx.rollback()
            except CypherError:
                pass

    def _take_tx(self) -> Transaction:
        if self._tx is None:
            raise CypherError("Neo.ClientError.Transaction.TransactionNotFound",
                              "There is no open transaction in this session.")
        tx, self._tx, self._tx_config = self._tx, None, None
        return tx
