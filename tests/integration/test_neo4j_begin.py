"""Explicit transactions behind a Neo4j, against testkit's `boltstub` playing the upstream.

The proxy sends BEGIN upstream with the transaction's first request, in the same write
(`UpstreamTransaction`). The scripts check that order: the stub reads BEGIN, RUN and PULL before it
answers any of them, so a proxy that waited for BEGIN's reply first would hang. A refused BEGIN
must reach each client shape as Neo4j's refusal reaches it directly: each failure test runs the
same client code against the stub directly and through the proxy, and compares what the driver
raised. Client shapes: `execute_query` (the driver pipelines BEGIN, RUN and PULL),
`execute_read` and `begin_transaction` (the driver waits for BEGIN's reply). The module runs
again under the neo4j 6.x driver, which speaks Bolt 6.0 to the proxy.
"""

from __future__ import annotations

import asyncio
import json
import os

import neo4j
import pytest

from core.backend import TxConfig
from core.errors import CypherError
from proxy.backends.neo4j import Neo4jBackend
from tests.harness import NEO4J6_PATH, run_with_neo4j6

from tests.integration.test_neo4j_stub_upstream import (CONNECTION_LOST, PASSWORD, USER, proxy_to_stub,  # noqa: F401
                                                        pytestmark, script, upstream, within)

QUERY = "RETURN 'begun' AS x"


def begin_line(case: str) -> str:
    """The BEGIN of the client transaction whose metadata names `case`, whatever else it asks."""
    extra = {"tx_metadata": {"case": case}, "[mode]": "*", "[db]": "*", "[bookmarks]": "*", "[imp_user]": "*",
             "[tx_timeout]": "*"}
    return f"C: BEGIN {json.dumps(extra)}"


def pipelined(begin: str, bookmark: str) -> str:
    """A transaction whose BEGIN, RUN and PULL leave in one write, committed with `bookmark`."""
    return f"""
        {begin}
        C: RUN "{QUERY}" "*" "*"
        C: PULL "*"
        S: SUCCESS {{}}
           SUCCESS {{"fields": ["x"]}}
           RECORD ["begun"]
           SUCCESS {{"type": "r"}}
        C: COMMIT
        S: SUCCESS {{"bookmark": "{bookmark}"}}
"""


PIPELINED = pipelined(begin_line("pipelined"), "stub:pipelined")

#: BEGIN with all a client may ask of it, pipelined with the RUN; the COMMIT's bookmark.
ASKED = pipelined('C: BEGIN {"bookmarks": ["stub:before"], "tx_timeout": 1500, "tx_metadata": {"case": "asked"}, '
                  '"mode": "r", "db": "other", "imp_user": "bob"}', "stub:after")

#: A transaction with no RUN: BEGIN answered on its own (the client waits for it), then COMMIT.
EMPTY = f"""
        {begin_line("empty")}
        S: SUCCESS {{}}
        C: COMMIT
        S: SUCCESS {{"bookmark": "stub:empty"}}
"""
#: The backend's own transaction committed without a RUN: BEGIN leaves with the COMMIT.
COMMIT_ONLY = f"""
        {begin_line("commit-only")}
        C: COMMIT
        S: SUCCESS {{}}
           SUCCESS {{"bookmark": "stub:commit-only"}}
"""


def refused(case: str, code: str, message: str) -> str:
    """BEGIN refused with Neo4j's FAILURE; the RUN and PULL a driver pipelined behind it IGNORED."""
    return f"""
        {begin_line(case)}
        S: FAILURE {json.dumps({"code": code, "message": message})}
        {{?
            C: RUN "*" "*" "*"
            S: IGNORED
        ?}}
        {{?
            C: PULL "*"
            S: IGNORED
        ?}}
"""


LOST = f"""
        {begin_line("lost")}
        S: <EXIT>
"""

#: case -> (code, message): refusals Neo4j sends at BEGIN.
REFUSALS = {
    "bad-bookmark": ("Neo.ClientError.Transaction.InvalidBookmark",
                     "Supplied bookmark [nope] does not conform to pattern {database_id}:{tx_id}"),
    "unknown-database": ("Neo.ClientError.Database.DatabaseNotFound",
                         "Database does not exist. Database name: 'nope'."),
    "impersonation-refused": ("Neo.ClientError.Security.Forbidden",
                              "Impersonation of user 'bob' is not allowed for user 'neo4j'."),
    "auth-expired": ("Neo.ClientError.Security.AuthorizationExpired",
                     "Authorization info expired for user 'neo4j'."),
    "bad-metadata": ("Neo.ClientError.Request.Invalid",
                     "Transaction metadata is not a map of String to values."),
    "database-unavailable": ("Neo.TransientError.General.DatabaseUnavailable",
                             "Database 'neo4j' is unavailable."),
}


def execute_query(driver, case: str) -> list:
    records = driver.execute_query(neo4j.Query(QUERY, metadata={"case": case}), routing_="r").records
    return [record.values() for record in records]


def execute_read(driver, case: str) -> list:
    @neo4j.unit_of_work(metadata={"case": case})
    def work(tx):
        return [record.values() for record in tx.run(QUERY)]
    with driver.session() as session:
        return session.execute_read(work)


def begin_transaction(driver, case: str) -> list:
    with driver.session() as session, session.begin_transaction(metadata={"case": case}) as tx:
        rows = [record.values() for record in tx.run(QUERY)]
        tx.commit()
    return rows


SHAPES = [execute_query, execute_read, begin_transaction]


def outcome(uri: str, shape, case: str):
    """What the client saw: its rows, or the exception's type, code and message."""
    with neo4j.GraphDatabase.driver(uri, auth=(USER, PASSWORD), connection_timeout=5,
                                    max_transaction_retry_time=0) as driver:
        try:
            return within(lambda: shape(driver, case))
        except neo4j.exceptions.Neo4jError as error:
            return type(error), error.code, error.message


def test_begin_goes_upstream_with_the_pipelined_run_and_is_answered_first(upstream, proxy_to_stub):
    with upstream.playing(script(PIPELINED)):
        assert outcome(f"bolt://{upstream.address}", execute_query, "pipelined") == [["begun"]]
        assert outcome(proxy_to_stub.uri, execute_query, "pipelined") == [["begun"]]


def test_begin_carries_what_the_client_asked_and_commit_its_bookmark_back(upstream, proxy_to_stub):
    """Bookmarks, timeout, metadata, access mode, database and impersonated user, as sent directly."""
    def asked(uri: str) -> tuple[list, list[str]]:
        bookmarks = neo4j.GraphDatabase.bookmark_manager(initial_bookmarks=neo4j.Bookmarks.from_raw_values(
            ["stub:before"]))
        with neo4j.GraphDatabase.driver(uri, auth=(USER, PASSWORD), connection_timeout=5) as driver:
            records = within(lambda: driver.execute_query(
                neo4j.Query(QUERY, metadata={"case": "asked"}, timeout=1.5), routing_="r", database_="other",
                impersonated_user_="bob", bookmark_manager_=bookmarks).records)
        return [record.values() for record in records], sorted(bookmarks.get_bookmarks())
    with upstream.playing(script(ASKED)):
        assert asked(f"bolt://{upstream.address}") == ([["begun"]], ["stub:after"])
        assert asked(proxy_to_stub.uri) == ([["begun"]], ["stub:after"])


def test_a_transaction_committed_without_a_run(upstream, proxy_to_stub):
    def empty(uri: str) -> list[str]:
        with neo4j.GraphDatabase.driver(uri, auth=(USER, PASSWORD), connection_timeout=5) as driver, \
                driver.session() as session:
            def commit():
                with session.begin_transaction(metadata={"case": "empty"}) as tx:
                    tx.commit()
            within(commit)
            return list(session.last_bookmarks().raw_values)
    with upstream.playing(script(EMPTY)):
        assert empty(f"bolt://{upstream.address}") == empty(proxy_to_stub.uri) == ["stub:empty"]


async def test_the_backends_transaction_sends_begin_with_its_commit(upstream):
    backend = Neo4jBackend(f"bolt://{upstream.address}")

    async def commit_only() -> str | None:
        credentials = await backend.authenticate({"scheme": "basic", "principal": USER, "credentials": PASSWORD})
        tx = await backend.begin(TxConfig(metadata={"case": "commit-only"}), credentials)
        return await tx.commit()
    with upstream.playing(script(COMMIT_ONLY)):
        try:
            assert await asyncio.wait_for(commit_only(), 10) == "stub:commit-only"
        finally:
            await backend.stop()


async def test_after_a_refused_begin_nothing_runs_outside_the_transaction(upstream):
    """The RUN behind the refused BEGIN was IGNORED; a second RUN in the transaction (a planner's
    next probe, say) raises the refusal again and is never sent (it would run in auto-commit)."""
    code, message = REFUSALS["bad-bookmark"]
    backend = Neo4jBackend(f"bolt://{upstream.address}")

    async def run_twice() -> None:
        credentials = await backend.authenticate({"scheme": "basic", "principal": USER, "credentials": PASSWORD})
        tx = await backend.begin(TxConfig(metadata={"case": "bad-bookmark"}), credentials)
        for _ in range(2):
            with pytest.raises(CypherError) as raised:
                await tx.run(QUERY, {})
            assert (raised.value.code, raised.value.message) == (code, message)
        await tx.rollback()
    with upstream.playing(script(refused("bad-bookmark", code, message))):
        try:
            await asyncio.wait_for(run_twice(), 10)
        finally:
            await backend.stop()


@pytest.mark.parametrize("case", REFUSALS)
def test_a_refused_begin_raises_what_neo4j_makes_the_driver_raise(upstream, proxy_to_stub, case):
    code, message = REFUSALS[case]
    with upstream.playing(script(refused(case, code, message))):
        for shape in SHAPES:
            direct = outcome(f"bolt://{upstream.address}", shape, case)
            assert direct[1:] == (code, message), shape.__name__
            assert outcome(proxy_to_stub.uri, shape, case) == direct, shape.__name__


@pytest.mark.parametrize("shape", SHAPES)
def test_an_upstream_lost_at_begin_ends_the_clients_connection(upstream, proxy_to_stub, shape):
    with upstream.playing(script(LOST)):
        with pytest.raises(CONNECTION_LOST):
            with neo4j.GraphDatabase.driver(proxy_to_stub.uri, auth=(USER, PASSWORD), connection_timeout=5,
                                            max_transaction_retry_time=0) as driver:
                within(lambda: shape(driver, "lost"))


@pytest.mark.skipif(not (NEO4J6_PATH / "neo4j").exists(), reason="neo4j 6.x not installed: run `make install`")
@pytest.mark.skipif(os.environ.get("EXPECT_NEO4J_MAJOR") == "6", reason="this is the run under 6.x")
def test_the_same_under_the_neo4j_6_driver():
    done = run_with_neo4j6(["-m", "pytest", "-q", "-p", "no:cacheprovider", __file__], timeout=300)
    assert done.returncode == 0 and " passed" in done.stdout, done.stdout[-5000:] + done.stderr[-2000:]
    assert " failed" not in done.stdout and " 1 skipped" in done.stdout, done.stdout[-5000:]


def test_the_driver_is_the_major_version_this_run_is_for():
    assert neo4j.__version__.split(".")[0] == os.environ.get("EXPECT_NEO4J_MAJOR", "5")
