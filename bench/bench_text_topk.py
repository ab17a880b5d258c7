"""text_score top k: binding the rows the query needs against binding every row, same run.

Run: python -m bench.bench_text_topk [--nodes N] [--names D] [--runs R]

N :Item nodes named from D distinct texts (so embedding is quick: a text is embedded once),
through a real proxy and driver. Each row is the median of R runs, warm (texts embedded):
- `top k`: `RETURN n, text_score(n, 'name', $q) AS s ORDER BY s DESC LIMIT 10`, which binds
  the nodes at or past the 10th score only (reduce.plan_projection);
- `full`: the same question with the score in one WITH and the order in the next, which binds
  every node's score, as every text_score query did before;
- `threshold`: `WITH n, text_score(...) AS s WHERE s > 0.6 RETURN ...` (reduced the same way);
each with a new query text per run and with the same query text again, against plain Cypher
ordering the same nodes by a property.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import neo4j
import numpy as np

from tests.harness import PASSWORD, USER, ProxyProcess

TOP = "MATCH (n:Item) RETURN n.id AS id, text_score(n, 'name', $q) AS s ORDER BY s DESC LIMIT 10"
FULL = ("MATCH (n:Item) WITH n, text_score(n, 'name', $q) AS s WITH n, s "
        "RETURN n.id AS id, s ORDER BY s DESC LIMIT 10")
THRESHOLD = "MATCH (n:Item) WITH n, text_score(n, 'name', $q) AS s WHERE s > 0.6 RETURN n.id AS id, s"
PLAIN = "MATCH (n:Item) RETURN n.id AS id, size(n.name) AS s ORDER BY s DESC LIMIT 10"
WORDS = ("oil gas field pipeline export drilling rig survey seismic platform subsea well reservoir "
         "production decline water injection compressor terminal tanker licence").split()
QUESTIONS = ["oil production decline", "gas export pipeline", "seismic survey licence", "subsea well injection",
             "drilling rig contract", "tanker terminal", "compressor platform upgrade"]


def names(count: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    return [f"{' '.join(rng.choice(WORDS, size=rng.integers(2, 6)))} {i}" for i in range(count)]


def median_seconds(driver, query: str, questions: list[str]) -> float:
    times = []
    for question in questions:
        started = time.perf_counter()
        driver.execute_query(query, q=question)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=200_000)
    parser.add_argument("--names", type=int, default=5_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv or [])
    texts = names(args.names)
    with ProxyProcess() as proxy, neo4j.GraphDatabase.driver(proxy.uri, auth=(USER, PASSWORD)) as driver:
        for start in range(0, args.nodes, 50_000):
            driver.execute_query("UNWIND range($a, $b) AS i CREATE (:Item {id: i, name: $texts[i % size($texts)]})",
                                 a=start, b=min(start + 50_000, args.nodes) - 1, texts=texts)
        started = time.perf_counter()
        driver.execute_query(TOP, q="warm up")                   # embeds the distinct names
        print(f"{args.nodes:,} :Item nodes, {args.names:,} distinct names; first text_score query "
              f"(embeds them) {time.perf_counter() - started:.1f} s; 2-core machine shared with other agents")
        fresh = [f"{q} {i}" for i in range(args.runs) for q in QUESTIONS][:args.runs]
        same = [QUESTIONS[0]] * args.runs
        top = driver.execute_query(TOP, q=QUESTIONS[0]).records
        assert [r["s"] for r in top] == [r["s"] for r in driver.execute_query(FULL, q=QUESTIONS[0]).records]
        plain = median_seconds(driver, PLAIN, same)
        print(f"{'query':12} {'new text':>9} {'same text':>10} {'new/plain':>10} {'full/this (new)':>16}")
        rows = {name: (median_seconds(driver, query, fresh), median_seconds(driver, query, same))
                for name, query in (("full", FULL), ("top k", TOP), ("threshold", THRESHOLD))}
        for name, (new, again) in rows.items():
            print(f"{name:12} {new:8.3f}s {again:9.3f}s {new / plain:9.1f}x {rows['full'][0] / new:15.1f}x")
        print(f"{'plain':12} {plain:8.3f}s")


if __name__ == "__main__":
    main(sys.argv[1:])
