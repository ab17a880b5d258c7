"""Faults at every step of a write transaction on the embedded database, checked with a ledger.

Each transaction writes two ledger nodes. A client interrupts it (RESET, a dropped connection,
or SIGKILL of the whole proxy) at one step: before BEGIN is answered, while its first write runs
(the replica is being held), after a write, while COMMIT or ROLLBACK runs, after COMMIT. Then:
what was acknowledged is there, what was not committed is gone, nothing is half-written, and the
server keeps serving writes (no wedge, no stale lock).
"""

from __future__ import annotations

import asyncio
import random
import signal
import uuid
from pathlib import Path

import neo4j
import pytest

from tests.harness import PASSWORD, USER, ProxyProcess
from tests.unit.test_bolt_support import RawClient

BEGIN, RUN, PULL, COMMIT, ROLLBACK, RESET = 0x11, 0x10, 0x3F, 0x12, 0x13, 0x0F
SUCCESS = 0x70
WRITE = "CREATE (:Ledger {k: $k})"

#: Where the fault strikes: after sending the message named, before (or after) reading its reply.
STEPS = ("begin", "first write running", "after first write", "commit running", "after commit",
         "rollback running")


async def _transaction(client: RawClient, keys: tuple[str, str], step: str) -> bool:
    """Run the two-write transaction up to `step`; True when COMMIT was acknowledged."""
    client.send(BEGIN, {})
    if step == "begin":
        return False
    assert (await client.recv())[0] == SUCCESS
    client.send(RUN, WRITE, {"k": keys[0]}, {})
    client.send(PULL, {"n": -1})
    if step == "first write running":
        await asyncio.sleep(random.uniform(0, 0.004))
        return False
    assert [m[0] for m in (await client.recv(), *await client.recv_until_summary())] == [SUCCESS, SUCCESS]
    client.send(RUN, WRITE, {"k": keys[1]}, {})
    client.send(PULL, {"n": -1})
    assert [m[0] for m in (await client.recv(), *await client.recv_until_summary())] == [SUCCESS, SUCCESS]
    if step == "after first write":
        return False
    if step == "rollback running":
        client.send(ROLLBACK)
        return False
    client.send(COMMIT)
    if step == "commit running":
        return False
    assert (await client.recv())[0] == SUCCESS
    return True


async def _interrupt(client: RawClient, how: str) -> None:
    if how == "reset":
        client.send(RESET)
        while (await client.recv())[0] != SUCCESS:      # IGNOREDs for what was queued, then SUCCESS
            pass
    client.close()


def _present(driver: neo4j.Driver, keys) -> set[str]:
    records, _, _ = driver.execute_query("MATCH (n:Ledger) WHERE n.k IN $keys RETURN n.k AS k", keys=list(keys))
    return {r["k"] for r in records}


def _check(driver: neo4j.Driver, ledger: list[tuple[tuple[str, str], str, bool]]) -> None:
    present = _present(driver, [k for keys, _, _ in ledger for k in keys])
    for keys, step, acknowledged in ledger:
        found = [k in present for k in keys]
        assert found[0] == found[1], f"half a transaction survived ({step})"
        if acknowledged:
            assert all(found), f"an acknowledged commit was lost ({step})"
        elif step != "commit running":                  # its outcome is unknown to the client
            assert not any(found), f"an uncommitted transaction survived ({step})"


def _still_writable(driver: neo4j.Driver) -> None:
    key = uuid.uuid4().hex
    driver.execute_query(WRITE, k=key)
    with driver.session() as session:
        session.execute_write(lambda tx: tx.run(WRITE, k=key + "-managed").consume())
    assert _present(driver, [key, key + "-managed"]) == {key, key + "-managed"}


@pytest.mark.parametrize("how", ["reset", "disconnect"])
async def test_interrupted_transactions_lose_nothing_acknowledged(proxy, how):
    port = int(proxy.uri.rsplit(":", 1)[1])
    ledger = []
    for round_ in range(4):
        for step in STEPS:
            keys = (f"{how}-{round_}-{step}-a", f"{how}-{round_}-{step}-b")
            client = await RawClient.connect(port)
            acknowledged = await _transaction(client, keys, step)
            await _interrupt(client, how)
            ledger.append((keys, step, acknowledged))
    await asyncio.sleep(0.2)                            # let the server finish the cleanup it started
    with neo4j.GraphDatabase.driver(proxy.uri, auth=(USER, PASSWORD)) as driver:
        _check(driver, ledger)
        _still_writable(driver)


@pytest.mark.parametrize("step", STEPS)
async def test_killed_proxy_recovers_only_what_was_acknowledged(tmp_path: Path, step):
    data_dir = tmp_path / "data"
    keys = (f"kill-{step}-a", f"kill-{step}-b")
    with ProxyProcess(data_dir=data_dir) as first:
        with neo4j.GraphDatabase.driver(first.uri, auth=(USER, PASSWORD)) as driver:
            driver.execute_query(WRITE, k="before")           # acknowledged before the fault
        client = await RawClient.connect(int(first.uri.rsplit(":", 1)[1]))
        acknowledged = await _transaction(client, keys, step)
        first.stop(signal.SIGKILL)
        client.close()
    with ProxyProcess(data_dir=data_dir) as second:
        with neo4j.GraphDatabase.driver(second.uri, auth=(USER, PASSWORD)) as driver:
            assert _present(driver, ["before"]) == {"before"}
            _check(driver, [(keys, step, acknowledged)])
            _still_writable(driver)
