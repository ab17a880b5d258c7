"""A million nodes through the driver, as a new user meets them (issue 31): describe() cold and
warm, pagerank's top ten cold and warm, text_score's top ten over a million names, ts_avg over
100k nodes' monthly series, nearest-10 and a distance join over a million points, each against a
plain-Cypher baseline of the same run, and the memory of each process (the proxy, both FalkorDB
servers).

The graph: N `Item` nodes (`id`, `name`, `group`, `weight`, and `tag` on one node in 20),
created with `UNWIND range(...) CREATE`, then RELS_PER_NODE `LINKS` relationships per node to
pseudo-random targets matched by the indexed `id`, skewed towards small ids (the target is
N x u^2 for u uniform) so that scores differ as in real graphs, not a regular graph of ties. Each Item has a `location`
point (pseudo-random over northern Europe), and the first TS_NODES Items 10 years of monthly
`oil` series (the timeseries store, keyed by `id`). Building it takes minutes; set
BENCH_SCALE_DIR to a directory to keep it there and reuse it on the next run (the proxy's data
directory: the servers reload it at start). BENCH_SCALE_ROWS picks rows by name.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import neo4j

from bench.bench_timeseries import build_frame
from extensions.timeseries import TimeseriesStore
from extensions.timeseries.store import default_root as timeseries_root
from tests.harness import PASSWORD, USER, ProxyProcess

N = int(os.environ.get("BENCH_SCALE_NODES", 1_000_000))
RELS_PER_NODE = int(os.environ.get("BENCH_SCALE_RELS_PER_NODE", 2))
BATCH = 100_000
#: Comma-separated words: only the rows whose name holds one of them (e.g. "pagerank,nearest").
ONLY = [w for w in os.environ.get("BENCH_SCALE_ROWS", "").split(",") if w]
#: Relationships per write (a bigger one can pass the 30 s write timeout on a loaded machine).
RELATIONSHIP_BATCH = 25_000
#: Seconds the proxy may take to start on the kept graph (it reloads it and re-syncs the replica).
START_TIMEOUT = 900
#: Items with a timeseries, and years of monthly values each.
TS_NODES, TS_YEARS = 100_000, 10
#: Multipliers of the pseudo-random targets: relationship k of node i ends at N x u^2, u =
#: ((i x P[k] + k) mod 1000003) / 1000003.
PRIMES = (7919, 104_729, 1_299_709)

PAGERANK_TOP = ("CALL pagerank({node_type: 'Item'}) YIELD node, score "
                "RETURN node.id AS id, score ORDER BY score DESC LIMIT 10")
SCAN_TOP = "MATCH (n:Item) RETURN n.id AS id, n.weight AS weight ORDER BY weight DESC LIMIT 10"
COUNT = "MATCH (n:Item) RETURN count(n)"


def build(driver: neo4j.Driver) -> None:
    """The graph above, in batches of BATCH nodes (each a query of its own)."""
    for start in range(0, N, BATCH):
        driver.execute_query(
            "UNWIND range($a, $b) AS i CREATE (:Item {id: i, name: 'item ' + toString(i), group: i % 50, "
            "weight: (i * 2654435761 % 1000003) / 1000003.0, tag: CASE WHEN i % 20 = 0 THEN 'rare' END})",
            a=start, b=min(N, start + BATCH) - 1)
    driver.execute_query("CREATE INDEX FOR (n:Item) ON (n.id)")
    driver.execute_query("CALL db.awaitIndexes()")
    for k in range(RELS_PER_NODE):
        for start in range(0, N, RELATIONSHIP_BATCH):
            driver.execute_query(
                "UNWIND range($a, $b) AS i WITH i, ((i * $p + $k) % 1000003) / 1000003.0 AS u "
                "MATCH (x:Item {id: i}), (y:Item {id: toInteger($n * u * u)}) "
                "CREATE (x)-[:LINKS]->(y)", a=start, b=min(N, start + RELATIONSHIP_BATCH) - 1, p=PRIMES[k], k=k, n=N)


def add_locations(driver: neo4j.Driver) -> None:
    """A point per Item (graphs built before the spatial rows lack them)."""
    for start in range(0, N, BATCH):
        driver.execute_query(
            "MATCH (n:Item) WHERE n.id >= $a AND n.id < $b SET n.location = point({"
            "longitude: -10 + 40 * ((n.id * 7919) % 1000003) / 1000003.0, "
            "latitude: 50 + 25 * ((n.id * 104729) % 999983) / 999983.0})", a=start, b=start + BATCH)


def _located(driver: neo4j.Driver) -> bool:
    records, _, _ = driver.execute_query("MATCH (n:Item {id: $i}) RETURN n.location IS NOT NULL", i=N - 1)
    return bool(records and records[0][0])


def write_timeseries(data_dir: Path) -> None:
    """TS_YEARS of monthly `oil` for the first TS_NODES Items, unless the store has them."""
    store = TimeseriesStore(timeseries_root(data_dir))
    if (timeseries_root(data_dir) / "Item").exists():
        return
    store.write("Item", build_frame(TS_NODES, TS_YEARS), key_property="id", resolution="month")


def _built(driver: neo4j.Driver) -> bool:
    records, _, _ = driver.execute_query(COUNT)
    return records[0][0] == N


def _auto_commit(driver: neo4j.Driver, query: str, params: dict) -> list:
    """The query's records, auto-commit: a managed transaction (execute_query) expires after the
    proxy's 60 s idle timeout while text_score embeds a million texts the first time."""
    with driver.session() as session:
        return list(session.run(query, params))


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _rss(pid: int) -> int:
    """Resident memory of a process in bytes (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def memory(proxy: ProxyProcess) -> str:
    servers = [f"{_rss(child) / 2**30:.2f}" for child in _children(proxy.pid)]
    return f"proxy {_rss(proxy.pid) / 2**30:.2f} GiB; FalkorDB servers {' + '.join(servers)} GiB"


PAGERANK_AGAIN = PAGERANK_TOP.replace("{node_type: 'Item'}", "{node_type: 'Item', damping_factor: 0.9}")
#: (row, query, parameters, times run: 1 = its first run only, else the fastest of that many,
#: baseline query).
ROWS = (
    ("CALL describe() cold", "CALL describe()", {}, 1, SCAN_TOP),
    ("CALL describe() warm", "CALL describe()", {}, 5, COUNT),
    ("CALL describe({types: ['Item']}) cold", "CALL describe({types: ['Item']})", {}, 1, SCAN_TOP),
    ("pagerank top 10 cold", PAGERANK_TOP, {}, 1, SCAN_TOP),
    ("pagerank top 10 warm (projection cached)", PAGERANK_TOP, {}, 3, SCAN_TOP),
    ("the same, new parameters (kernel runs again)", PAGERANK_AGAIN, {}, 1, SCAN_TOP),
)
TEXT_TOP = "MATCH (n:Item) RETURN n.id AS id, text_score(n, 'name', $q) AS s ORDER BY s DESC LIMIT 10"
TS_AVG = (f"MATCH (n:Item) WHERE n.id < {TS_NODES} RETURN count(n) AS n, "
          "avg(ts_avg(n.oil, '2000')) AS mean, max(ts_max(n.oil, '2001', '2003')) AS peak")
TS_BASELINE = f"MATCH (n:Item) WHERE n.id < {TS_NODES} RETURN count(n) AS n, avg(n.weight) AS mean"
NEAREST = "MATCH (q:Item {id: $i}), (p:Item) RETURN p.id AS id, distance(q, p) AS d ORDER BY d LIMIT 10"
WITHIN = ("MATCH (q:Item), (p:Item) WHERE q.id < 10 AND distance(q, p) < 2000 "
          "RETURN q.id AS id, count(p) AS near ORDER BY id")
ROWS += (
    ("text_score top 10, first question in the process", TEXT_TOP, {"q": "item 4242"}, 1, SCAN_TOP),
    ("text_score top 10, a new question", TEXT_TOP, {"q": "items numbered 77"}, 1, SCAN_TOP),
    ("text_score top 10, the same question again", TEXT_TOP, {"q": "items numbered 77"}, 3, SCAN_TOP),
    (f"ts_avg + ts_max over {TS_NODES // 1000}k nodes, cold", TS_AVG, {}, 1, TS_BASELINE),
    (f"ts_avg + ts_max over {TS_NODES // 1000}k nodes, warm", TS_AVG, {}, 3, TS_BASELINE),
    ("nearest 10 of 1M points, cold (layer + STRtree)", NEAREST, {"i": 0}, 1, SCAN_TOP),
    ("nearest 10 of 1M points, warm", NEAREST, {"i": 1}, 3, SCAN_TOP),
    ("distance join, 10 x 1M points within 2 km", WITHIN, {}, 1, SCAN_TOP),
)
_BASELINE_NAMES = {SCAN_TOP: "scan top 10 by property", COUNT: "count(n)", TS_BASELINE: "avg(n.weight), same nodes"}


def measure(proxy: ProxyProcess) -> None:
    """Each row against its baseline measured right before it (the machine's load changes)."""
    with neo4j.GraphDatabase.driver(proxy.uri, auth=(USER, PASSWORD)) as driver:
        if not _built(driver):
            print(f"building {N:,} nodes, {N * RELS_PER_NODE:,} relationships ...", flush=True)
            print(f"(built in {_timed(lambda: build(driver)):.0f} s)", flush=True)
        if not _located(driver):
            print(f"(locations set in {_timed(lambda: add_locations(driver)):.0f} s)", flush=True)
        print(f"graph: {N:,} Item nodes, {N * RELS_PER_NODE:,} LINKS; {memory(proxy)} at start", flush=True)
        for name, query, params, times, baseline_query in ROWS:
            if ONLY and not any(word in name for word in ONLY):
                continue
            baseline = min(_timed(lambda: _auto_commit(driver, baseline_query, {})) for _ in range(2))
            seconds = min(_timed(lambda: _auto_commit(driver, query, params)) for _ in range(times))
            print(f"{name:<50} {seconds:8.3f} s   {_BASELINE_NAMES[baseline_query]:<24} {baseline:7.3f} s   "
                  f"ratio {seconds / baseline:6.2f}x", flush=True)
        print(f"memory after: {memory(proxy)}", flush=True)


def main() -> None:
    kept = os.environ.get("BENCH_SCALE_DIR")
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        data_dir = Path(kept) if kept else Path(tmp)
        write_timeseries(data_dir)
        proxy = ProxyProcess(data_dir=data_dir).start(timeout=START_TIMEOUT)
        try:
            measure(proxy)
        finally:
            proxy.stop()


if __name__ == "__main__":
    main()
