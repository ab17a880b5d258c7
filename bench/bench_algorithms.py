"""Graph algorithm procedures on a 50k-node / 200k-relationship random graph, end to end through Bolt
(a real proxy and embedded FalkorDB), cold (projection read after a write) and warm (cached), against
networkx on the same graph in this process; plus the kernels alone and the projection's memory."""

from __future__ import annotations

import time

import networkx as nx
import neo4j
import numpy as np

from extensions.algorithms import kernels, paths
from extensions.algorithms.projection import Projection
from tests.harness import PASSWORD, USER, ProxyProcess

N, M, SEED = 50_000, 200_000, 42
QUERY = "CALL {name}({{node_type: 'N'{extra}}}) YIELD node, {column} RETURN node.i AS i, {column} " \
        "ORDER BY {column} DESC LIMIT 10"
ALGORITHMS = [   # name, yield column, extra parameters, kernel, kernel options
    ("pagerank", "score", "", kernels.pagerank,
     dict(direction="out", damping_factor=0.85, max_iterations=100, tolerance=1e-6)),
    ("degree", "score", "", kernels.degree, dict(direction="both")),
    ("louvain", "community", "", kernels.louvain, dict(direction="both", resolution=1.0, tolerance=1e-3, seed=None)),
    ("label_propagation", "community", "", kernels.label_propagation, dict(direction="both", max_iterations=10)),
    ("connected_components", "component", "", kernels.connected_components, dict(direction="both")),
    ("betweenness", "score", "", paths.betweenness,
     dict(direction="both", normalized=False, sample_size=None, seed=None)),
    ("closeness", "score", "", paths.closeness, dict(direction="both", sample_size=None, seed=None, weighted=False)),
]


def _edges() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(SEED)
    return rng.integers(0, N, M), rng.integers(0, N, M)


def _load(driver, sources: np.ndarray, targets: np.ndarray) -> None:
    for start in range(0, N, 10_000):
        driver.execute_query("UNWIND range($a, $b) AS i CREATE (:N {i: i})", a=start, b=min(N, start + 10_000) - 1)
    driver.execute_query("CREATE INDEX FOR (n:N) ON (n.i)")
    driver.execute_query("CALL db.awaitIndexes()")              # filled in the background
    for start in range(0, M, 20_000):
        rows = [{"s": int(s), "t": int(t)} for s, t in zip(sources[start:start + 20_000], targets[start:start + 20_000])]
        driver.execute_query("UNWIND $rows AS r MATCH (a:N {i: r.s}), (b:N {i: r.t}) CREATE (a)-[:R]->(b)", rows=rows)


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def _networkx(graph: nx.MultiDiGraph, name: str) -> tuple[float, str]:
    """Seconds networkx takes for `name` on the whole graph (extrapolated where it would take hours)."""
    undirected = nx.Graph(graph)
    if name == "pagerank":
        return _timed(lambda: nx.pagerank(graph)), ""
    if name == "degree":
        return _timed(lambda: dict(graph.degree())), ""
    if name == "louvain":
        return _timed(lambda: nx.community.louvain_communities(undirected, seed=1)), ""
    if name == "label_propagation":
        return _timed(lambda: list(nx.community.label_propagation_communities(undirected))), ""
    if name == "connected_components":
        return _timed(lambda: list(nx.weakly_connected_components(graph))), ""
    k = 8
    if name == "betweenness":       # networkx's own source sampling, k sources, scaled to our sample size
        seconds = _timed(lambda: nx.betweenness_centrality(undirected, k=k, seed=1))
        return seconds * paths.DEFAULT_SAMPLE_SIZE / k, f"(k={k} sources timed, x{paths.DEFAULT_SAMPLE_SIZE // k})"
    # closeness: networkx has no sampling; one BFS per node, timed on k nodes and scaled to the same sample
    nodes = list(undirected)[:k]
    seconds = _timed(lambda: [nx.single_source_shortest_path_length(undirected, v) for v in nodes])
    return (seconds * paths.DEFAULT_SAMPLE_SIZE / k,
            f"(k={k} BFS timed, x{paths.DEFAULT_SAMPLE_SIZE // k}; exact would be x{N // k})")


def main() -> None:
    sources, targets = _edges()
    with ProxyProcess() as proxy, neo4j.GraphDatabase.driver(proxy.uri, auth=(USER, PASSWORD)) as driver:
        load = _timed(lambda: _load(driver, sources, targets))
        print(f"graph: {N:,} nodes, {M:,} relationships (random), loaded through Bolt in {load:.1f} s; "
              "2-core machine shared with other agents")
        graph = nx.MultiDiGraph()
        graph.add_nodes_from(range(N))
        graph.add_edges_from(zip(sources.tolist(), targets.tolist()))
        projection = Projection(np.arange(N), sources, targets, np.ones(M))
        print(f"{'algorithm':22} {'cold':>8} {'warm':>8} {'kernel':>8} {'networkx':>9} {'nx/cold':>8} "
              f"{'nx/kernel':>9}")
        for name, column, extra, kernel, options in ALGORITHMS:
            query = QUERY.format(name=name, column=column, extra=extra)
            driver.execute_query("MERGE (:BenchMarker)")              # a write: the cached projection is dropped
            cold = _timed(lambda: driver.execute_query(query))
            warm = min(_timed(lambda: driver.execute_query(query)) for _ in range(3))
            compute = min(_timed(lambda: kernel(projection, dict(options))) for _ in range(2))
            reference, note = _networkx(graph, name)
            print(f"{name:22} {cold:7.3f}s {warm:7.3f}s {compute:7.3f}s {reference:8.2f}s "
                  f"{reference / cold:7.1f}x {reference / compute:8.1f}x {note}", flush=True)
        print(f"projection memory (node ids + relationship arrays + every matrix the kernels above built): "
              f"{projection.nbytes / 2**20:.1f} MiB; betweenness/closeness sampled from "
              f"{paths.DEFAULT_SAMPLE_SIZE} sources (graph above {paths.EXACT_MAX_NODES:,} nodes)")


if __name__ == "__main__":
    main()
