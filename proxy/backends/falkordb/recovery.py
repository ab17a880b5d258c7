"""The pair's crash-recovery rules: how it (re)starts, re-syncs a replica and rebuilds a load.

A mixin of `ServerPair` (falkordb/pair.py), whose state it uses.

The roles journal (falkordb/roles.py) says which server is the primary and whether the replica
is held. It is written *before* the primary receives a transaction's first write and *before* a
COMMIT is acknowledged, so at start (after any crash) the rule is simple: held means the
transaction never committed, and the replica is the truth; otherwise the primary is. Recovery
therefore only ever undoes work that was never acknowledged.

The watchdog (falkordb/watchdog.py) kills a dead or wedged primary and the pair restarts on the
same files by the same rule (`generation` counts restarts so open transactions learn of it).

Three FalkorDB 4.16 bugs shape how a server is (re)loaded (falkordb/upkeep.py has the table): a
full re-sync always goes into a new process on empty files (`_resync_fresh`), after every load
the indexes a load leaves broken are rebuilt before the loaded server is relied on
(`rebuild_loaded_indexes`; a sync never overlaps a rebuild or a constraint being built: its
snapshot would carry the index without the constraint), and a write that failed after creating
entities realigns the servers' reusable ids by promoting the replica
(`ServerPair.discard_failed_write`).
"""

from __future__ import annotations

import asyncio
import logging
import time

from redis.exceptions import RedisError, ResponseError

from proxy.backends.falkordb.relay import Relay
from proxy.backends.falkordb.roles import NAMES, other_name
from proxy.backends.falkordb.server import EmbeddedFalkorDB
from proxy.backends.falkordb.upkeep import SINGLE_FIELD_INDEXES, SINGLE_FIELD_UNIQUE, rebuild_commands
from core.errors import CypherError, unavailable

log = logging.getLogger("proxy.falkordb")

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


async def name_tables(client, keys: list) -> list[list[bytes]]:
    """Each graph's labels, relationship types and property keys, in id order (one round trip)."""
    pipeline = client.pipeline(transaction=False)
    for key in keys:
        for query in NAME_TABLES:
            pipeline.execute_command("GRAPH.RO_QUERY", key, query)
    return [[row[0] for row in reply[1]] for reply in await pipeline.execute()]   # not the timing stats


def _names(rows: list) -> list[tuple[str, ...]]:
    return [tuple(cell.decode() for cell in row) for row in rows]


class PairRecovery:
    """The (re)start, re-sync and rebuild rules of `ServerPair`."""

    # ------------------------------------------------------------------ (re)loading

    async def _start_servers(self) -> None:
        primary, held = self._journal.load()
        if held:
            log.warning("the embedded database stopped during a write transaction that never "
                        "committed; starting from its replica, which holds the last committed state")
            primary = other_name(primary)
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
            self._primary = other_name(self._primary)
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
        (It does not mend the indexes a load breaks: `rebuild_loaded_indexes` does.)

        It first waits until the primary has built its indexes and constraints: the snapshot of a
        sync that begins while a constraint is being built (a big one a client just created)
        carries its index without it, and the replica crashed on the copy the primary sends once
        it is built (see `rebuild_loaded_indexes`)."""
        await self._schema_built(START_REBUILD_TIMEOUT, (self._primary,))
        self._loaded = True
        await server.kill()
        await server.start(fresh=True)
        await self._replicate(server)

    async def rebuild_loaded_indexes(self, timeout: float) -> None:
        """After a server loaded a graph, rebuild the indexes a load leaves broken
        (falkordb/upkeep.py) on the primary, and wait until both servers hold them built and the
        replica has applied them. Call with the writer lock held, or before serving.

        The rebuild starts only once the replica has finished a full sync it may be in (after a
        promotion or a restart it has just begun one): a snapshot the primary takes while a
        rebuilt index is pending carries the index but not its constraint (only active ones are
        saved), so the replica loads the index broken, then applies the constraint the primary's
        indexer re-issues once active, enforces it on that index and segfaults
        (`EnforceUniqueEntity`, found by the long fuzz). After the sync the commands reach the
        replica in its stream, and it rebuilds its own indexes from them."""
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
            if commands:
                await self._caught_up(timeout)       # the replica's full sync is over
                for command in commands:
                    await client.execute_command(*command)
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
        client = self._live(self._control, other_name(self._primary))
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

    # ------------------------------------------------------------------ divergence

    async def _replica_consistent(self) -> bool:
        """Whether the replica, caught up, names labels, types and properties as the primary
        does. FalkorDB 4.16's effects lose a name that a failing or no-op write (`SET n.new =
        null`) adds on the primary: the replica then files the next new name under another id,
        reads it back wrong and may crash, and the primary's append-only file would crash it
        too (falkordb/upkeep.py)."""
        primary, replica = self._live(self._graphs, self._primary), self._live(self._graphs, other_name(self._primary))
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

    # ------------------------------------------------------------------ restarts

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
            await self._restart_replica()
        except (RuntimeError, RedisError, OSError, CypherError) as exc:      # the watchdog tries again
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
