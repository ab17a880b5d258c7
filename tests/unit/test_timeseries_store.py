"""The on-disk store: layout, atomic writes, the shared cache and its reload check."""

import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from unittest import mock

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from hypothesis import given, strategies as st

from extensions.timeseries.store import SeriesMeta, TimeseriesStore, canonical_key, segmented_cumsum


def frame(keys=(1, 2), months=3, scale=1.0):
    rows = [(k, f"2020-{m + 1:02d}-01", scale * (10 * k + m)) for k in keys for m in range(months)]
    return pd.DataFrame(rows, columns=["key", "time", "oil"])


@pytest.fixture
def store(tmp_path):
    return TimeseriesStore(tmp_path / "ts")


def test_write_creates_a_label_directory_with_parquet_and_meta(store):
    store.write("Profile", frame(), key_property="id", resolution="month", units={"oil": "MSm3"})
    directory = store.root / "Profile"
    assert directory.is_dir() and store.labels() == ["Profile"]
    table = pq.read_table(directory / "series.parquet")
    assert table.column_names == ["key", "time", "oil"]
    assert table.num_rows == 6
    meta = json.loads((directory / "meta.json").read_text())
    assert meta["resolution"] == "month" and meta["key_property"] == "id"
    assert store.meta("Profile") == SeriesMeta("Profile", "month", "id", ["oil"], {"oil": "MSm3"})


def test_loaded_layout_is_sorted_with_offsets_and_periods(store):
    shuffled = frame(keys=(2, 1)).sample(frac=1.0, random_state=1)
    store.write("P", shuffled, key_property="id", resolution="month")
    series = store.series("P")
    assert list(series.keys) == ["1", "2"]
    assert list(series.offsets) == [0, 3, 6]
    assert list(series.times) == [2020 * 12, 2020 * 12 + 1, 2020 * 12 + 2] * 2
    assert list(series.channel("oil").values) == [10, 11, 12, 20, 21, 22]


def test_series_is_cached_and_shared(store):
    store.write("P", frame(), key_property="id", resolution="month")
    first = store.series("P")
    with ThreadPoolExecutor(4) as pool:
        others = list(pool.map(lambda _: store.series("P"), range(16)))
    assert all(o is first for o in others)
    assert store.memory_bytes() > 6 * 8


def test_concurrent_first_use_loads_once(store):
    store.write("P", frame(), key_property="id", resolution="month")
    fresh = TimeseriesStore(store.root)
    barrier = threading.Barrier(4)

    def load(_):
        barrier.wait()
        return fresh.series("P")

    with mock.patch("extensions.timeseries.store._load", wraps=__import__(
            "extensions.timeseries.store", fromlist=["_load"])._load) as loader:
        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(load, range(4)))
    assert loader.call_count == 1
    assert all(r is results[0] for r in results)


def test_rewrite_is_seen_by_other_store_instances(store):
    store.write("P", frame(), key_property="id", resolution="month")
    reader = TimeseriesStore(store.root)
    before = reader.series("P")
    store.write("P", frame(scale=2.0), key_property="id", resolution="month")
    after = reader.series("P")
    assert after is not before
    assert list(after.channel("oil").values) == [20, 22, 24, 40, 42, 44]
    assert reader.series("P") is after
    # the old generation is cleaned up; only the current one remains
    assert len(list((store.root / ".versions").iterdir())) == 1


def test_readers_see_whole_generations_while_a_writer_rewrites(store):
    store.write("P", frame(scale=1.0), key_property="id", resolution="month")
    readers = [TimeseriesStore(store.root) for _ in range(3)]
    seen, stop = set(), threading.Event()

    def read(reader):
        while not stop.is_set():
            values = reader.series("P").channel("oil").values
            seen.add(float(values[1]) / 11)   # every row scales together: 11 * scale
            assert list(values / values[1] * 11) == [10, 11, 12, 20, 21, 22]

    with ThreadPoolExecutor(3) as pool:
        futures = [pool.submit(read, r) for r in readers]
        for scale in (2.0, 3.0, 4.0, 5.0):
            store.write("P", frame(scale=scale), key_property="id", resolution="month")
        stop.set()
        for f in futures:
            f.result()
    assert seen <= {1.0, 2.0, 3.0, 4.0, 5.0} and 5.0 in {float(r.series("P").channel("oil").values[1]) / 11
                                                           for r in readers}


def test_failed_write_leaves_the_old_store_intact(store):
    store.write("P", frame(), key_property="id", resolution="month")
    before = (store.root / "P" / "series.parquet").read_bytes()
    with mock.patch("extensions.timeseries.store.pq.write_table", side_effect=OSError("disk full")):
        with pytest.raises(OSError, match="disk full"):
            store.write("P", frame(scale=5.0), key_property="id", resolution="month")
    assert (store.root / "P" / "series.parquet").read_bytes() == before
    assert list(TimeseriesStore(store.root).series("P").channel("oil").values) == [10, 11, 12, 20, 21, 22]
    assert len(list((store.root / ".versions").iterdir())) == 1
    assert not [p for p in store.root.iterdir() if p.name.endswith(".link")]


@pytest.mark.parametrize("bad, message", [
    (frame().drop(columns="time"), "lacks column"),
    (frame().assign(oil="x"), "Unable to parse"),
    (pd.concat([frame(), frame()]), "Duplicate month for key '1'"),
    (frame().assign(key=[1, None, 1, 2, 2, 2]), "missing key"),
    (frame()[["key", "time"]], "no channel columns"),
])
def test_invalid_frames_are_rejected_before_touching_disk(store, bad, message):
    with pytest.raises(ValueError, match=message):
        store.write("P", bad, key_property="id", resolution="month")
    assert store.labels() == []


def test_bad_resolution_and_label(store):
    with pytest.raises(ValueError, match="Unknown resolution"):
        store.write("P", frame(), key_property="id", resolution="week")
    with pytest.raises(ValueError, match="Invalid label"):
        store.write("../x", frame(), key_property="id", resolution="month")


def test_a_hand_made_directory_is_read_and_reloaded_on_change(store, tmp_path):
    directory = store.root / "Manual"
    directory.mkdir(parents=True)
    frame(keys=(7,)).assign(time=lambda f: pd.to_datetime(f.time)).to_parquet(directory / "series.parquet")
    (directory / "meta.json").write_text(json.dumps(
        {"label": "Manual", "resolution": "month", "key_property": "code", "channels": ["oil"]}))
    assert list(store.series("Manual").channel("oil").values) == [70, 71, 72]
    frame(keys=(7,), scale=3).assign(time=lambda f: pd.to_datetime(f.time)).to_parquet(directory / "series.parquet")
    os.utime(directory / "series.parquet", ns=(1, 1))
    assert list(store.series("Manual").channel("oil").values) == [210, 213, 216]
    # writing through the store replaces the hand-made directory with a generation link
    store.write("Manual", frame(keys=(7,)), key_property="code", resolution="month")
    assert (store.root / "Manual").is_symlink()
    assert list(store.series("Manual").channel("oil").values) == [70, 71, 72]


def test_unknown_label_raises_key_error(store):
    assert not store.has("Nope")
    with pytest.raises(KeyError):
        store.series("Nope")


def test_daily_and_yearly_resolution_periods(store):
    daily = pd.DataFrame({"key": ["a"] * 3, "time": ["2020-02-28", "2020-02-29", "2020-03-01"], "v": [1.0, 2, 3]})
    store.write("D", daily, key_property="id", resolution="day")
    times = store.series("D").times
    assert list(np.diff(times)) == [1, 1]
    yearly = pd.DataFrame({"key": ["a", "a"], "time": [2019, 2020], "v": [1.0, 2.0]})
    store.write("Y", yearly.assign(time=pd.to_datetime(yearly.time.astype(str))), key_property="id",
                resolution="year")
    assert list(store.series("Y").times) == [2019, 2020]


def test_empty_frame_writes_an_empty_store(store):
    empty = pd.DataFrame({"key": pd.Series([], dtype=object), "time": pd.Series([], dtype="datetime64[s]"),
                          "v": pd.Series([], dtype=float)})
    store.write("E", empty, key_property="id", resolution="month")
    series = store.series("E")
    assert series.rows == 0 and series.position("1") == -1


def test_canonical_key_links_numbers_and_strings():
    assert canonical_key(42) == canonical_key(42.0) == canonical_key("42") == canonical_key(np.int64(42)) == "42"
    assert canonical_key(None) is None and canonical_key(float("nan")) is None
    assert canonical_key(" A-1 ") == "A-1"


@pytest.mark.parametrize("resolution, times", [("month", ["2019-11-01", "2021-02-01", "2020-06-01"]),
                                               ("day", ["2020-02-29", "2020-01-01", "2024-12-31"])])
def test_coverage_comes_from_the_file_statistics_without_loading(store, resolution, times):
    data = pd.DataFrame({"key": [3, 1, 2], "time": times, "oil": [1.0, np.nan, 2.0]})
    store.write("P", data, key_property="id", resolution=resolution)
    fresh = TimeseriesStore(store.root)
    with mock.patch("extensions.timeseries.store._load", side_effect=AssertionError("loaded")):
        coverage = fresh.coverage("P")
    series = fresh.series("P")
    assert coverage == (series.tmin, series.tmax) == fresh.coverage("P")
    with pytest.raises(KeyError):
        fresh.coverage("Missing")


@given(st.lists(st.lists(st.floats(-1e6, 1e6), max_size=6), max_size=12))
def test_segmented_cumsum_sums_each_series_on_its_own(segments):
    """Runs of equal-length series (summed as one block) and ragged ones (empty included) give
    each series' own cumulative sum."""
    values = np.array([v for segment in segments for v in segment], dtype=float)
    offsets = np.cumsum([0] + [len(segment) for segment in segments])
    expected = [c for segment in segments for c in np.cumsum(segment).tolist()]
    assert segmented_cumsum(values, offsets).tolist() == expected


def test_unloaded_until_loaded_and_again_after_a_rewrite(store):
    """What the planner asks before computing on the event loop: a label still to load is unloaded,
    each label on its own."""
    assert store.unloaded() == set()
    store.write("P", frame(), key_property="id", resolution="month")
    store.write("Q", frame(), key_property="id", resolution="month")
    assert store.unloaded() == {"P", "Q"}
    store.series("P")
    assert store.unloaded() == {"Q"}
    store.write("P", frame(scale=2), key_property="id", resolution="month")
    assert store.unloaded() == {"P", "Q"}


def test_a_listing_is_trusted_only_while_the_root_is_unchanged(store, monkeypatch):
    """Labels and tokens are read again when the root changes (another process's write too), and
    on every call while its last change is too recent to be told apart from the next one."""
    store.write("P", frame(), key_property="id", resolution="month")
    other = TimeseriesStore(store.root)
    assert other.labels() == ["P"]
    scans = []
    real_scan = TimeseriesStore._scan
    monkeypatch.setattr(TimeseriesStore, "_scan", lambda self, *a, **k: scans.append(1) or real_scan(self, *a, **k))
    other.has("P"), other.has("P")
    assert len(scans) == 2                                   # the root changed within the last second
    past = time.time_ns() - 5_000_000_000
    os.utime(store.root, ns=(past, past))
    other.has("P"), other.has("P"), other.version()
    assert len(scans) == 3                                   # settled: one scan, then the stat alone
    store.write("Q", frame(), key_property="id", resolution="month")
    assert other.labels() == ["P", "Q"] and other.unloaded() == {"P", "Q"}
    os.utime(store.root, ns=(past, past))
    assert other.has("Q") and other.has("Q") and len(scans) == 6
    (store.root / "Q").unlink()
    assert other.labels() == ["P"] and len(scans) == 7
