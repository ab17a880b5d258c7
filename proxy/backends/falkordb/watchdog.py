"""The watchdog: tells a dead or wedged server of the pair from a busy one.

A mixin of `ServerPair` (falkordb/pair.py), whose state it reads. It pings both servers each
second; a primary that misses WATCH_MISSES pings in a row is killed and the pair restarted on the
same files, a replica re-synced (falkordb/recovery.py). A server that is silent while it uses
the CPU or waits on its disk is applying a big write, not wedged, and is given BUSY_LIMIT.
"""

from __future__ import annotations

import asyncio
import logging
import time

from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import BusyLoadingError, RedisError

from proxy.backends.falkordb.roles import NAMES, other_name
from proxy.backends.falkordb.server import EmbeddedFalkorDB
from core.errors import CypherError

log = logging.getLogger("proxy.falkordb")

WATCH_INTERVAL = 1.0          # seconds between health checks
WATCH_TIMEOUT = 2.0           # a PING slower than this counts as a miss
WATCH_MISSES = 3              # consecutive misses before the server counts as dead
#: A server that misses a PING while using at least this share of a CPU is busy, not wedged:
#: FalkorDB applies a big write (or a replica the replicated one) holding Redis' main thread,
#: for tens of seconds when it deletes millions of nodes. Dead, stopped or deadlocked: ~0.
#: One waiting on its disk (the fsync after such a write) is busy too.
BUSY_CPU_SHARE = 0.05
BUSY_LIMIT = 600.0            # seconds a busy server may stay silent before it counts as wedged


class PairWatchdog:
    """The health checks of `ServerPair`."""

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
                elif misses[other_name(self._primary)] >= WATCH_MISSES:
                    misses[other_name(self._primary)] = 0
                    await self._restart_replica()
                    await self._rewrite_primary_files()
            except (RuntimeError, RedisError, OSError, CypherError) as exc:    # the next round tries again
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
