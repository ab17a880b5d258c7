"""A read FalkorDB answers late (it checks timeouts between records) is answered at its timeout
plus the grace. The stream here stands in for FalkorDB's connection."""

from __future__ import annotations

import asyncio
import time

import pytest

from proxy.backends.falkordb.backend import TIMEOUT_GRACE, read_within
from core.errors import CypherError


class _SlowStream:
    def __init__(self, seconds: float):
        self.seconds = seconds
        self.cancelled = False

    async def query(self, *args) -> list[str]:
        try:
            await asyncio.sleep(self.seconds)
        except asyncio.CancelledError:
            self.cancelled = True
            raise
        return ["n"]


def test_a_late_read_is_answered_at_its_timeout_and_its_connection_given_up():
    stream, started = _SlowStream(60), time.monotonic()
    with pytest.raises(CypherError) as info:
        asyncio.run(read_within(stream, ["GRAPH.RO_QUERY"], 0.1))
    assert info.value.code == "Neo.ClientError.Transaction.TransactionTimedOut"
    assert time.monotonic() - started < 0.1 + TIMEOUT_GRACE + 1 and stream.cancelled


def test_a_read_in_time_answers():
    assert asyncio.run(read_within(_SlowStream(0.01), ["GRAPH.RO_QUERY"], 0.1)) == ["n"]
