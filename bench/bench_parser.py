"""Parser speed: cold (uncached) and warm (cache hit) parse time of the seed query and a
typical 10-line query, plus tokenizer time, as medians."""

from __future__ import annotations

import statistics
import time

from extensions.cypher.parser import Parser, parse
from extensions.cypher.tokens import tokenize

SEED = """MATCH (f:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile)
UNWIND range(2015, 2024) AS year
WITH p, year, toString(year) AS y
WITH p, year, ts_avg(p.prd_oe_net, y) AS yearly_avg,
     ts_avg(p.prd_oe_net, y + '-6', y + '-8') AS summer_avg
WHERE yearly_avg > 0
WITH year, summer_avg / yearly_avg AS ratio
RETURN avg(ratio) AS mean_ratio, std(ratio) AS std_ratio, count(ratio) AS n_years,
       1.0 - avg(ratio) AS mean_reduction"""

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
