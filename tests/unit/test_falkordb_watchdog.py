"""The watchdog's rule for a server that misses PINGs: busy (CPU or disk) is left to work,
idle is wedged. The servers here are stand-ins that report what /proc would say."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from proxy.backends.falkordb.pair import ServerPair
from proxy.backends.falkordb.watchdog import BUSY_CPU_SHARE


@dataclass
class _Server:
    name: str = "a"
    pid: int = 1234
    cpu: float = 10.0
    on_disk: bool = False

    def cpu_seconds(self) -> float:
        return self.cpu

    def waiting_on_disk(self) -> bool:
        return self.on_disk


@pytest.mark.parametrize("cpu_used, on_disk, busy", [
    (0.0, False, False),                     # dead, stopped or deadlocked
    (BUSY_CPU_SHARE * 20, False, True),      # applying a big write
    (0.0, True, True),                       # the fsync after it: no CPU, waiting on its disk
])
def test_a_silent_server_is_busy_while_it_uses_cpu_or_waits_on_its_disk(tmp_path, cpu_used, on_disk, busy):
    pair, server = ServerPair(tmp_path), _Server()
    assert pair._busy(server) is False                     # the first look only takes a sample
    server.cpu += cpu_used
    server.on_disk = on_disk
    assert pair._busy(server) is busy


def test_cpu_of_a_previous_process_does_not_count(tmp_path):
    pair, server = ServerPair(tmp_path), _Server()
    pair._busy(server)
    server.pid, server.cpu = 5678, 100.0                   # restarted: a new process's total
    assert pair._busy(server) is False
