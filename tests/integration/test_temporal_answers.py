"""Temporal queries on no graph, answered by the proxy with Neo4j's values (extensions/temporal),
through the driver on the embedded FalkorDB: zones, nanoseconds, `time()`, truncation,
`duration.between`, and the database path kept for what the proxy does not compute."""

from __future__ import annotations

import datetime as dt

import neo4j
import pytest
import pytz
from neo4j.exceptions import ClientError
from neo4j.time import Date, DateTime, Duration, Time

STOCKHOLM = pytz.timezone("Europe/Stockholm")


def value(driver, query, **params):
    records, _, _ = driver.execute_query(query, params)
    return records[0][0]


def plus(hours: int) -> dt.timezone:
    return dt.timezone(dt.timedelta(hours=hours))


@pytest.mark.parametrize("query, expected", [
    ("RETURN time({hour: 12, minute: 31, second: 14, nanosecond: 645876123, timezone: '+01:00'})",
     Time(12, 31, 14, 645876123, tzinfo=plus(1))),
    ("RETURN localdatetime('2015-07-21T21:40:32.142')", DateTime(2015, 7, 21, 21, 40, 32, 142000000)),
    ("RETURN date({year: 1984, week: 10, dayOfWeek: 3})", Date(1984, 3, 7)),
    ("RETURN datetime({year: 1984, month: 10, day: 11, hour: 12, timezone: '+05:00'})",
     DateTime(1984, 10, 11, 12, tzinfo=plus(5))),
    ("WITH date({year: 1984, month: 10, day: 11}) AS d RETURN d + duration({months: 4, days: 1})", Date(1985, 2, 12)),
    ("RETURN date('2024-01-31') + duration({months: 1})", Date(2024, 2, 29)),   # the day clamped, as Neo4j
    ("RETURN datetime.statement(null) AS t", None),                               # a clock in a null zone
    ("RETURN duration.inSeconds(localtime(), localtime())", Duration()),         # one clock per statement
    ("RETURN duration.between(date('1984-10-11'), localdatetime('2016-07-21T21:45:22.142'))",
     Duration(years=31, months=9, days=10, hours=21, minutes=45, seconds=22, milliseconds=142)),
    ("RETURN duration.inSeconds(datetime('2017-10-29T00:00[Europe/Stockholm]'), date('2017-10-30'))",
     Duration(hours=25)),                                                         # a day of 25 hours
    ("RETURN datetime.truncate('weekYear', localdatetime('1984-01-01T12:31'), {day: 5})",
     DateTime(1983, 1, 5, tzinfo=pytz.utc)),
    ("RETURN toString(duration({seconds: -60, milliseconds: -1}))", "PT-1M-0.001S"),
])
def test_temporal_work_on_no_graph_is_neo4js(driver, query, expected):
    got = value(driver, query)
    assert got == expected and type(got) is type(expected)


def test_named_zones_come_back_as_zone_ids(driver):
    got = value(driver, "RETURN datetime({year: 2017, month: 8, day: 8, hour: 12, minute: 31, second: 14, "
                        "nanosecond: 645876123, timezone: 'Europe/Stockholm'}) AS d")
    assert got.tzinfo.zone == "Europe/Stockholm" and got.utcoffset() == dt.timedelta(hours=2)
    assert (got.hour, got.nanosecond) == (12, 645876123)


def test_temporal_parameters_are_computed_exactly(driver):
    at = DateTime(2024, 5, 6, 7, 8, 9, 123456789, tzinfo=pytz.utc)
    records, _, _ = driver.execute_query(
        "RETURN $at + duration({nanoseconds: 1}) AS later, $at.nanosecond AS ns, toString($at) AS text", {"at": at})
    later, ns, text = records[0]
    assert later == DateTime(2024, 5, 6, 7, 8, 9, 123456790, tzinfo=pytz.utc)
    assert (ns, text) == (123456789, "2024-05-06T07:08:09.123456789Z")


def test_errors_are_neo4js_and_unknown_work_takes_the_database_path(driver):
    with pytest.raises(ClientError) as info:
        driver.execute_query("RETURN date({year: 2015, month: 13}) AS d")
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
    # an offset with seconds: the drivers read offsets in whole minutes, so the proxy refuses
    with pytest.raises(ClientError):
        driver.execute_query("RETURN time({hour: 12, timezone: '+02:05:59'}) AS t")
    assert value(driver, "RETURN date('2015-07-21') < date('2069-01-01')") is True
    # aggregation is not computed in Python: the database answers, or the bridges refuse
    assert value(driver, "UNWIND [date('2015-07-21'), date('1984-10-11')] AS d RETURN collect(d.year)") == [2015, 1984]
    with pytest.raises(ClientError, match="PT26H"):
        driver.execute_query("UNWIND [duration('PT26H')] AS d RETURN collect(d.hours)")


def test_queries_on_the_graph_keep_the_bridges(clean_graph):
    clean_graph.execute_query("CREATE (:T {at: date('2015-07-21')})")
    assert value(clean_graph, "MATCH (t:T) RETURN t.at + duration({days: 1})") == Date(2015, 7, 22)
    with pytest.raises(ClientError, match="fraction of a second"):
        clean_graph.execute_query("MATCH (t:T) SET t.clock = localtime('21:40:32.142')")
    assert isinstance(value(clean_graph, "MATCH (t:T) RETURN t.at"), neo4j.time.Date)


# -- stored date-times read back as the kind each property key was written with -------------------

UTC_2020, NAIVE_2021 = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc), dt.datetime(2021, 1, 1)


def test_a_stored_date_time_reads_back_as_the_kind_its_key_was_written_with(clean_graph):
    """FalkorDB has one date-time type: the proxy records per key what it wrote (temporal/kinds.py)."""
    clean_graph.execute_query("CREATE (:E {created: datetime({year: 1912}), local: localdatetime({year: 2000}), "
                              "utc: $utc, naive: $naive})", {"utc": UTC_2020, "naive": NAIVE_2021})
    clean_graph.execute_query("UNWIND $rows AS row CREATE (:R {seen: row.seen})", {"rows": [{"seen": UTC_2020}]})
    zoned_1912 = DateTime(1912, 1, 1, tzinfo=pytz.utc)
    assert value(clean_graph, "MATCH (n:E) RETURN n.created") == zoned_1912
    assert value(clean_graph, "MATCH (n:E) WITH n.created AS c RETURN max(c) AS last") == zoned_1912
    assert value(clean_graph, "MATCH (n:R) RETURN collect(n.seen) AS s") == [DateTime(2020, 1, 1, tzinfo=pytz.utc)]
    assert dict(value(clean_graph, "MATCH (n:E) RETURN n").items()) == {
        "created": zoned_1912, "local": DateTime(2000, 1, 1), "utc": DateTime(2020, 1, 1, tzinfo=pytz.utc),
        "naive": DateTime(2021, 1, 1)}
    assert value(clean_graph, "MATCH (n:E) RETURN n.naive AS x") == DateTime(2021, 1, 1)
    assert value(clean_graph, "MATCH (n:E) RETURN properties(n) AS p")["created"] == zoned_1912


def test_a_key_holding_both_kinds_is_refused_not_guessed(clean_graph):
    clean_graph.execute_query("CREATE (:E {at: datetime({year: 2000})}), (:E {at: $naive})", {"naive": NAIVE_2021})
    with pytest.raises(ClientError, match="Keep one kind per property key") as refused:
        clean_graph.execute_query("MATCH (n:E) RETURN n.at")
    assert refused.value.code == "Neo.ClientError.Statement.UnsupportedOperationError"
    with pytest.raises(ClientError, match="property `at`"):
        clean_graph.execute_query("MATCH (n:E) RETURN n")
    assert value(clean_graph, "MATCH (n:E) RETURN count(n.at)") == 2         # no date-time read: answered


def test_the_statement_clock_is_one_instant_per_statement(driver):
    before = dt.datetime.now(dt.timezone.utc)
    records, _, _ = driver.execute_query("UNWIND [1, 2] AS x RETURN datetime.statement() AS t, date.realtime() AS d")
    after = dt.datetime.now(dt.timezone.utc)
    assert records[0]["t"] == records[1]["t"]
    assert before <= records[0]["t"].to_native() <= after                    # the default zone, UTC
    assert records[0]["d"].to_native() in {before.date(), after.date()}
    zoned = value(driver, "RETURN [datetime.statement('+01:00'), datetime({timezone: '+01:00'})]")
    assert [t.utcoffset() for t in zoned] == [dt.timedelta(hours=1)] * 2 and zoned[0] == zoned[1]
