"""Date-times with a fraction of a second (`datetime.now(timezone.utc)`) stored, read back,
compared, ordered and counted in days exactly, through the driver, against Python's own datetime
arithmetic (extensions/temporal/fraction.py, extensions/bridges/fractions.py)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neo4j.exceptions import ClientError
from neo4j.time import DateTime

FEW = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
UTC = dt.timezone.utc
EPOCH = dt.datetime(1970, 1, 1, tzinfo=UTC)
MOMENTS = st.datetimes(min_value=dt.datetime(1, 1, 2), max_value=dt.datetime(9999, 12, 30)).map(
    lambda m: m.replace(tzinfo=UTC))
NEAR = st.datetimes(min_value=dt.datetime(2023, 12, 30), max_value=dt.datetime(2024, 1, 3)).map(
    lambda m: m.replace(tzinfo=UTC))


def micros(delta: dt.timedelta) -> int:
    return delta // dt.timedelta(microseconds=1)


def rows(driver, query, **params):
    records, _, _ = driver.execute_query(query, params)
    return [list(record.values()) for record in records]


def store(driver, moments):
    """Each moment written as agents write it (`SET n.updatedAt = $now`); one more whole-second
    value written by `datetime(...)`, stored as FalkorDB's own date-time in the same key."""
    driver.execute_query("MATCH (n:Fine) DETACH DELETE n")
    for i, moment in enumerate(moments):
        driver.execute_query("MERGE (n:Fine {id: $id}) SET n.updatedAt = $now", {"id": i, "now": moment})
    driver.execute_query("CREATE (:Fine {id: -1, updatedAt: datetime('2024-01-01T00:00:00Z')})")
    return {**dict(enumerate(moments)), -1: dt.datetime(2024, 1, 1, tzinfo=UTC)}


@FEW
@given(moments=st.lists(st.one_of(NEAR, MOMENTS), min_size=1, max_size=5), since=st.one_of(NEAR, MOMENTS),
       today=st.dates(min_value=dt.date(1, 1, 2), max_value=dt.date(9999, 12, 30)))
def test_stored_fractions_read_compare_order_and_count_as_python_does(clean_graph, moments, since, today):
    at = store(clean_graph, moments)
    read = dict(rows(clean_graph, "MATCH (n:Fine) RETURN n.id, n.updatedAt"))
    assert {i: value.to_native() for i, value in read.items()} == at
    assert all(isinstance(value, DateTime) and value.tzinfo is not None for value in read.values())

    newer = rows(clean_graph, "MATCH (n:Fine) WHERE n.updatedAt > $since RETURN n.id", since=since)
    assert sorted(i for [i] in newer) == sorted(i for i, m in at.items() if m > since)
    ordered = rows(clean_graph, "MATCH (n:Fine) RETURN n.id ORDER BY n.updatedAt DESC, n.id")
    assert [i for [i] in ordered] == sorted(at, key=lambda i: (-micros(at[i] - EPOCH), i))
    [[low, high]] = rows(clean_graph, "MATCH (n:Fine) RETURN min(n.updatedAt), max(n.updatedAt)")
    assert (low.to_native(), high.to_native()) == (min(at.values()), max(at.values()))

    midnight = dt.datetime.combine(today, dt.time(), UTC)
    counted = rows(clean_graph, "MATCH (n:Fine) RETURN n.id, n.updatedAt.epochMillis, n.updatedAt.epochSeconds, "
                   "duration.inDays(n.updatedAt, $today).days, duration.inSeconds($since, n.updatedAt).seconds",
                   today=today, since=since)
    for i, millis, seconds, days, between in counted:
        moment = at[i]
        assert millis == micros(moment - EPOCH) // 1000 and seconds == micros(moment - EPOCH) // 1_000_000
        assert days == int(micros(midnight - moment) / 86_400_000_000)        # toward zero
        assert between == micros(moment - since) // 1_000_000                  # floored


def test_the_agent_idiom_round_trips_with_its_microseconds(clean_graph):
    now = dt.datetime.now(UTC)
    clean_graph.execute_query("MERGE (m:Memory {id: 'm1'}) SET m.updatedAt = $now", {"now": now})
    [[node, at]] = rows(clean_graph, "MATCH (m:Memory) RETURN m, m.updatedAt")
    assert at.to_native() == now and node["updatedAt"].to_native() == now
    # a relationship, a naive (local) value and a parameter returned as it is
    clean_graph.execute_query("MATCH (m:Memory) CREATE (m)-[:SEEN {at: $now, local: $local}]->(m)",
                              {"now": now, "local": now.replace(tzinfo=None)})
    [[rel, local]] = rows(clean_graph, "MATCH ()-[r:SEEN]->() RETURN r, r.local")
    assert rel["at"].to_native() == now and local.to_native() == now.replace(tzinfo=None)
    assert rows(clean_graph, "RETURN $now AS now", now=now)[0][0].to_native() == now
    # recency relative to the database's clock, and WITH aliases
    week = rows(clean_graph, "MATCH (m:Memory) WITH m.updatedAt AS t WHERE t > datetime() - duration('P7D') "
                "RETURN count(*)")
    assert week == [[1]]
    # a chain, DISTINCT with ORDER BY on the column, an equality in a pattern
    around = {"a": now - dt.timedelta(microseconds=1), "b": now + dt.timedelta(microseconds=1), "now": now}
    assert rows(clean_graph, "MATCH (m:Memory) WHERE $a < m.updatedAt < $b RETURN count(*)", **around) == [[1]]
    assert rows(clean_graph, "MATCH (m:Memory) WHERE $b < m.updatedAt < $now RETURN count(*)", **around) == [[0]]
    records, _, _ = clean_graph.execute_query("MATCH (m:Memory) RETURN DISTINCT m.updatedAt ORDER BY m.updatedAt")
    assert records[0].keys() == ["m.updatedAt"] and records[0][0].to_native() == now
    assert rows(clean_graph, "MATCH (m:Memory {updatedAt: $now}) RETURN count(*)", now=now) == [[1]]
    assert rows(clean_graph, "MATCH (m:Memory) RETURN count(DISTINCT m.updatedAt)") == [[1]]


@pytest.mark.parametrize("query, params", [
    ("MATCH (m:Memory) RETURN toString(m.updatedAt) + '!'", {}),
    ("MATCH (m:Memory) WHERE toString(m.updatedAt) > '2023' RETURN m", {}),
    ("MATCH (m:Memory) RETURN m.updatedAt + duration('PT1S')", {}),
    ("MATCH (m:Memory) RETURN m.updatedAt.hour", {}),
    ("MATCH (m:Memory) WHERE m.updatedAt < localdatetime() RETURN m", {}),
    ("MATCH (m:Memory) WHERE m.updatedAt > 5 RETURN m", {}),
    ("MATCH (m:Memory) RETURN [m.updatedAt, 1]", {}),
    ("MATCH (m:Memory) RETURN coalesce(m.updatedAt, 0)", {}),
    ("MATCH (m:Memory) SET m.updatedAt = 5", {}),
    ("MATCH (m:Memory) SET m += $props", {"props": {"updatedAt": 7}}),
    ("RETURN {at: $now}", {"now": dt.datetime(2024, 1, 1, 0, 0, 0, 5, tzinfo=UTC)}),
])
def test_uses_the_proxy_cannot_answer_exactly_are_refused(clean_graph, query, params):
    clean_graph.execute_query("CREATE (:Memory {updatedAt: $now})",
                              {"now": dt.datetime(2024, 1, 1, 0, 0, 0, 5, tzinfo=UTC)})
    with pytest.raises(ClientError) as info:
        clean_graph.execute_query(query, params)
    assert info.value.code == "Neo.ClientError.Statement.UnsupportedOperationError"
    assert rows(clean_graph, "MATCH (m:Memory) RETURN m.updatedAt")[0][0].to_native() == \
        dt.datetime(2024, 1, 1, 0, 0, 0, 5, tzinfo=UTC)


def test_a_subquery_or_union_returning_one_is_refused(clean_graph):
    """Their columns cannot be tied to a key, so the integers would come back as numbers."""
    clean_graph.execute_query("CREATE (:Memory {updatedAt: $now})", {"now": dt.datetime.now(UTC)})
    for query in ("CALL { MATCH (m:Memory) RETURN m.updatedAt AS t } RETURN t",
                  "MATCH (m:Memory) RETURN m.updatedAt AS t UNION RETURN null AS t"):
        with pytest.raises(ClientError, match="final RETURN"):
            clean_graph.execute_query(query)


def test_a_value_written_just_now_is_not_in_the_future(clean_graph):
    """FalkorDB's clock reads whole seconds; compared with a stored fraction, `datetime()` and
    what is computed from it are read to the microsecond, as Neo4j's statement clock is."""
    for _ in range(3):
        now = dt.datetime.now(UTC)
        clean_graph.execute_query("MERGE (m:Memory {id: 1}) SET m.updatedAt = $now", {"now": now})
        [[past, seconds, days, week]] = rows(
            clean_graph, "MATCH (m:Memory {id: 1}) RETURN m.updatedAt <= datetime(), "
            "duration.inSeconds(m.updatedAt, datetime()).seconds, duration.inDays(m.updatedAt, date()).days, "
            "m.updatedAt > datetime() - duration('P7D')")
        assert (past, seconds, days, week) == (True, 0, 0, True)


def test_describe_lists_the_key_as_a_date_time(clean_graph):
    first, last = dt.datetime(2024, 1, 1, 0, 0, 0, 5, tzinfo=UTC), dt.datetime(2024, 1, 2, 0, 0, 0, 7, tzinfo=UTC)
    clean_graph.execute_query("UNWIND $at AS at CREATE (:Memory {updatedAt: at}) CREATE (:Other)", {"at": [first, last]})
    [[text]] = rows(clean_graph, "CALL describe({types: ['Memory']})")
    line = next(line for line in text.splitlines() if "updatedAt" in line)
    assert line.split() == ["updatedAt", "(datetime):", "2024-01-01T00:00:00.000005000+00:00..2024-01-02T00:00:00.000007000+00:00"]


def test_a_key_holding_integers_does_not_take_a_fraction(clean_graph):
    """Epoch milliseconds an application stored before would read back as date-times."""
    clean_graph.execute_query("CREATE (:Memory {updatedAt: 1714557600123})")
    with pytest.raises(ClientError, match="holds integers"):
        clean_graph.execute_query("CREATE (:Memory {updatedAt: $now})", {"now": dt.datetime.now(UTC)})
    assert rows(clean_graph, "MATCH (m:Memory) RETURN m.updatedAt") == [[1714557600123]]


def test_the_clock_written_to_such_a_key_keeps_its_fraction(clean_graph):
    """Once a key holds fractions, `SET n.at = datetime()` reads the clock to the microsecond:
    a value written after a parameter taken before it is after it, as in Neo4j."""
    clean_graph.execute_query("CREATE (:Memory {id: 1, updatedAt: $now})", {"now": dt.datetime.now(UTC)})
    for clock in ("datetime()", "datetime() - duration('PT0S')", "datetime.statement()"):
        before = dt.datetime.now(UTC)
        clean_graph.execute_query(f"MATCH (m:Memory {{id: 1}}) SET m.updatedAt = {clock}")
        after = dt.datetime.now(UTC)
        [[at, later]] = rows(clean_graph, "MATCH (m:Memory {id: 1}) RETURN m.updatedAt, m.updatedAt >= $before",
                             before=before)
        assert before <= at.to_native() <= after and later is True


def test_maps_of_properties_read_back_by_key(clean_graph):
    now = dt.datetime.now(UTC)
    clean_graph.execute_query("CREATE (:Memory {updatedAt: $now, n: 7})", {"now": now})
    for query in ("MATCH (m:Memory) RETURN collect(m {.*})[0]", "MATCH (m:Memory) WITH properties(m) AS p RETURN p",
                  "MATCH (m:Memory) RETURN head(collect(properties(m)))"):
        [[props]] = rows(clean_graph, query)
        assert props["updatedAt"].to_native() == now and props["n"] == 7
    with pytest.raises(ClientError, match="cannot type"):     # a map the proxy cannot tie to its keys
        clean_graph.execute_query("MATCH (m:Memory) RETURN {a: m {.*}}.a AS p")


def test_to_string_prints_it_as_neo4j_does(clean_graph):
    now = dt.datetime(2024, 5, 1, 10, 0, 0, 120000, tzinfo=UTC)
    clean_graph.execute_query("CREATE (:Memory {id: 1, updatedAt: $now, local: $local})",
                              {"now": now, "local": now.replace(tzinfo=None)})
    clean_graph.execute_query("CREATE (:Memory {id: 2, updatedAt: datetime('2024-05-01T10:00:00Z')})")
    records, _, _ = clean_graph.execute_query(
        "MATCH (m:Memory) RETURN toString(m.updatedAt), toString(m.local) AS local ORDER BY m.id")
    assert records[0].keys() == ["toString(m.updatedAt)", "local"]
    assert [list(r.values()) for r in records] == [["2024-05-01T10:00:00.120Z", "2024-05-01T10:00:00.120"],
                                                    ["2024-05-01T10:00Z", None]]


def test_explain_plans_the_rewritten_query_without_parameters(clean_graph):
    """MCP servers run EXPLAIN first, with no parameter values."""
    clean_graph.execute_query("CREATE (:Memory {updatedAt: $now})", {"now": dt.datetime.now(UTC)})
    summary = clean_graph.execute_query("EXPLAIN MATCH (m:Memory) WHERE m.updatedAt > $since "
                                        "RETURN m ORDER BY m.updatedAt DESC").summary
    assert summary.query_type == "r"
    assert clean_graph.execute_query("EXPLAIN MATCH (m:Memory) SET m.updatedAt = $now").summary.query_type == "w"
