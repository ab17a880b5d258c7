"""Stored vectors (`vecf32`, as llama-index and langchain write them) through the proxy: reading
2,000 vectors of 1,536 floats back, against the falkordb client reading them straight from the
database, and `size(n.name)` of a key holding no vector (no probe), against the same query
without `size()`, on a graph without vectors and on one with them, after a write each time (the
probe's answer was cached until a write, or for one set of parameters)."""

from __future__ import annotations

import statistics

import neo4j
import numpy as np
from falkordb import FalkorDB

from bench import median_seconds
from bench.raw_bolt import RawBolt
from proxy.backends.falkordb.roles import primary_address
from tests.harness import PASSWORD, USER, ProxyProcess

NODES, DIMENSIONS = 2000, 1536
READ_VECTORS = "MATCH (n:V) RETURN n.embedding"
#: llama-index's enhanced schema for a LIST property (neo4j_property_graph.py, exhaustive).
ENHANCED = ("MATCH (n:V) WITH min(size(coalesce(n.embedding, []))) AS lo, max(size(coalesce(n.embedding, []))) AS hi, "
            "collect(n.embedding)[0][..3] AS sample RETURN lo, hi, sample")
#: On 50,000 :P nodes with names (the probe a size() paid read them all again).
PEOPLE = 50_000
SIZES = {"size(n.name), 50k nodes": ("MATCH (n:P) WHERE size(n.name) > 100 RETURN count(n)",
                                        "MATCH (n:P) WHERE n.name > 'zz' RETURN count(n)"),
         "size(n.name), one node by $i": ("MATCH (n:P {i: $i}) RETURN size(n.name)", "MATCH (n:P {i: $i}) RETURN n.name")}


def _sizes(session, graph_kind: str) -> None:
    """Each query after a write (nothing cached), as a ratio to its baseline after the same write
    (the two alternate, so a change in the machine's load reaches both)."""
    for name, (query, baseline) in SIZES.items():
        count = iter(range(10**9))

        def after_write(text: str) -> None:
            session.run("CREATE (:Touch)").consume()
            session.run(text, i=next(count) % PEOPLE).consume()

        times: dict[str, list[float]] = {query: [], baseline: []}
        for _ in range(40):
            for text in times:
                times[text].append(median_seconds(lambda: after_write(text), 1))
        sized, base = statistics.median(times[query][5:]), statistics.median(times[baseline][5:])
        print(f"{name:30s} {graph_kind:16s} after a write: {sized * 1000:7.2f} ms vs {base * 1000:7.2f} ms "
              f"without size(): {sized / base:5.2f}x")


def main() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(NODES, DIMENSIONS)).astype(np.float32)
    with ProxyProcess() as proc, neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver, \
            driver.session() as session:
        session.run("UNWIND range(0, $n - 1) AS i CREATE (:P {i: i, name: 'person ' + toString(i)})", n=PEOPLE).consume()
        session.run("UNWIND range(0, $n - 1) AS i CREATE (:V {i: i})", n=NODES).consume()
        session.run("CREATE INDEX FOR (n:P) ON (n.i)").consume()
        session.run("CREATE INDEX FOR (n:V) ON (n.i)").consume()
        _sizes(session, "(no vectors)")
        for start in range(0, NODES, 200):
            session.run("UNWIND range(0, size($v) - 1) AS j MATCH (n:V {i: $start + j}) "
                        "CALL db.create.setNodeVectorProperty(n, 'embedding', $v[j])",
                        v=vectors[start:start + 200].tolist(), start=start).consume()
        _sizes(session, "(vectors stored)")

        socket_path, password = primary_address(proc.data_dir / "falkordb")
        graph = FalkorDB(unix_socket_path=str(socket_path), password=password).select_graph("neo4j")
        bolt = RawBolt(proc.uri, USER, PASSWORD)
        times: dict[str, list[float]] = {"direct": [], "raw": [], "driver": [], "enhanced": []}
        for _ in range(7):                          # interleaved: the machine's load reaches each alike
            times["direct"].append(median_seconds(lambda: graph.query(READ_VECTORS), 1))
            times["raw"].append(median_seconds(lambda: bolt.run(READ_VECTORS), 1))
            times["driver"].append(median_seconds(lambda: list(session.run(READ_VECTORS)), 1))
            times["enhanced"].append(median_seconds(lambda: list(session.run(ENHANCED)), 1))
        direct, raw, through_driver, enhanced = (statistics.median(times[k]) for k in times)
        print(f"{NODES} vectors of {DIMENSIONS} floats, falkordb client straight to the database: {direct:.3f} s")
        print(f"  through the proxy, raw Bolt client:  {raw:.3f} s  {raw / direct:5.2f}x")
        print(f"  through the proxy, neo4j driver:     {through_driver:.3f} s  {through_driver / direct:5.2f}x")
        print(f"  llama-index enhanced schema (collect(n.embedding)[0][..3]): {enhanced:.3f} s  "
              f"{enhanced / direct:5.2f}x")
