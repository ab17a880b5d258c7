"""Hostile-input guards: the FalkorDB guard scan, the planner's trigger scan and the long-string
lifter (`falkordb.params.lift_long_strings`) are linear.

For each hostile shape, the time at 100k and at 1M characters: a linear scan grows 10x. The
baseline is the old CREATE trigger regex (`create\\b[^;]*?[(\\[][^)\\]]*\\$`), which was quadratic.
"""

from __future__ import annotations

import re
import time

from extensions.planner.triggers import triggered, triggers
from proxy.backends.falkordb.dialect import FALKORDB
from proxy.backends.falkordb.guards import _scan
from proxy.backends.falkordb.params import lift_long_strings

OLD_CREATE_TRIGGER = re.compile(r"create\b[^;]*?[(\[][^)\]]*\$")

SHAPES = {
    "create + brackets": lambda n: "create " + "(" * n,
    "list literal": lambda n: "RETURN [" + ",".join(["1"] * (n // 2)) + "]",
    "words": lambda n: "RETURN " + " ".join(["abc"] * (n // 4)),
    "string literal": lambda n: "RETURN '" + "a" * n + "'",
    "spaces after (": lambda n: "create (" + " " * n + "x",
    "nested NOT (refused early)": lambda n: "RETURN " + "NOT " * (n // 4) + "true",
    "explain create ... indexes": lambda n: "explain " + "create " * (n // 7) + "indexes",
    "long string, then /* /* ...": lambda n: "RETURN '" + "x" * 4096 + "' " + "/* " * ((n - 4200) // 3),
    "path of named relationships": lambda n: "MATCH ()" + "".join(f"-[r{i}]->()" for i in range(n // 14)),
    # a word that opens a lazy `word[^;]*?then` trigger, repeated (tokens.after_first keeps it linear)
    "in in in ...": lambda n: "RETURN [x " + "in " * (n // 3) + "x]",
    "return return ...": lambda n: "return " * (n // 7),
    "range(range( ...": lambda n: "RETURN " + "range(" * (n // 6),
    "create (a), (b {k: ...": lambda n: "create (a), (b {k: " * (n // 19),
}


def _seconds(fn) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    pairs = triggers(["ts_avg", "distance"], ["pagerank"], FALKORDB)
    print(f"{'shape':28} {'guard 100k':>11} {'guard 1M':>10} {'ratio':>6} {'trigger 100k':>13} "
          f"{'trigger 1M':>11} {'ratio':>6} {'lift 100k':>10} {'lift 1M':>9}")
    for name, make in SHAPES.items():
        small, big = make(100_000), make(1_000_000)
        guard = [_seconds(lambda q=q: _scan.__wrapped__(q)) for q in (small, big)]
        trigger = [_seconds(lambda q=q: triggered(q, pairs)) for q in (small, big)]
        lift = [_seconds(lambda q=q: lift_long_strings(q, {})) for q in (small, big)]
        print(f"{name:28} {guard[0] * 1e3:9.2f}ms {guard[1] * 1e3:8.1f}ms {guard[1] / guard[0]:6.1f} "
              f"{trigger[0] * 1e3:11.2f}ms {trigger[1] * 1e3:9.1f}ms {trigger[1] / trigger[0]:6.1f} "
              f"{lift[0] * 1e3:8.2f}ms {lift[1] * 1e3:7.1f}ms")
    for n in (5_000, 20_000):
        text = "create " + "(" * n
        old = _seconds(lambda: OLD_CREATE_TRIGGER.search(text))
        new = _seconds(lambda: triggered(text, pairs))
        print(f"baseline: old CREATE trigger regex on {n:,} brackets {old * 1e3:8.1f} ms; "
              f"now {new * 1e3:.2f} ms ({old / new:,.0f}x)")


if __name__ == "__main__":
    main()
