"""Importing CSV / Parquet into the store: validation with row numbers, progress, atomicity, the CLI."""

import argparse

import pandas as pd
import pytest

from extensions.registry import NodeRef, PropertyRef
from extensions.timeseries import TimeseriesStore, timeseries_extensions
from extensions.timeseries.importer import (
    TimeseriesImportError,
    add_import_arguments,
    import_timeseries,
    run_import,
)
from tests.harness import SHARED

SODIR_MONTHLY = SHARED / "data" / "sodir" / "sodir_current" / "field_production_monthly.csv"
CSV = ("\ufefffield,year,month,oil,gas\n"
       "100,2020,1,1.5,10\n"
       "100,2020,2,,11\n"
       "100,2020,3,2.5,12\n"
       "200,2020,1,4,NaN\n")


@pytest.fixture
def store(tmp_path):
    return TimeseriesStore(tmp_path / "data" / "timeseries")


def write(tmp_path, text, name="src.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def ts(store, name, key, channel, *args, label="Profile"):
    [ext] = [e for e in timeseries_extensions(store) if e.name == name]
    return ext.evaluate([(PropertyRef(NodeRef(1, "e", (label,), {"id": key}), channel), *args)])[0]


def test_csv_with_year_month_columns(tmp_path, store):
    calls = []
    result = import_timeseries(write(tmp_path, CSV), store, label="Profile", key_column="field",
                               channels={"oil": "prd_oil", "gas": "prd_gas"}, year_column="year",
                               month_column="month", units={"prd_oil": "MSm3"},
                               progress=lambda done, total: calls.append((done, total)))
    assert (result.rows, result.keys, result.resolution) == (4, 2, "month")
    assert calls[-1] == (4, 4)
    assert store.meta("Profile").units == {"prd_oil": "MSm3"}
    assert ts(store, "ts_sum", 100, "prd_oil", "2020") == 4.0
    assert ts(store, "ts_count", 100, "prd_oil", "2020") == 2    # the empty cell is missing
    assert ts(store, "ts_count", 200, "prd_gas") == 0            # so is NaN


def test_progress_over_chunks(tmp_path, store):
    rows = "\n".join(f"k{i % 7},{2000 + i // 84},{i // 7 % 12 + 1},{i}" for i in range(840))
    calls = []
    import_timeseries(write(tmp_path, "key,y,m,v\n" + rows + "\n"), store, label="L", key_column="key",
                      channels=["v"], year_column="y", month_column="m", chunk_rows=100,
                      progress=lambda done, total: calls.append((done, total)))
    assert [c[0] for c in calls] == list(range(100, 900, 100))[:8] + [840]
    assert all(total == 840 for _, total in calls)
    assert store.series("L").rows == 840


def test_parquet_with_a_date_column_infers_daily_resolution(tmp_path, store):
    path = tmp_path / "src.parquet"
    pd.DataFrame({"well": ["a", "a", "b"], "date": pd.to_datetime(["2020-02-28", "2020-02-29", "2020-03-01"]),
                  "rate": [1.0, 2.0, 3.0]}).to_parquet(path)
    result = import_timeseries(path, store, label="Well", key_column="well", key_property="name",
                               channels=["rate"], date_column="date")
    assert result.resolution == "day"
    assert store.meta("Well").key_property == "name"
    [ext] = [e for e in timeseries_extensions(store) if e.name == "ts_at"]
    assert ext.evaluate([(PropertyRef(NodeRef(1, "e", ("Well",), {"name": "a"}), "rate"), "2020-2-29")]) == [2.0]


def test_string_dates_of_mixed_forms(tmp_path, store):
    src = write(tmp_path, "k,d,v\n1,2020-01-01,1\n1,2020-02,2\n1,2020-03-01T00:00:00,3\n")
    assert import_timeseries(src, store, label="M", key_column="k", channels=["v"],
                             date_column="d").resolution == "month"
    assert ts(store, "ts_sum", 1, "v", "2020", label="M") == 6.0


@pytest.mark.parametrize("text, kwargs, message", [
    ("k,d,v\n1,2020-01-01,1\n1,not a date,2\n", {"date_column": "d"},
     "row 2 (line 3): unparseable date in column 'd': 'not a date'"),
    ("k,d,v\n1,2020-01-01,1\n1,2020-02-01,abc\n", {"date_column": "d"},
     "row 2 (line 3): non-numeric value in column 'v': 'abc'"),
    ("k,d,v\n1,2020-01-01,1\n,2020-02-01,2\n", {"date_column": "d"}, "row 2 (line 3): missing key in column 'k'"),
    ("k,y,m,v\n1,2020,13,1\n", {"year_column": "y", "month_column": "m"}, "row 1 (line 2): invalid month in column 'm': '13'"),
    ("k,y,m,v\n1,20x0,1,1\n", {"year_column": "y", "month_column": "m"}, "non-numeric year in column 'y': '20x0'"),
    ("k,d,v\n1,2020-01-02,1\n1,2020-01-02,2\n", {"date_column": "d"}, "Duplicate day for key '1' at 2020-01-02"),
    ("k,d,v\n1,2020-01-01,1\n", {"date_column": "nope"}, "no column(s) ['nope']. Columns: k, d, v"),
])
def test_validation_errors_name_the_row_and_value(tmp_path, store, text, kwargs, message):
    with pytest.raises(TimeseriesImportError) as err:
        import_timeseries(write(tmp_path, text), store, label="Bad", key_column="k", channels=["v"], **kwargs)
    assert message in str(err.value)
    assert store.labels() == []


def test_option_errors(tmp_path, store):
    src = write(tmp_path, CSV)
    with pytest.raises(TimeseriesImportError, match="either a date column or a year column"):
        import_timeseries(src, store, label="P", key_column="field", channels=["oil"])
    with pytest.raises(TimeseriesImportError, match="month column a year column"):
        import_timeseries(src, store, label="P", key_column="field", channels=["oil"], date_column="year",
                          month_column="month")
    with pytest.raises(TimeseriesImportError, match="unsupported file type"):
        import_timeseries(write(tmp_path, CSV, "src.txt"), store, label="P", key_column="field",
                          channels=["oil"], year_column="year")


def test_a_failing_import_leaves_the_old_store_readable_and_unchanged(tmp_path, store):
    import_timeseries(write(tmp_path, CSV), store, label="Profile", key_column="field", channels=["oil"],
                      year_column="year", month_column="month")
    before = store.series("Profile")
    files_before = sorted(p.name for p in (store.root / "Profile").iterdir())
    bad = CSV + "300,2020,1,oops,1\n"
    with pytest.raises(TimeseriesImportError, match="row 5"):
        import_timeseries(write(tmp_path, bad, "bad.csv"), store, label="Profile", key_column="field",
                          channels=["oil"], year_column="year", month_column="month")
    assert store.series("Profile") is before
    assert sorted(p.name for p in (store.root / "Profile").iterdir()) == files_before
    assert ts(TimeseriesStore(store.root), "ts_sum", 100, "oil") == 4.0


def test_cli_arguments_and_run(tmp_path, capsys):
    parser = argparse.ArgumentParser()
    add_import_arguments(parser)
    src = write(tmp_path, CSV)
    args = parser.parse_args([str(src), "--data-dir", str(tmp_path / "d"), "--label", "Profile",
                              "--key-column", "field", "--channel", "oil:prd_oil", "--channel", "gas",
                              "--year-column", "year", "--month-column", "month", "--unit", "prd_oil=MSm3"])
    assert run_import(args) == 0
    err = capsys.readouterr().err
    assert "4/4 rows (100%)" in err and "imported 4 rows for 2 keys at month resolution" in err
    store = TimeseriesStore(tmp_path / "d" / "timeseries")
    assert store.meta("Profile").channels == ["prd_oil", "gas"]
    assert store.meta("Profile").units == {"prd_oil": "MSm3"}
    bad = parser.parse_args([str(src), "--data-dir", str(tmp_path / "d"), "--label", "Profile",
                             "--key-column", "nope", "--channel", "oil", "--year-column", "year"])
    assert run_import(bad) == 1
    assert "error:" in (err := capsys.readouterr().err) and "no column(s) ['nope']" in err


@pytest.mark.skipif(not SODIR_MONTHLY.exists(), reason="sample data not present")
def test_sodir_monthly_production(tmp_path, store):
    result = import_timeseries(SODIR_MONTHLY, store, label="Profile", key_column="prfNpdidInformationCarrier",
                               channels={"prfPrdOeNetMillSm3": "prd_oe_net"}, year_column="prfYear",
                               month_column="prfMonth")
    source = pd.read_csv(SODIR_MONTHLY, encoding="utf-8-sig")
    assert result.rows == len(source)
    troll = source[source.prfInformationCarrier == "TROLL"]
    key = int(troll.prfNpdidInformationCarrier.iloc[0])
    expected = troll[troll.prfYear == 2020].prfPrdOeNetMillSm3.sum()
    assert ts(store, "ts_sum", key, "prd_oe_net", "2020") == pytest.approx(expected, rel=1e-12)
