"""The fuzz suite's own proxy (its writes and lockouts touch no other test) and its report."""

from __future__ import annotations

import pytest

from tests.fuzz.report import QUERY_TIMEOUT, REPORTS
from tests.harness import NO_LOCKOUT, ProxyProcess


@pytest.fixture(scope="session")
def fuzz_proxy():
    # The server's default timeout is the fuzzer's: FalkorDB stops a write at that default,
    # whatever timeout the client asks for (a write over every path, `[*]`, runs until it).
    with ProxyProcess(args=[*NO_LOCKOUT, "--query-timeout", f"{QUERY_TIMEOUT:g}"]) as process:
        yield process


def pytest_terminal_summary(terminalreporter):
    for report in REPORTS:
        terminalreporter.write_line(report.summary())
