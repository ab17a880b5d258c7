"""A BEGIN pipelined with its RUN: answered once the RUN has gone to the backend, in Neo4j's order.

The backend confirms the transaction in `Transaction.begun` (the Neo4j backend sends BEGIN with
the first RUN). `MemoryBackend` logs when the front end calls `begin`, `run` and `begun`, and can
refuse BEGIN there, as an upstream Neo4j refuses a bad bookmark.
"""

from __future__ import annotations

import asyncio

import pytest

from core.errors import CypherError
from tests.unit.test_bolt_protocol import (BEGIN, COMMIT, FAILURE, IGNORED, PULL, RANGE, RECORD, RESET, RUN,
                                           SUCCESS, code, connect, server)  # noqa: F401 (fixture)

BAD_BOOKMARK = CypherError("Neo.ClientError.Transaction.InvalidBookmark",
                           "Supplied bookmark [FB:nope] does not conform to pattern")


def in_tx(query: str = RANGE, n: int = 2) -> list[tuple]:
    """BEGIN, RUN and PULL as a driver pipelines them."""
    return [(BEGIN, {"bookmarks": ["FB:1"]}), (RUN, query, {"n": n}, {}), (PULL, {"n": -1})]


async def answers(client, count: int) -> list[tuple[int, list]]:
    return [await client.recv() for _ in range(count)]


@pytest.mark.parametrize("version, begin_meta", [((5, 4), {}), ((5, 8), {"db": "neo4j"})])
async def test_a_pipelined_begin_is_answered_after_its_run_went_to_the_backend(server, version, begin_meta):
    client = await connect(server, version)
    client.pipeline(*in_tx())
    begin, run, *rest = await answers(client, 5)
    assert begin == (SUCCESS, [begin_meta])
    assert run[0] == SUCCESS and run[1][0]["fields"] == ["i"] and run[1][0]["qid"] == 0
    assert rest[:2] == [(RECORD, [[1]]), (RECORD, [[2]])] and rest[2][0] == SUCCESS
    client.send(COMMIT)
    assert await client.recv() == (SUCCESS, [{"bookmark": "FB:tx1"}])
    assert server.backend.events == ["begin", "run", "begun"]
    client.close()


async def test_a_begin_alone_is_confirmed_before_it_is_answered(server):
    client = await connect(server)
    client.send(BEGIN, {})
    assert await client.recv() == (SUCCESS, [{}])
    assert server.backend.events == ["begin", "begun"]
    client.close()


@pytest.mark.parametrize("pipelined", [True, False])
async def test_a_refused_begin_fails_and_the_requests_behind_it_are_ignored(server, pipelined):
    server.backend.begin_refusal = BAD_BOOKMARK
    client = await connect(server)
    if pipelined:
        client.pipeline(*in_tx())
    else:
        client.send(BEGIN, {"bookmarks": ["FB:1"]})
        assert (await client.recv())[0] == FAILURE
        client.pipeline(*in_tx()[1:])
    replies = await answers(client, 3 if pipelined else 2)
    if pipelined:
        assert replies[0][0] == FAILURE and code(replies[0]) == BAD_BOOKMARK.code
        replies = replies[1:]
    assert replies == [(IGNORED, []), (IGNORED, [])]
    assert server.backend.rollbacks == 1              # the session holds no transaction any more
    client.send(RESET)
    assert await client.recv() == (SUCCESS, [{}])
    server.backend.begin_refusal = None
    client.pipeline(*in_tx(n=1))
    assert [reply[0] for reply in await answers(client, 4)] == [SUCCESS, SUCCESS, RECORD, SUCCESS]
    client.close()


@pytest.mark.parametrize("refused", [False, True], ids=["begin-ok", "begin-refused"])
async def test_a_run_failing_behind_a_pipelined_begin_gets_its_failure_after_begins_answer(server, refused):
    """The memory backend rejects the query; a refused BEGIN's FAILURE comes first instead."""
    server.backend.begin_refusal = BAD_BOOKMARK if refused else None
    client = await connect(server)
    client.pipeline(*in_tx("NO SUCH QUERY"))
    begin, run, pull = await answers(client, 3)
    if refused:
        assert begin[0] == FAILURE and code(begin) == BAD_BOOKMARK.code and run == (IGNORED, [])
    else:
        assert begin == (SUCCESS, [{}]) and run[0] == FAILURE and code(run) == "Neo.ClientError.Statement.SyntaxError"
    assert pull == (IGNORED, [])
    client.send(RESET)
    assert await client.recv() == (SUCCESS, [{}])
    client.close()


async def test_a_reset_interrupting_the_run_behind_a_pipelined_begin_ignores_both(server):
    client = await connect(server)
    client.pipeline(*in_tx("CALL sleep()"))
    await asyncio.wait_for(server.backend.sleeping.wait(), 5)
    client.send(RESET)
    assert await answers(client, 4) == [(IGNORED, []), (IGNORED, []), (IGNORED, []), (SUCCESS, [{}])]
    assert server.backend.rollbacks == 1
    client.pipeline(*in_tx(n=1))
    assert [reply[0] for reply in await answers(client, 4)] == [SUCCESS, SUCCESS, RECORD, SUCCESS]
    client.close()


async def test_a_reset_queued_behind_a_pipelined_begin_ignores_all_before_it(server):
    """BEGIN, RUN, PULL and RESET in one write: RESET jumps the queue."""
    client = await connect(server)
    client.pipeline(*in_tx(), (RESET,))
    assert await answers(client, 4) == [(IGNORED, []), (IGNORED, []), (IGNORED, []), (SUCCESS, [{}])]
    client.close()
