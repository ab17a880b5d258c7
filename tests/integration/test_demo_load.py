"""Load the Sodir demo into a fresh embedded FalkorDB (twice) and check graph and timeseries store."""

from __future__ import annotations

import pandas as pd
import pytest
import pytest_asyncio

from extensions.timeseries.store import TimeseriesStore
from core.backend import TxConfig
from proxy.demo.loader import load_demo
from proxy.demo.sodir import PRODUCTION_UNITS


@pytest_asyncio.fixture(scope="module")
async def backend(embedded):
    return embedded


@pytest_asyncio.fixture(scope="module")
async def loaded(backend, tmp_path_factory):
    """Two loads into the same database and store: (first counts, second counts, query, store root)."""
    creds = await backend.authenticate({"scheme": "basic", "principal": "neo4j", "credentials": "password"})

    async def query(text: str, params: dict | None = None) -> list[list]:
        result = await backend.run(text, params or {}, TxConfig(), creds)
        rows = await result.fetch(-1)
        await result.consume()
        return rows

    ts_root = tmp_path_factory.mktemp("ts")
    lines: list[str] = []
    first = await load_demo(query, ts_root, progress=lines.append)
    second = await load_demo(query, ts_root, progress=lines.append)
    print(f"\nsodir demo load: first {first['seconds']} s, second {second['seconds']} s; "
          f"nodes {first['nodes']}; relationships {sum(first['relationships'].values())}")
    assert any("loaded in" in line for line in lines)
    return first, second, query, ts_root


async def test_counts_match_the_database_and_are_idempotent(loaded):
    first, second, query, _ = loaded
    assert first["nodes"] == second["nodes"] and first["relationships"] == second["relationships"]
    for label, expected in first["nodes"].items():
        assert (await query(f"MATCH (n:`{label}`) RETURN count(n)"))[0][0] == expected, label
    by_type: dict[str, int] = {}
    for name, count in first["relationships"].items():
        rel_type = name.split("[:")[1].split("]")[0]
        by_type[rel_type] = by_type.get(rel_type, 0) + count
    for rel_type, expected in by_type.items():
        assert (await query(f"MATCH ()-[e:`{rel_type}`]->() RETURN count(e)"))[0][0] == expected, rel_type
    assert sum(first["nodes"].values()) == (await query("MATCH (n) RETURN count(n)"))[0][0]


async def test_load_time(loaded):
    first, second, _, _ = loaded
    assert first["seconds"] < 30 and second["seconds"] < 30


async def test_troll_production_profile_query(loaded):
    _, _, query, _ = loaded
    rows = await query("MATCH (f:Field {title:'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile) RETURN p.id")
    assert rows == [["prf-46437"]]


async def test_locations_geometry_and_properties_are_stored(loaded):
    _, _, query, _ = loaded
    [[lat, lon, depth, completed]] = await query(
        "MATCH (w:WellBore {title: '31/2-1'}) "
        "RETURN w.location.latitude, w.location.longitude, w.total_depth_m, w.completion_date")
    assert 60.5 < lat < 61 and 3 < lon < 4 and isinstance(depth, float) and completed == "1979-11-09"
    [[wkt]] = await query("MATCH (f:Field {title: 'TROLL'}) RETURN f.geometry")
    assert wkt.startswith("MULTIPOLYGON")
    [[share]] = await query("MATCH (:Field {title: 'TROLL'})-[h:HAS_LICENSEE]->(:Company {title: 'Petoro AS'}) "
                            "RETURN h.share")
    assert share == pytest.approx(56.0)
    # properties that are NULL in the source are absent, not stored as null
    [[with_temp, total]] = await query(
        "MATCH (w:WellBore) RETURN count(w.bottom_hole_temperature_c), count(w)")
    assert 0 < with_temp < total


async def test_timeseries_store_has_troll_monthly_rows(loaded):
    _, _, _, ts_root = loaded
    store = TimeseriesStore(ts_root)
    meta = store.meta("ProductionProfile")
    assert meta.key_property == "id" and meta.resolution == "month"
    assert meta.channels == list(PRODUCTION_UNITS) and meta.units == PRODUCTION_UNITS
    rows = pd.read_parquet(ts_root / "ProductionProfile" / "series.parquet")
    troll = rows[(rows.key == "prf-46437") & rows.time.dt.year.between(2015, 2024)]
    assert len(troll) == 120
    assert sorted(set(zip(troll.time.dt.year, troll.time.dt.month))) == [
        (y, m) for y in range(2015, 2025) for m in range(1, 13)]
    assert (troll.prd_gas_net > 0).all()
