"""Run every benchmark module (`bench/bench_*.py`) in turn; `python -m bench [name ...]`."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time

import bench


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if m.name.startswith("bench_"))
    if argv:
        names = [n for n in names if any(arg in n for arg in argv)]
    for name in names:
        print(f"\n=== {name} ===", flush=True)
        started = time.perf_counter()
        importlib.import_module(f"bench.{name}").main()
        print(f"({name}: {time.perf_counter() - started:.1f} s)", flush=True)
    return 0


raise SystemExit(main(sys.argv[1:]))
