"""Explicit transactions that live across HTTP requests, and their idle expiry.

Each open transaction owns a `Session` (logged on, with the backend transaction begun),
is bound to one database and one user, and serves one request at a time. Between
requests an idle timer runs; when it fires the transaction is rolled back and forgotten,
so an abandoned client never holds the database's write lock for long:

    begin --> BUSY --request done--> IDLE --next request (claim)--> BUSY
               |                      |---idle timer-----------> ENDED (rolled back)
               |---commit / rollback / server shutdown---------> ENDED
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import itertools
import logging
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field

from core.backend import TxConfig
from core.errors import CypherError
from proxy.session import Session

log = logging.getLogger("proxy.http")

IDLE_TIMEOUT = 30.0       # seconds (Neo4j's server.http.transaction_idle_timeout default)


def not_found() -> CypherError:
    return CypherError("Neo.ClientError.Transaction.TransactionNotFound",
                       "Unrecognized transaction id. Transaction may have timed out and been rolled back.")


class Phase(enum.Enum):
    BUSY = "serving a request"
    IDLE = "waiting for the next request"      # the idle timer runs
    ENDED = "committed, rolled back or expired"


#: Where an open transaction may go from each phase (the diagram above); ENDED is the end.
_TRANSITIONS = {Phase.BUSY: frozenset({Phase.IDLE, Phase.ENDED}),
                Phase.IDLE: frozenset({Phase.BUSY, Phase.ENDED})}


@dataclass(eq=False)
class OpenTransaction:
    id: str
    database: str
    user: str | None
    session: Session
    expires: float = 0.0                       # wall-clock time (time.time()) of the idle expiry
    phase: Phase = Phase.BUSY
    timer: asyncio.TimerHandle | None = field(default=None, repr=False)

    def enter(self, phase: Phase) -> bool:
        """Go to `phase` if `_TRANSITIONS` allows it from the current one; whether it did."""
        if phase not in _TRANSITIONS.get(self.phase, ()):
            return False
        self.phase = phase
        return True


class TransactionRegistry:
    """The open transactions of one HTTP API (the transactional endpoint or the Query API)."""

    def __init__(self, idle_timeout: float = IDLE_TIMEOUT, ids: Iterator[int] | None = None):
        self.idle_timeout = idle_timeout
        self._open: dict[str, OpenTransaction] = {}
        self._ids = ids or itertools.count(1)       # with --workers: the ones saying which worker
        self._expiring: set[asyncio.Task] = set()

    async def begin(self, session: Session, config: TxConfig) -> OpenTransaction:
        """Begin a transaction in `session`; it is returned busy (see `use`)."""
        await session.begin(config)
        tx = OpenTransaction(str(next(self._ids)), session.database, session.user, session)
        self._open[tx.id] = tx
        return tx

    def claim(self, tx_id: str, database: str, user: str | None) -> OpenTransaction:
        """The open transaction `tx_id` of `database` and `user`, marked busy."""
        tx = self._open.get(tx_id)
        if tx is None or tx.database.lower() != database.lower() or tx.user != user:
            raise not_found()
        if not tx.enter(Phase.BUSY):
            raise CypherError("Neo.ClientError.Request.Invalid",
                              f"Transaction {tx_id} is serving another request; "
                              "send the requests of one transaction one after the other.")
        if tx.timer is not None:
            tx.timer.cancel()
            tx.timer = None
        return tx

    def release(self, tx: OpenTransaction) -> None:
        """The request using `tx` is done: start its idle timer (if it is still open)."""
        if tx.enter(Phase.IDLE):
            tx.expires = time.time() + self.idle_timeout
            tx.timer = asyncio.get_running_loop().call_later(self.idle_timeout, self._expire, tx)

    @contextlib.asynccontextmanager
    async def use(self, tx: OpenTransaction) -> AsyncIterator[OpenTransaction]:
        """Hold a claimed (or just begun) transaction for one request."""
        try:
            yield tx
        finally:
            self.release(tx)

    async def commit(self, tx: OpenTransaction) -> str | None:
        self._forget(tx)
        return await tx.session.commit()

    async def rollback(self, tx: OpenTransaction) -> None:
        """Roll back and forget `tx`; a rollback that fails is logged, not raised."""
        self._forget(tx)
        try:
            await tx.session.reset()
        except Exception:
            log.exception("rolling back HTTP transaction %s failed", tx.id)

    async def close(self) -> None:
        """Roll back every open transaction (server shutdown)."""
        for tx in list(self._open.values()):
            await self.rollback(tx)
        for task in list(self._expiring):
            await task

    def __len__(self) -> int:
        return len(self._open)

    def _forget(self, tx: OpenTransaction) -> None:
        if tx.enter(Phase.ENDED):
            del self._open[tx.id]
        if tx.timer is not None:
            tx.timer.cancel()
            tx.timer = None

    def _expire(self, tx: OpenTransaction) -> None:
        tx.timer = None
        if tx.phase is not Phase.IDLE:
            return
        log.info("HTTP transaction %s was idle for %g s: rolled back", tx.id, self.idle_timeout)
        task = asyncio.ensure_future(self.rollback(tx))
        self._expiring.add(task)
        task.add_done_callback(self._expiring.discard)
