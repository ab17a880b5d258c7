"""The fuzz suite's own proxy (its writes and lockouts touch no other test) and its report."""

from __future__ import annotations

import pytest

from tests.fuzz.report import REPORTS
from tests.harness import NO_LOCKOUT, ProxyProcess


@pytest.fixture(scope="session")
def fuzz_proxy():
    with ProxyProcess(args=NO_LOCKOUT) as process:
        yield process


def pytest_terminal_summary(terminalreporter):
    for report in REPORTS:
        terminalreporter.write_line(report.summary())
