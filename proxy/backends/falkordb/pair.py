"""Two embedded FalkorDB servers, a primary and a replica, and the rules that make rollback exact.

FalkorDB has no multi-statement transactions, and copying the graph per transaction costs what
the graph costs (and deadlocked with AOF rewrites). Instead the proxy keeps a replica, fed
through its own relay (falkordb/relay.py):

- a write transaction *holds* the replica at the last committed state before its first write
  (`hold`); its statements run on the primary;
- COMMIT releases the held stream: the replica catches up at the cost of what was written;
- ROLLBACK *promotes* the replica (it is exactly the state before the transaction) and turns the
  old primary into the new replica, which re-syncs in the background: O(graph) only on rollback.

Writers are serialised by the backend (one writer lock), so while the replica is held it is the
committed state: other clients' reads go there (read committed).

How the pair starts and recovers from a crash is in falkordb/recovery.py, which server is which
in falkordb/roles.py, the health checks in falkordb/watchdog.py.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import Any, Awaitable, Callable

from redis.exceptions import RedisError

from proxy.backends.falkordb.recovery import SYNC_KEY, PairRecovery
from proxy.backends.falkordb.relay import Relay
from proxy.backends.falkordb.roles import NAMES, RolesJournal, migrate_single_server_layout, other_name, shared_password
from proxy.backends.falkordb.server import EmbeddedFalkorDB
from proxy.backends.falkordb.watchdog import WATCH_TIMEOUT, PairWatchdog
from core.errors import CypherError, unavailable

log = logging.getLogger("proxy.falkordb")

#: Seconds a failed write waits for the replica to reach the stream before it (`discard_failed_write`).
DISCARD_WAIT = 5.0


class ServerPair(PairRecovery, PairWatchdog):
    """The primary and the replica of the embedded database, in `root/a` and `root/b`."""

    def __init__(self, root: Path, *, persistent: bool = True, graph_keys: tuple[str, ...] = (),
                 on_restart: Callable[[], Awaitable[None]] | None = None):
        self.root = Path(root).absolute()
        self.persistent = persistent
        #: Graphs that must exist even while empty. An empty graph is not replicated (no write
        #: makes it), so they are created on the primary before the replica's first sync.
        self.graph_keys = graph_keys
        self.on_restart = on_restart
        self.generation = 0
        self.held = False
        #: The primary has a name its effects did not carry, while a transaction held the
        #: replica: it re-syncs before the next write (`heal_lost_names`).
        self.names_lost = False
        self.ready = asyncio.Event()
        self._journal = RolesJournal(self.root / "roles")
        self._control: dict[str, Any] = {}      # per server: a client on the SYNC_DB
        self._graphs: dict[str, Any] = {}       # per server: a client on the graphs' db
        self._servers: dict[str, EmbeddedFalkorDB] = {}
        self._primary = NAMES[0]
        self._relay: Relay | None = None
        self._relay_port = 0
        #: False from each (re)sync of the replica until its files hold what it applied.
        self._replica_durable = False
        #: The primary's replication offset when the replica was held.
        self._held_at = 0
        self._watchdog: asyncio.Task | None = None
        self._cpu_seen: dict[str, tuple] = {}   # per server: (pid, when, CPU seconds) at the last look
        self._restarting: asyncio.Task | None = None
        #: The held replica restarted on its own files, unlinked: it re-syncs at COMMIT.
        self._replica_detached = False
        #: A server loaded a graph since the last `rebuild_loaded_indexes`.
        self._loaded = True
        #: A write in the held transaction failed after creating entities (`discard_failed_write`):
        #: its end must realign the servers' reusable ids.
        self.ids_undone = False

    # ------------------------------------------------------------------ roles

    @property
    def primary(self) -> EmbeddedFalkorDB:
        return self._servers[self._primary]

    @property
    def replica(self) -> EmbeddedFalkorDB:
        return self._servers[other_name(self._primary)]

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start both servers: the journal decides which one holds the committed state."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        migrate_single_server_layout(self.root)
        password = shared_password(self.root)
        self._servers = {name: EmbeddedFalkorDB(self.root / name, password=password, persistent=self.persistent)
                         for name in NAMES}
        await self._start_servers()
        self._watchdog = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        self.ready.clear()
        for task in (self._watchdog, self._restarting):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._watchdog = self._restarting = None
        await self._close_control()
        # The servers first: a replica that lost its link to a closed relay would reconnect at once.
        if self._relay is not None:
            self._relay.stopping = True
        await asyncio.gather(*(server.stop() for server in self._servers.values()))
        if self._relay is not None:
            await self._relay.stop()
            self._relay = None
        self._journal.close()

    @staticmethod
    def _live(clients: dict[str, Any], name: str) -> Any:
        """Server `name`'s client in `clients` (`_control`, `_graphs`); none while the pair
        restarts: a request that arrives then is told to retry."""
        try:
            return clients[name]
        except KeyError:
            raise unavailable("The embedded database is restarting. Retry the transaction.") from None

    async def _close_control(self) -> None:
        clients = [*self._control.values(), *self._graphs.values()]
        self._control, self._graphs = {}, {}
        for client in clients:
            await client.aclose()

    # ------------------------------------------------------------------ transactions

    async def hold(self, timeout: float) -> None:
        """Hold the replica at the current (committed) state: call with the writer lock held,
        before a transaction's first write. Replication is ordered, so once the replica has
        acknowledged a write made now, it has applied every earlier one."""
        if self._restarting is not None and not self._restarting.done():
            await asyncio.wait([self._restarting], timeout=timeout)     # after an aborted write
        await self._replica_synced(timeout)
        await self.rebuild_loaded_indexes(timeout)
        replication = await self._caught_up(timeout)
        if not await self._replica_consistent():      # never roll back to (or read) a diverged replica
            await self._resync_replica()
            await self._replica_synced(timeout)
            replication = await self._caught_up(timeout)
        self.names_lost = self.ids_undone = False
        self._journal.save(self._primary, True)
        self._relay.hold()
        self.held = True
        self._held_at = replication["master_repl_offset"]

    async def _replica_synced(self, timeout: float) -> None:
        if self.persistent and not self._replica_durable:
            try:
                await self._wait_replica_durable(timeout)
            except RedisError as exc:
                raise unavailable(f"The embedded database's replica did not answer: {exc}") from None

    async def _caught_up(self, timeout: float) -> dict:
        """Write once and wait until the replica has it (so everything before it); the primary's
        replication info."""
        pipeline = self._live(self._control, self._primary).pipeline(transaction=False)
        pipeline.incr(SYNC_KEY).execute_command("WAIT", 1, max(1, int(timeout * 1000))).info("replication")
        try:
            _, synced, replication = await pipeline.execute()
        except RedisError as exc:
            raise unavailable(f"The embedded database did not answer: {exc}") from None
        if synced < 1:
            raise unavailable(f"The embedded database's replica, which makes rollback possible, did "
                              f"not catch up within {timeout:g} s (it re-syncs after a rollback or a "
                              "restart). Retry the transaction.")
        return replication

    async def heal_lost_names(self) -> None:
        """The primary gained a label, type or property name that no effect carried (a write
        that failed or changed nothing, falkordb/upkeep.py), so the replica lacks it and would
        file the next new name under another id: it re-syncs in full, now or, while a
        transaction holds it, before the next write (writer lock held)."""
        self.names_lost = True
        if self.held:
            return
        try:
            await self._resync_replica()
            self.names_lost = False
        except (RedisError, OSError, RuntimeError, CypherError) as exc:     # away, or the primary busy: next time
            log.warning("the embedded database's replica could not start re-syncing: %s", exc)

    def release(self) -> None:
        """COMMIT: the transaction's writes are the committed state; let the replica catch up
        (one that restarted on its own files while held re-syncs in full, see `_restart_replica`)."""
        self._journal.save(self._primary, False)
        self._relay.release()
        self.held = False
        if self._replica_detached or self.ids_undone:       # (a full sync carries the reusable ids)
            self._replica_detached = self.ids_undone = False
            self._replica_durable = False
            self._restarting = asyncio.create_task(self._restart_old_primary())

    async def rollback(self, *, busy: bool = False) -> None:
        """ROLLBACK: if the primary has replicated nothing since the hold, the transaction
        changed nothing (and nothing can be on its way to the replica): release. Otherwise, or
        if a failed write left ids the replica never allocated (`discard_failed_write`),
        `promote`. `busy`: a statement is still running on the primary (its commit may hold
        the primary's main thread for minutes): promote without asking, and kill it."""
        if busy:
            await self.promote()
            return
        replication = await self._live(self._control, self._primary).info("replication")
        if replication["master_repl_offset"] == self._held_at and not self.ids_undone:
            self.release()
        else:
            await self.promote()

    async def promote(self) -> None:
        """The held replica becomes the primary; the old primary is killed (which also ends a
        write it may be busy with) and re-syncs from it in the background, as a new process
        (`_resync_fresh`)."""
        old, new = self.primary, self.replica
        self._journal.save(new.name, False)
        self._primary, self.held = new.name, False
        self.names_lost = self.ids_undone = False    # the old primary re-syncs from the new one
        self._replica_detached = False
        self._relay.redirect(new.socket_path)
        await self._live(self._control, new.name).execute_command("REPLICAOF", "NO", "ONE")
        self._replica_durable = False
        await old.kill()
        self._restarting = asyncio.create_task(self._restart_old_primary())

    # ------------------------------------------------------------------ writes past their timeout

    async def write_mark(self, within: float) -> int:
        """Where the primary's replication stream is before an auto-commit write (see
        `abort_write`), once the replica has applied all of it: only a replica in sync can undo
        a write that runs past its timeout (one still re-syncing cannot while the write holds
        the primary, and the write then runs to its end). A replica running or restarting is
        waited for, up to `within` seconds, then the write is refused as retryable; a stopped
        one is not (the watchdog restarts it)."""
        deadline = asyncio.get_running_loop().time() + within
        if self._restarting is not None and not self._restarting.done():
            await asyncio.wait([self._restarting], timeout=within)       # it will have loaded
        await self.rebuild_loaded_indexes(max(0.1, deadline - asyncio.get_running_loop().time()))
        try:
            replication = await self._live(self._control, self._primary).info("replication")
        except RedisError as exc:
            raise unavailable(f"The embedded database did not answer: {exc}") from None
        mark = replication["master_repl_offset"]
        restarting = self._restarting is not None and not self._restarting.done()
        if not (self.replica.running or restarting):
            return mark
        if not await self._replica_at(mark, lambda: asyncio.get_running_loop().time() > deadline):
            raise unavailable(f"The embedded database's replica, which undoes a write that runs past its "
                              f"timeout, did not catch up within {within:g} s (it re-syncs after a big "
                              "write, a restart or a rollback). Retry the write.")
        return mark

    async def abort_write(self, mark: int | None, reply: asyncio.Future) -> bool:
        """Undo a write the primary is still busy with: FalkorDB checks a query's timeout only
        while it reads, so a big write's changes run on past any timeout. The replica, which has
        not received the write, becomes the primary, and the old primary is killed (ending the
        write) and restarted as the replica. `mark`: `write_mark()` taken before an auto-commit
        write; None in a transaction that holds the replica. Returns False, changing nothing,
        if the write's `reply` comes first or anything past `mark` reaches the replica (then
        the write, or part of the stream after it, is committed: let it finish)."""
        if mark is not None:
            self._relay.hold()
            if not await self._replica_at(mark, reply.done):
                self._relay.release()
                return False
        log.warning("a write ran past its timeout: the replica, without it, becomes the embedded "
                    "database's primary, and the old primary (%s) restarts as the replica", self.primary.data_dir)
        await self.promote()
        return True

    async def discard_failed_write(self, mark: int) -> None:
        """An auto-commit write failed on the primary after it may have created nodes or
        relationships: FalkorDB undid them but keeps their ids for reuse, ids the replica never
        allocated, so the next creation gets another id on each server (the replica then applied
        an effect to a node it lacks and segfaulted in Effects_Apply). The replica, which the
        failed write sent nothing (it is at `mark`), becomes the primary; if it is not there in
        time, it re-syncs in full (a full sync carries the primary's reusable ids)."""
        deadline = asyncio.get_running_loop().time() + DISCARD_WAIT
        if self.replica.running and await self._replica_at(mark, lambda: asyncio.get_running_loop().time() > deadline):
            log.info("a write failed after creating entities; the replica, without their ids, becomes the primary")
            await self.promote()
            return
        if self._restarting is not None and not self._restarting.done():
            await asyncio.wait([self._restarting])
        try:
            await self._resync_fresh(self.replica)
        except (RedisError, OSError, RuntimeError, CypherError) as exc:     # the watchdog restarts it
            log.warning("the embedded database's replica could not re-sync after a failed write: %s", exc)

    async def _replica_at(self, mark: int, give_up: Callable[[], bool]) -> bool:
        """Wait until the replica has read and applied the primary's stream up to `mark`
        (True), gone past it or `give_up()` (False). The replica may be busy applying an
        earlier big write: each look is bounded, and it looks again."""
        client = self._live(self._control, other_name(self._primary))
        while not give_up():
            try:
                replication = await asyncio.wait_for(client.info("replication"), WATCH_TIMEOUT)
            except (RedisError, OSError, asyncio.TimeoutError):
                await asyncio.sleep(0.05)
                continue
            if replication.get("master_link_status") == "up":    # else its offsets are its own
                applied = replication.get("slave_repl_offset", -1)
                if applied > mark:
                    return False
                if applied == mark == replication.get("slave_read_repl_offset"):
                    return True
            await asyncio.sleep(0.005)
        return False
