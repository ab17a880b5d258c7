"""Extension queries end to end through the driver, against the same query shape without
the extension (a standard-Cypher baseline run in the same process).

- the seed query on the demo graph: cold (first query after start: timeseries loaded from
  Parquet) and warm;
- ts_avg over 10k nodes x 10 years in one query (100k argument tuples).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import neo4j
import numpy as np
import pandas as pd

from proxy.demo import SEED_QUERY
from tests.harness import PASSWORD, REPO, USER, ProxyProcess

SEED_BASELINE = SEED_QUERY.replace("ts_avg(p.prd_oe_net, y)", "1.0").replace(
    "ts_avg(p.prd_oe_net, y + '-6', y + '-8')", "0.9")
BULK_QUERY = ("MATCH (s:Meter) UNWIND range(2011, 2020) AS year "
              "RETURN count(*) AS n, sum(ts_avg(s.kwh, year)) AS total")
BULK_BASELINE = ("MATCH (s:Meter) UNWIND range(2011, 2020) AS year "
                 "RETURN count(*) AS n, sum(toFloat(year)) AS total")
NODES = 10_000


def _time(driver, query: str) -> float:
    started = time.perf_counter()
    driver.execute_query(query)
    return time.perf_counter() - started


def _median(driver, query: str, repeat: int) -> float:
    return statistics.median(_time(driver, query) for _ in range(repeat))


def _row(name: str, seconds: float, baseline: float) -> None:
    print(f"{name:<42} {seconds * 1e3:9.1f} ms   baseline {baseline * 1e3:8.1f} ms   "
          f"ratio {seconds / baseline:6.2f}x")


def _seed() -> None:
    with ProxyProcess(command="demo") as proc, \
            neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
        baseline = _median(driver, SEED_BASELINE, 20)
        _row("seed query, cold (first after start)", _time(driver, SEED_QUERY), baseline)
        _row("seed query, warm (median of 20)", _median(driver, SEED_QUERY, 20), baseline)


@contextmanager
def meters_proxy():
    """A proxy over `NODES` :Meter nodes, each with 10 years of monthly `kwh`; yields a driver."""
    with tempfile.TemporaryDirectory(prefix="bench-ts-") as tmp:
        data_dir = Path(tmp)
        months = pd.period_range("2011-01", "2020-12", freq="M").to_timestamp()
        keys = np.repeat([f"m{i}" for i in range(NODES)], len(months))
        frame = pd.DataFrame({"meter": keys, "date": np.tile(months, NODES),
                              "kwh": np.random.default_rng(7).random(len(keys))})
        frame.to_parquet(data_dir / "meters.parquet")
        subprocess.run([sys.executable, "-m", "proxy", "ts", "import", str(data_dir / "meters.parquet"),
                        "--data-dir", str(data_dir), "--label", "Meter", "--key-column", "meter",
                        "--channel", "kwh", "--date-column", "date", "--resolution", "month"],
                       cwd=REPO, check=True, capture_output=True)
        with ProxyProcess(data_dir=data_dir) as proc, \
                neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
            driver.execute_query("UNWIND range(0, $n - 1) AS i CREATE (:Meter {id: 'm' + toString(i)})",
                                 n=NODES)
            records = driver.execute_query(BULK_QUERY).records
            assert records[0]["n"] == NODES * 10
            yield driver


def _bulk() -> None:
    with meters_proxy() as driver:
        baseline = _median(driver, BULK_BASELINE, 5)
        _row(f"ts_avg, {NODES} nodes x 10 years (median of 5)", _median(driver, BULK_QUERY, 5), baseline)


def main() -> None:
    _seed()
    _bulk()
