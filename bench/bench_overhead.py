"""What the proxy adds (issue 15's table): each row against its baseline measured in the same run,
next to the same row recorded before the issue's work (`overhead_before.json`).

- seed query, warm p50 through the stock driver's `session.run`, vs the same query shape with
  constants in place of the extension calls; and after a write each time (its probes and values
  computed again);
- ts_avg over 10k nodes x 10 years in one query vs the query without the extension: repeated
  (its probes and computed values reused), and after a write each time (nothing reused);
- `RETURN 1` p50 with a minimal raw Bolt client (`raw_bolt.py`) vs the falkordb client straight
  to the same database;
- one extra hop through the Neo4j backend (proxy -> proxy): `RETURN 1` p50 and a 100k-row
  stream, both with the raw client, vs the second proxy alone;
- explicit transactions through that hop vs the second proxy alone (calls alternating between
  the two): the raw client's BEGIN + RUN + PULL in one write, then COMMIT (the front sends BEGIN
  upstream with the RUN); the stock driver's `session.execute_read` (it waits for BEGIN's answer
  before it sends the RUN) and `driver.execute_query` (it pipelines BEGIN, RUN and PULL);
- cold plan (parse + plan) of a seed-shaped query whose literal changes every run;
- throughput of 16 clients alternating the seed query and `RETURN 1` for 10 s through the proxy
  vs the falkordb client with 16 threads running the seed query's baseline and `RETURN 1`;
- the same 16 clients through a proxy with 1, 2 and 4 `--workers` in front of the demo proxy
  (the upstream path: proxy -> proxy -> database), against the same falkordb-client baseline,
  and against the demo proxy alone (what the front itself costs); then again with
  `--probe-cache-ttl 60` (behind a Neo4j the probe cache is off by default: each seed query
  costs the upstream a probe and the bound query); with each front row, the front's CPU per
  query (its processes' user + system time over the run, from /proc) against the demo proxy
  process's own when it served the same clients alone: on a shared machine CPU time is steadier
  than throughput.

`python -m bench.bench_overhead --record` stores this run as the "before" of later runs;
`python -m bench.bench_overhead tx wire` measures only those groups of rows (`MEASURES`).
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import neo4j
from falkordb import FalkorDB

from bench import median_seconds
from bench.bench_extensions import BULK_BASELINE, BULK_QUERY, NODES, SEED_BASELINE, meters_proxy
from bench.bench_planner import _registry
from bench.raw_bolt import RawBolt
from extensions.cypher.parser import parse
from extensions.planner.planner import ExtensionPlanner
from proxy.backends.falkordb.roles import primary_address
from proxy.demo import SEED_QUERY
from proxy.backends.falkordb.dialect import FALKORDB
from tests.harness import PASSWORD, USER, ProxyProcess

BEFORE = Path(__file__).with_name("overhead_before.json")
STREAM_QUERY = "UNWIND range(1, 100000) AS i RETURN i, 'row-' + toString(i) AS s"
#: What the falkordb client runs for the seed query: its baseline, with the alias FalkorDB lacks spelled out.
SEED_DIRECT = SEED_BASELINE.replace("std(", "stDev(")
CLIENTS, SECONDS = 16, 10.0
WORKERS = (1, 2, 4)
#: The front's probe cache: off (the default behind a Neo4j), then kept 60 s.
PROBE_CACHE_TTLS = (0, 60)



def _cached(ttl: int) -> str:
    return f", probe cache {ttl} s" if ttl else ""


def _upstream_row(workers: int, ttl: int = 0) -> str:
    return f"  ... via an upstream proxy, {workers} worker{'s' if workers > 1 else ''}{_cached(ttl)}"


def _front_row(workers: int, ttl: int = 0) -> str:
    return f"  ... the same front vs the upstream alone, {workers}{_cached(ttl)}"


def _cpu_row(workers: int, ttl: int = 0) -> str:
    return f"  ... the front's CPU per query, {workers}{_cached(ttl)}"


# name -> (how the ratio is read, target)
ROWS = {
    "seed query, warm p50 (driver session.run)": ("ratio", "<= 1.0 ms"),
    "seed query after a write, p50": ("ratio", "(nothing cached)"),
    f"ts_avg, {NODES} nodes x 10 years": ("ratio", "<= 10x"),
    f"ts_avg, {NODES} x 10 years, after a write": ("ratio", "(nothing cached)"),
    "RETURN 1 p50, raw Bolt vs falkordb client": ("diff", "+ <= 0.1 ms"),
    "Neo4j backend hop, RETURN 1 p50": ("diff", "+ <= 0.2 ms"),
    "Neo4j backend hop, 100k-row stream": ("ratio", "<= 1.2x"),
    "Neo4j backend hop, BEGIN+RUN+PULL, COMMIT p50, raw Bolt": ("hop", "(BEGIN goes with the RUN)"),
    "Neo4j backend hop, execute_read(RETURN 1) p50": ("hop", "(the driver waits for BEGIN)"),
    "Neo4j backend hop, execute_query(RETURN 1) p50": ("hop", "(BEGIN goes with the RUN)"),
    "cold plan, changing literal, p50": ("cold", "<= 2 ms"),
    f"{CLIENTS} clients x {SECONDS:g} s, seed + RETURN 1": ("throughput", "(higher is better)"),
    **{_upstream_row(n, ttl): ("throughput", ">= 0.8x with workers") for ttl in PROBE_CACHE_TTLS for n in WORKERS},
    **{_front_row(n, ttl): ("throughput", "(the front's own cost)") for ttl in PROBE_CACHE_TTLS for n in WORKERS},
    **{_cpu_row(n, ttl): ("cpu", "(vs the upstream proxy's own)") for ttl in PROBE_CACHE_TTLS for n in WORKERS},
}


def _seed_rows(out: dict) -> None:
    with ProxyProcess(command="demo") as proc:
        with neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver, driver.session() as session:
            def run(query):
                return lambda: list(session.run(query))
            for query in (SEED_QUERY, SEED_BASELINE):
                median_seconds(run(query), 20)                      # warm up
            out["seed query, warm p50 (driver session.run)"] = (
                median_seconds(run(SEED_QUERY), 200), median_seconds(run(SEED_BASELINE), 200))
            out["seed query after a write, p50"] = (_after_write(lambda q: run(q)(), SEED_QUERY, 200),
                                                    _after_write(lambda q: run(q)(), SEED_BASELINE, 200))
        socket_path, password = primary_address(proc.data_dir / "falkordb")
        direct, _ = _throughput(lambda: _falkordb_client(socket_path, password), SEED_DIRECT)
        alone, alone_cpu = _throughput(lambda: _bolt_client(proc.uri), SEED_QUERY, lambda: _cpu_seconds(proc.pid))
        out[f"{CLIENTS} clients x {SECONDS:g} s, seed + RETURN 1"] = (alone, direct)
        for ttl in PROBE_CACHE_TTLS:
            for workers in WORKERS:
                # The front proxy reads the demo's extension stores (timeseries) from the same
                # data directory; its graph is the demo proxy's.
                with ProxyProcess(args=["--upstream", proc.uri, "--workers", str(workers),
                                        "--probe-cache-ttl", str(ttl)], data_dir=proc.data_dir) as front:
                    through, cpu = _throughput(lambda: _bolt_client(front.uri), SEED_QUERY,
                                               lambda: _cpu_seconds(front.pid, children=True))
                out[_upstream_row(workers, ttl)] = (through, direct)
                out[_front_row(workers, ttl)] = (through, alone)
                out[_cpu_row(workers, ttl)] = (cpu, alone_cpu)


def _after_write(run: Callable[[str], object], query: str, repeat: int) -> float:
    """The median time of `run(query)` right after a write (a new graph state: no probe cached)."""
    times = []
    for _ in range(repeat):
        run("CREATE (:Tick)")
        started = time.perf_counter()
        run(query)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _bolt_client(uri: str):
    client = RawBolt(uri, USER, PASSWORD)
    return client.run, client.close


def _falkordb_client(socket_path: Path, password: str):
    db = FalkorDB(unix_socket_path=str(socket_path), password=password)
    return db.select_graph("neo4j").query, db.connection.close


def _cpu_seconds(pid: int, children: bool = False) -> float:
    """User + system CPU seconds of process `pid` so far (with its live descendants if `children`:
    a proxy's workers), from /proc (Linux)."""
    tick = os.sysconf("SC_CLK_TCK")
    used, parent = {}, {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):             # not a process, or gone meanwhile
            continue
        used[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick
        parent[int(entry.name)] = int(fields[1])
    tree = {pid}
    while children and (more := {p for p, ppid in parent.items() if ppid in tree} - tree):
        tree |= more
    return sum(used.get(p, 0.0) for p in tree)


def _throughput(connect, seed: str, cpu: Callable[[], float] | None = None) -> tuple[float, float | None]:
    """Queries per second of CLIENTS threads, each alternating `seed` and RETURN 1 for SECONDS, and
    the CPU seconds `cpu()` counted per query meanwhile (None without `cpu`)."""
    counts = [0] * CLIENTS
    start = threading.Barrier(CLIENTS + 1)

    def worker(i: int) -> None:
        run, close = connect()
        try:
            run(seed), run("RETURN 1")
            start.wait()
            deadline = time.perf_counter() + SECONDS
            while time.perf_counter() < deadline:
                run(seed)
                run("RETURN 1")
                counts[i] += 2
        finally:
            close()

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(CLIENTS)]
    for thread in threads:
        thread.start()
    start.wait()
    began, cpu_began = time.perf_counter(), cpu() if cpu else 0.0
    for thread in threads:
        thread.join()
    queries = sum(counts)
    return queries / (time.perf_counter() - began), (cpu() - cpu_began) / queries if cpu else None


def _bulk_row(out: dict) -> None:
    with meters_proxy() as driver:
        def run(query):
            return lambda: driver.execute_query(query)
        out[f"ts_avg, {NODES} nodes x 10 years"] = (median_seconds(run(BULK_QUERY), 5),
                                                    median_seconds(run(BULK_BASELINE), 5))

        out[f"ts_avg, {NODES} x 10 years, after a write"] = (_after_write(driver.execute_query, BULK_QUERY, 5),
                                                             _after_write(driver.execute_query, BULK_BASELINE, 5))


def _wire_rows(out: dict) -> None:
    with ProxyProcess() as back, ProxyProcess(args=["--upstream", back.uri]) as front:
        socket_path, password = primary_address(back.data_dir / "falkordb")
        graph = FalkorDB(unix_socket_path=str(socket_path), password=password).select_graph("neo4j")
        with RawBolt(back.uri, USER, PASSWORD) as near, RawBolt(front.uri, USER, PASSWORD) as far:
            def one(client):
                return lambda: client.run("RETURN 1")

            def stream(client):
                return lambda: client.run(STREAM_QUERY)
            for fn in (one(near), one(far), lambda: graph.query("RETURN 1")):
                median_seconds(fn, 200)                             # warm up
            near_one = median_seconds(one(near), 2000)
            out["RETURN 1 p50, raw Bolt vs falkordb client"] = (
                near_one, median_seconds(lambda: graph.query("RETURN 1"), 2000))
            out["Neo4j backend hop, RETURN 1 p50"] = (median_seconds(one(far), 2000), near_one)
            stream(near)(), stream(far)()
            out["Neo4j backend hop, 100k-row stream"] = (median_seconds(stream(far), 5),
                                                         median_seconds(stream(near), 5))


def _tx_rows(out: dict) -> None:
    with ProxyProcess() as back, ProxyProcess(args=["--upstream", back.uri]) as front, \
            RawBolt(back.uri, USER, PASSWORD) as raw_near, RawBolt(front.uri, USER, PASSWORD) as raw_far, \
            neo4j.GraphDatabase.driver(back.uri, auth=(USER, PASSWORD)) as near, \
            neo4j.GraphDatabase.driver(front.uri, auth=(USER, PASSWORD)) as far, \
            near.session() as near_session, far.session() as far_session:
        def read(session):
            return lambda: session.execute_read(lambda tx: list(tx.run("RETURN 1")))

        def query(driver):
            return lambda: driver.execute_query("RETURN 1", routing_=neo4j.RoutingControl.READ)
        out["Neo4j backend hop, BEGIN+RUN+PULL, COMMIT p50, raw Bolt"] = _paired_medians(
            lambda: raw_far.transaction("RETURN 1"), lambda: raw_near.transaction("RETURN 1"), 2000)
        out["Neo4j backend hop, execute_read(RETURN 1) p50"] = _paired_medians(
            read(far_session), read(near_session), 1000)
        out["Neo4j backend hop, execute_query(RETURN 1) p50"] = _paired_medians(query(far), query(near), 1000)


def _paired_medians(a: Callable[[], object], b: Callable[[], object], repeat: int) -> tuple[float, float]:
    """The median wall times of `repeat` calls each of `a` and `b`, alternating (after a warm-up), so
    that the load of a shared machine weighs on both alike."""
    times: tuple[list[float], list[float]] = ([], [])
    for i in range(repeat + 100):
        for fn, kept in zip((a, b), times):
            started = time.perf_counter()
            fn()
            if i >= 100:
                kept.append(time.perf_counter() - started)
    return statistics.median(times[0]), statistics.median(times[1])


def _plan_row(out: dict) -> None:
    planner = ExtensionPlanner(_registry(), dialect=FALKORDB)
    planner.plan(SEED_QUERY)
    times = []
    for i in range(300):
        query = SEED_QUERY.replace("'TROLL'", f"'TROLL {i}'")
        started = time.perf_counter()
        planner.plan(query)
        times.append(time.perf_counter() - started)
    warm = median_seconds(lambda: planner.plan(SEED_QUERY), 2000)
    out["cold plan, changing literal, p50"] = (statistics.median(times), warm)
    parse.cache_clear()


def _describe(name: str, now: float, base: float) -> str:
    how = ROWS[name][0]
    if how == "throughput":
        return f"{now:9.0f} q/s vs {base:9.0f} q/s  = {now / base:5.2f}x"
    if how == "cpu":
        return f"{now * 1e6:8.0f} us vs {base * 1e6:8.0f} us  = {now / base:5.2f}x"
    if how == "cold":
        return f"{now * 1e3:8.3f} ms (a cached plan: {base * 1e6:.2f} us)"
    if how == "diff":
        return f"{now * 1e3:8.3f} ms vs {base * 1e3:8.3f} ms  = +{(now - base) * 1e3:.3f} ms"
    if how == "hop":
        return f"{now * 1e3:8.3f} ms vs {base * 1e3:8.3f} ms  = +{(now - base) * 1e3:.3f} ms, {now / base:4.2f}x"
    return f"{now * 1e3:8.2f} ms vs {base * 1e3:8.2f} ms  = {now / base:5.2f}x"


#: The groups of rows, by the name that selects them on the command line.
MEASURES = {"plan": _plan_row, "wire": _wire_rows, "tx": _tx_rows, "seed": _seed_rows, "bulk": _bulk_row}


def main(argv: list[str] | None = None) -> dict:
    argv = argv or []
    out: dict[str, tuple[float, float]] = {}
    for name, measure in MEASURES.items():
        if name in argv or not set(argv) & set(MEASURES):
            measure(out)
    before = json.loads(BEFORE.read_text()) if BEFORE.exists() and "--record" not in argv else {}
    print("2-core machine shared with other agents; each row: measured vs its baseline in this run")
    for name, (now, base) in out.items():
        print(f"{name:<58} now    {_describe(name, now, base)}   target {ROWS[name][1]}")
        if name in before:
            print(f"{'':<58} before {_describe(name, *before[name])}")
    if "--record" in argv:
        BEFORE.write_text(json.dumps(out, indent=1) + "\n")
        print(f"recorded as the 'before' run in {BEFORE.name}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
