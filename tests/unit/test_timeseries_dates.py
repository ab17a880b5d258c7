"""Date arguments of the ts_* functions: forms, resolutions, leap days, errors."""

import datetime as dt

import neo4j.time
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from extensions.timeseries.dates import (
    infer_resolution,
    parse_date,
    period_of,
    period_starts,
    periods_from_datetimes,
    periods_to_datetimes,
    resolve_range,
    resolve_single,
)
from core.errors import CypherError


def day(y, m, d):
    return period_of("day", y, m, d)


@pytest.mark.parametrize("arg", ["2020", "2020-3", "2020-03", 2020, " 2020-3 "])
def test_string_and_integer_forms_parse(arg):
    spec = parse_date(arg)
    assert spec.year == 2020 and not spec.point


def test_one_arg_is_that_whole_period():
    assert resolve_range(("2020",), "month") == (2020 * 12, 2020 * 12 + 11)
    assert resolve_range(("2020-2",), "day") == (day(2020, 2, 1), day(2020, 2, 29))  # leap year
    assert resolve_range(("2021-2",), "day") == (day(2021, 2, 1), day(2021, 2, 28))
    assert resolve_range(("2020",), "year") == (2020, 2020)
    assert resolve_range(("2020-1-31",), "hour") == (day(2020, 1, 31) * 24, day(2020, 1, 31) * 24 + 23)


def test_two_args_span_first_day_of_start_to_last_day_of_end():
    assert resolve_range(("2019", "2020-2"), "day") == (day(2019, 1, 1), day(2020, 2, 29))
    assert resolve_range((2019, 2020), "month") == (2019 * 12, 2020 * 12 + 11)


def test_null_is_an_open_bound():
    assert resolve_range((None,), "month") == (None, None)
    assert resolve_range((), "month") == (None, None)
    assert resolve_range((None, "2020"), "month") == (None, 2020 * 12 + 11)
    assert resolve_range(("2020", None), "month") == (2020 * 12, None)


def test_temporal_values_select_the_period_containing_them():
    for value in (neo4j.time.Date(2020, 3, 15), dt.date(2020, 3, 15), dt.datetime(2020, 3, 15, 7),
                  neo4j.time.DateTime(2020, 3, 15, 7, 30)):
        assert resolve_range((value,), "month") == (2020 * 12 + 2, 2020 * 12 + 2)
        assert resolve_single(value, "year") == 2020
    assert resolve_single(neo4j.time.DateTime(2020, 3, 15, 7, 30), "hour") == day(2020, 3, 15) * 24 + 7


def test_a_date_value_on_hourly_data_is_its_whole_day():
    d = day(2020, 2, 29) * 24
    assert resolve_range((neo4j.time.Date(2020, 2, 29),), "hour") == (d, d + 23)
    assert resolve_range((dt.date(2020, 2, 28), dt.date(2020, 2, 29)), "hour") == (d - 24, d + 23)


def test_leap_day_is_valid_only_in_leap_years():
    assert resolve_single("2020-2-29", "day") == day(2020, 2, 29)
    with pytest.raises(CypherError, match="has no day 29"):
        parse_date("2021-2-29")


def test_finer_than_resolution_says_the_resolution():
    with pytest.raises(CypherError) as err:
        resolve_range(("2020-3-15",), "month", where="ProductionProfile.prd_oe_net")
    assert err.value.code == "Neo.ClientError.Statement.ArgumentError"
    assert "monthly resolution of ProductionProfile.prd_oe_net" in err.value.message
    assert "'YYYY' or 'YYYY-M'" in err.value.message
    with pytest.raises(CypherError, match="yearly resolution"):
        resolve_range(("2019", "2020-1"), "year")


@pytest.mark.parametrize("bad", ["2020-13", "abc", "2020-0", "20-1", "2020-1-1-1", "", "2020/3", 0, 10000, 2.5, True])
def test_malformed_dates_show_the_accepted_forms(bad):
    with pytest.raises(CypherError) as err:
        parse_date(bad)
    assert "'YYYY', 'YYYY-M', 'YYYY-MM', 'YYYY-M-D'" in err.value.message


def test_single_period_functions_reject_a_coarser_date():
    with pytest.raises(CypherError, match="needs one month"):
        resolve_single("2020", "month")
    assert resolve_single(None, "month") is None


@pytest.mark.parametrize("resolution", ["year", "month", "day", "hour"])
def test_period_starts_and_datetime_round_trip(resolution):
    times = np.array(["1999-01-01", "2020-02-01", "2024-12-01"], dtype="datetime64[s]")
    periods = periods_from_datetimes(resolution, times)
    assert (periods_from_datetimes(resolution, periods_to_datetimes(resolution, periods)) == periods).all()
    starts = period_starts(resolution, periods)
    assert [s.year for s in starts] == [1999, 2020, 2024]
    kind = neo4j.time.DateTime if resolution == "hour" else neo4j.time.Date
    assert all(isinstance(s, kind) for s in starts)


def test_infer_resolution():
    def infer(*texts):
        return infer_resolution(np.array(texts, dtype="datetime64[s]"))
    assert infer("2020-01-01", "2021-01-01") == "year"
    assert infer("2020-01-01", "2020-02-01") == "month"
    assert infer("2020-01-01", "2020-01-02") == "day"
    assert infer("2020-01-01T00", "2020-01-01T05") == "hour"


@given(st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31)),
       st.sampled_from(["year", "month", "day"]), st.sampled_from(["year", "month", "day", "hour"]))
def test_any_valid_date_string_resolves_to_the_periods_it_covers(date, granularity, resolution):
    text = {"year": f"{date.year:04d}", "month": f"{date.year:04d}-{date.month}",
            "day": f"{date.year:04d}-{date.month}-{date.day}"}[granularity]
    order = ["year", "month", "day", "hour"]
    if order.index(granularity) > order.index(resolution):
        with pytest.raises(CypherError, match="finer than"):
            resolve_range((text,), resolution)
        return
    first, last = resolve_range((text,), resolution)
    start = dt.date(date.year, date.month if granularity != "year" else 1, date.day if granularity == "day" else 1)
    end = {"year": dt.date(date.year, 12, 31), "day": date,
           "month": (dt.date(date.year, date.month, 28) + dt.timedelta(days=4)).replace(day=1) - dt.timedelta(days=1)
           if date.year < 9999 or date.month < 12 else dt.date(9999, 12, 31)}[granularity]
    assert first == period_of(resolution, start.year, start.month, start.day, 0)
    assert last == period_of(resolution, end.year, end.month, end.day, 23)
    assert first <= last
