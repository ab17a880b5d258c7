"""Start-up of the demo: the first start (which loads the Sodir graph) and a restart on the same data
directory (which only loads the embedded database's files), each until the `ready:` line;
the restart as a ratio of an empty server's start in the same run."""

from __future__ import annotations

import signal
import tempfile
import time
from pathlib import Path

from tests.harness import ProxyProcess


def _until_ready(command: str, data_dir: Path) -> float:
    started = time.perf_counter()
    proc = ProxyProcess(command=command, data_dir=data_dir).start(timeout=600)
    took = time.perf_counter() - started
    proc.stop(signal.SIGTERM)
    return took


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        empty = _until_ready("serve", Path(tmp) / "empty")
        first = _until_ready("demo", Path(tmp) / "demo")
        restart = _until_ready("demo", Path(tmp) / "demo")
    print(f"empty server start         {empty:8.2f} s   (baseline)")
    print(f"demo first start (loads)   {first:8.2f} s   ratio {first / empty:6.2f}x")
    print(f"demo restart               {restart:8.2f} s   ratio {restart / empty:6.2f}x")
