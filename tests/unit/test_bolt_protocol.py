"""The Bolt server state machine, byte by byte over real sockets (MemoryBackend behind it)."""

from __future__ import annotations

import asyncio

import pytest

from proxy.bolt.connection import BATCH
from tests.unit.test_bolt_support import BoltServer, RawClient, u16

HELLO, GOODBYE, RESET, RUN, BEGIN, COMMIT, ROLLBACK = 0x01, 0x02, 0x0F, 0x10, 0x11, 0x12, 0x13
DISCARD, PULL, TELEMETRY, ROUTE, LOGON, LOGOFF = 0x2F, 0x3F, 0x54, 0x66, 0x6A, 0x6B
SUCCESS, RECORD, IGNORED, FAILURE = 0x70, 0x71, 0x7E, 0x7F
RANGE = "UNWIND range(1, $n) AS i RETURN i"


@pytest.fixture
async def server():
    async with BoltServer() as srv:
        yield srv


async def connect(server, version=(5, 4)) -> RawClient:
    return await RawClient.connect(server.port, version)


def code(msg) -> str:
    meta = msg[1][0]
    return meta.get("code") or meta.get("neo4j_code")


async def test_auto_commit_run_pull(server):
    client = await connect(server)
    client.send(RUN, RANGE, {"n": 3}, {"db": "neo4j", "tx_timeout": 2500, "tx_metadata": {"a": 1},
                                        "mode": "r", "bookmarks": ["FB:1"]})
    client.send(PULL, {"n": -1})
    run = await client.recv()
    assert run[0] == SUCCESS and run[1][0]["fields"] == ["i"] and "qid" not in run[1][0]
    msgs = await client.recv_until_summary()
    assert [m[1] for m in msgs[:-1]] == [[[1]], [[2]], [[3]]]
    end = msgs[-1][1][0]
    assert end["bookmark"] == "FB:auto" and end["db"] == "neo4j" and end["type"] == "r"
    assert "stats" not in end and "statuses" not in end
    config = server.backend.configs[-1]
    assert (config.database, config.timeout, config.metadata, config.mode, config.bookmarks) == \
        ("neo4j", 2.5, {"a": 1}, "r", ("FB:1",))
    client.close()


async def test_pull_in_batches_reports_has_more(server):
    client = await connect(server)
    client.send(RUN, RANGE, {"n": 5}, {})
    client.send(PULL, {"n": 2})
    client.send(PULL, {"n": 3})
    assert (await client.recv())[0] == SUCCESS
    first = await client.recv_until_summary()
    assert len(first) == 3 and first[-1] == (SUCCESS, [{"has_more": True}])
    # exactly n left: the server must look ahead to know there is no more
    second = await client.recv_until_summary()
    assert [m[1][0] for m in second[:-1]] == [[3], [4], [5]]
    assert "has_more" not in second[-1][1][0] and second[-1][1][0]["bookmark"]
    client.close()


async def test_discard_some_then_all(server):
    client = await connect(server, (5, 6))
    client.send(RUN, RANGE, {"n": 5}, {})
    client.send(DISCARD, {"n": 2})
    client.send(DISCARD, {"n": -1})
    assert (await client.recv())[0] == SUCCESS
    assert await client.recv() == (SUCCESS, [{"has_more": True}])
    end = (await client.recv())[1][0]
    assert [s["gql_status"] for s in end["statuses"]] == ["00000"]
    client.close()


@pytest.mark.parametrize("query,params,status", [
    (RANGE, {"n": 0}, "02000"), ("CREATE (:Item {v: $v})", {"v": 1}, "00001"), (RANGE, {"n": 1}, "00000")])
async def test_statuses_from_5_6(server, query, params, status):
    client = await connect(server, (5, 6))
    client.send(RUN, query, params, {})
    client.send(PULL, {"n": -1})
    await client.recv()
    end = (await client.recv_until_summary())[-1][1][0]
    assert end["statuses"][0]["gql_status"] == status
    if query.startswith("CREATE"):
        assert end["stats"] == {"nodes-created": 1, "labels-added": 1, "properties-set": 1,
                                "contains-updates": True}
        assert end["type"] == "w"
    client.close()


async def test_explicit_transaction_with_two_open_results(server):
    client = await connect(server, (5, 8))
    client.send(BEGIN, {"db": "neo4j", "tx_timeout": 1000})
    client.send(RUN, RANGE, {"n": 3}, {})
    client.send(RUN, RANGE, {"n": 2}, {})
    client.send(PULL, {"n": 1, "qid": 0})
    client.send(PULL, {"n": -1})                   # qid -1: the last RUN (qid 1)
    client.send(PULL, {"n": -1, "qid": 0})
    client.send(COMMIT)
    assert await client.recv() == (SUCCESS, [{"db": "neo4j"}])
    run0, run1 = (await client.recv())[1][0], (await client.recv())[1][0]
    assert (run0["qid"], run1["qid"], run0["db"]) == (0, 1, "neo4j")
    assert await client.recv_until_summary() == [(RECORD, [[1]]), (SUCCESS, [{"has_more": True}])]
    last = await client.recv_until_summary()
    assert [m[1] for m in last[:-1]] == [[[1]], [[2]]] and "bookmark" not in last[-1][1][0]
    rest = await client.recv_until_summary()
    assert [m[1] for m in rest[:-1]] == [[[2]], [[3]]]
    assert await client.recv() == (SUCCESS, [{"bookmark": "FB:tx1"}])
    assert server.backend.configs[-1].timeout == 1.0
    client.close()


async def test_rollback_discards_writes(server):
    client = await connect(server)
    client.send(BEGIN, {})
    client.send(RUN, "CREATE (:Item {v: $v})", {"v": 1}, {})
    client.send(ROLLBACK)
    assert [(await client.recv())[0] for _ in range(3)] == [SUCCESS] * 3
    assert server.backend.items == [] and server.backend.rollbacks == 1
    client.close()


async def test_commit_with_an_unconsumed_stream_is_a_protocol_error(server):
    client = await connect(server)
    client.send(BEGIN, {})
    client.send(RUN, RANGE, {"n": 3}, {})
    client.send(COMMIT)
    await client.recv(), await client.recv()
    failure = await client.recv()
    assert failure[0] == FAILURE and code(failure) == "Neo.ClientError.Request.Invalid"
    assert await client.closed()
    await asyncio.sleep(0.1)
    assert server.backend.commits == 0 and server.backend.rollbacks == 1   # rolled back on close


async def test_failure_then_ignored_until_reset(server):
    client = await connect(server)
    client.send(RUN, "nonsense", {}, {})
    client.send(PULL, {"n": -1})
    client.send(RUN, RANGE, {"n": 1}, {})
    failure = await client.recv()
    assert failure[0] == FAILURE and code(failure) == "Neo.ClientError.Statement.SyntaxError"
    assert (await client.recv())[0] == IGNORED and (await client.recv())[0] == IGNORED
    client.send(RESET)
    assert await client.recv() == (SUCCESS, [{}])
    client.send(RUN, RANGE, {"n": 1}, {})
    client.send(PULL, {"n": -1})
    assert (await client.recv())[0] == SUCCESS
    assert len(await client.recv_until_summary()) == 2
    client.close()


async def test_gql_failure_shape_from_5_7(server):
    client = await connect(server, (5, 8))
    client.send(RUN, "nonsense", {}, {})
    meta = (await client.recv())[1][0]
    assert meta["neo4j_code"] == "Neo.ClientError.Statement.SyntaxError"
    assert {"gql_status", "description", "message", "diagnostic_record"} <= set(meta)
    client.close()


async def test_unexpected_exception_becomes_unknown_error_and_server_survives(server):
    client = await connect(server)
    client.send(RUN, "BOOM", {}, {})
    failure = await client.recv()
    assert code(failure) == "Neo.DatabaseError.General.UnknownError"
    client.send(RESET)
    assert (await client.recv())[0] == SUCCESS
    client.close()


@pytest.mark.parametrize("version,messages", [
    ((5, 4), [(PULL, {"n": -1})]),                       # nothing to pull in READY
    ((5, 4), [(COMMIT,)]),                               # no transaction
    ((5, 4), [(BEGIN, {}), (BEGIN, {})]),                # BEGIN in TX_READY
    ((5, 4), [(HELLO, {"user_agent": "x"})]),            # second HELLO
    ((5, 0), [(LOGOFF,)]),                               # LOGOFF is 5.1+
    ((5, 4), [(0x55, 1)]),                               # unknown signature
    ((5, 4), [(RUN, "RETURN 1")]),                       # wrong field count
])
async def test_message_in_wrong_state_fails_and_closes(server, version, messages):
    client = await connect(server, version)
    for message in messages:
        client.send(*message)
    replies = [await client.recv() for _ in messages]
    assert replies[-1][0] == FAILURE and code(replies[-1]) == "Neo.ClientError.Request.Invalid"
    assert await client.closed()
    (await connect(server)).close()                    # the server keeps serving


async def test_run_before_hello_closes(server):
    client = await RawClient.connect(server.port, (5, 4), hello=False)
    client.send(RUN, "RETURN 1", {}, {})
    assert code(await client.recv()) == "Neo.ClientError.Request.Invalid"
    assert await client.closed()


async def test_garbage_message_closes_only_that_connection(server):
    other = await connect(server)
    client = await connect(server)
    client.writer.write(u16(3) + b"\x01\x02\x03" + b"\x00\x00")          # not a structure
    assert code(await client.recv()) == "Neo.ClientError.Request.Invalid"
    assert await client.closed()
    other.send(RUN, RANGE, {"n": 1}, {})
    assert (await other.recv())[0] == SUCCESS
    other.close()


async def test_truncated_packstream_closes(server):
    client = await connect(server)
    client.writer.write(u16(5) + b"\xb3\x10\x85ab" + b"\x00\x00")       # RUN with a cut string
    assert code(await client.recv()) == "Neo.ClientError.Request.Invalid"
    assert await client.closed()


async def test_noops_are_ignored(server):
    client = await connect(server)
    client.writer.write(b"\x00\x00\x00\x00")
    client.send(RUN, RANGE, {"n": 1}, {})
    client.writer.write(b"\x00\x00")
    client.send(PULL, {"n": -1})
    assert (await client.recv())[0] == SUCCESS
    assert [m[0] for m in await client.recv_until_summary()] == [RECORD, SUCCESS]
    client.close()


async def test_pipelined_hello_logon_run_pull_in_one_write(server):
    client = await RawClient.connect(server.port, (5, 8), hello=False)
    client.send(HELLO, {"user_agent": "x"})
    client.send(LOGON, {"scheme": "basic", "principal": "neo4j", "credentials": "password"})
    client.send(RUN, RANGE, {"n": 2}, {})
    client.send(PULL, {"n": -1})
    client.send(TELEMETRY, 3)
    kinds = [(await client.recv())[0] for _ in range(7)]
    assert kinds == [SUCCESS, SUCCESS, SUCCESS, RECORD, RECORD, SUCCESS, SUCCESS]
    client.close()


@pytest.mark.parametrize("version,message", [((5, 0), (HELLO, {"user_agent": "x", "scheme": "basic",
                                                                 "principal": "neo4j", "credentials": "bad"})),
                                             ((5, 4), (LOGON, {"scheme": "basic", "principal": "neo4j",
                                                               "credentials": "bad"}))])
async def test_failed_authentication_closes(server, version, message):
    client = await RawClient.connect(server.port, version, hello=False)
    if message[0] == LOGON:
        client.send(HELLO, {"user_agent": "x"})
        assert (await client.recv())[0] == SUCCESS
    client.send(*message)
    assert code(await client.recv()) == "Neo.ClientError.Security.Unauthorized"
    assert await client.closed()


async def test_logoff_then_logon_again(server):
    client = await connect(server, (5, 4))
    client.send(LOGOFF)
    client.send(LOGON, {"scheme": "basic", "principal": "neo4j", "credentials": "password"})
    client.send(RUN, RANGE, {"n": 1}, {})
    assert [(await client.recv())[0] for _ in range(3)] == [SUCCESS] * 3
    client.close()


@pytest.mark.parametrize("db", ["system", "neo4j", None])
async def test_route(server, db):
    client = await connect(server, (5, 4))
    client.send(ROUTE, {"address": "example.org:7687"}, [], {"db": db} if db else {})
    rt = (await client.recv())[1][0]["rt"]
    assert rt["ttl"] == 300 and rt["db"] == (db or "neo4j")
    assert sorted(s["role"] for s in rt["servers"]) == ["READ", "ROUTE", "WRITE"]
    assert all(s["addresses"] == [server.address] for s in rt["servers"])
    client.close()


async def test_route_unknown_database_fails(server):
    client = await connect(server, (5, 4))
    client.send(ROUTE, {}, [], {"db": "nope"})
    assert code(await client.recv()) == "Neo.ClientError.Database.DatabaseNotFound"
    client.close()


async def test_route_uses_configured_routing_address():
    async with BoltServer(routing_address="proxy.example:7777") as srv:
        client = await connect(srv)
        client.send(ROUTE, {}, [], {})
        rt = (await client.recv())[1][0]["rt"]
        assert rt["servers"][0]["addresses"] == ["proxy.example:7777"]
        client.close()


async def test_reset_interrupts_a_running_query(server):
    client = await connect(server)
    client.send(RUN, "CALL sleep()", {}, {})
    client.send(PULL, {"n": -1})
    await asyncio.wait_for(server.backend.sleeping.wait(), 5)
    client.send(RESET)
    assert [(await client.recv())[0] for _ in range(3)] == [IGNORED, IGNORED, SUCCESS]
    client.send(RUN, RANGE, {"n": 1}, {})
    assert (await client.recv())[0] == SUCCESS
    client.close()


async def test_backpressure_and_reset_while_streaming(server):
    """A 10M-row PULL to a client that does not read: the proxy stops fetching; RESET ends it."""
    client = await connect(server)
    client.send(RUN, RANGE, {"n": 10_000_000}, {})
    client.send(PULL, {"n": -1})
    produced = -1
    while produced != server.backend.rows_produced:      # wait until drain() holds the stream
        produced = server.backend.rows_produced
        await asyncio.sleep(0.3)
    print("rows produced while the client did not read:", produced)
    assert 0 < produced < 2_000_000
    assert max(server.backend.fetch_sizes) <= BATCH
    client.send(RESET)
    # records already in flight, then IGNORED for the interrupted PULL, then SUCCESS {} for RESET
    tail = b"\x00\x02\xb0\x7e\x00\x00" + b"\x00\x03\xb1\x70\xa0\x00\x00"
    received = b""
    while not received.endswith(tail):
        received = received[-64:] + await asyncio.wait_for(client.reader.read(1 << 20), 10)
    assert server.backend.rows_produced < 2_000_000
    client.send(RUN, RANGE, {"n": 1}, {})
    assert (await client.recv())[0] == SUCCESS
    client.close()


async def test_goodbye_and_disconnect_roll_back_open_transactions(server):
    for end in ("goodbye", "drop"):
        client = await connect(server)
        client.send(BEGIN, {})
        client.send(RUN, "CREATE (:Item {v: $v})", {"v": 1}, {})
        assert [(await client.recv())[0] for _ in range(2)] == [SUCCESS, SUCCESS]
        if end == "goodbye":
            client.send(GOODBYE)
            assert await client.closed()
        else:
            client.close()
    for _ in range(50):
        if server.backend.rollbacks == 2:
            break
        await asyncio.sleep(0.05)
    assert server.backend.rollbacks == 2 and server.backend.items == []


async def test_pull_unknown_qid_fails_recoverably(server):
    client = await connect(server)
    client.send(BEGIN, {})
    client.send(RUN, RANGE, {"n": 1}, {})
    client.send(PULL, {"n": -1, "qid": 7})
    await client.recv(), await client.recv()
    assert code(await client.recv()) == "Neo.ClientError.Request.Invalid"
    client.send(RESET)
    assert (await client.recv())[0] == SUCCESS
    client.close()
