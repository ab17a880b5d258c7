"""Planner overhead: the no-extension fast path, cold and warm planning of an extension query,
and the compute -> bind step for many distinct argument tuples (no database involved)."""

from __future__ import annotations

import asyncio
import statistics
import time

from extensions import dialect
from extensions.cypher.parser import parse
from extensions.planner import ExtensionPlanner
from extensions.registry import ArgKind, Extension, Registry
from proxy.backends.base import ListResult, Summary
from proxy.demo import SEED_QUERY

# The seed query with a comment line: a typical 10-line extension query.
EXTENSION_QUERY = SEED_QUERY.replace("\nUNWIND", "\n// yearly and summer production per profile\nUNWIND", 1)

PLAIN_QUERY = """MATCH (f:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile)
// a standard query of the same size: no extension, no bridge
UNWIND range(2015, 2024) AS year
WITH p, year, toString(year) AS y
WITH p, year, p.prd_oe_net AS yearly_avg,
     p.summer AS summer_avg
WHERE yearly_avg > 0
WITH year, summer_avg / yearly_avg AS ratio
RETURN avg(ratio) AS mean_ratio, stDev(ratio) AS std_ratio, count(ratio) AS n_years,
       1.0 - avg(ratio) AS mean_reduction"""


def _registry() -> Registry:
    names = ["ts_sum", "ts_avg", "ts_min", "ts_max", "ts_count", "ts_first", "ts_last", "ts_at", "ts_delta",
             "ts_series", "distance", "contains", "intersects", "centroid", "area", "perimeter", "text_score"]
    kinds = (ArgKind.PROPERTY, ArgKind.VALUE, ArgKind.VALUE)
    return Registry(Extension(n, kinds, 1, lambda rows: [1.0] * len(rows)) for n in names)


def _per_call(fn, repeat: int) -> float:
    """Median seconds per call over 5 batches of `repeat` calls."""
    batches = []
    for _ in range(5):
        started = time.perf_counter()
        for _ in range(repeat):
            fn()
        batches.append((time.perf_counter() - started) / repeat)
    return statistics.median(batches)


class _Backend:
    kind = "falkordb"


class _Runner:
    """Answers the probe with `n` distinct (node, year) rows and the final query with one row."""

    backend = _Backend()
    in_transaction = False

    def __init__(self, n: int):
        self.rows = [[i, ["ProductionProfile"], str(2000 + i % 20), f"s{2000 + i % 20}",
                      f"{2000 + i % 20}-6", f"s{2000 + i % 20}-6", f"{2000 + i % 20}-8", f"s{2000 + i % 20}-8"]
                     for i in range(n)]

    async def run(self, query, params):
        rows = self.rows if query.startswith("MATCH") and "RETURN DISTINCT" in query else [[1.0]]
        return ListResult(["c"], rows, Summary("neo4j"))


def main() -> None:
    planner = ExtensionPlanner(_registry(), backend_kind="falkordb")
    assert planner.plan(PLAIN_QUERY) is None and planner.plan(EXTENSION_QUERY) is not None

    fast = _per_call(lambda: planner.plan(PLAIN_QUERY), 20_000)
    pairs = dialect.triggers([e.name for e in planner.registry], [], True)
    scan = _per_call(lambda: dialect.triggered(PLAIN_QUERY, pairs), 5_000)
    warm = _per_call(lambda: planner.plan(EXTENSION_QUERY), 20_000)

    def cold():
        parse.cache_clear()
        ExtensionPlanner(_registry(), backend_kind="falkordb").plan(EXTENSION_QUERY)
    cold_s = _per_call(cold, 50)
    parse.cache_clear()
    parse_s = _per_call(lambda: (parse.cache_clear(), parse(EXTENSION_QUERY)), 50)

    print(f"no-extension fast path (10 lines)   {fast * 1e6:8.2f} us/query  (first sight, text scan: "
          f"{scan * 1e6:.1f} us)")
    print(f"extension query, warm (cached plan) {warm * 1e6:8.2f} us/query")
    print(f"extension query, cold (parse+plan)  {cold_s * 1e3:8.3f} ms/query  (parse alone {parse_s * 1e3:.3f} ms)")

    for n in (1_000, 50_000):
        runner = _Runner(n)

        async def execute(runner=runner):
            result = await planner.execute(EXTENSION_QUERY, {}, runner)
            await result.consume()
        started = time.perf_counter()
        asyncio.run(execute())
        print(f"probe rows -> evaluate -> bind, {n:>6} distinct tuples x 2 calls: "
              f"{(time.perf_counter() - started) * 1e3:8.1f} ms")


if __name__ == "__main__":
    main()
