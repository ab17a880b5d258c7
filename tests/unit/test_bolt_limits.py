"""What one Bolt client may cost (`BoltLimits`), over real sockets with small limits."""

from __future__ import annotations

import asyncio
import time

import pytest

from proxy.bolt.chunking import MAX_CHUNK
from proxy.bolt.limits import BoltLimits, query_size
from proxy.packstream import Packer
from tests.unit.test_bolt_support import BoltServer, RawClient, u16

HELLO, RESET, RUN, PULL, LOGON = 0x01, 0x0F, 0x10, 0x3F, 0x6A
SUCCESS, RECORD, IGNORED, FAILURE = 0x70, 0x71, 0x7E, 0x7F
AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}
LIMITS = BoltLimits(max_message_size=200_000, max_parameter_size=50_000, auth_timeout=1.0,
                    max_unauthenticated_bytes=2_000)


@pytest.fixture
async def server():
    async with BoltServer(limits=LIMITS) as srv:
        yield srv


def meta(msg) -> dict:
    return msg[1][0]


async def test_a_message_over_the_limit_gets_a_failure_and_the_connection_goes_on(server):
    client = await RawClient.connect(server.port, (5, 8))
    client.send(RUN, "RETURN $x AS x", {"x": "y" * 300_000}, {})       # 300 KB, over 200 KB
    client.send(PULL, {"n": -1})
    failure = await client.recv()
    assert failure[0] == FAILURE and meta(failure)["neo4j_code"] == "Neo.ClientError.Request.Invalid"
    assert meta(failure)["gql_status"] == "22N56" and "--max-message-size" in meta(failure)["message"]
    assert (await client.recv())[0] == IGNORED
    client.send(RESET)
    assert (await client.recv())[0] == SUCCESS
    client.send(RUN, "UNWIND range(1, $n) AS i RETURN i", {"n": 2}, {})
    client.send(PULL, {"n": -1})
    assert (await client.recv())[0] == SUCCESS
    assert [m[0] for m in await client.recv_until_summary()] == [RECORD, RECORD, SUCCESS]
    client.close()


async def test_parameters_over_the_limit_are_refused_before_decoding(server):
    client = await RawClient.connect(server.port, (5, 8))
    client.send(RUN, "RETURN $x AS x", {"x": list(range(20_000))}, {})   # ~60 KB of parameters
    failure = await client.recv()
    assert failure[0] == FAILURE and "--max-parameter-size" in meta(failure)["message"]
    assert server.backend.configs == []                                # never reached the backend
    client.close()


def test_query_size_reads_every_string_header():
    for query in ("", "RETURN 1", "x" * 200, "x" * 70_000):
        message = Packer((5, 8)).pack_message(RUN, [query, {}, {}])
        assert query_size(message) == len(query)


async def test_an_unauthenticated_client_is_closed_after_its_byte_budget(server):
    client = await RawClient.connect(server.port, (5, 8), hello=False)
    client.writer.write(u16(MAX_CHUNK) + b"\xb1" + bytes(MAX_CHUNK - 1))    # a partial 64 KB chunk
    await client.writer.drain()
    assert await client.closed(timeout=5)


async def test_an_unauthenticated_client_is_closed_after_the_auth_timeout(server):
    client = await RawClient.connect(server.port, (5, 8), hello=False)
    client.send(HELLO, {"user_agent": "slow"})
    assert (await client.recv())[0] == SUCCESS
    started = time.monotonic()
    assert await client.closed(timeout=5)
    assert time.monotonic() - started < 4


async def test_a_logged_in_client_is_not_timed_out(server):
    client = await RawClient.connect(server.port, (5, 8))
    await asyncio.sleep(1.5)                                           # past the 1 s auth timeout
    client.send(RUN, "UNWIND range(1, $n) AS i RETURN i", {"n": 1}, {})
    client.send(PULL, {"n": -1})
    assert (await client.recv())[0] == SUCCESS
    client.close()


async def test_a_pipelined_login_and_big_query_share_no_budget(server):
    """Before login, messages are read one at a time, so a RUN pipelined behind LOGON is read
    under the logged-in limits, not the 2 KB unauthenticated budget."""
    client = await RawClient.connect(server.port, (5, 8), hello=False)
    client.send(HELLO, {"user_agent": "x"})
    client.send(LOGON, AUTH)
    client.send(RUN, "RETURN $x AS x", {"x": "y" * 20_000}, {})
    client.send(PULL, {"n": -1})
    kinds = [(await client.recv())[0] for _ in range(5)]
    assert kinds == [SUCCESS, SUCCESS, SUCCESS, RECORD, SUCCESS]
    client.close()
