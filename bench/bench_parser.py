"""Parser speed: cold (uncached) and warm (cache hit) parse time of the seed query and a
typical 10-line query, plus tokenizer time, as medians."""

from __future__ import annotations

import statistics
import time

from extensions.cypher.parser import Parser, parse
from extensions.cypher.tokens import tokenize
from proxy.demo import SEED_QUERY as SEED

TYPICAL = """// wells drilled near a field, with their operator
MATCH (f:Field)-[:HAS_WELLBORE]->(w:Wellbore)
WHERE f.name STARTS WITH $prefix AND w.entry_date >= date('2010-01-01')
OPTIONAL MATCH (w)-[:DRILLED_BY]->(c:Company)
WITH f, w, c, distance(w.location, f.location) AS d
WHERE d < 50000 AND NOT exists { (w)-[:PLUGGED]->() }
WITH f, collect(DISTINCT c.name) AS operators, count(w) AS wells, avg(d) AS mean_d
ORDER BY wells DESC
RETURN f.name AS field, wells, operators[..3] AS top_operators,
       CASE WHEN mean_d > 10000 THEN 'far' ELSE 'near' END AS spread LIMIT 10"""


def _median_ms(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def main() -> None:
    for name, text in (("seed query", SEED), ("10-line query", TYPICAL)):
        tokens = _median_ms(lambda: tokenize(text), 300)
        cold = _median_ms(lambda: Parser(text).parse_statement(), 300)
        parse(text)
        warm = _median_ms(lambda: parse(text), 3000)
        print(f"{name:<14} tokenize {tokens:7.3f} ms   cold parse {cold:7.3f} ms   "
              f"warm (cached) {warm * 1000:7.2f} µs")


if __name__ == "__main__":
    main()
