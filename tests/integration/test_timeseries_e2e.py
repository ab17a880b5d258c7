"""ts_* functions through the real driver: data imported with `cypher-proxy ts import`,
nodes created through the proxy, values checked by hand-computed expectations."""

from __future__ import annotations

import math
import subprocess
import sys

import neo4j
import numpy as np
import pandas as pd
import pytest
from neo4j.exceptions import ClientError
from neo4j.time import Date

from tests.harness import PASSWORD, REPO, USER, ProxyProcess

SENSOR_CSV = """sensor,date,temp
s1,2020-02-27,1.0
s1,2020-02-28,2.0
s1,2020-02-29,4.0
s1,2020-03-01,
s1,2020-03-02,8.0
s2,2021-02-27,10.0
s2,2021-02-28,20.0
s2,2021-03-01,30.0
"""

METER_CSV = """meter,year,month,kwh
m1,2019,11,5
m1,2019,12,7
m1,2020,1,11
m1,2020,2,
m1,2020,3,13
"""


def gauge_frame() -> pd.DataFrame:
    """40 gauges with daily series of 1 to 30 days (runs of equal and unequal lengths, gaps)."""
    rng = np.random.default_rng(31)
    rows = [(f"g{k}", day, None if rng.random() < 0.1 else round(float(rng.normal(50, 20)), 3))
            for k in range(40) for day in pd.date_range("2022-01-01", periods=int(rng.integers(1, 31)))]
    return pd.DataFrame(rows, columns=["gauge", "date", "level"])


def _import(data_dir, source, *flags):
    done = subprocess.run([sys.executable, "-m", "proxy", "ts", "import", str(source),
                           "--data-dir", str(data_dir), *flags],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def ts_driver(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("ts")
    (data_dir / "sensor.csv").write_text(SENSOR_CSV)
    (data_dir / "meter.csv").write_text(METER_CSV)
    gauge_frame().to_csv(data_dir / "gauge.csv", index=False)
    _import(data_dir, data_dir / "sensor.csv", "--label", "Sensor", "--key-column", "sensor",
            "--channel", "temp", "--date-column", "date", "--resolution", "day")
    _import(data_dir, data_dir / "meter.csv", "--label", "Meter", "--key-column", "meter",
            "--key-property", "code", "--channel", "kwh", "--year-column", "year",
            "--month-column", "month", "--unit", "kwh=kWh")
    _import(data_dir, data_dir / "gauge.csv", "--label", "Gauge", "--key-column", "gauge",
            "--channel", "level", "--date-column", "date", "--resolution", "day")
    with ProxyProcess(data_dir=data_dir) as process, \
            neo4j.GraphDatabase.driver(process.uri, auth=(USER, PASSWORD)) as driver:
        driver.execute_query("CREATE (:Sensor {id: 's1'}), (:Sensor {id: 's2'}), (:Sensor {id: 'nope'}), "
                             "(:Meter {code: 'm1'}), (:Other {id: 's1'})")
        driver.execute_query("UNWIND range(0, 39) AS k CREATE (:Gauge {id: 'g' + toString(k)})")
        yield driver


def one(driver, expression: str, node: str = "MATCH (s:Sensor {id: 's1'})", **params):
    records, _, _ = driver.execute_query(f"{node} RETURN {expression} AS v", **params)
    assert len(records) == 1
    return records[0]["v"]


METER = "MATCH (m:Meter {code: 'm1'})"


@pytest.mark.parametrize("expression, expected", [
    ("ts_sum(s.temp, '2020-2')", 7.0),
    ("ts_count(s.temp, '2020-2')", 3),
    ("ts_avg(s.temp, '2020-2')", 7.0 / 3),
    ("ts_sum(s.temp, '2020-2-29')", 4.0),                 # leap day as a whole period
    ("ts_at(s.temp, '2020-2-29')", 4.0),
    ("ts_sum(s.temp, null, '2020-2-28')", 3.0),           # open start
    ("ts_sum(s.temp, '2020-2-29', null)", 12.0),          # open end, NaN on 03-01 skipped
    ("ts_sum(s.temp)", 15.0),
    ("ts_count(s.temp, '2020-3')", 1),                    # the NaN day does not count
    ("ts_avg(s.temp, '2020-3')", 8.0),
    ("ts_at(s.temp, '2020-3-1')", None),                  # missing value
    ("ts_min(s.temp, 2020)", 1.0),
    ("ts_max(s.temp, 2020)", 8.0),
    ("ts_first(s.temp)", 1.0),
    ("ts_last(s.temp)", 8.0),
    ("ts_delta(s.temp, '2020-2-27', '2020-3-2')", 7.0),
])
def test_daily_functions(ts_driver, expression, expected):
    value = one(ts_driver, expression)
    if isinstance(expected, float):
        assert math.isclose(value, expected, rel_tol=1e-12)
    else:
        assert value == expected


@pytest.mark.parametrize("expression, expected", [
    ("ts_sum(s.temp, '2019')", 0.0),
    ("ts_count(s.temp, '2019')", 0),
    ("ts_avg(s.temp, '2019')", None),
    ("ts_min(s.temp, '2019')", None),
    ("ts_max(s.temp, '2019')", None),
])
def test_empty_range(ts_driver, expression, expected):
    assert one(ts_driver, expression) == expected


def test_series(ts_driver):
    series = one(ts_driver, "ts_series(s.temp, '2020-2-28', '2020-3-2')")
    assert series == [{"time": Date(2020, 2, 28), "value": 2.0}, {"time": Date(2020, 2, 29), "value": 4.0},
                      {"time": Date(2020, 3, 2), "value": 8.0}]


def test_monthly_store_with_other_key_property(ts_driver):
    assert one(ts_driver, "ts_avg(m.kwh, 2020)", METER) == 12.0
    assert one(ts_driver, "ts_avg(m.kwh, '2019-12', '2020-1')", METER) == 9.0
    assert one(ts_driver, "ts_at(m.kwh, date('2020-01-15'))", METER) == 11.0   # temporal picks its month
    assert one(ts_driver, "ts_at(m.kwh, $d)", METER, d=Date(2019, 11, 3)) == 5.0


def test_nodes_without_series_give_null(ts_driver):
    assert one(ts_driver, "ts_avg(s.temp)", "MATCH (s:Sensor {id: 'nope'})") is None
    assert one(ts_driver, "ts_avg(s.temp)", "MATCH (s:Other {id: 's1'})") is None


def test_many_rows_and_functions_in_one_query(ts_driver):
    records, _, _ = ts_driver.execute_query(
        "MATCH (s:Sensor) WHERE s.id IN ['s1', 's2'] "
        "RETURN s.id AS id, ts_sum(s.temp) AS total, ts_count(s.temp, '2021-2') AS feb21 ORDER BY id")
    assert [(r["id"], r["total"], r["feb21"]) for r in records] == [("s1", 15.0, 0), ("s2", 60.0, 2)]


@pytest.mark.parametrize("first, last", [("2022-01-05", "2022-01-11"), (None, "2022-01-03"), (None, None)])
def test_ragged_series_against_pandas(ts_driver, first, last):
    """Each gauge's sum, mean, extremes and count over a range, against pandas on the imported
    rows (the store sums runs of equal-length series as one block)."""
    args = "g.level, $first, $last"
    records, _, _ = ts_driver.execute_query(
        f"MATCH (g:Gauge) RETURN g.id AS id, ts_sum({args}) AS total, ts_avg({args}) AS mean, "
        f"ts_min({args}) AS low, ts_max({args}) AS high, ts_count({args}) AS n", first=first, last=last)
    frame = gauge_frame()
    inside = (frame.date >= (first or "2000")) & (frame.date <= (last or "2100"))
    groups = frame[inside].groupby("gauge")["level"]
    expected = pd.DataFrame({"total": groups.sum(), "mean": groups.mean(), "low": groups.min(),
                             "high": groups.max(), "n": groups.count()})
    got = {r["id"]: r for r in records}
    assert len(got) == 40
    for gauge in got:
        row = expected.loc[gauge] if gauge in expected.index else None
        n = 0 if row is None else int(row.n)
        assert got[gauge]["n"] == n
        if n:
            assert [got[gauge][k] for k in ("total", "mean", "low", "high")] == pytest.approx(
                [row.total, row["mean"], row.low, row.high], rel=1e-12)
        else:
            assert got[gauge]["mean"] is None and got[gauge]["low"] is None


@pytest.mark.parametrize("expression, node, fragments", [
    ("ts_avg(s.power)", "MATCH (s:Sensor {id: 's1'})", ["Unknown channel 'power' on Sensor", "Available: temp"]),
    ("ts_avg(m.kwh, '2020-1-15')", METER, ["month"]),                       # finer than the data
    ("ts_avg(s.temp, 'abc')", "MATCH (s:Sensor {id: 's1'})", ["'abc'", "YYYY"]),
    ("ts_avg(s.temp, '2021-2-29')", "MATCH (s:Sensor {id: 's1'})", ["2021-2-29"]),   # no such day
    ("ts_at(m.kwh, '2020')", METER, ["YYYY-M"]),                            # not one period
    ("ts_avg(s.temp, '2020', '2021', '2022')", "MATCH (s:Sensor {id: 's1'})", ["ts_avg"]),   # arity
])
def test_errors_teach(ts_driver, expression, node, fragments):
    with pytest.raises(ClientError) as info:
        one(ts_driver, expression, node)
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
    for fragment in fragments:
        assert fragment in info.value.message


def test_a_write_between_two_identical_queries_changes_the_answer(ts_driver):
    """Probe results are cached by graph state: every write through the proxy, in auto-commit
    or a committed transaction, is seen by the next identical query; a rolled-back one is not."""
    query = ("MATCH (s:Sensor) WHERE s.id STARTS WITH 'cache' UNWIND ['2020-2', '2021-2'] AS month "
             "RETURN count(ts_avg(s.temp, month)) AS n, sum(ts_avg(s.temp, month)) AS total")

    def answer():
        return ts_driver.execute_query(query).records[0].values()

    assert answer() == [0, 0]
    ts_driver.execute_query("CREATE (:Sensor {id: 'cache-1', alias: 's1'})")
    assert answer() == [0, 0]                        # a node without a series: no values yet
    ts_driver.execute_query("MATCH (s:Sensor {id: 'cache-1'}) SET s.id = 's1', s.was = 'cache'")
    query_s1 = query.replace("s.id STARTS WITH 'cache'", "s.was = 'cache'")
    first = ts_driver.execute_query(query_s1).records[0].values()
    assert first == [1, pytest.approx(7 / 3)]                  # s1 has only 2020
    with ts_driver.session() as session:
        with session.begin_transaction() as tx:
            tx.run("MATCH (s:Sensor {id: 's2'}) SET s.was = 'cache'").consume()
            seen = tx.run(query_s1).single().values()     # its own write, uncached
            assert seen == [2, pytest.approx(7 / 3 + 15.0)]   # s2 has only 2021
            tx.rollback()
    assert ts_driver.execute_query(query_s1).records[0].values() == first
    ts_driver.execute_query("MATCH (s:Sensor {id: 's2'}) SET s.was = 'cache'")
    assert ts_driver.execute_query(query_s1).records[0].values() == [2, pytest.approx(7 / 3 + 15.0)]


def test_a_reimport_while_serving_changes_the_answer(tmp_path):
    """Computed values are kept while the graph is unchanged, and while the series are too:
    `ts import` into the running server's data directory is seen by the next identical query."""
    source = tmp_path / "meter.csv"
    source.write_text(METER_CSV)
    flags = ["--label", "Meter", "--key-column", "meter", "--key-property", "code", "--channel", "kwh",
             "--year-column", "year", "--month-column", "month"]
    _import(tmp_path, source, *flags)
    query = "MATCH (m:Meter) UNWIND [2019, 2020] AS year RETURN year, ts_sum(m.kwh, year) AS total ORDER BY year"
    with ProxyProcess(data_dir=tmp_path) as process, \
            neo4j.GraphDatabase.driver(process.uri, auth=(USER, PASSWORD)) as driver:
        driver.execute_query("CREATE (:Meter {code: 'm1'})")

        def answer():
            return [tuple(r.values()) for r in driver.execute_query(query).records]

        assert answer() == answer() == [(2019, 12.0), (2020, 24.0)]
        source.write_text(METER_CSV.replace("m1,2020,3,13", "m1,2020,3,1000"))
        _import(tmp_path, source, *flags)
        assert answer() == [(2019, 12.0), (2020, 1011.0)]



@pytest.mark.parametrize("ttl", ["0", "30"])
def test_the_neo4j_backend_binds_the_same_values(tmp_path, ttl):
    """Behind an upstream (here another proxy) values are bound as maps keyed by element id, then
    by key: each query shape reads what the embedded backend's grids and lists read."""
    (tmp_path / "sensor.csv").write_text(SENSOR_CSV)
    for name in ("front", "direct"):
        _import(tmp_path / name, tmp_path / "sensor.csv", "--label", "Sensor", "--key-column", "sensor",
                "--channel", "temp", "--date-column", "date", "--resolution", "day")
    graph = ("CREATE (:Sensor {id: 's1', since: '2020-2-28'}), (:Sensor {id: 's2', since: '2021-2-28'}), "
             "(:Sensor {id: 'nope', since: '2020'})")
    queries = [
        "MATCH (s:Sensor) UNWIND ['2020-2', '2021-2', null, 2020] AS m "
        "RETURN s.id AS id, m, ts_avg(s.temp, m) AS v ORDER BY id, toString(m)",
        "MATCH (s:Sensor) UNWIND range(27, 29) AS d WITH s, '2020-2-' + toString(d) AS day "
        "RETURN s.id AS id, day, ts_at(s.temp, day) AS v, ts_sum(s.temp, day, null) AS rest ORDER BY id, day",
        "MATCH (s:Sensor) RETURN s.id AS id, ts_sum(s.temp, s.since) AS v, ts_last(s.temp) AS last ORDER BY id",
    ]
    with ProxyProcess() as back, \
            ProxyProcess(data_dir=tmp_path / "front", args=["--upstream", back.uri, "--probe-cache-ttl", ttl]) as front, \
            ProxyProcess(data_dir=tmp_path / "direct") as direct, \
            neo4j.GraphDatabase.driver(front.uri, auth=(USER, PASSWORD)) as through, \
            neo4j.GraphDatabase.driver(direct.uri, auth=(USER, PASSWORD)) as embedded:
        through.execute_query(graph)
        embedded.execute_query(graph)
        for query in queries:
            expected = [r.values() for r in embedded.execute_query(query).records]
            assert expected and any(v is not None for row in expected for v in row[2:])
            for _ in range(2):                        # the second time from the probe cache (ttl 30)
                assert [r.values() for r in through.execute_query(query).records] == expected, query
