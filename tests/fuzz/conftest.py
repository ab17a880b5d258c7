"""The fuzz suite's own proxy (its writes and lockouts touch no other test) and its report."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import redis

from proxy.backends.falkordb.roles import NAMES, primary_address
from tests.fuzz.report import LOG, QUERY_TIMEOUT, REPORTS
from tests.harness import NO_LOCKOUT, ProxyProcess


@pytest.fixture(scope="session")
def fuzz_proxy():
    # The server's default timeout is the fuzzer's: FalkorDB stops a write at that default,
    # whatever timeout the client asks for (a write over every path, `[*]`, runs until it).
    # With FUZZ_LOG, the database's files and logs (crash reports) are kept beside it, and what
    # the servers received (path.monitor.a/.b: replay it with scripts/replay_falkordb.py).
    data_dir = Path(LOG + ".data") if LOG else None
    with ProxyProcess(args=[*NO_LOCKOUT, "--query-timeout", f"{QUERY_TIMEOUT:g}"], data_dir=data_dir) as process:
        if LOG:
            _record_commands(data_dir / "falkordb", LOG + ".monitor")
        try:
            yield process
        finally:
            if LOG:                                 # beside the inputs' log, to read together
                Path(LOG + ".proxy").write_text("".join(process.output))


def pytest_terminal_summary(terminalreporter):
    for report in REPORTS:
        terminalreporter.write_line(report.summary())


def _record_commands(root: Path, path: str) -> None:
    """Append what each embedded server receives (Redis MONITOR) to `path.a` and `path.b`, for
    scripts/replay_falkordb.py; daemon threads, following the servers through restarts."""
    password = primary_address(root)[1]

    def record(name: str) -> None:
        with open(f"{path}.{name}", "ab") as out:
            while True:
                try:
                    client = redis.Redis(unix_socket_path=str(root / name / "falkordb.sock"), password=password)
                    with client.monitor() as monitor:
                        while True:
                            out.write(monitor.connection.read_response() + b"\n")
                            out.flush()
                except (redis.RedisError, OSError):
                    time.sleep(0.05)                 # restarting: connect again

    for name in NAMES:
        threading.Thread(target=record, args=(name,), daemon=True).start()
