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

The roles journal (`roles.json`, replaced atomically) says which server is the primary and
whether the replica is held. It is written *before* the primary receives a transaction's first
write and *before* a COMMIT is acknowledged, so at start (after any crash) the rule is simple:
held means the transaction never committed, and the replica is the truth; otherwise the primary
is. Recovery therefore only ever undoes work that was never acknowledged.

A watchdog pings both servers; a dead or wedged primary is killed and the pair restarted on the
same files by the same rule (`generation` counts restarts so open transactions learn of it).

Three FalkorDB 4.16 bugs shape how a server is (re)loaded (falkordb/upkeep.py has the table): a
full re-sync always goes into a new process on empty files (`_resync_fresh`), after every load
the indexes a load leaves broken are rebuilt before the loaded server is relied on
(`rebuild_loaded_indexes`), and a write that failed after creating entities realigns the
servers' reusable ids by promoting the replica (`discard_failed_write`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Any, Awaitable, Callable

from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import BusyLoadingError, RedisError, ResponseError

from proxy.backends.falkordb.relay import Relay
from proxy.backends.falkordb.server import EmbeddedFalkorDB
from proxy.backends.falkordb.upkeep import SINGLE_FIELD_INDEXES, SINGLE_FIELD_UNIQUE, rebuild_commands
from core.errors import CypherError, unavailable

log = logging.getLogger("proxy.falkordb")

NAMES = ("a", "b")
WATCH_INTERVAL = 1.0          # seconds between health checks
WATCH_TIMEOUT = 2.0           # a PING slower than this counts as a miss
WATCH_MISSES = 3              # consecutive misses before the server counts as dead
#: A server that misses a PING while using at least this share of a CPU is busy, not wedged:
#: FalkorDB applies a big write (or a replica the replicated one) holding Redis' main thread,
#: for tens of seconds when it deletes millions of nodes. Dead, stopped or deadlocked: ~0.
#: One waiting on its disk (the fsync after such a write) is busy too.
BUSY_CPU_SHARE = 0.05
BUSY_LIMIT = 600.0            # seconds a busy server may stay silent before it counts as wedged
#: The Redis db (not FalkorDB's db 0) holding the counter `hold` bumps: `WAIT` waits only for
#: the writes of its own connection, so a hold writes once and waits for that write.
SYNC_DB, SYNC_KEY = 9, "cypher-proxy:sync"
#: A graph's names, each table in id order: what effects refer to by id (falkordb/upkeep.py).
NAME_TABLES = ("CALL db.labels()", "CALL db.relationshipTypes()", "CALL db.propertyKeys()")
#: Seconds a start waits for the replica to apply the rebuilt indexes (`rebuild_loaded_indexes`)
#: before it serves anyway (the next write waits for it again).
START_REBUILD_TIMEOUT = 60.0
#: Seconds after the last index or constraint is built before its re-issue is surely replicated.
SCHEMA_SETTLE = 0.05
#: Seconds a failed write waits for the replica to reach the stream before it (`discard_failed_write`).
DISCARD_WAIT = 5.0


class RolesJournal:
    """`roles`: which server is the primary and whether the replica is held, as one fixed-size
    line (`a free`, `b held`, ...) overwritten in place with a single write, which a crash of
    the proxy cannot tear (the file is one page; no fsync: unlike the append-only files, it
    survives a crash of the proxy, not necessarily one of the OS)."""

    def __init__(self, path: Path):
        self.path = path
        self._fd: int | None = None

    def load(self) -> tuple[str, bool]:
        try:
            primary, state = self.path.read_text().split()
            if primary in NAMES and state in ("free", "held"):
                return primary, state == "held"
        except (OSError, ValueError):
            pass
        return NAMES[0], False

    def save(self, primary: str, held: bool) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600)
        os.pwrite(self._fd, f"{primary} {'held' if held else 'free'}\n".encode(), 0)

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _other(name: str) -> str:
    return NAMES[1] if name == NAMES[0] else NAMES[0]


def _password(root: Path) -> str:
    """The servers' shared password (requirepass + masterauth), kept in `<root>/auth` (0600)."""
    path = root / "auth"
    try:
        return path.read_text().strip()
    except FileNotFoundError:
        secret = secrets.token_urlsafe(24)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write(secret)
        return secret


def primary_address(root: Path) -> tuple[Path, str]:
    """The running primary's socket and the password, for tools that talk to the embedded
    database directly (benchmarks, the conformance suite's differential checks)."""
    root = Path(root).absolute()
    primary, _ = RolesJournal(root / "roles").load()
    return root / primary / "falkordb.sock", _password(root)


async def name_tables(client, keys: list) -> list[list[bytes]]:
    """Each graph's labels, relationship types and property keys, in id order (one round trip)."""
    pipeline = client.pipeline(transaction=False)
    for key in keys:
        for query in NAME_TABLES:
            pipeline.execute_command("GRAPH.RO_QUERY", key, query)
    return [[row[0] for row in reply[1]] for reply in await pipeline.execute()]   # not the timing stats


def _names(rows: list) -> list[tuple[str, ...]]:
    return [tuple(cell.decode() for cell in row) for row in rows]


def _migrate_single_server_layout(root: Path) -> None:
    """Data directories from before the pair kept one server's files in `root` itself."""
    old = root / "appendonlydir"
    if old.exists() and not (root / NAMES[0]).exists():
        (root / NAMES[0]).mkdir(mode=0o700)
        shutil.move(str(old), root / NAMES[0] / "appendonlydir")
        log.info("moved the embedded database's files into %s", root / NAMES[0])


class ServerPair:
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
        return self._servers[_other(self._primary)]

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> None:
        """Start both servers: the journal decides which one holds the committed state."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        os.chmod(self.root, 0o700)
        _migrate_single_server_layout(self.root)
        password = _password(self.root)
        self._servers = {name: EmbeddedFalkorDB(self.root / name, password=password, persistent=self.persistent)
                         for name in NAMES}
        await self._start_servers()
        self._watchdog = asyncio.create_task(self._watch())

    async def _start_servers(self) -> None:
        primary, held = self._journal.load()
        if held:
            log.warning("the embedded database stopped during a write transaction that never "
                        "committed; starting from its replica, which holds the last committed state")
            primary = _other(primary)
        self._journal.save(primary, False)
        self._primary, self.held = primary, False

        def progress(percent: float) -> None:
            log.info("loading the embedded database: %.0f%%", percent)

        try:
            await self.primary.start(progress)
        except RuntimeError as exc:                  # it exited while loading its files
            unloadable = self.primary.data_dir / "appendonlydir"
            kept = unloadable.with_name(f"appendonlydir.unloadable-{int(time.time())}")
            log.error("the embedded database's primary could not load its files (%s); starting "
                      "from its replica's, which hold what was replicated; its own are kept in %s",
                      exc, kept)
            if unloadable.exists():
                unloadable.rename(kept)
            self._primary = _other(self._primary)
            self._journal.save(self._primary, False)
            await self.primary.start(progress)
        await self.replica.start(fresh=True)          # it syncs in full: see `_resync_fresh`
        await self._close_control()
        self._control = {name: server.client(db=SYNC_DB) for name, server in self._servers.items()}
        self._graphs = {name: server.client() for name, server in self._servers.items()}
        client = self.primary.client()
        try:
            for key in self.graph_keys:
                await client.execute_command("GRAPH.QUERY", key, "RETURN 1")
        finally:
            await client.aclose()
        self._relay = Relay(self.primary.socket_path)
        self._relay_port = await self._relay.start()
        await self._replicate(self.replica)
        try:
            await self.rebuild_loaded_indexes(START_REBUILD_TIMEOUT)
        except CypherError as exc:
            log.warning("the embedded database's replica has not applied its rebuilt indexes yet (%s); "
                        "the next write waits for it", exc.message)
        self.ready.set()

    async def _replicate(self, server: EmbeddedFalkorDB) -> None:
        """Point `server` at the relay; it syncs (and loads) in the background."""
        self._replica_durable = False
        self._loaded = True
        await self._live(self._control, server.name).execute_command("REPLICAOF", "127.0.0.1", self._relay_port)

    async def _resync_fresh(self, server: EmbeddedFalkorDB) -> None:
        """Re-sync `server` from the primary in full, as a new process on empty files. A full
        sync into a process that has held the graph keeps state from it in FalkorDB 4.16: after
        a write that failed having created entities, the re-synced replica still diverged on
        their ids and segfaulted applying the next write (AttributeSet_Update, measured with this
        re-sync done as REPLICAOF on the live process); a new process loads the primary's ids.
        (It does not mend the indexes a load breaks: `rebuild_loaded_indexes` does.)"""
        self._loaded = True
        await server.kill()
        await server.start(fresh=True)
        await self._replicate(server)

    async def rebuild_loaded_indexes(self, timeout: float) -> None:
        """After a server loaded a graph, rebuild the indexes a load leaves broken
        (falkordb/upkeep.py) on the primary, and wait until both servers hold them built and the
        replica has applied them. Call with the writer lock held, or before serving."""
        if not self._loaded:
            return
        self._loaded = False                 # a load that begins meanwhile sets it again
        client = self._live(self._graphs, self._primary)
        try:
            commands = []
            for key in await client.execute_command("GRAPH.LIST"):
                indexes = (await client.execute_command("GRAPH.RO_QUERY", key, SINGLE_FIELD_INDEXES))[1]
                if indexes:
                    unique = (await client.execute_command("GRAPH.RO_QUERY", key, SINGLE_FIELD_UNIQUE))[1]
                    commands += rebuild_commands(key.decode(), _names(indexes), _names(unique))
            for command in commands:
                await client.execute_command(*command)
            if commands:
                await self._caught_up(timeout)
                await self._schema_built(timeout)
                await self._caught_up(timeout)       # what the servers' indexers replicated once built
        except (RedisError, OSError) as exc:
            self._loaded = True
            raise unavailable(f"The embedded database did not answer while rebuilding its indexes: {exc}") from None
        except CypherError:
            self._loaded = True
            raise
        if commands:
            log.info("rebuilt %d single-field index(es) after the embedded database loaded a graph",
                     sum(command[-1].startswith("CREATE INDEX") for command in commands))

    async def _schema_built(self, timeout: float, names: tuple[str, ...] = NAMES) -> None:
        """Wait until every index and constraint is built on servers `names` (FalkorDB builds
        them in the background; a write meanwhile would not be checked), and a moment more: a
        server's indexer replicates a constraint again right after it is built (indexer.c), and
        a replica loading then would enforce it on a loaded index (see `_resync_fresh`)."""
        deadline = asyncio.get_running_loop().time() + timeout
        clients = [self._live(self._graphs, name) for name in names]
        while True:
            pending = False
            for client in clients:
                for key in await client.execute_command("GRAPH.LIST"):
                    for query in ("CALL db.indexes() YIELD status WHERE status <> 'OPERATIONAL' RETURN count(*)",
                                  "CALL db.constraints() YIELD status WHERE status <> 'OPERATIONAL' RETURN count(*)"):
                        pending = pending or (await client.execute_command("GRAPH.RO_QUERY", key, query))[1][0][0] > 0
            if not pending:
                await asyncio.sleep(SCHEMA_SETTLE)
                return
            if asyncio.get_running_loop().time() > deadline:
                raise unavailable(f"The embedded database's rebuilt indexes were not built within {timeout:g} s. "
                                  "Retry the transaction.")
            await asyncio.sleep(0.005)

    async def _wait_replica_durable(self, timeout: float) -> None:
        """After a full sync a replica writes its first append-only file in the background; until
        that ends, its files do not hold what it has applied, so a crash while it is held would
        recover from stale files. Wait for the sync and that first rewrite to finish."""
        client = self._live(self._control, _other(self._primary))
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            replication = await client.info("replication")       # first: a finished sync has
            persistence = await client.info("persistence")       # already started the rewrite
            if (replication.get("master_link_status") == "up" and not replication.get("master_sync_in_progress")
                    and not persistence.get("aof_rewrite_in_progress")
                    and not persistence.get("aof_rewrite_scheduled")):
                self._replica_durable = True
                return
            if asyncio.get_running_loop().time() > deadline:
                raise unavailable(f"The embedded database's replica, which makes rollback possible, did "
                                  f"not finish syncing within {timeout:g} s (it re-syncs after a rollback "
                                  "or a restart). Retry the transaction.")
            await asyncio.sleep(0.005)

    async def stop(self) -> None:
        self.ready.clear()
        for task in (self._watchdog, self._restarting):
            if task is not None and task is not asyncio.current_task():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        self._watchdog = self._restarting = None
        await self._close_control()
        # The servers first: a replica that lost its link to a closed relay would reconnect at once.
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
        except (RedisError, OSError) as exc:         # the replica is away: try again next time
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
        except (RedisError, OSError, RuntimeError) as exc:     # the watchdog restarts it
            log.warning("the embedded database's replica could not re-sync after a failed write: %s", exc)

    async def _replica_at(self, mark: int, give_up: Callable[[], bool]) -> bool:
        """Wait until the replica has read and applied the primary's stream up to `mark`
        (True), gone past it or `give_up()` (False). The replica may be busy applying an
        earlier big write: each look is bounded, and it looks again."""
        client = self._live(self._control, _other(self._primary))
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

    # ------------------------------------------------------------------ divergence

    async def _replica_consistent(self) -> bool:
        """Whether the replica, caught up, names labels, types and properties as the primary
        does. FalkorDB 4.16's effects lose a name that a failing or no-op write (`SET n.new =
        null`) adds on the primary: the replica then files the next new name under another id,
        reads it back wrong and may crash, and the primary's append-only file would crash it
        too (falkordb/upkeep.py)."""
        primary, replica = self._live(self._graphs, self._primary), self._live(self._graphs, _other(self._primary))
        try:
            keys = await primary.execute_command("GRAPH.LIST")
            names = await asyncio.gather(*(name_tables(client, keys) for client in (primary, replica)))
        except ResponseError:                        # a graph the primary has and the replica not
            return False
        except (RedisError, OSError):                # a server away: the watchdog's business
            return True
        return names[0] == names[1]

    async def _resync_replica(self) -> None:
        """Re-sync the replica in full (a new replication id: no partial sync) and rewrite the
        primary's append-only file from memory."""
        log.warning("the embedded database's replica names labels, types or properties unlike its primary "
                    "(FalkorDB lost a name in replication); it re-syncs in full, and the primary's files "
                    "are rewritten")
        await self._resync_fresh(self.replica)
        await self._rewrite_primary_files()

    # ------------------------------------------------------------------ health

    async def _watch(self) -> None:
        misses = {name: 0 for name in NAMES}
        silent_since: dict[str, float] = {}
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            for name, server in self._servers.items():
                answered, busy = await self._healthy(server), self._busy(server)   # both, each round
                if answered:
                    silent_since.pop(name, None)
                else:
                    busy = busy and time.monotonic() - silent_since.setdefault(name, time.monotonic()) < BUSY_LIMIT
                misses[name] = 0 if answered or busy else misses[name] + 1
            if self._restarting is not None and not self._restarting.done():
                misses = {name: 0 for name in NAMES}
                continue                 # the old primary of an aborted write is restarting
            try:
                if misses[self._primary] >= WATCH_MISSES:
                    misses = {name: 0 for name in NAMES}
                    await self.restart(f"the primary ({self.primary.data_dir}) stopped answering")
                elif misses[_other(self._primary)] >= WATCH_MISSES:
                    misses[_other(self._primary)] = 0
                    await self._restart_replica()
                    await self._rewrite_primary_files()
            except (RuntimeError, RedisError, OSError) as exc:    # the next round tries again
                log.error("restarting the embedded database failed: %s", exc)

    async def _healthy(self, server: EmbeddedFalkorDB) -> bool:
        if not server.running:
            return False
        client = server.client(retry=Retry(NoBackoff(), 0))       # one try, bounded below
        try:
            return bool(await asyncio.wait_for(client.ping(), WATCH_TIMEOUT))
        except BusyLoadingError:
            return True                  # answering: busy loading a (big) sync or its files
        except (RedisError, OSError, asyncio.TimeoutError):
            return False
        finally:
            await client.aclose()

    def _busy(self, server: EmbeddedFalkorDB) -> bool:
        """Whether `server` used at least BUSY_CPU_SHARE of a CPU since the last look, or is
        waiting on its disk."""
        now, cpu = time.monotonic(), server.cpu_seconds()
        last = self._cpu_seen.get(server.name)
        self._cpu_seen[server.name] = (server.pid, now, cpu)
        if server.waiting_on_disk():
            return True
        if cpu is None or last is None or last[0] != server.pid or last[2] is None:
            return False
        return cpu - last[2] >= BUSY_CPU_SHARE * (now - last[1])

    async def restart(self, reason: str) -> None:
        """Kill both servers and start again on the same files (the journal decides the roles)."""
        log.error("restarting the embedded database: %s", reason)
        self.ready.clear()
        if self._restarting is not None and self._restarting is not asyncio.current_task():
            self._restarting.cancel()
            await asyncio.gather(self._restarting, return_exceptions=True)
        self.generation += 1
        if self.on_restart is not None:
            await self.on_restart()
        if self._relay is not None:
            await self._relay.stop()
        await asyncio.gather(*(server.kill() for server in self._servers.values()))
        await self._start_servers()
        log.info("the embedded database is back (restart %d)", self.generation)

    async def _rewrite_primary_files(self) -> None:
        """A replica also dies applying effects FalkorDB encoded wrongly: an attribute name that
        a failing or no-op write (`SET n.new = null`) added on the primary alone shifts the
        attribute ids of the next write's effects. The primary's append-only file holds the
        same effects and would crash it at its next start, so it is rewritten from memory."""
        if not self.persistent:
            return
        try:
            await self._live(self._control, self._primary).bgrewriteaof()
        except RedisError as exc:                  # e.g. a rewrite is running already
            log.warning("could not rewrite the primary's append-only file after its replica died: %s", exc)

    async def _restart_old_primary(self) -> None:
        try:
            await self._schema_built(START_REBUILD_TIMEOUT, (self._primary,))
            await self._restart_replica()
        except (RuntimeError, RedisError, OSError) as exc:         # the watchdog tries again
            log.error("restarting the embedded database's replica failed: %s", exc)

    async def _restart_replica(self) -> None:
        """A dead (or demoted) replica re-syncs in full, as a new process (`_resync_fresh`): it
        may have died applying effects FalkorDB encoded wrongly (falkordb/upkeep.py), which a
        partial sync would send it again. A held one restarts on its own files, which hold the
        committed state a rollback returns to, and stays detached until the transaction ends:
        syncing into the process that loaded them would lose index entries."""
        log.warning("restarting the embedded database's replica (%s)", self.replica.data_dir)
        if self.held:
            await self.replica.kill()
            await self.replica.start()
            self._replica_detached = True
            self._replica_durable = True
            return
        await self._resync_fresh(self.replica)
