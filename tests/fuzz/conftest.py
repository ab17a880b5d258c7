"""The fuzz suite's own proxy (its writes and lockouts touch no other test) and its report."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.report import LOG, QUERY_TIMEOUT, REPORTS
from tests.harness import NO_LOCKOUT, ProxyProcess


@pytest.fixture(scope="session")
def fuzz_proxy():
    # The server's default timeout is the fuzzer's: FalkorDB stops a write at that default,
    # whatever timeout the client asks for (a write over every path, `[*]`, runs until it).
    # With FUZZ_LOG, the database's files and logs (crash reports) are kept beside it.
    data_dir = Path(LOG + ".data") if LOG else None
    with ProxyProcess(args=[*NO_LOCKOUT, "--query-timeout", f"{QUERY_TIMEOUT:g}"], data_dir=data_dir) as process:
        try:
            yield process
        finally:
            if LOG:                                 # beside the inputs' log, to read together
                Path(LOG + ".proxy").write_text("".join(process.output))


def pytest_terminal_summary(terminalreporter):
    for report in REPORTS:
        terminalreporter.write_line(report.summary())
