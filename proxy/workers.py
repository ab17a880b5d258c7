"""`--workers N`: N server processes on the same ports, so the proxy uses every core.

One Python process runs one event loop on one core; in front of an upstream Neo4j the proxy's
work (Bolt decoding, planning, extension evaluation) is CPU-bound, so it scales with processes.
A supervisor (the process that was started) forks N workers; each runs the whole server
(`proxy.app.serve`) and listens on the Bolt and HTTP ports with SO_REUSEPORT, so the kernel
spreads new connections across them. Each worker keeps its own caches (probe cache, plans,
auth), which its own writes invalidate and the probe-cache TTL bounds, as in one process.
A Bolt connection carries its state with it; an HTTP transaction or MCP session outlives its
connection, so a worker hands requests that belong to another one over to it
(`proxy/http/affinity.py`, through Unix sockets in a directory the supervisor makes).

The embedded database stays single-process: its write lock, its transactions and the caches its
writes invalidate live in the one process that runs it (`cli` refuses --workers > 1 without an
upstream).

Lifecycle: the supervisor prints `ready: URI` once every worker is ready. SIGTERM/SIGINT stops
every worker (SIGKILL after `STOP_TIMEOUT`) and then the supervisor. A worker that dies while
serving is restarted; one that dies before it was ever ready, or more than `MAX_RESTARTS` deaths
within `RESTART_WINDOW` seconds, stops the whole server (a fault a restart does not mend). Workers
get SIGTERM if the supervisor itself dies (Linux's parent-death signal), so none is left behind.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import multiprocessing
import os
import signal
import socket
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from pathlib import Path

from proxy.config import Config
from proxy.http.affinity import Affinity

log = logging.getLogger("cypher_proxy.workers")

STOP_TIMEOUT = 20.0      # seconds workers get to finish after SIGTERM before SIGKILL
READY_TIMEOUT = 300.0    # seconds a worker may take to start (the first start loads the text model)
MAX_RESTARTS = 5         # deaths within RESTART_WINDOW before the server gives up
RESTART_WINDOW = 60.0
_PR_SET_PDEATHSIG = 1

_fork = multiprocessing.get_context("fork")


def default_workers() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


@dataclass
class _Worker:
    index: int
    process: multiprocessing.process.BaseProcess
    ready: Connection          # receives the worker's URI once it serves
    is_ready: bool = False


class Supervisor:
    """Starts, watches, restarts and stops the worker processes (see the module docstring)."""

    def __init__(self, config: Config, count: int):
        self.config, self.count = config, count
        self.workers: list[_Worker] = []
        self._stopping = False
        self._deaths: list[float] = []
        self._reservations: list[socket.socket] = []

    def run(self) -> int:
        """Serve until a signal (0) or a fault no restart mends (1)."""
        from proxy.app import check_ports_free
        config = self.config
        check_ports_free([(config.bolt_host, config.bolt_port, "--bolt"),
                          (config.http_host, config.http_port, "--http")])
        self.config = replace(config, bolt_port=self._reserve(config.bolt_host, config.bolt_port),
                              http_port=self._reserve(config.http_host, config.http_port))
        wakeup = self._catch_signals()
        with tempfile.TemporaryDirectory(prefix="cypher-proxy-workers-") as sockets:
            self._sockets = Path(sockets)
            try:
                self.workers = [self._start(i) for i in range(self.count)]
                return self._watch(wakeup)
            finally:
                self._stop_all()
                for sock in self._reservations:
                    sock.close()

    def _reserve(self, host: str, port: int) -> int:
        """Bind (without listening) a SO_REUSEPORT socket on the address: it resolves port 0 to
        one port every worker then listens on, and keeps the port ours across worker restarts."""
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        self._reservations.append(sock)
        return sock.getsockname()[1]

    def _catch_signals(self) -> int:
        """SIGTERM/SIGINT ask for a stop; they wake the watch loop through a pipe."""
        wake_read, wake_write = os.pipe()
        os.set_blocking(wake_write, False)
        signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)

        def stop(signum, frame) -> None:
            self._stopping = True
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, stop)
        return wake_read

    def _start(self, index: int) -> _Worker:
        receive, send = _fork.Pipe(duplex=False)
        affinity = Affinity(index, self.count, self._sockets)
        affinity.socket(index).unlink(missing_ok=True)       # a dead predecessor's
        process = _fork.Process(target=_worker_main, name=f"cypher-proxy worker {index}",
                                args=(self.config, affinity, send, os.getpid()))
        process.start()
        send.close()
        return _Worker(index, process, receive)

    def _watch(self, wakeup: int) -> int:
        started = time.monotonic()
        announced = False
        while not self._stopping:
            handles = {w.process.sentinel: w for w in self.workers}
            handles.update({w.ready.fileno(): w for w in self.workers if not w.is_ready})
            timeout = None if announced else max(0.0, started + READY_TIMEOUT - time.monotonic())
            fired = wait([*handles, wakeup], timeout)
            if wakeup in fired:
                os.read(wakeup, 512)
            if not fired and not announced:
                log.error("the workers did not become ready within %.0f s", READY_TIMEOUT)
                return 1
            for handle in fired:
                worker = handles.get(handle)
                if worker is None:
                    continue
                if handle == worker.process.sentinel:
                    if not self._replace(worker):
                        return 1
                elif not worker.is_ready:
                    uri = self._read_ready(worker)
                    if uri and not announced and all(w.is_ready for w in self.workers):
                        print(f"ready: {uri}", flush=True)
                        announced = True
        return 0

    @staticmethod
    def _read_ready(worker: _Worker) -> str | None:
        try:
            uri = worker.ready.recv()
        except EOFError:            # it died before saying so; its sentinel tells the rest
            return None
        worker.is_ready = True
        return uri

    def _replace(self, worker: _Worker) -> bool:
        """Restart a worker that died; False when the server should stop instead."""
        worker.process.join()
        code = worker.process.exitcode
        worker.ready.close()
        if self._stopping:
            return True
        now = time.monotonic()
        self._deaths = [t for t in self._deaths if now - t < RESTART_WINDOW] + [now]
        if not worker.is_ready:
            log.error("worker %d exited (code %s) before it was ready: stopping the server", worker.index, code)
            return False
        if len(self._deaths) > MAX_RESTARTS:
            log.error("%d worker deaths within %.0f s: stopping the server", len(self._deaths), RESTART_WINDOW)
            return False
        log.warning("worker %d (pid %d) died (exit code %s): starting a new one",
                    worker.index, worker.process.pid, code)
        self.workers[worker.index] = self._start(worker.index)
        return True

    def _stop_all(self) -> None:
        self._stopping = True
        for worker in self.workers:
            if worker.process.is_alive():
                os.kill(worker.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for worker in self.workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.is_alive():
                log.warning("worker %d did not stop within %.0f s: killing it", worker.index, STOP_TIMEOUT)
                worker.process.kill()
                worker.process.join()
            worker.ready.close()


def _worker_main(config: Config, affinity: Affinity, ready: Connection, supervisor: int) -> None:
    """One worker: the whole server on the shared ports."""
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    _die_with(supervisor)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(logging.Formatter(
            f"%(asctime)s %(levelname)s %(name)s [worker {affinity.index}]: %(message)s"))
    from proxy.app import event_loop_factory, serve
    with asyncio.Runner(loop_factory=event_loop_factory()) as runner:
        runner.run(serve(config, affinity=affinity, on_ready=ready.send))


def _die_with(supervisor: int) -> None:
    """Ask Linux to SIGTERM this process when the supervisor dies (and exit if it already has)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != supervisor:
        os._exit(0)
