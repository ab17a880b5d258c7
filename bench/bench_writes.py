"""Write transactions on the embedded database: what one small write costs as the graph grows.

For a graph of 10k and of 100k nodes, the median latency of one CREATE through the stock
driver as an auto-commit query (the baseline), a managed transaction (`execute_write`, what
`execute_query` also does), an explicit transaction committed, and one rolled back. The
ratios against the auto-commit write show what transactions add; compare the 10k and 100k
rows to see whether that grows with the graph. The last two rows are the worst cases of the
proxy's upkeep of FalkorDB's bookkeeping (falkordb/upkeep.py): a statement that deletes after
creating (the label matrices grow first, one extra write), and a write that changes nothing
but names a new key (the primary's names are read before and after).
"""

from __future__ import annotations

import statistics
import time

import neo4j

from tests.harness import PASSWORD, USER, ProxyProcess

SIZES = (10_000, 100_000)
WRITE = "CREATE (:BenchWrite {i: $i})"


def _load(driver: neo4j.Driver, nodes: int) -> None:
    driver.execute_query("MATCH (n) DETACH DELETE n")
    for start in range(0, nodes, 10_000):
        driver.execute_query("UNWIND range($a, $b) AS i CREATE (:N {id: i, name: 'node ' + toString(i)})",
                             a=start, b=min(nodes, start + 10_000) - 1)
    driver.execute_query("MATCH (a:N), (b:N) WHERE b.id = a.id + 1 AND a.id < $half CREATE (a)-[:NEXT]->(b)",
                         half=min(nodes, 20_000))


def _median_ms(fn, budget_s: float = 3.0, most: int = 300) -> float:
    """Median milliseconds per call, over at most `most` calls or `budget_s` seconds."""
    times: list[float] = []
    deadline = time.perf_counter() + budget_s
    while len(times) < most and (len(times) < 5 or time.perf_counter() < deadline):
        started = time.perf_counter()
        fn(len(times))
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def main() -> None:
    with ProxyProcess() as proc, neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
        with driver.session() as session:
            def auto_commit(i):
                session.run(WRITE, i=i).consume()

            def managed(i):
                session.execute_write(lambda tx: tx.run(WRITE, i=i).consume())

            def explicit(i, commit=True):
                with session.begin_transaction() as tx:
                    tx.run(WRITE, i=i).consume()
                    tx.commit() if commit else tx.rollback()

            def create_delete(i):                            # grows the label matrices first
                session.run("CREATE (n:BenchWrite {i: $i}) WITH n DELETE n", i=i).consume()

            def no_op_new_key(i):                            # compares the names before and after
                session.run(f"MATCH (n:BenchWrite {{i: -1}}) SET n.key{i} = 1").consume()

            cases = (("managed (execute_write)", managed), ("explicit, commit", explicit),
                     ("explicit, rollback", lambda i: explicit(i, commit=False)),
                     ("create+delete (touch)", create_delete), ("no-op, new key (check)", no_op_new_key))
            for nodes in SIZES:
                _load(driver, nodes)
                for fn in (auto_commit, managed):             # warm up
                    for i in range(5):
                        fn(i)
                base = _median_ms(auto_commit)
                print(f"{nodes:>7,} nodes  auto-commit write      {base:8.2f} ms   (baseline)")
                for name, fn in cases:
                    ms = _median_ms(fn)
                    print(f"{nodes:>7,} nodes  {name:<22} {ms:8.2f} ms   ratio {ms / base:7.2f}x")
