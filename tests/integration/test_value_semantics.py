"""Neo4j's values on the embedded FalkorDB, through the driver: operator precedence, integer
`sum()`, temporal comparison and ordering across centuries, and temporal values FalkorDB cannot
hold (a fraction of a second) refused rather than truncated (extensions/bridges)."""

from __future__ import annotations

import datetime as dt

import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neo4j.exceptions import ClientError

FEW = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def value(driver, query, **params):
    records, _, _ = driver.execute_query(query, params)
    return records[0][0]


# -- operator precedence ---------------------------------------------------------------------

@pytest.mark.parametrize("query, expected", [
    ("RETURN 2^3^2", 64.0),                                   # left-associative
    ("RETURN 4 ^ (3 * 2) ^ 3", 68719476736.0),
    ("RETURN [1]+2 IN [3]+4", False),                         # ([1]+2) IN ([3]+4)
    ("RETURN [1]+[2] IN [[1, 2]]", True),
    ("RETURN 1 + 1 IN [2]", True),
    ("RETURN 1 + 2 IS NULL", False),
    ("RETURN 'ab' + 'c' STARTS WITH 'abc'", True),
    ("RETURN [1] + (2 IN [3]) + 4", [1, False, 4]),           # written parentheses still count
])
def test_precedence_is_neo4js(driver, query, expected):
    assert value(driver, query) == expected


@pytest.mark.parametrize("query, expected", [
    ("RETURN 1 < 2 = true", False),                         # 1 < 2 AND 2 = true
    ("RETURN 2 = 2 = 2", True),
    ("WITH {a: 1, b: 2, c: 2, d: 3} AS n RETURN n.a < n.b = n.c <> n.d", True),
    ("WITH date('2070-01-01') AS d RETURN date('1900-01-01') <= d <= date('2069-01-01')", False),
])
def test_a_chain_of_comparisons_compares_each_pair(driver, query, expected):
    assert value(driver, query) is expected


# -- sum() -----------------------------------------------------------------------------------

@FEW
@given(st.lists(st.one_of(st.none(), st.integers(-2**62, 2**62)), max_size=12))
def test_sum_of_integers_is_the_exact_integer(driver, numbers):
    total = value(driver, "UNWIND $xs AS x RETURN sum(x)", xs=numbers)
    exact = sum(x for x in numbers if x is not None)
    if -2**63 <= exact < 2**63:                  # beyond, Neo4j fails and FalkorDB wraps
        assert type(total) is int and total == exact


def test_sum_with_a_float_is_a_float_and_distinct_sums_distinct_values(driver):
    assert value(driver, "UNWIND [1, 2.5, null] AS x RETURN sum(x)") == 3.5
    records, _, _ = driver.execute_query(
        "UNWIND [1, 1, 2, 3] AS x RETURN x % 2 AS odd, sum(DISTINCT x) AS d, sum(x) AS s ORDER BY odd")
    assert [tuple(r) for r in records] == [(0, 2, 2), (1, 4, 5)]
    assert type(records[0]["s"]) is int
    assert value(driver, "UNWIND [] AS x RETURN sum(x)") == 0


# -- temporal values FalkorDB misreads or cannot hold -----------------------------------------

@pytest.mark.parametrize("query, expected", [
    ("RETURN date('2015-202')", neo4j.time.Date(2015, 7, 21)),
    ("RETURN date('2015-W30-2')", neo4j.time.Date(2015, 7, 21)),
    ("RETURN localdatetime('2015W302T214032')", neo4j.time.DateTime(2015, 7, 21, 21, 40, 32)),
    ("RETURN localdatetime('20150721T21:40')", neo4j.time.DateTime(2015, 7, 21, 21, 40)),
])
def test_week_ordinal_and_basic_forms_are_read_as_neo4j_reads_them(driver, query, expected):
    assert value(driver, query) == expected


def test_string_parameters_are_read_by_the_proxy_too(driver):
    assert value(driver, "RETURN date($d)", d="2016-366") == neo4j.time.Date(2016, 12, 31)


@pytest.mark.parametrize("query, params", [
    ("CREATE (n:Sub {at: localtime('21:40:32.142')}) RETURN n", {}),
    ("CREATE (n:Sub {at: localdatetime({year: 1984, month: 10, day: 11, millisecond: 645})}) RETURN n", {}),
    # microseconds are kept (as epoch microseconds: test_fine_datetimes.py), nanoseconds are not
    ("CREATE (n:Sub {at: $at}) RETURN n", {"at": neo4j.time.DateTime(2024, 1, 2, 3, 4, 5, 999999999)}),
    ("CREATE (n:Sub {at: localtime($t)}) RETURN n", {"t": "12:00:00.5"}),
])
def test_fractions_of_a_second_are_refused_never_cut(driver, query, params):
    with pytest.raises(ClientError) as info:
        driver.execute_query(query, params)
    assert "fraction of a second" in info.value.message
    assert value(driver, "MATCH (n:Sub) RETURN count(n)") == 0


def test_a_utc_datetime_parameter_is_stored_as_its_instant(clean_graph):
    at = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc)
    clean_graph.execute_query("CREATE (:At {at: $at})", {"at": at})
    assert value(clean_graph, "MATCH (n:At) RETURN n.at = localdatetime('2024-05-06T07:08:09')") is True
    with pytest.raises(ClientError, match="time zone"):
        clean_graph.execute_query("CREATE (:At {at: $at})", {"at": at.astimezone(dt.timezone(dt.timedelta(hours=2)))})


# -- dates and date-times far apart (FalkorDB's comparison wraps past 68 years) ----------------

DAYS = st.dates(min_value=dt.date(1, 1, 1), max_value=dt.date(9999, 12, 31))
MOMENTS = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31)).map(
    lambda m: m.replace(microsecond=0))


@FEW
@given(st.lists(st.one_of(DAYS, MOMENTS.map(lambda m: m.date())), min_size=2, max_size=6))
def test_dates_compare_sort_and_reduce_as_python_does(driver, days):
    a, b = days[0], days[1]
    records, _, _ = driver.execute_query(
        "WITH $a AS a, $b AS b RETURN a < b AS lt, a >= b AS ge, date($sa) < date($sb) AS literal",
        {"a": a, "b": b, "sa": a.isoformat(), "sb": b.isoformat()})
    assert tuple(records[0]) == (a < b, a >= b, a < b)
    records, _, _ = driver.execute_query("UNWIND $days AS d RETURN d ORDER BY d DESC", {"days": days})
    assert [r["d"].to_native() for r in records] == sorted(days, reverse=True)
    records, _, _ = driver.execute_query("UNWIND $days AS d RETURN min(d) AS lo, max(d) AS hi", {"days": days})
    assert (records[0]["lo"].to_native(), records[0]["hi"].to_native()) == (min(days), max(days))


@FEW
@given(st.lists(MOMENTS, min_size=2, max_size=6))
def test_local_datetimes_sort_and_reduce_as_python_does(driver, moments):
    records, _, _ = driver.execute_query(
        "UNWIND $ms AS m WITH m ORDER BY m WITH collect(m) AS ordered, min(m) AS lo, max(m) AS hi "
        "RETURN ordered, lo, hi", {"ms": moments})
    ordered, lo, hi = records[0]
    assert [m.to_native() for m in ordered] == sorted(moments)
    assert (lo.to_native(), hi.to_native()) == (min(moments), max(moments))


def test_stored_dates_filter_and_sort_across_centuries(clean_graph):
    born = [dt.date(1900, 1, 1) + dt.timedelta(days=400 * i) for i in range(1, 60)]
    clean_graph.execute_query("UNWIND $born AS b CREATE (:Person {born: b})", {"born": born})
    cutoff = dt.date(2000, 1, 1)
    expected = sum(b < cutoff for b in born)
    for query, params in [("MATCH (p:Person) WHERE p.born < date('2000-01-01') RETURN count(p)", {}),
                          ("MATCH (p:Person) WHERE p.born < $cutoff RETURN count(p)", {"cutoff": cutoff})]:
        assert value(clean_graph, query, **params) == expected
    records, _, _ = clean_graph.execute_query("MATCH (p:Person) RETURN p.born AS b ORDER BY p.born LIMIT 3")
    assert [r["b"].to_native() for r in records] == born[:3]


def test_mixed_values_keep_neo4js_order(driver):
    records, _, _ = driver.execute_query(
        "UNWIND [5, date('2069-01-01'), 'x', null, [1], date('1900-01-01')] AS v RETURN v ORDER BY v")
    assert [r["v"] for r in records] == [[1], neo4j.time.Date(1900, 1, 1), neo4j.time.Date(2069, 1, 1), "x", 5, None]
    assert value(driver, "UNWIND [date('2000-01-01'), 3] AS v RETURN min(v)") == neo4j.time.Date(2000, 1, 1)


# -- variable-length relationship variables are lists ------------------------------------------

def test_a_variable_length_relationship_variable_is_a_list(clean_graph):
    clean_graph.execute_query("CREATE (:A)-[:R {w: 1}]->(:B)-[:R {w: 2}]->(:C)")
    records, _, _ = clean_graph.execute_query("MATCH (:A)-[rs:R*]->(b) RETURN rs, size(rs) AS n ORDER BY n")
    assert [[r["w"] for r in rec["rs"]] for rec in records] == [[1], [1, 2]]
    assert all(isinstance(rel, neo4j.graph.Relationship) for rec in records for rel in rec["rs"])
    assert value(clean_graph, "MATCH (:A)-[rs:R*]->() WHERE size(rs) > 1 RETURN [r IN rs | r.w]") == [1, 2]
    assert value(clean_graph, "MATCH (:A)-[rs:R*]->() WITH rs WHERE rs[1].w = 2 RETURN size(rs)") == 2
    starred = clean_graph.execute_query("MATCH (:A)-[rs:R*]->() RETURN * ORDER BY size(rs)").records
    assert [[r["w"] for r in rec["rs"]] for rec in starred] == [[1], [1, 2]]        # the user's columns only
    assert [len(v) for v in (value(clean_graph, "MATCH (:A)-[r*1..1]->() RETURN r"),
                             value(clean_graph, "MATCH (:A)-[r*..1]->() RETURN r"))] == [1, 1]


# -- datetime() is zoned ----------------------------------------------------------------------

def test_datetime_comes_back_zoned_in_utc_and_localdatetime_local(driver):
    records, _, _ = driver.execute_query(
        "RETURN datetime({year: 1984, month: 10, day: 11, hour: 12}) AS zoned, datetime() AS now, "
        "localdatetime('2015-07-21T21:40:32') AS local, null AS sent")
    zoned, now, local, sent = records[0]
    assert zoned == neo4j.time.DateTime(1984, 10, 11, 12, tzinfo=dt.timezone.utc)
    assert abs(now.to_native() - dt.datetime.now(dt.timezone.utc)) < dt.timedelta(minutes=1)
    assert local.tzinfo is None and sent is None
    at = dt.datetime(2024, 5, 6, 7, 8, 9, tzinfo=dt.timezone.utc)
    records, _, _ = driver.execute_query("RETURN $at AS at, $naive AS naive",
                                         {"at": at, "naive": at.replace(tzinfo=None)})
    assert records[0]["at"].to_native() == at and records[0]["naive"].tzinfo is None
    assert value(driver, "WITH datetime() AS now WITH now RETURN now").tzinfo is not None


# -- durations --------------------------------------------------------------------------------

@pytest.mark.parametrize("query, expected", [
    ("RETURN duration('P5M1.5D')", neo4j.time.Duration(months=5, days=1, seconds=43200)),
    ("RETURN duration('PT0.75M')", neo4j.time.Duration(seconds=45)),
    ("RETURN duration('P2.5W')", neo4j.time.Duration(days=17, seconds=43200)),
    ("RETURN duration({days: 1.5})", neo4j.time.Duration(days=1, seconds=43200)),
    ("RETURN date('2024-01-31') + duration({days: 1})", neo4j.time.Date(2024, 2, 1)),
])
def test_durations_are_computed_as_neo4j_computes_them(driver, query, expected):
    assert value(driver, query) == expected


@pytest.mark.parametrize("query, params, fragment", [
    ("CREATE (:Sub {d: duration('P0.75M')})", {}, "fraction of a second"),            # P22DT19H51M49.5S
    ("CREATE (:Sub {d: duration({days: 40})})", {}, "P40D as P1M9D"),
    ("CREATE (:Sub {d: duration({hours: 50})})", {}, "P40D as P1M9D"),
    ("MATCH (n) RETURN date('2024-01-31') + duration({months: 1})", {}, "adds months"),
    ("MATCH (n) RETURN date('2024-01-31') + $d", {"d": neo4j.time.Duration(months=1)}, "adds months"),
])
def test_durations_falkordb_would_change_are_refused(driver, query, params, fragment):
    with pytest.raises(ClientError) as info:
        driver.execute_query(query, params)
    assert info.value.code == "Neo.ClientError.Statement.UnsupportedOperationError"
    assert fragment in info.value.message


# -- epoch values and day counts (recency ranking) ---------------------------------------------

@FEW
@given(MOMENTS, DAYS)
def test_epoch_values_and_day_counts_agree_with_python(driver, moment, day):
    records, _, _ = driver.execute_query(
        "RETURN $m.epochSeconds AS s, $m.epochMillis AS ms, $d.epochSeconds AS ds, "
        "duration.inDays($m, $d).days AS days, duration.inSeconds($d, $m).seconds AS secs",
        {"m": moment, "d": day})
    epoch = dt.datetime(1970, 1, 1)
    seconds = (moment - epoch) // dt.timedelta(seconds=1)
    day_seconds = (dt.datetime.combine(day, dt.time()) - epoch) // dt.timedelta(seconds=1)
    between = day_seconds - seconds
    assert tuple(records[0]) == (seconds, seconds * 1000, day_seconds, int(between / 86400), -between)


@FEW
@given(DAYS)
def test_day_of_quarter_agrees_with_python(driver, day):
    start = dt.date(day.year, 3 * ((day.month - 1) // 3) + 1, 1)
    assert value(driver, "RETURN $d.dayOfQuarter", d=day) == (day - start).days + 1


def test_recency_ranking_from_stored_date_times(clean_graph):
    """The attention-score shape of issue 29: days since a stored update, ranked."""
    today = dt.datetime.now(dt.timezone.utc).date()          # date() is UTC on the embedded database
    updated = {"old": dt.datetime(2001, 5, 6, 7, 8, 9), "new": dt.datetime.combine(today, dt.time(1))}
    clean_graph.execute_query("UNWIND keys($u) AS k CREATE (:Note {k: k, updatedAt: $u[k]})", {"u": updated})
    records, _, _ = clean_graph.execute_query(
        "MATCH (n:Note) RETURN n.k AS k, duration.inDays(n.updatedAt, date()).days AS age ORDER BY age")
    assert [(r["k"], r["age"]) for r in records] == [
        ("new", 0), ("old", int((dt.datetime.combine(today, dt.time()) - updated["old"]).total_seconds() / 86400))]
    with pytest.raises(ClientError, match=r"\.days for the number of days"):
        clean_graph.execute_query("MATCH (n:Note) RETURN duration.inDays(n.updatedAt, date()) AS d")


@pytest.mark.parametrize("pattern, expected", [
    ("(a)-[r:REL*2..2]->(:End)", [1, 2]), ("(:A)-[r:REL*2..2]->()", [1, 2]),     # FalkorDB: [2, 1], [1, 2]
    ("(:End)<-[r:REL*2..2]-()", [2, 1]), ("()-[r:REL*2..2]-(:End)", [1, 2]), ("(:End)-[r:REL*2..2]-()", [2, 1]),
])
def test_relationships_are_listed_from_the_patterns_left_node(clean_graph, pattern, expected):
    clean_graph.execute_query("CREATE (:A)-[:REL {num: 1}]->(:B)-[:REL {num: 2}]->(:End)")
    assert value(clean_graph, f"MATCH {pattern} RETURN [x IN r | x.num]") == expected


# -- toString() of floats ---------------------------------------------------------------------

def java_text(x: float) -> str | None:
    """Java's Double.toString for the floats the proxy writes itself, None for those it refuses."""
    if x != x:
        return "NaN"
    if x in (float("inf"), float("-inf")):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return repr(x)
    text = repr(x)
    if not 0.001 <= abs(x) < 1e7 or "e" in text or len(text.partition(".")[2]) > 6:
        return None
    return text


@FEW
@given(st.one_of(st.floats(), st.integers(-10**6, 10**6).map(lambda n: n / 1000), st.sampled_from([2.3, 0.1, 1e7])))
def test_tostring_of_a_float_is_javas_or_refused(driver, x):
    expected = java_text(x)
    if expected is None:
        with pytest.raises(ClientError, match="cannot write as Neo4j does"):
            driver.execute_query("RETURN toString($x)", {"x": x})
    else:
        assert value(driver, "RETURN toString($x)", x=x) == expected


def test_tostring_of_other_values_is_unchanged(driver):
    assert value(driver, "RETURN [v IN [1, 2.3, true, 'apa', null] | toString(v)]") == ["1", "2.3", "true", "apa", None]


def test_nulls_sort_last_under_order_by_with_limit(driver):
    """A null rank key put nulls first in FalkorDB under ORDER BY ... LIMIT."""
    records, _, _ = driver.execute_query(
        "WITH [null, 1.0, 0.5] AS l UNWIND range(0, 2) AS i RETURN i, l[i] AS d ORDER BY d + 0 LIMIT 2")
    assert [r["d"] for r in records] == [0.5, 1.0]
