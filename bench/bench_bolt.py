"""End-to-end latency and streaming: neo4j driver -> proxy -> FalkorDB vs the falkordb client
straight to the same database, in one process, reported as ratios."""

from __future__ import annotations

import neo4j
from falkordb import FalkorDB

from bench import median_seconds
from proxy.backends.falkordb.roles import primary_address
from tests.harness import PASSWORD, USER, ProxyProcess

STREAM_QUERY = "UNWIND range(1, 100000) AS i RETURN i, 'row-' + toString(i) AS s"


def _row(name: str, proxy_s: float, direct_s: float, unit: str, scale: float) -> None:
    print(f"{name:<28} proxy {proxy_s * scale:9.3f} {unit}   direct {direct_s * scale:9.3f} {unit}"
          f"   ratio {proxy_s / direct_s:6.2f}x")


def main() -> None:
    with ProxyProcess() as proc:
        socket_path, password = primary_address(proc.data_dir / "falkordb")
        graph = FalkorDB(unix_socket_path=str(socket_path), password=password).select_graph("neo4j")
        with neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver, driver.session() as session:
            def proxy_one():
                session.run("RETURN 1").consume()

            def direct_one():
                graph.query("RETURN 1")

            def proxy_stream():
                rows = 0
                for _ in session.run(STREAM_QUERY):
                    rows += 1
                assert rows == 100_000

            def direct_stream():
                assert len(graph.query(STREAM_QUERY).result_set) == 100_000

            for fn in (proxy_one, direct_one):          # warm up connections and caches
                for _ in range(50):
                    fn()
            _row("RETURN 1 (median latency)", median_seconds(proxy_one, 1000),
                 median_seconds(direct_one, 1000), "ms", 1e3)
            proxy_stream(), direct_stream()
            _row("100k-row stream (2 columns)", median_seconds(proxy_stream, 5),
                 median_seconds(direct_stream, 5), "s ", 1)
