"""Planner overhead: the no-extension fast path, a query the FalkorDB bridges rewrite, cold and warm planning of an extension query
(no database involved; probing, computing and binding are measured end to end by
`bench_extensions` and `bench_overhead`)."""

from __future__ import annotations

import statistics
import time

from extensions.planner.triggers import triggered, triggers
from extensions.cypher import semantics
from extensions.cypher.parser import parse
from extensions.planner.planner import ExtensionPlanner
from extensions.registry import ArgKind, Extension, Registry
from proxy.demo import SEED_QUERY
from proxy.backends.falkordb.dialect import FALKORDB

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


#: The same without its relationship: no bridge touches it (FalkorDB needs the relationship
#: uniqueness/multiplicity bridge for every MATCH with a relationship, bridges/uniqueness.py).
UNTOUCHED_QUERY = PLAIN_QUERY.replace("<-[:OF_FIELD]-(p:ProductionProfile)", ", (p:ProductionProfile)")


def main() -> None:
    planner = ExtensionPlanner(_registry(), dialect=FALKORDB)
    assert planner.plan(UNTOUCHED_QUERY) is None and planner.plan(EXTENSION_QUERY) is not None
    assert planner.plan(PLAIN_QUERY) is not None

    fast = _per_call(lambda: planner.plan(UNTOUCHED_QUERY), 20_000)
    pairs = triggers([e.name for e in planner.registry], [], FALKORDB)   # the planner's
    scan = _per_call(lambda: triggered(UNTOUCHED_QUERY, pairs) or semantics.suspect(UNTOUCHED_QUERY), 5_000)
    bridged_warm = _per_call(lambda: planner.plan(PLAIN_QUERY), 20_000)

    def bridged_cold():
        parse.cache_clear()
        ExtensionPlanner(_registry(), dialect=FALKORDB).plan(PLAIN_QUERY)
    bridged_cold_s = _per_call(bridged_cold, 50)
    tree = parse(PLAIN_QUERY)
    analysis = _per_call(lambda: semantics.check(tree), 2_000)
    warm = _per_call(lambda: planner.plan(EXTENSION_QUERY), 20_000)

    def cold():
        parse.cache_clear()
        ExtensionPlanner(_registry(), dialect=FALKORDB).plan(EXTENSION_QUERY)
    cold_s = _per_call(cold, 50)
    parse.cache_clear()
    parse_s = _per_call(lambda: (parse.cache_clear(), parse(EXTENSION_QUERY)), 50)

    print(f"no-extension fast path (10 lines)   {fast * 1e6:8.2f} us/query  (first sight, text scan: "
          f"{scan * 1e6:.1f} us)")
    print(f"relationship query, warm (bridged)  {bridged_warm * 1e6:8.2f} us/query")
    print(f"relationship query, cold (bridged)  {bridged_cold_s * 1e3:8.3f} ms/query  (semantic analysis "
          f"{analysis * 1e6:.1f} us)")
    print(f"extension query, warm (cached plan) {warm * 1e6:8.2f} us/query")
    print(f"extension query, cold (parse+plan)  {cold_s * 1e3:8.3f} ms/query  (parse alone {parse_s * 1e3:.3f} ms)")


if __name__ == "__main__":
    main()
