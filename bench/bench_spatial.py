"""Spatial functions end to end through the driver, each against its pair-by-pair form in the
same run, plus the geometry store's memory.

- the contains join of the demo graph (wellbores x field outlines), cold and warm; against
  pair-by-pair evaluation (`contains(...) = true` is not planned as a join) on a slice of the
  wellbores, since the full 7,545 x 142 product does not finish within FalkorDB's 30 s timeout;
- nearest-10 of 100k synthetic points (index) against brute force (`ORDER BY d + 0`: every
  distance computed and bound, the database sorts);
- bytes per geometry in a store layer (points, and the demo's field outlines), STRtree included.
"""

from __future__ import annotations

import gc
import statistics
import time

import neo4j
import numpy as np
import shapely

from bench.bench_timeseries import rss_bytes
from extensions.spatial.store import Layer
from tests.harness import PASSWORD, USER, ProxyProcess

JOIN = "MATCH (w:WellBore), (f:Field) WHERE contains(f.geometry, w.location) RETURN f.title, count(w) AS n"
SLICE = ("MATCH (w:WellBore), (f:Field) WHERE id(w) % 40 = 0 AND contains(f.geometry, w.location) "
         "RETURN f.title, count(w) AS n")
SLICE_PAIRWISE = ("MATCH (w:WellBore) WHERE id(w) % 40 = 0 WITH w MATCH (f:Field) "
                  "WHERE contains(f.geometry, w.location) = true RETURN f.title, count(w) AS n")
POINTS = 100_000
NEAREST = "MATCH (q:Probe {id: $i}), (p:Sample) RETURN p.id AS id, distance(q, p) AS d ORDER BY d LIMIT 10"
#: The generic binding is fastest indexed by the node with many values: distance(p, q) here.
NEAREST_BRUTE = NEAREST.replace("distance(q, p)", "distance(p, q)").replace("ORDER BY d", "ORDER BY d + 0")


def _time(driver, query: str, **params) -> tuple[float, list]:
    started = time.perf_counter()
    records = driver.execute_query(query, params).records
    return time.perf_counter() - started, [tuple(r.values()) for r in records]


def _median(driver, query: str, repeat: int, **params) -> float:
    return statistics.median(_time(driver, query, **params)[0] for _ in range(repeat))


def _row(name: str, seconds: float, baseline: float | None = None, baseline_name: str = "") -> None:
    tail = f"   {baseline_name} {baseline * 1e3:9.1f} ms   ratio {baseline / seconds:7.1f}x" if baseline else ""
    print(f"{name:<52} {seconds * 1e3:9.1f} ms{tail}", flush=True)


def _contains_join() -> list[str]:
    with ProxyProcess(command="demo") as proc, neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
        cold, _ = _time(driver, JOIN)
        warm = _median(driver, JOIN, 10)
        _row("contains join, all 7,545 x 142, cold (layers read)", cold)
        _row("contains join, all 7,545 x 142, warm (median of 10)", warm)
        joined = _median(driver, SLICE, 5)
        pairwise, rows = _time(driver, SLICE_PAIRWISE)
        assert sorted(rows) == sorted(_time(driver, SLICE)[1])
        _row("contains join, 1/40 of the wellbores (median of 5)", joined, pairwise, "pair by pair")
        return [r[0] for r in driver.execute_query("MATCH (f:Field) WHERE f.geometry IS NOT NULL "
                                                   "RETURN f.geometry").records]


def _nearest() -> None:
    rng = np.random.default_rng(7)
    lon, lat = rng.uniform(-10, 30, POINTS), rng.uniform(50, 75, POINTS)
    with ProxyProcess() as proc, neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
        for start in range(0, POINTS, 20_000):
            driver.execute_query("UNWIND $rows AS r CREATE (:Sample {id: r[0], location: point({longitude: r[1], "
                                 "latitude: r[2]})})", rows=[[i, float(lon[i]), float(lat[i])]
                                                             for i in range(start, min(start + 20_000, POINTS))])
        driver.execute_query("UNWIND range(0, 9) AS i CREATE (:Probe {id: i, location: point({longitude: "
                             "-5 + i * 3, latitude: 55 + i * 1.5})})")
        cold, _ = _time(driver, NEAREST, i=0)
        indexed = statistics.median(_time(driver, NEAREST, i=i)[0] for i in range(1, 10))
        brute = statistics.median(_time(driver, NEAREST_BRUTE, i=i)[0] for i in range(1, 4))
        for i in range(3):
            (_, got), (_, expected) = _time(driver, NEAREST, i=i), _time(driver, NEAREST_BRUTE, i=i)
            assert [r[0] for r in got] == [r[0] for r in expected]
            assert np.allclose([r[1] for r in got], [r[1] for r in expected], rtol=1e-9)
        _row(f"nearest-10 of {POINTS // 1000}k points, cold (layer + STRtree)", cold)
        _row(f"nearest-10 of {POINTS // 1000}k points, warm (median of 9)", indexed, brute, "brute force")


def _bytes_per_geometry(outlines: list[str]) -> None:
    rng = np.random.default_rng(3)
    points = [[i, [float(x), float(y)]] for i, (x, y) in enumerate(rng.uniform(0, 10, (POINTS, 2)))]
    shapes = [[i, outlines[i % len(outlines)]] for i in range(20_000)]
    for name, rows in ((f"{POINTS // 1000}k points", points), ("20k demo field outlines", shapes)):
        gc.collect()
        before = rss_bytes()
        layer = Layer.from_rows(name, rows)
        layer.tree
        gc.collect()
        used = rss_bytes() - before
        vertices = shapely.get_num_coordinates(layer.geoms).mean()
        print(f"store layer, {name:<26} {used / len(rows):9.0f} bytes per geometry (STRtree included; "
              f"{vertices:.0f} vertices on average)", flush=True)
        del layer


def main() -> None:
    print("(machine shared with other agents: compare ratios, not absolute times)")
    outlines = _contains_join()
    _nearest()
    _bytes_per_geometry(outlines)
