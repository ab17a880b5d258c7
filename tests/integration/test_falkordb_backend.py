"""The FalkorDB backend against a real embedded server (started per module in a temp dir)."""

import asyncio
import datetime as dt
import math
import os
import signal

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from neo4j.spatial import CartesianPoint
from neo4j.time import Date, DateTime, Duration, Time

from core.backend import TxConfig
from proxy.backends.falkordb.backend import FalkorDBBackend
from proxy.backends.falkordb.server import EmbeddedFalkorDB
from core.errors import CypherError
from core.values import Node, Path, Relationship, WGS84Point

AUTO = TxConfig()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture(scope="module")
async def backend(embedded):
    return embedded


@pytest.fixture
async def clean(backend):
    await rows(backend, "MATCH (n) DETACH DELETE n")
    return backend


async def rows(backend, query, params=None, config=AUTO):
    result = await backend.run(query, params or {}, config, None)
    return await result.fetch(-1)


async def test_fetch_in_batches_then_summary(clean):
    result = await clean.run("UNWIND range(1, 25) AS i RETURN i, i * 2 AS d", {}, AUTO, None)
    assert result.keys == ["i", "d"]
    first, second = await result.fetch(10), await result.fetch(10)
    assert first[0] == [1, 2] and second[0] == [11, 22]
    assert len(await result.fetch(10)) == 5 and await result.fetch(10) == []
    summary = await result.consume()
    assert summary.query_type == "r" and summary.database == "neo4j" and summary.bookmark.startswith("FB:")


async def test_results_stream_from_the_socket(clean):
    """A large result is read from FalkorDB's reply as it is fetched, not held whole."""
    total = 3_000_000
    result = await clean.run("UNWIND range(1, $n) AS i RETURN i", {"n": total}, AUTO, None)
    first = await result.fetch(1000)
    assert [r[0] for r in first] == list(range(1, 1001))
    assert result._stream.remaining == total - 1000          # the rest is still in the socket
    await result.consume()                                   # read-only: the rest is dropped
    assert await rows(clean, "RETURN 1") == [[1]]            # and the backend goes on


async def test_abandoned_write_result_still_counts(clean):
    result = await clean.run("UNWIND range(1, 20000) AS i CREATE (:S {i: i}) RETURN i", {}, AUTO, None)
    assert len(await result.fetch(10)) == 10
    summary = await result.consume()                         # writes are read to the end
    assert summary.stats["nodes-created"] == 20000 and summary.query_type == "rw"
    assert await rows(clean, "MATCH (s:S) RETURN count(s)") == [[20000]]


async def test_cancelled_fetch_does_not_poison_the_connection(clean):
    result = await clean.run("UNWIND range(1, 2000000) AS i RETURN i", {}, AUTO, None)
    task = asyncio.ensure_future(result.fetch(-1))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await result.consume()
    for _ in range(20):                                      # more than the idle connections
        assert await rows(clean, "RETURN 'ok'") == [["ok"]]


async def test_write_stats_and_query_types(clean):
    result = await clean.run("CREATE (a:P {name: 'x'})-[:K]->(b:P) RETURN a", {}, AUTO, None)
    await result.fetch(-1)
    summary = await result.consume()
    assert summary.query_type == "rw"
    assert summary.stats == {"nodes-created": 2, "relationships-created": 1, "properties-set": 1,
                             "labels-added": 1}
    write_only = await clean.run("MATCH (n:P) SET n.v = 1", {}, AUTO, None)
    assert (await write_only.consume()).query_type == "w"
    index = await clean.run("CREATE INDEX FOR (n:P) ON (n.name)", {}, AUTO, None)
    assert (await index.consume()).query_type == "s"


async def test_all_value_types(clean):
    await rows(clean, "CREATE (a:A:B {x: 1, s: 'é'})-[r:R {w: 2.5}]->(b:C)")
    [[node, rel, path]] = await rows(clean, "MATCH p=(a)-[r]->() RETURN a, r, p")
    assert isinstance(node, Node) and node.labels == ["A", "B"] and node.properties == {"x": 1, "s": "é"}
    assert node.element_id == str(node.id)
    assert isinstance(rel, Relationship) and rel.type == "R" and rel.properties == {"w": 2.5}
    assert (rel.start_element_id, rel.end_element_id) == (str(rel.start_id), str(rel.end_id))
    assert rel.start_id == node.id and isinstance(path, Path) and path.relationships[0].id == rel.id
    [values] = await rows(clean, "RETURN date('2020-01-02'), localdatetime('2020-01-02T03:04:05'), "
                                 "localtime('12:34:56'), duration('P1DT2S'), "
                                 "point({latitude: 1.5, longitude: 2.5}), [1, {k: [null, true]}], "
                                 "0.1 + 0.2, 9223372036854775807, 1/3.0")
    date, local, tm, dur, point, nested, tenths, big, third = values
    assert date == Date(2020, 1, 2) and tm == Time(12, 34, 56) and dur == Duration(days=1, seconds=2)
    assert local == DateTime(2020, 1, 2, 3, 4, 5) and local.tzinfo is None
    assert isinstance(point, WGS84Point) and (point.longitude, point.latitude) == (2.5, 1.5)
    assert nested == [1, {"k": [None, True]}] and big == 2 ** 63 - 1
    assert tenths == 0.3 and third == 0.333333333333333          # FalkorDB sends %.15g


async def test_big_and_unicode_strings(clean):
    big = "ü😀'\\\n" * 200_000                                     # 1 MB of awkward characters
    [[back, size]] = await rows(clean, "RETURN $s, size($s)", {"s": big})
    assert back == big and size == len(big)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2 ** 63, 2 ** 63 - 1)
    | st.floats(allow_nan=False, min_value=-1e308, max_value=1e308)   # %.15g of 1.797e308 overflows to inf
    | st.sampled_from([float("inf"), float("-inf")]) | st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",))),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(st.characters(blacklist_characters="`\x00", blacklist_categories=("Cs",)), max_size=6), inner, max_size=4),
    max_leaves=12)


def _same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return a == b or math.isclose(a, b, rel_tol=1e-14) or (a == 0 and abs(b) < 1e-300)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b and type(a) is type(b)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=json_values)
async def test_any_json_value_round_trips(backend, value):
    """Floats are compared to 15 significant digits: FalkorDB formats them with %.15g."""
    [[back]] = await rows(backend, "RETURN $p", {"p": value})
    assert _same(value, back), (value, back)


DAY = Date(2024, 1, 1)


@pytest.mark.parametrize("value, expected", [
    (DAY, DAY), (dt.date(1, 1, 1), Date(1, 1, 1)), (dt.date(9999, 12, 31), Date(9999, 12, 31)),
    (DateTime(2024, 2, 3, 4, 5, 6), DateTime(2024, 2, 3, 4, 5, 6)),
    (dt.datetime(1900, 2, 3, 4, 5, 6), DateTime(1900, 2, 3, 4, 5, 6)),      # whole seconds only
    (Time(4, 5, 6), Time(4, 5, 6)), (dt.time(23, 59, 59), Time(23, 59, 59)),
    (Duration(days=1, seconds=2), Duration(days=1, seconds=2)),
    (dt.timedelta(days=-365), Duration(days=-365)),
    (Duration(months=14, days=3, seconds=14706), Duration(months=14, days=3, seconds=14706)),
    (WGS84Point((2.5, 1.5)), WGS84Point((2.5, 1.5))),
    ([DAY, Date(2024, 1, 2), None], [DAY, Date(2024, 1, 2), None]),
    ({"at": DAY, "n": 1, "odd-key": [DAY]}, {"at": DAY, "n": 1, "odd-key": [DAY]}),
    ([float("inf"), 5e-324, "it's", DAY], [float("inf"), 5e-324, "it's", DAY]),
])
async def test_expression_parameters(backend, value, expected):
    result = await backend.run("RETURN $d", {"d": value}, AUTO, None)
    assert result.keys == ["$d"]
    assert await result.fetch(-1) == [[expected]]


async def test_nan_and_point_precision(backend):
    [[nan, differs]] = await rows(backend, "RETURN $x, $x <> $x", {"x": float("nan")})
    assert math.isnan(nan) and differs is True
    [[point]] = await rows(backend, "RETURN $p", {"p": WGS84Point((10.987654321, 59.123456789))})
    assert point.longitude != 10.987654321                       # FalkorDB stores float32 coordinates
    assert math.isclose(point.longitude, 10.987654321, rel_tol=1e-6)
    assert math.isclose(point.latitude, 59.123456789, rel_tol=1e-6)


async def test_tokens_in_strings_and_comments_stay_text(backend):
    result = await backend.run("RETURN '$d' AS s, $d.year /* $d */ // $d", {"d": DAY}, AUTO, None)
    assert result.keys == ["s", "$d.year /* $d */ // $d"]
    assert await result.fetch(-1) == [["$d", 2024]]
    assert await rows(backend, "RETURN $0, $`odd name`", {"0": DAY, "odd name": 1}) == [[DAY, 1]]


async def test_store_and_unwind_expression_parameters(clean):
    when = DateTime(2024, 5, 6, 7, 8, 9)
    [[at]] = await rows(clean, "CREATE (n:E {at: $when}) RETURN n.at", {"when": when})
    assert at == when
    assert await rows(clean, "MATCH (n:E) WHERE n.at = $when RETURN count(n)", {"when": when}) == [[1]]
    data = [{"i": i, "on": Date(2024, 1, 1 + i), "every": Duration(days=i)} for i in range(3)]
    await rows(clean, "UNWIND $rows AS r CREATE (:Row {i: r.i, on: r.on, every: r.every})", {"rows": data})
    back = await rows(clean, "MATCH (r:Row) RETURN r.i, r.on, r.every ORDER BY r.i")
    assert back == [[r["i"], r["on"], r["every"]] for r in data]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(day=st.dates(), moment=st.datetimes().map(lambda m: m.replace(microsecond=0)))
@example(day=dt.date(2000, 1, 1), moment=dt.datetime(1969, 12, 31, 23, 59, 59))   # FalkorDB's mktime -1
async def test_any_date_and_local_datetime_round_trips(backend, day, moment):
    """FalkorDB keeps local date-times to the second (a fraction is refused, never cut)."""
    [[back_day, back_moment, same]] = await rows(backend, "RETURN $d, $t, $t = $same",
                                                 {"d": day, "t": moment, "same": DateTime.from_native(moment)})
    assert back_day == Date.from_native(day)
    assert back_moment == DateTime.from_native(moment) and same is True


@pytest.mark.parametrize("query, params, code", [
    ("RETURN 1 +", {}, "Neo.ClientError.Statement.SyntaxError"),
    ("RETURN elementId(1)", {}, "Neo.ClientError.Statement.SyntaxError"),
    ("RETURN x", {}, "Neo.ClientError.Statement.SyntaxError"),
    ("RETURN $missing", {}, "Neo.ClientError.Statement.ParameterMissing"),
    ("RETURN 'a' * 2", {}, "Neo.ClientError.Statement.TypeError"),
    ("RETURN $d", {"d": DateTime(2020, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=2)))},
     "Neo.ClientError.Statement.TypeError"),
    ("RETURN $d", {"d": dt.datetime(2020, 1, 1, 0, 0, 0, 5)}, "Neo.ClientError.Statement.TypeError"),
    ("RETURN $p", {"p": CartesianPoint((1.0, 2.0))}, "Neo.ClientError.Statement.TypeError"),
    ("RETURN $b", {"b": b"bytes"}, "Neo.ClientError.Statement.TypeError"),
    ("RETURN $s", {"s": "\ud800"}, "Neo.ClientError.Statement.TypeError"),
    ("RETURN " + "[" * 20 + "1" + "]" * 20, {}, "Neo.ClientError.Statement.SyntaxError"),
    ("UNWIND range(1, 100000000) AS x RETURN count(x)", {}, "Neo.ClientError.Statement.ArgumentError"),
])
async def test_errors_are_neo4j_codes(backend, query, params, code):
    with pytest.raises(CypherError) as info:
        await backend.run(query, params, AUTO, None)
    assert info.value.code == code


async def test_timeout_and_read_mode(backend):
    slow = "UNWIND range(1, 5000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x)"
    with pytest.raises(CypherError) as info:
        await backend.run(slow, {}, TxConfig(timeout=0.001), None)
    assert info.value.code == "Neo.ClientError.Transaction.TransactionTimedOut"
    with pytest.raises(CypherError) as info:
        await backend.run("CREATE ()", {}, TxConfig(mode="r"), None)
    assert info.value.code == "Neo.ClientError.Statement.AccessMode"


async def test_explain_does_not_execute(clean):
    result = await clean.run("  // check\n explain CREATE (n:Never) RETURN n", {}, AUTO, None)
    assert await result.fetch(-1) == []
    summary = await result.consume()
    assert summary.query_type == "rw" and summary.plan["operatorType"] == "Results"
    assert await rows(clean, "MATCH (n:Never) RETURN count(n)") == [[0]]
    profile = await (await clean.run("PROFILE MATCH (n) RETURN n", {}, AUTO, None)).consume()
    assert profile.profile["operatorType"] == "Results" and "rows" in profile.profile


async def test_databases_and_auth(backend):
    assert (await backend.databases(None))[0] == "neo4j"
    assert await rows(backend, "RETURN 1", config=TxConfig(database="neo4j")) == [[1]]
    with pytest.raises(CypherError) as info:
        await backend.run("RETURN 1", {}, TxConfig(database="nope"), None)
    assert info.value.code == "Neo.ClientError.Database.DatabaseNotFound"
    assert info.value.message == "Database does not exist. Database name: 'nope'."
    assert await backend.authenticate({"scheme": "basic", "principal": "neo4j", "credentials": "password"})
    for bad in ({"scheme": "basic", "principal": "neo4j", "credentials": "x"}, {"scheme": "none"}):
        with pytest.raises(CypherError) as info:
            await backend.authenticate(bad)
        assert info.value.code == "Neo.ClientError.Security.Unauthorized"


async def test_commit_keeps_and_statements_see_earlier_writes(clean):
    tx = await clean.begin(AUTO, None)
    await (await tx.run("CREATE (:T {v: 1})", {})).consume()
    assert await (await tx.run("MATCH (n:T) RETURN n.v", {})).fetch(-1) == [[1]]
    assert (await tx.commit()).startswith("FB:")
    assert await rows(clean, "MATCH (n:T) RETURN n.v") == [[1]]


async def test_rollback_restores_the_graph(clean):
    await rows(clean, "CREATE (:Keep {v: 1})-[:R]->(:Keep {v: 2})")
    tx = await clean.begin(AUTO, None)
    await (await tx.run("MATCH (n:Keep {v: 1}) SET n.v = 10 CREATE (:Gone:NewLabel {p: 1})", {})).consume()
    await (await tx.run("MATCH (n:Keep {v: 2}) DETACH DELETE n", {})).consume()
    await tx.rollback()
    assert await rows(clean, "MATCH (n) RETURN labels(n), n.v ORDER BY n.v") == [[["Keep"], 1], [["Keep"], 2]]
    assert await rows(clean, "MATCH ()-[r:R]->() RETURN count(r)") == [[1]]
    [[node]] = await rows(clean, "CREATE (n:Later {q: 1}) RETURN n")         # schema cache was reset
    assert node.labels == ["Later"] and node.properties == {"q": 1}


async def test_auto_commit_write_waits_for_the_transaction(clean):
    tx = await clean.begin(AUTO, None)
    await (await tx.run("CREATE (:InTx)", {})).consume()
    writer = asyncio.create_task(rows(clean, "CREATE (:Outside)"))
    assert await rows(clean, "MATCH (n:InTx) RETURN count(n)") == [[0]]   # reads never wait, see committed
    await asyncio.sleep(0.2)
    assert not writer.done()
    await tx.rollback()
    await writer
    assert await rows(clean, "MATCH (n) RETURN labels(n)") == [[["Outside"]]]


async def test_transaction_timeout_rolls_back_and_frees_the_lock(clean):
    tx = await clean.begin(TxConfig(timeout=1.5), None)   # room for a re-sync after an earlier rollback
    await (await tx.run("CREATE (:Late)", {})).consume()
    await rows(clean, "CREATE (:Other)")              # waits for the watchdog rollback, not forever
    with pytest.raises(CypherError) as info:
        await tx.run("RETURN 1", {})
    assert info.value.code == "Neo.ClientError.Transaction.TransactionTimedOut"
    assert await rows(clean, "MATCH (n) RETURN labels(n)") == [[["Other"]]]


async def test_persistence_across_restart_and_kill(tmp_path):
    backend = FalkorDBBackend(tmp_path, persistent=True)
    await backend.start()
    try:
        await rows(backend, "UNWIND range(1, 500) AS i CREATE (:Saved {i: i})")
        tx = await backend.begin(AUTO, None)
        await (await tx.run("CREATE (:Uncommitted)", {})).consume()
        await asyncio.sleep(1.2)                      # appendfsync everysec
        os.kill(backend.pair.primary.pid, signal.SIGKILL)   # crash with a transaction open
        await asyncio.sleep(0.2)
    finally:
        await backend.stop()
    restarted = FalkorDBBackend(tmp_path, persistent=True)
    await restarted.start()
    try:
        assert await rows(restarted, "MATCH (n:Saved) RETURN count(n)") == [[500]]
        assert await rows(restarted, "MATCH (n:Uncommitted) RETURN count(n)") == [[0]]
        assert await restarted.databases(None) == ["neo4j"]
    finally:
        await restarted.stop()


async def test_long_data_dir_gets_a_short_socket_and_no_orphan(tmp_path):
    data = tmp_path / ("d" * 120)
    server = EmbeddedFalkorDB(data, password="p", persistent=False)
    await server.start()
    pid = server.pid
    assert len(str(server.socket_path)) < 100 and (data / "falkordb.log").exists()
    await server.stop()
    assert not _alive(pid) and not server.socket_path.parent.exists()


async def test_rollback_of_a_transaction_that_changed_nothing_keeps_the_primary(clean):
    await rows(clean, "CREATE (:Once {k: 1})")
    primary = clean.pair.primary.name
    tx = await clean.begin(AUTO, None)
    await (await tx.run("MERGE (n:Once {k: 1}) RETURN n.k", {})).consume()      # matches: no change
    await tx.rollback()
    assert clean.pair.primary.name == primary                                   # released, not promoted
    tx = await clean.begin(AUTO, None)
    await (await tx.run("MERGE (n:Once {k: 2})", {})).consume()                 # creates
    await tx.rollback()
    assert clean.pair.primary.name != primary                                   # the replica took over
    assert await rows(clean, "MATCH (n:Once) RETURN n.k") == [[1]]


async def test_a_write_waits_for_a_restarting_replica(clean):
    """After an abort the old primary restarts and re-syncs as the replica. A write sent
    meanwhile could not be undone at its timeout (the replica cannot sync while the write holds
    the primary: the long fuzz's `MATCH () CREATE () WITH * MATCH () CREATE ()` then ran 20 s,
    committed); now it waits until the replica is in sync."""
    await rows(clean, "CREATE (:Before)")
    client = clean.pair.replica.client()
    try:                                             # an abort promotes a replica in sync only
        for _ in range(1000):
            if (await client.execute_command("GRAPH.RO_QUERY", "neo4j", "MATCH (n:Before) RETURN count(n)"))[1] == [[1]]:
                break
            await asyncio.sleep(0.01)
    finally:
        await client.aclose()
    old = clean.pair.primary.name
    await clean.pair.promote()                       # what an abort (and a rollback) does
    await rows(clean, "CREATE (:After)")
    client = clean.pair.replica.client()
    try:
        replication = await client.info("replication")
    finally:
        await client.aclose()
    assert clean.pair.replica.name == old and replication.get("master_link_status") == "up"
    assert await rows(clean, "MATCH (n) RETURN labels(n)[0] AS l ORDER BY l") == [["After"], ["Before"]]
