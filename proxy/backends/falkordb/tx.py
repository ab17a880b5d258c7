"""Explicit transactions on the embedded database, as a state machine.

    OPEN --first write--> WRITING --COMMIT--> COMMITTED
      |                      |---ROLLBACK / RESET / close--> ROLLED_BACK
      |--COMMIT / ROLLBACK-->|---timeout (idle or total)---> EXPIRED
                             |---a write past its timeout--> EXPIRED (`WriteAborted`)
                             |---the database restarted----> FAILED

A transaction holds nothing until its first write. Then it takes the backend's writer lock and
holds the replica at the committed state (`ServerPair.hold`); its statements run on the primary.
COMMIT releases the replica (no I/O); ROLLBACK promotes it (and, if a statement is still
running, kills the old primary: FalkorDB cannot stop a write that is changing the graph). Both
end in one step that a client's cancellation (RESET, a disconnect, a driver timeout) cannot cut
in half: commit has no await, rollback runs shielded. Whoever arms the expiry timer also cancels it, and the expiry task is
kept referenced.

The idle timeout measures the client's silence only: while the proxy works on one of the client's
requests (`working`: a statement from RUN through its probes, the extension computing between them
and the bound query, or a PULL), only the total timeout runs, so a long extension step does not
expire the transaction. This is Neo4j's rule for its HTTP transactions (a transaction with no
request for `server.http.transaction_idle_timeout` is rolled back); Bolt transactions in Neo4j have
no idle timeout, only the total one (`tx_timeout`, `db.transaction.timeout`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import time
from typing import Any, Protocol

from core.backend import Result, Transaction, TxConfig, before_write
from proxy.backends.falkordb.errors import TIMED_OUT
from proxy.backends.falkordb.graph import Graph
from proxy.backends.falkordb.pair import ServerPair
from proxy.backends.falkordb.statement import Statement, read_first
from core.errors import CypherError


class TxBackend(Protocol):
    """What a transaction uses of its backend (`backend.FalkorDBBackend`, which opens it): the
    writer lock, the server pair, and running statements."""

    pair: ServerPair
    lock_timeout: float

    async def prepare(self, query: str, params: dict[str, Any] | None, mode: str) -> Statement: ...

    async def execute(self, graph: Graph, statement: Statement, timeout: float | None,
                      tx: FalkorDBTransaction | None = None) -> Result: ...

    async def acquire_writer(self, tx_remaining: float | None) -> None: ...

    def release_writer(self) -> None: ...

    async def primary_reads_answered(self) -> None: ...

    def forget_schemas(self) -> None: ...

    def next_bookmark(self) -> str: ...

    def note_write(self, database: str | None) -> None: ...


_OVER_TIME = "it exceeded its timeout"
_IDLE = "it was idle too long"


class TxState(enum.Enum):
    OPEN = "open"                  # no write yet: holds nothing
    WRITING = "writing"            # holds the writer lock and the replica
    COMMITTED = "committed"
    ROLLED_BACK = "rolled back"
    EXPIRED = "expired"
    FAILED = "failed"


#: Where a live transaction may go from each state (the diagram above; asyncpg's `_set_state`).
#: The other states are ends: a transaction leaves none of them.
_TRANSITIONS = {
    TxState.OPEN: frozenset({TxState.WRITING, TxState.COMMITTED, TxState.ROLLED_BACK, TxState.EXPIRED}),
    TxState.WRITING: frozenset({TxState.COMMITTED, TxState.ROLLED_BACK, TxState.EXPIRED, TxState.FAILED}),
}
_LIVE = frozenset(_TRANSITIONS)

_ENDED = {
    TxState.COMMITTED: ("Neo.ClientError.Transaction.TransactionNotFound",
                        "The transaction has already been committed."),
    TxState.ROLLED_BACK: ("Neo.ClientError.Transaction.TransactionNotFound",
                          "The transaction has already been rolled back."),
    TxState.FAILED: ("Neo.TransientError.Transaction.Terminated",
                     "The transaction was rolled back because the embedded database restarted; "
                     "retry it."),
}


class WriteAborted(CypherError):
    """A write ran past its timeout and was undone (`ServerPair.abort_write`): in a transaction,
    its earlier writes went with it."""

    def __init__(self, message: str):
        super().__init__(TIMED_OUT, message)


class FalkorDBTransaction(Transaction):
    """An explicit transaction; `config.timeout` bounds its life, `idle_timeout` its pauses."""

    def __init__(self, backend: TxBackend, graph: Graph, config: TxConfig, idle_timeout: float | None):
        self._backend, self._graph, self._config = backend, graph, config
        self._idle_timeout = idle_timeout
        self._deadline = time.monotonic() + config.timeout if config.timeout else None
        self._state = TxState.OPEN
        self._generation = backend.pair.generation
        self._expired_because = ""
        self._running = False                        # a statement is running (`run`)
        self._requests = 0                           # client requests the proxy is working on
        self._timer: asyncio.TimerHandle | None = None
        self._expiry: asyncio.Task | None = None
        self.touch()

    @property
    def state(self) -> TxState:
        return self._state

    @property
    def holds_replica(self) -> bool:
        return self._state is TxState.WRITING

    # ------------------------------------------------------------------ statements

    async def run(self, query: str, params: dict[str, Any]) -> Result:
        self._check_usable()
        self._disarm()                               # a running statement is not idle
        try:
            statement = await self._backend.prepare(query, params, self._config.mode)
            return await read_first(statement, self._config.mode, self._execute, self._write)
        except CypherError as exc:
            if self._expired_because:                # expired while it ran (its error says why)
                raise self._expired_error() from None
            if isinstance(exc, WriteAborted):
                await self._expire("a write ran past its timeout")
            elif exc.code == TIMED_OUT and self._deadline is not None:
                await self._expire(_OVER_TIME)       # it ran with the rest of the transaction's time
            else:
                raise
            raise self._expired_error() from None    # the transaction's reason, not the statement's
        finally:
            self.touch()

    async def _write(self, statement: Statement) -> Result:
        before_write()
        await self._start_writing()
        return await self._execute(statement)

    async def _execute(self, statement: Statement) -> Result:
        self._running = True
        try:
            return await self._backend.execute(self._graph, statement, self._remaining(), tx=self)
        finally:
            self._running = False

    async def exclude_writes(self) -> None:
        self._check_usable()
        await self._start_writing()

    async def _start_writing(self) -> None:
        """Take the writer lock and hold the replica, once, before the first write."""
        if self._state is TxState.WRITING:
            return
        remaining = self._remaining()
        await self._backend.acquire_writer(remaining)
        try:
            await self._backend.pair.hold(min(self._backend.lock_timeout, remaining or self._backend.lock_timeout))
            try:
                await self._backend.primary_reads_answered()
            except BaseException:                    # (cancelled: a RESET, a disconnect)
                self._backend.pair.release()
                raise
        except BaseException:
            self._backend.release_writer()
            raise
        self._generation = self._backend.pair.generation
        self._set_state(TxState.WRITING)
        self.wrote = True

    # ------------------------------------------------------------------ ending

    async def commit(self) -> str | None:
        self._check_usable()
        self._disarm()
        if self._state is TxState.WRITING:
            self._backend.pair.release()
        self._end(TxState.COMMITTED)
        return self._backend.next_bookmark()

    async def rollback(self) -> None:
        if self._state not in _LIVE:
            return
        self._disarm()
        await asyncio.shield(self._roll_back(TxState.ROLLED_BACK))

    async def _roll_back(self, final: TxState) -> None:
        """Undo the writes (promote the held replica) and release; runs to the end once started."""
        if self._state is TxState.WRITING and not self._restarted() and self._backend.pair.held:
            try:
                await self._backend.pair.rollback(busy=self._running)
            except Exception as exc:
                await self._backend.pair.restart(f"a rollback could not promote the replica: {exc}")
            self._backend.forget_schemas()
        self._end(final)

    def _end(self, final: TxState) -> None:
        if self._state is TxState.WRITING:
            self._backend.release_writer()
            self._backend.note_write(self._graph.name)
        self._set_state(final)

    def _set_state(self, new: TxState) -> None:
        """Go to `new`, which `_TRANSITIONS` must allow. An ended transaction stays as it ended: a
        rollback racing the expiry that ends it first ends nothing more."""
        if self._state not in _LIVE:
            return
        if new not in _TRANSITIONS[self._state]:
            raise RuntimeError(f"a transaction cannot go from {self._state.value} to {new.value}")
        self._state = new

    def _restarted(self) -> bool:
        return self._backend.pair.generation != self._generation

    # ------------------------------------------------------------------ timeouts

    @contextlib.contextmanager
    def working(self):
        self._requests += 1
        self.touch()
        try:
            yield
        finally:
            self._requests -= 1
            self.touch()

    def touch(self) -> None:
        """Activity: (re)arm the timer for the total timeout, and for the idle timeout unless the
        proxy is working on a request, whichever is first."""
        self._disarm()
        if self._state not in _LIVE:
            return
        idle_due = self._idle_timeout and not self._requests and time.monotonic() + self._idle_timeout
        due = [(t, reason) for t, reason in ((self._deadline, _OVER_TIME), (idle_due, _IDLE)) if t]
        if due:
            when, reason = min(due)
            delay = max(0.0, when - time.monotonic())
            self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer, reason)

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def _on_timer(self, reason: str) -> None:
        # The reason is the one the timer was armed for: uvloop's clock runs in milliseconds, so
        # a timer may fire a little before time.monotonic() reaches its due time.
        self._timer = None
        self._expiry = asyncio.get_running_loop().create_task(self._expire(reason))

    async def _expire(self, reason: str) -> None:
        if self._state in _LIVE:
            self._expired_because = reason
            self._disarm()
            await asyncio.shield(self._roll_back(TxState.EXPIRED))

    def _remaining(self) -> float | None:
        return None if self._deadline is None else max(0.001, self._deadline - time.monotonic())

    def _check_usable(self) -> None:
        if self._state is TxState.WRITING and self._restarted():
            self._end(TxState.FAILED)               # the restart rolled it back (the journal said held)
        if self._state is TxState.EXPIRED:
            raise self._expired_error()
        if self._state in _ENDED:
            raise CypherError(*_ENDED[self._state])

    def _expired_error(self) -> CypherError:
        limit = (f" (the idle timeout of {self._idle_timeout:g} s)" if "idle" in self._expired_because
                 else f" (its timeout of {self._config.timeout:g} s)" if self._config.timeout else "")
        return CypherError(TIMED_OUT,
                           f"The transaction has been terminated and rolled back: {self._expired_because}{limit}.")
