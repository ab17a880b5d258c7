"""A write that runs past its timeout ends at it (plus 1 s), rolled back, as in Neo4j. FalkorDB checks a
query's timeout only while it reads: a big write's changes ran on for as long as they took
(the long fuzz's `MATCH () CREATE ()`, doubling the graph, held every writer for minutes).
Now the proxy switches to the replica, which has not received the write, and restarts the old
primary as the replica (`ServerPair.abort_write`)."""

from __future__ import annotations

import time

import neo4j
import pytest
from neo4j.exceptions import ClientError

from tests.harness import NO_LOCKOUT, PASSWORD, USER, ProxyProcess, wait_until
from tests.integration.test_lifecycle import _database_pids

#: Nodes whose deletion takes the embedded database minutes (against a timeout of 1 s).
NODES = 3_000_000
TIMEOUT = 1.0
ABORTED = "a write ran past its timeout"
#: Reads fast, then deletes for minutes: FalkorDB alone answered after over 10 minutes.
DELETE_ALL = "MATCH (n:Big) DELETE n"


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("write-timeouts")
    with ProxyProcess(args=[*NO_LOCKOUT, "--query-timeout", f"{TIMEOUT:g}"], data_dir=data_dir) as proc, \
            neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
        _run(driver, f"UNWIND range(1, {NODES}) AS i CREATE (:Big)", timeout=300)
        yield proc, driver, data_dir


def _run(driver, query: str, timeout: float = TIMEOUT) -> None:
    with driver.session() as session:
        session.run(neo4j.Query(query, timeout=timeout)).consume()


def _count(driver, label: str) -> int:
    return driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS c").records[0]["c"]


def _replica_caught_up(driver) -> None:
    """A write transaction's first write waits until the replica has applied everything."""
    with driver.session() as session:
        session.execute_write(lambda tx: tx.run("CREATE (:Synced)").consume())


def _log(proc) -> str:
    return "".join(line for line in proc.output if " proxy." in line)


def _aborts(proc) -> int:
    return "".join(proc.output).count(ABORTED)


def test_an_auto_commit_write_past_its_timeout_is_rolled_back(big):
    proc, driver, data_dir = big
    _replica_caught_up(driver)
    aborts = _aborts(proc)
    started = time.monotonic()
    with pytest.raises(ClientError) as info:
        _run(driver, DELETE_ALL)
    took = time.monotonic() - started
    assert info.value.code == "Neo.ClientError.Transaction.TransactionTimedOut"
    assert _aborts(proc) == aborts + 1 and took < TIMEOUT + 10
    assert _count(driver, "Big") == NODES
    driver.execute_query("CREATE (:AfterAbort)")                          # auto-commit
    _replica_caught_up(driver)                                            # a transaction: the replica is back
    assert _count(driver, "AfterAbort") == 1
    assert wait_until(lambda: len(_database_pids(data_dir)) == 2, 10)     # no third server
    print(f"answered in {took:.1f} s")


def test_a_transaction_whose_write_runs_past_its_timeout_is_rolled_back_whole(big):
    proc, driver, _ = big
    _replica_caught_up(driver)
    started = time.monotonic()
    with driver.session() as session:
        tx = session.begin_transaction()         # its statements: the server's default timeout
        tx.run("CREATE (:EarlierInTx)").consume()
        with pytest.raises(ClientError) as info:
            tx.run(DELETE_ALL).consume()
        tx.close()
    took = time.monotonic() - started
    assert info.value.code == "Neo.ClientError.Transaction.TransactionTimedOut", _log(proc)
    assert ABORTED in info.value.message and took < TIMEOUT + 10
    assert _count(driver, "EarlierInTx") == 0 and _count(driver, "Big") == NODES
    with driver.session() as session:                                     # rollbacks work again
        tx = session.begin_transaction()
        tx.run("CREATE (:RolledBack)").consume()
        tx.rollback()
        session.execute_write(lambda tx: tx.run("CREATE (:Committed)").consume())
    assert _count(driver, "RolledBack") == 0 and _count(driver, "Committed") == 1

