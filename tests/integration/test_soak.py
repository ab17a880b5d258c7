"""Soak: many clients writing the way stock tools do, while the database rewrites its files.

50 clients mix auto-commit writes, `execute_write`, explicit commits, explicit rollbacks and reads
for `CYPHER_PROXY_SOAK_SECONDS` (20 s in CI; the issue's long form is 600), while a background
task forces append-only-file rewrites on both servers every second (the rewrites that used to
deadlock FalkorDB's GRAPH.COPY). Every operation must finish (a hang is a failure), none may
fail, and the ledger must match exactly: every committed key present, every rolled-back key gone.
"""

from __future__ import annotations

import asyncio
import os
import random
import time

import neo4j
import pytest
import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from proxy.backends.falkordb.roles import NAMES, primary_address
from tests.harness import PASSWORD, USER, ProxyProcess

SECONDS = float(os.environ.get("CYPHER_PROXY_SOAK_SECONDS", "20"))
CLIENTS = 50
OPERATION_LIMIT = 60.0           # seconds: longer counts as a hang
WRITE = "CREATE (:Soak {k: $k})"


async def _operation(driver: neo4j.AsyncDriver, kind: str, key: str) -> bool:
    """One client operation; True when `key` was committed."""
    if kind == "auto":
        await driver.execute_query(WRITE, k=key)
        return True
    async with driver.session() as session:
        if kind == "managed":
            await session.execute_write(lambda tx: _write(tx, key))
            return True
        if kind == "read":
            await (await session.run("MATCH (n:Soak) RETURN count(n) AS c")).consume()
            return False
        tx = await session.begin_transaction()
        await _write(tx, key)
        await _write(tx, key + "+")
        if kind == "commit":
            await tx.commit()
            return True
        await tx.rollback()
        return False


async def _write(tx, key: str) -> None:
    await (await tx.run(WRITE, k=key)).consume()


async def _client(driver, number: int, deadline: float, committed: set, rolled_back: set, failures: list) -> int:
    rng = random.Random(number)
    done = 0
    while time.monotonic() < deadline:
        kind = rng.choices(["auto", "managed", "commit", "rollback", "read"], [3, 3, 2, 1, 2])[0]
        key = f"{number}-{done}"
        try:
            if await asyncio.wait_for(_operation(driver, kind, key), OPERATION_LIMIT):
                committed.add(key)
                if kind == "commit":
                    committed.add(key + "+")
            elif kind == "rollback":
                rolled_back.update((key, key + "+"))
        except asyncio.TimeoutError:
            failures.append(f"{kind} hung for {OPERATION_LIMIT:g} s")
        except neo4j.exceptions.Neo4jError as exc:
            failures.append(f"{kind}: {exc.code}: {exc.message}")
        done += 1
    return done


async def _rewrite_files(root, stop: asyncio.Event) -> int:
    """BGREWRITEAOF on both servers every second; returns how many rewrites were started."""
    _, password = primary_address(root)
    clients = [aioredis.Redis(unix_socket_path=str(root / name / "falkordb.sock"), password=password)
               for name in NAMES]
    started = 0
    try:
        while not stop.is_set():
            for client in clients:
                try:
                    await client.bgrewriteaof()
                    started += 1
                except ResponseError:                  # one already running or scheduled
                    pass
            await asyncio.sleep(1.0)
    finally:
        for client in clients:
            await client.aclose()
    return started


@pytest.mark.timeout(SECONDS + 300)
async def test_soak_mixed_writers_with_file_rewrites():
    with ProxyProcess() as proc:
        root = proc.data_dir / "falkordb"
        async with neo4j.AsyncGraphDatabase.driver(proc.uri, auth=(USER, PASSWORD),
                                                   max_connection_pool_size=CLIENTS + 10) as driver:
            await driver.execute_query("UNWIND range(1, 5000) AS i CREATE (:Base {i: i})")
            committed: set[str] = set()
            rolled_back: set[str] = set()
            failures: list[str] = []
            stop = asyncio.Event()
            rewrites = asyncio.create_task(_rewrite_files(root, stop))
            deadline = time.monotonic() + SECONDS
            counts = await asyncio.gather(*(_client(driver, n, deadline, committed, rolled_back, failures)
                                            for n in range(CLIENTS)))
            stop.set()
            started_rewrites = await rewrites
            records, _, _ = await driver.execute_query("MATCH (n:Soak) RETURN n.k AS k")
            present = {r["k"] for r in records}
    print(f"soak: {sum(counts)} operations by {CLIENTS} clients in {SECONDS:g} s, "
          f"{started_rewrites} file rewrites, {len(committed)} committed keys, {len(rolled_back)} rolled back")
    assert failures == []
    assert sum(counts) > CLIENTS and started_rewrites > 0
    assert committed <= present, f"lost {len(committed - present)} committed writes"
    assert not (rolled_back & present), "rolled-back writes survived"
    assert present <= committed, "writes that were never acknowledged appeared"
