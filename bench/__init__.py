"""Benchmarks: `make bench` runs every `bench_*.py` module's `main()` in one process."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeat: int) -> float:
    """The median wall time of `repeat` calls of `fn`."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)
