"""describe(): cold (empty cache, fresh stores) and warm, on the demo graph and on a generated
100-type, 200k-node graph, in-process on the embedded FalkorDB, plus the demo's lone
`CALL describe()` through the driver.

Baselines run in the same process against the same database: one pass over the nodes
(`MATCH (n) RETURN count(n.id)`) for cold runs, a `RETURN 1` round trip for warm ones.
Targets (issue 10): warm <= 5 ms; cold <= 500 ms on the demo, <= 3 s on the 200k graph.
"""

from __future__ import annotations

import asyncio
import itertools
import statistics
import tempfile
import time
from contextlib import asynccontextmanager
from pathlib import Path

import neo4j

from extensions.planner.catalog import build_registry
from extensions.describe import describe_text
from extensions.registry import GraphContext
from extensions.timeseries.store import TimeseriesStore, default_root
from core.backend import TxConfig
from proxy.backends.falkordb.backend import FalkorDBBackend
from proxy.backends.falkordb.dialect import FALKORDB
from proxy.demo.loader import load_demo, load_tables
from tests.harness import PASSWORD, USER, ProxyProcess
from tests.synthetic_graph import synthetic_graph, timeseries_frame

SCAN = "MATCH (n) RETURN count(n.id)"
PING = "RETURN 1"
_states = itertools.count()


def _row(name: str, seconds: float, baseline: float, baseline_name: str) -> None:
    print(f"{name:<46} {seconds * 1e3:9.2f} ms   {baseline_name} {baseline * 1e3:8.2f} ms   "
          f"ratio {seconds / baseline:7.2f}x", flush=True)


async def _median(repeat: int, make) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        await make()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


@asynccontextmanager
async def _embedded(data_dir: Path):
    """A FalkorDB in `data_dir` and a function that runs one query on it and returns the rows."""
    backend = FalkorDBBackend(data_dir / "falkordb", persistent=False)
    await backend.start()
    try:
        credentials = await backend.authenticate({"scheme": "basic", "principal": USER, "credentials": PASSWORD})

        async def read(query: str, params: dict) -> list[list]:
            result = await backend.run(query, params, TxConfig(), credentials)
            rows = await result.fetch(-1)
            await result.consume()
            return rows
        yield read
    finally:
        await backend.stop()


async def _describe_rows(title: str, read, data_dir: Path, detail: str, cold_repeat: int) -> None:
    scan = await _median(5, lambda: read(SCAN, {}))
    ping = await _median(50, lambda: read(PING, {}))

    def cold(types):      # a fresh registry: empty cache, stores read from disk again
        return lambda: describe_text(GraphContext("neo4j", next(_states), read, dialect=FALKORDB),
                                     build_registry(data_dir), types)

    registry, warm_graph = build_registry(data_dir), GraphContext("neo4j", "warm", read, dialect=FALKORDB)
    for types, name in ((None, "describe()"), ([detail], f"describe({{types: ['{detail}']}})")):
        _row(f"{title}: {name} cold", await _median(cold_repeat, cold(types)), scan, "scan")
        await describe_text(warm_graph, registry, types)
        _row(f"{title}: {name} warm", await _median(50, lambda: describe_text(warm_graph, registry, types)),
             ping, "RETURN 1")


async def _demo() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-describe-") as tmp:
        data_dir = Path(tmp)
        async with _embedded(data_dir) as read:
            await load_demo(read, default_root(data_dir), progress=lambda line: None)
            await _describe_rows("demo", read, data_dir, "Field", cold_repeat=5)


async def _synthetic() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-describe-") as tmp:
        data_dir = Path(tmp)
        graph = await asyncio.to_thread(synthetic_graph, 100, 200_000, 50)
        store = TimeseriesStore(default_root(data_dir))
        for label in graph.timeseries:
            store.write(label, timeseries_frame(graph, label), key_property="id", resolution="month")
        async with _embedded(data_dir) as read:
            started = time.perf_counter()
            await load_tables(read, graph.tables, progress=lambda line: None)
            print(f"(generated graph: {sum(map(len, graph.tables.nodes.values())):,} nodes loaded in "
                  f"{time.perf_counter() - started:.0f} s)", flush=True)
            largest = max(graph.tables.nodes, key=lambda label: len(graph.tables.nodes[label]))
            await _describe_rows("100 types, 200k nodes", read, data_dir, largest, cold_repeat=3)


def _through_the_driver() -> None:
    with ProxyProcess(command="demo") as proc, \
            neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
        def median(query: str) -> float:
            times = []
            for _ in range(30):
                started = time.perf_counter()
                driver.execute_query(query)
                times.append(time.perf_counter() - started)
            return statistics.median(times)
        driver.execute_query("CALL describe()")
        _row("demo via driver: CALL describe() warm", median("CALL describe()"), median(PING), "RETURN 1")


def main() -> None:
    asyncio.run(_demo())
    _through_the_driver()
    asyncio.run(_synthetic())
