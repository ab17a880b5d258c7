"""Start real `cypher-proxy serve` processes on free ports for tests and benchmarks.

Each process gets its own data directory and ports, and is stopped (SIGTERM, then
SIGKILL) when the test is done, so no server outlives the test run.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"          # CI clones the repo with ../shared beside it
NEO4J6_PATH = REPO / ".cache" / "neo4j6"
USER, PASSWORD = "neo4j", "password"
#: Environment switch for tests/conftest.py: serve the tests through a Neo4j-backend proxy.
THROUGH_NEO4J_BACKEND = "THROUGH_NEO4J_BACKEND"
#: Environment switch for tests/conftest.py: the `driver` fixture speaks the Query API (http://).
DRIVER_OVER_HTTP = "DRIVER_OVER_HTTP"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class ProxyProcess:
    """One running proxy; `uri` is its bolt:// and `http_uri` its http:// address once `start()` returns."""

    args: list[str] = field(default_factory=list)
    data_dir: Path | None = None
    command: str = "serve"
    uri: str = ""
    http_uri: str = ""
    output: list[str] = field(default_factory=list)
    _proc: subprocess.Popen | None = None
    _tmp: tempfile.TemporaryDirectory | None = None

    def start(self, timeout: float = 120.0) -> "ProxyProcess":
        if self.data_dir is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="cproxy-")
            self.data_dir = Path(self._tmp.name)
        bolt, http = free_port(), free_port()
        self.http_uri = f"http://127.0.0.1:{http}"
        cmd = [sys.executable, "-m", "proxy", self.command, "--bolt", f"127.0.0.1:{bolt}",
               "--http", f"127.0.0.1:{http}", "--data-dir", str(self.data_dir), *self.args]
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("CYPHER_PROXY_") and k != "PYTHONPATH"}   # the proxy's own deps
        self._proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True)
        ready = threading.Event()
        threading.Thread(target=self._pump, args=(ready,), daemon=True).start()
        if not ready.wait(timeout) or not self.uri:
            self.stop()
            raise RuntimeError("proxy did not become ready:\n" + "".join(self.output[-60:]))
        return self

    def _pump(self, ready: threading.Event) -> None:
        assert self._proc and self._proc.stdout
        for line in self._proc.stdout:
            self.output.append(line)
            if line.startswith("ready: "):
                self.uri = line.split(" ", 1)[1].strip()
                ready.set()
        ready.set()

    @property
    def pid(self) -> int:
        assert self._proc
        return self._proc.pid

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20.0) -> int | None:
        if self._proc and self._proc.poll() is None:
            self._proc.send_signal(sig)
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        rc = self._proc.returncode if self._proc else None
        if self._tmp:
            self._tmp.cleanup()
            self._tmp = None
        return rc

    def __enter__(self) -> "ProxyProcess":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def wait_until(predicate, timeout: float = 10.0, interval: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()


def run_with_neo4j6(args: list[str], timeout: float = 600.0) -> subprocess.CompletedProcess:
    """Run `python ARGS` with the neo4j 6.x driver (installed in .cache/neo4j6) first on the path."""
    return _python(args, timeout, PYTHONPATH=str(NEO4J6_PATH), EXPECT_NEO4J_MAJOR="6")


def run_driver_suite(timeout: float = 600.0, **env: str) -> subprocess.CompletedProcess:
    """Run tests/integration/test_driver_python.py in a fresh pytest, with extra environment."""
    return _python(["-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "tests/integration/test_driver_python.py"], timeout, **env)


def _python(args: list[str], timeout: float, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], env=dict(os.environ, **env), capture_output=True,
                          text=True, timeout=timeout, cwd=REPO)
