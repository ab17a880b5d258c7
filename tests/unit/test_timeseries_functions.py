"""ts_* functions through `Extension.evaluate`, with PropertyRef/NodeRef arguments as the planner passes them."""

import math
import re

import neo4j.time
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extensions.registry import ArgKind, NodeRef, PropertyRef, Registry
from extensions.timeseries import TimeseriesStore, timeseries_extensions
from core.errors import CypherError

NAN = float("nan")
MONTHLY = pd.DataFrame(
    [  # key, time, prd_oe_net, prd_oil_net
        (1, "2019-12-01", 5.0, 1.0),
        (1, "2020-01-01", 1.0, 0.5),
        (1, "2020-02-01", NAN, 0.5),
        (1, "2020-03-01", 3.0, NAN),
        (1, "2021-01-01", 10.0, 2.0),
        (2, "2020-06-01", 7.0, 7.0),
        (3, "2020-01-01", NAN, NAN),
    ], columns=["key", "time", "prd_oe_net", "prd_oil_net"])
ALL_FUNCTIONS = ("ts_sum", "ts_avg", "ts_min", "ts_max", "ts_count", "ts_series", "ts_first", "ts_last", "ts_at",
                 "ts_delta")
DAILY = pd.DataFrame({"key": "w1", "time": pd.date_range("2020-02-27", "2020-03-02", freq="D"),
                      "rate": [1.0, 2.0, 4.0, 8.0, 16.0]})


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    store = TimeseriesStore(tmp_path_factory.mktemp("ts"))
    store.write("ProductionProfile", MONTHLY, key_property="id", resolution="month",
                units={"prd_oe_net": "MSm3"})
    store.write("Well", DAILY, key_property="name", resolution="day")
    return store


@pytest.fixture(scope="module")
def ext(store):
    registry = Registry(timeseries_extensions(store))
    return lambda name: registry.get(name)


def node(key, labels=("ProductionProfile",), prop="id", nid=None):
    return NodeRef(nid if nid is not None else hash(key) % 1000, f"4:x:{key}", tuple(labels), {prop: key})


def ref(key, channel="prd_oe_net", **kw):
    return PropertyRef(node(key, **kw), channel)


def run(ext, name, *rows):
    return ext(name).evaluate(list(rows))


def test_extension_contract(ext):
    assert ext("ts_avg").arg_kinds == (ArgKind.PROPERTY, ArgKind.VALUE, ArgKind.VALUE)
    assert ext("ts_avg").min_args == 1 and ext("ts_at").min_args == 2 and ext("ts_delta").min_args == 3
    assert set(ext("ts_sum").node_properties) == {"id", "name"}
    assert ext("ts_series").signature == "ts_series(n.channel, start?, end?)"


def test_range_functions_over_one_period(ext):
    row = (ref(1), "2020")
    assert run(ext, "ts_sum", row) == [4.0]
    assert run(ext, "ts_avg", row) == [2.0]
    assert run(ext, "ts_min", row) == [1.0]
    assert run(ext, "ts_max", row) == [3.0]
    assert run(ext, "ts_count", row) == [2]
    assert isinstance(run(ext, "ts_count", row)[0], int)
    assert isinstance(run(ext, "ts_sum", row)[0], float)


def test_range_functions_with_two_bounds_and_open_bounds(ext):
    assert run(ext, "ts_sum", (ref(1), "2019-12", "2020-1")) == [6.0]
    assert run(ext, "ts_sum", (ref(1), None, "2020")) == [9.0]
    assert run(ext, "ts_sum", (ref(1), "2020-2", None)) == [13.0]
    assert run(ext, "ts_sum", (ref(1), None, None)) == [19.0]
    assert run(ext, "ts_sum", (ref(1), None)) == [19.0]
    assert run(ext, "ts_sum", (ref(1),)) == [19.0]
    assert run(ext, "ts_max", (ref(1), 2020, 2021)) == [10.0]
    assert run(ext, "ts_min", (ref(1), neo4j.time.Date(2020, 3, 31), None)) == [3.0]


def test_empty_ranges(ext):
    row = (ref(1), "2022")
    assert run(ext, "ts_sum", row) == [0.0]
    assert run(ext, "ts_count", row) == [0]
    for name in ("ts_avg", "ts_min", "ts_max"):
        assert run(ext, name, row) == [None]
    assert run(ext, "ts_series", row) == [[]]
    # start after end is empty too
    assert run(ext, "ts_count", (ref(1), "2021", "2019")) == [0]


def test_missing_values_are_skipped(ext):
    assert run(ext, "ts_count", (ref(1), "2020-2")) == [0]     # the only value there is NaN
    assert run(ext, "ts_avg", (ref(1), "2020-2")) == [None]
    assert run(ext, "ts_sum", (ref(1, "prd_oil_net"), "2020")) == [1.0]
    assert run(ext, "ts_min", (ref(3),)) == [None]
    assert run(ext, "ts_count", (ref(3),)) == [0]
    assert run(ext, "ts_first", (ref(3),)) == [None]


def test_first_last(ext):
    assert run(ext, "ts_first", (ref(1),), (ref(2),), (ref(1, "prd_oil_net"),)) == [5.0, 7.0, 1.0]
    assert run(ext, "ts_last", (ref(1),), (ref(2),), (ref(1, "prd_oil_net"),)) == [10.0, 7.0, 2.0]


def test_at_and_delta(ext):
    assert run(ext, "ts_at", (ref(1), "2020-3"), (ref(1), "2020-2"), (ref(1), "2020-4"), (ref(1), None)) == \
        [3.0, None, None, None]
    assert run(ext, "ts_at", (ref(1), neo4j.time.DateTime(2020, 1, 15, 12, 0, 0))) == [1.0]
    assert run(ext, "ts_delta", (ref(1), "2020-1", "2021-1"), (ref(1), "2020-1", "2020-2"),
               (ref(1), None, "2021-1")) == [9.0, None, None]
    with pytest.raises(CypherError, match="needs one month"):
        run(ext, "ts_at", (ref(1), "2020"))


def test_series_shape(ext):
    [points] = run(ext, "ts_series", (ref(1), "2020"))
    assert points == [{"time": neo4j.time.Date(2020, 1, 1), "value": 1.0},
                      {"time": neo4j.time.Date(2020, 3, 1), "value": 3.0}]
    assert all(type(p["time"]) is neo4j.time.Date and type(p["value"]) is float for p in points)
    assert len(run(ext, "ts_series", (ref(1),))[0]) == 4


def test_daily_data_and_leap_days(ext):
    well = ref("w1", "rate", labels=("Well",), prop="name")
    assert run(ext, "ts_at", (well, "2020-2-29")) == [4.0]
    assert run(ext, "ts_sum", (well, "2020-2")) == [7.0]
    assert run(ext, "ts_sum", (well, "2020-2-29", "2020-3-1")) == [12.0]
    assert run(ext, "ts_count", (well, "2020")) == [5]
    assert run(ext, "ts_delta", (well, "2020-2-28", "2020-3-2")) == [14.0]
    [points] = run(ext, "ts_series", (well, "2020-2-29", "2020-3"))
    assert [p["time"] for p in points] == [neo4j.time.Date(2020, 2, 29), neo4j.time.Date(2020, 3, 1),
                                           neo4j.time.Date(2020, 3, 2)]


def test_nodes_without_series_and_null_nodes_give_null(ext):
    rows = [(ref(99),), (ref(1, labels=("Field",)),), (None,), (PropertyRef(NodeRef(5, "e", ("ProductionProfile",), {}), "prd_oe_net"),)]
    assert run(ext, "ts_sum", *rows) == [None] * 4
    assert run(ext, "ts_series", *rows) == [None] * 4
    assert run(ext, "ts_at", *[(r[0], "2020-1") for r in rows]) == [None] * 4


def test_first_label_with_a_store_links_the_node(ext):
    multi = PropertyRef(NodeRef(1, "e", ("Field", "ProductionProfile", "Well"), {"id": 2, "name": "w1"}), "prd_oe_net")
    assert run(ext, "ts_sum", (multi,)) == [7.0]


def test_string_and_integer_keys_match(ext):
    assert run(ext, "ts_sum", (ref("2"),), (ref(2.0),)) == [7.0, 7.0]


def test_equal_values_of_other_types_are_looked_up_apart(ext):
    """A batch resolves each distinct key and date once, but 1, 1.0 and True are not the same key
    (True is 'true') nor the same date (True is no date)."""
    assert run(ext, "ts_sum", (ref(True),), (ref(1),), (ref(1.0),)) == [None, 19.0, 19.0]
    assert run(ext, "ts_sum", (ref(1), 2020), (ref(1), "2020")) == [4.0, 4.0]
    with pytest.raises(CypherError, match="Invalid date argument True of type bool"):
        run(ext, "ts_sum", (ref(1), 1), (ref(1), True))


keys = st.sampled_from([1, 2, "2", 2.0, True, "true", None, NAN, 1.5, [1], "nope"])
any_dates = st.one_of(st.none(), st.sampled_from(["2019", "2020", "2030", "2020-1", "2020-6", 2020, 2021, True, 1.0,
                                                  [2020], "2020-13", neo4j.time.Date(2020, 3, 1)]))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(ALL_FUNCTIONS),
       st.lists(st.tuples(keys, any_dates, any_dates), min_size=1, max_size=10))
def test_a_batch_answers_each_row_as_alone(ext, name, rows):
    """Batching (each distinct key and date resolved once, lookups through the loaded arrays) never
    mixes rows: a batch gives each row what it gives alone, or fails when a row fails alone."""
    width = {"ts_first": 0, "ts_last": 0, "ts_at": 1}.get(name, 2)
    args = [(PropertyRef(NodeRef(i, str(i), ("ProductionProfile",), {} if key == "nope" else {"id": key}),
                         "prd_oe_net"), *dates[:width]) for i, (key, *dates) in enumerate(rows)]
    alone = []
    for row in args:
        try:
            alone += run(ext, name, row)
        except CypherError:
            with pytest.raises(CypherError):
                run(ext, name, *args)
            return
    assert run(ext, name, *args) == alone


def test_a_call_is_cold_only_while_its_own_labels_are_unloaded(tmp_path):
    """The planner runs a call off the event loop while it may load series: only the labels of
    the call's nodes count, so an unused label never keeps every call off the loop."""
    store = TimeseriesStore(tmp_path)
    store.write("ProductionProfile", MONTHLY, key_property="id", resolution="month")
    store.write("Well", DAILY, key_property="name", resolution="day")
    ts_sum = Registry(timeseries_extensions(store)).get("ts_sum")
    profile, well = (ref(1),), (ref("w1", "rate", labels=("Well",), prop="name"),)
    assert ts_sum.offload(1, [profile]) and ts_sum.offload(1, [well])
    assert ts_sum.evaluate([profile]) == [19.0]
    assert not ts_sum.offload(1, [profile]) and ts_sum.offload(1, [profile, well])
    assert ts_sum.offload(ts_sum.offload_above + 1, [profile])
    store.write("ProductionProfile", MONTHLY, key_property="id", resolution="month")
    assert ts_sum.offload(1, [profile])                     # rewritten: loaded again on the next call


def test_unknown_channel_lists_the_available_ones(ext):
    with pytest.raises(CypherError) as err:
        run(ext, "ts_avg", (ref(1, "production"),))
    assert err.value.code == "Neo.ClientError.Statement.ArgumentError"
    assert err.value.message == "Unknown channel 'production' on ProductionProfile. Available: prd_oe_net, prd_oil_net"


def test_date_errors_name_the_resolution_or_the_forms(ext):
    with pytest.raises(CypherError, match="finer than the monthly resolution of ProductionProfile.prd_oe_net"):
        run(ext, "ts_sum", (ref(1), "2020-3-15"))
    with pytest.raises(CypherError, match="Accepted forms"):
        run(ext, "ts_sum", (ref(1), "2020-13"))
    with pytest.raises(CypherError, match="Accepted forms"):
        run(ext, "ts_sum", (ref(1), "abc", None))
    with pytest.raises(CypherError, match="Invalid date argument \\[2020\\] of type list"):
        run(ext, "ts_sum", (ref(1), [2020]))


def test_first_argument_must_be_a_channel(ext):
    with pytest.raises(CypherError, match=r"expects a node's channel .* like ts_sum\(n.channel"):
        run(ext, "ts_sum", (42, "2020"))


def test_many_rows_in_one_call_keep_their_order(ext):
    rows = [(ref(k), y) for y in ("2019", "2020", "2021", "2022") for k in (1, 2, 3, 99)]
    expected = [5.0, 0.0, 0.0, None, 4.0, 7.0, 0.0, None, 10.0, 0.0, 0.0, None, 0.0, 0.0, 0.0, None]
    assert run(ext, "ts_sum", *rows) == expected


# -- vectorised results agree with a naive pandas computation -------------------------------------

series_rows = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 47),
                                 st.one_of(st.just(NAN), st.floats(-1e6, 1e6, allow_nan=False))),
                       min_size=1, max_size=60, unique_by=lambda r: (r[0], r[1]))
bounds = st.one_of(st.none(), st.integers(2000, 2004).map(str),
                   st.tuples(st.integers(2000, 2004), st.integers(1, 12)).map(lambda t: f"{t[0]}-{t[1]}"))
queries = st.lists(st.tuples(st.integers(0, 6), bounds, bounds), min_size=1, max_size=30)


def naive(data: pd.DataFrame, key, start, end):
    def first_month(text):
        y, _, m = text.partition("-")
        return int(y) * 12 + (int(m) - 1 if m else 0)

    def last_month(text):
        y, _, m = text.partition("-")
        return int(y) * 12 + (int(m) - 1 if m else 11)

    lo = -math.inf if start is None else first_month(start)
    hi = math.inf if end is None else last_month(end)
    sel = data[(data.key == key) & (data.period >= lo) & (data.period <= hi)]
    return sel.sort_values("period").value.dropna()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(series_rows, queries)
def test_vectorised_matches_pandas(tmp_path_factory, rows, qs):
    data = pd.DataFrame(rows, columns=["key", "month", "value"])
    data["period"] = 2000 * 12 + data.month
    store = TimeseriesStore(tmp_path_factory.mktemp("hyp"))
    store.write("P", pd.DataFrame({
        "key": data.key, "time": pd.to_datetime({"year": 2000 + data.month // 12, "month": data.month % 12 + 1,
                                                  "day": 1}), "v": data.value}),
        key_property="id", resolution="month")
    exts = {e.name: e for e in timeseries_extensions(store)}
    args = [(PropertyRef(NodeRef(k, str(k), ("P",), {"id": k}), "v"), s, e) for k, s, e in qs]
    got = {name: exts[name].evaluate(args) for name in ("ts_sum", "ts_avg", "ts_min", "ts_max", "ts_count",
                                                         "ts_series")}
    known = set(data.key)
    for i, (k, s, e) in enumerate(qs):
        if k not in known:
            assert all(got[name][i] is None for name in got)
            continue
        sel = naive(data, k, s, e)
        assert got["ts_count"][i] == len(sel)
        assert got["ts_sum"][i] == pytest.approx(sel.sum(), rel=1e-9, abs=1e-6)
        if len(sel):
            assert got["ts_avg"][i] == pytest.approx(sel.mean(), rel=1e-9, abs=1e-6)
            assert got["ts_min"][i] == sel.min() and got["ts_max"][i] == sel.max()
        else:
            assert got["ts_avg"][i] is got["ts_min"][i] is got["ts_max"][i] is None
        assert [p["value"] for p in got["ts_series"][i]] == sel.tolist()
    for k in known:
        present = data[data.key == k].sort_values("period").value.dropna()
        node = PropertyRef(NodeRef(k, str(k), ("P",), {"id": k}), "v")
        expected = [None, None] if present.empty else [present.iloc[0], present.iloc[-1]]
        assert [exts["ts_first"].evaluate([(node,)])[0], exts["ts_last"].evaluate([(node,)])[0]] == expected


def test_hourly_data(tmp_path):
    store = TimeseriesStore(tmp_path)
    times = pd.date_range("2020-02-28T22:00", periods=4, freq="h")
    store.write("Meter", pd.DataFrame({"key": "m", "time": times, "kw": [1.0, 2.0, 4.0, 8.0]}),
                key_property="id", resolution="hour")
    exts = {e.name: e for e in timeseries_extensions(store)}
    meter = PropertyRef(NodeRef(1, "e", ("Meter",), {"id": "m"}), "kw")
    assert exts["ts_sum"].evaluate([(meter, "2020-2-28"), (meter, neo4j.time.Date(2020, 2, 29))]) == [3.0, 12.0]
    assert exts["ts_at"].evaluate([(meter, neo4j.time.DateTime(2020, 2, 29, 1, 30))]) == [8.0]
    [points] = exts["ts_series"].evaluate([(meter, "2020-2-29")])
    assert points == [{"time": neo4j.time.DateTime(2020, 2, 29, 0, 0, 0), "value": 4.0},
                      {"time": neo4j.time.DateTime(2020, 2, 29, 1, 0, 0), "value": 8.0}]


# -- a separated probe's product ------------------------------------------------------------------

node_refs = st.one_of(
    st.none(),
    st.sampled_from([1, 2, 3, 99, "2", 2.0]).map(ref),
    st.just(ref("w1", "rate", labels=("Well",), prop="name")),
    st.just(ref(1, labels=("Field",))),
    st.just(ref(1, "prd_oil_net", labels=("Field", "ProductionProfile"))))
dates = st.one_of(st.none(), st.sampled_from(["2019", "2020", "2021", 2020]),
                  st.sampled_from(["2020-1", "2020-3", "2020-6", "2021-1"]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(ALL_FUNCTIONS), st.lists(node_refs, min_size=1, max_size=8),
       st.lists(st.tuples(dates, dates), min_size=1, max_size=5), st.data())
def test_product_is_evaluate_of_every_combination(ext, name, refs, date_pairs, data):
    """`evaluate_product` gives, per node, what `evaluate` gives for each node + value tuple."""
    width = {"ts_first": 0, "ts_last": 0, "ts_at": 1, "ts_delta": 2}.get(name, data.draw(st.integers(0, 2)))
    nodes = [(r,) for r in refs]
    values = list(dict.fromkeys(pair[:width] for pair in date_pairs))
    try:
        expected = [ext(name).evaluate([node + value for value in values]) for node in nodes]
    except CypherError as error:          # a date finer than the Well's days is refused by both
        with pytest.raises(CypherError, match=re.escape(error.message)):
            ext(name).evaluate_product(nodes, values)
        return
    assert ext(name).evaluate_product(nodes, values) == expected
