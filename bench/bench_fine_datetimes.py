"""Date-times with a fraction of a second (stored as epoch microseconds) against whole seconds.

Run: python -m bench.bench_fine_datetimes [--nodes N] [--runs R]

N :Stamp nodes, each with `fine` (a UTC date-time with microseconds, `datetime.now(timezone.utc)`
as agents send it) and `whole` (the same instant without them, FalkorDB's own date-time), through
a real proxy and driver. For each query the median of R runs over either key (compared with a
parameter with or without microseconds alike), and the ratio.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys

import neo4j

from bench import median_seconds
from tests.harness import PASSWORD, USER, ProxyProcess

QUERIES = {"compare": "MATCH (n:Stamp) WHERE n.{key} > $since RETURN count(n)",
           "order, limit 10": "MATCH (n:Stamp) RETURN n.id ORDER BY n.{key} DESC LIMIT 10",
           "inDays, all": "MATCH (n:Stamp) RETURN sum(duration.inDays(n.{key}, $today).days)",
           "read, all": "MATCH (n:Stamp) RETURN n.{key}"}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args(argv or [])
    start = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    moments = [start + dt.timedelta(seconds=i, microseconds=i % 999_999 + 1) for i in range(args.nodes)]
    with ProxyProcess() as proxy, neo4j.GraphDatabase.driver(proxy.uri, auth=(USER, PASSWORD)) as driver:
        for first in range(0, args.nodes, 1000):
            rows = [{"id": i, "fine": m, "whole": m.replace(microsecond=0)}
                    for i, m in enumerate(moments[first:first + 1000], first)]
            driver.execute_query("UNWIND $rows AS r CREATE (:Stamp {id: r.id, fine: r.fine, whole: r.whole})",
                                 rows=rows)
        since, today = moments[args.nodes // 2], dt.date(2026, 1, 1)
        params = {"whole": {"since": since.replace(microsecond=0), "today": today},
                  "fine": {"since": since, "today": today}}
        print(f"{args.nodes:,} :Stamp nodes; median of {args.runs} runs; 2-core machine shared with other agents")
        print(f"{'query':18} {'whole s':>9} {'fraction':>9} {'ratio':>6}")
        for name, query in QUERIES.items():
            whole, fine = (median_seconds(lambda key=key: driver.execute_query(query.format(key=key), params[key]),
                                          args.runs) for key in ("whole", "fine"))
            print(f"{name:18} {whole * 1000:7.1f}ms {fine * 1000:7.1f}ms {fine / whole:5.1f}x")


if __name__ == "__main__":
    main(sys.argv[1:])
