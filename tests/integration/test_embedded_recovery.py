"""The embedded database dying, hanging, or outliving its proxy: the proxy notices, restarts it on
the same files (never a second instance), clients get retryable errors meanwhile, nothing
acknowledged is lost. Also: its files are private."""

from __future__ import annotations

import os
import signal
import stat
import time
from contextlib import contextmanager
from pathlib import Path

import neo4j
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from proxy.backends.falkordb.roles import NAMES, primary_address
from tests.harness import PASSWORD, USER, ProxyProcess, wait_until
from tests.integration.test_lifecycle import _database_pids


def _pid(data_dir: Path, name: str) -> int:
    return int((data_dir / "falkordb" / name / "redis.pid").read_text())


def _primary_pid(data_dir: Path) -> int:
    socket_path, _ = primary_address(data_dir / "falkordb")
    return _pid(data_dir, socket_path.parent.name)


@contextmanager
def _serving(data_dir: Path):
    """A proxy on `data_dir` and a driver connected to it."""
    with ProxyProcess(data_dir=data_dir) as proc, \
            neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
        yield proc, driver


def _count(driver: neo4j.Driver, label: str) -> int:
    return driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS c").records[0]["c"]


@pytest.mark.parametrize("fault", [signal.SIGKILL, signal.SIGSTOP], ids=["dead", "hung"])
def test_watchdog_restarts_a_dead_or_hung_database(tmp_path, fault):
    data_dir = tmp_path / "data"
    with _serving(data_dir) as (proc, driver):
        driver.execute_query("UNWIND range(1, 300) AS i CREATE (:Kept {i: i})")
        victim = _primary_pid(data_dir)
        os.kill(victim, fault)
        started = time.monotonic()
        # The driver retries the TransientError it gets while the database is away.
        with driver.session() as session:
            session.execute_write(lambda tx: tx.run("CREATE (:AfterFault)").consume())
        took = time.monotonic() - started
        assert _count(driver, "Kept") == 300 and _count(driver, "AfterFault") == 1
        assert not os.path.exists(f"/proc/{victim}") or fault == signal.SIGSTOP and \
            wait_until(lambda: not os.path.exists(f"/proc/{victim}"), 5)
        # primary + replica, no third (a fork child of either briefly carries its title: wait it out)
        assert wait_until(lambda: len(_database_pids(data_dir)) == 2, 10)
        assert "restarting the embedded database" in "".join(proc.output)
    print(f"{fault.name}: the write went through {took:.1f} s after the fault")


#: Keeps the server's main thread busy (and burning CPU) for 8 s, as a big write's commit does:
#: deleting 10M nodes held it for minutes, and the watchdog used to kill it after ~3 s.
BUSY_SCRIPT = "local t0 = os.clock() while os.clock() - t0 < 8 do end return 1"


def test_a_busy_database_is_not_restarted(tmp_path):
    data_dir = tmp_path / "data"
    with _serving(data_dir) as (proc, driver):
        driver.execute_query("UNWIND range(1, 300) AS i CREATE (:Kept {i: i})")
        busy = _primary_pid(data_dir)
        socket_path, password = primary_address(data_dir / "falkordb")
        started = time.monotonic()
        with redis.Redis(unix_socket_path=str(socket_path), password=password, socket_timeout=60,
                         retry=Retry(NoBackoff(), 0)) as client:     # one EVAL: a retry would get BUSY
            assert client.eval(BUSY_SCRIPT, 0) == 1           # PINGs get BUSY meanwhile
        assert time.monotonic() - started > 6             # (os.clock counts all its threads)
        assert _count(driver, "Kept") == 300 and _primary_pid(data_dir) == busy
        assert "restarting the embedded database" not in "".join(proc.output)


def test_a_server_left_behind_by_a_killed_proxy_is_stopped_at_the_next_start(tmp_path):
    data_dir = tmp_path / "data"
    with _serving(data_dir) as (first, driver):
        driver.execute_query("CREATE (:Kept)")
        wedged = _primary_pid(data_dir)
        os.kill(wedged, signal.SIGSTOP)              # a wedged server ignores the SIGTERM it gets
        first.stop(signal.SIGKILL)
    assert os.path.exists(f"/proc/{wedged}")
    with _serving(data_dir) as (second, driver):
        assert not os.path.exists(f"/proc/{wedged}") or \
            Path(f"/proc/{wedged}/stat").read_text().split()[2] == "Z"
        assert _count(driver, "Kept") == 1
        assert wait_until(lambda: len(_database_pids(data_dir)) == 2, 10)


def test_database_files_are_private(tmp_path):
    data_dir = tmp_path / "data"
    with _serving(data_dir) as (proc, driver):
        driver.execute_query("UNWIND range(1, 100) AS i CREATE (:File {i: i})")
        with driver.session() as session:
            session.execute_write(lambda tx: tx.run("CREATE (:File)").consume())
        root = data_dir / "falkordb"
        paths = [root, *root.rglob("*")]
        assert {p.name for p in root.iterdir()} >= {*NAMES, "auth", "roles"}
        for path in paths:
            mode = stat.S_IMODE(path.lstat().st_mode)
            if path.is_socket():
                continue
            expected = 0o700 if path.is_dir() else 0o600
            assert mode & 0o077 == 0, f"{path} is {oct(mode)}, expected {oct(expected)}"


def test_a_primary_that_cannot_load_its_files_gives_way_to_the_replica(tmp_path):
    """The long fuzz left a primary whose append-only file crashed FalkorDB on replay (the
    replica's loaded): the proxy starts from the replica's files and keeps the others aside."""
    data_dir = tmp_path / "data"
    with _serving(data_dir) as (proc, driver):
        driver.execute_query("UNWIND range(1, 300) AS i CREATE (:Kept {i: i})")
        time.sleep(1)                                       # replicated (asynchronously)
        primary = primary_address(data_dir / "falkordb")[0].parent
    with open(next((primary / "appendonlydir").glob("*.incr.aof")), "ab") as aof:
        aof.write(b"this is not a redis command\r\n")      # the server exits while loading it
    with _serving(data_dir) as (proc, driver):
        assert _count(driver, "Kept") == 300
        assert primary_address(data_dir / "falkordb")[0].parent != primary
        assert list(primary.glob("appendonlydir.unloadable-*"))
        assert "could not load its files" in "".join(proc.output)
        driver.execute_query("CREATE (:AfterRecovery)")
        assert _count(driver, "AfterRecovery") == 1


def _attribute_names(data_dir: Path, name: str) -> list:
    socket_path, password = primary_address(data_dir / "falkordb")
    with redis.Redis(unix_socket_path=str(socket_path.parent.parent / name / "falkordb.sock"), password=password) as client:
        return client.execute_command("GRAPH.RO_QUERY", "neo4j", "CALL db.propertyKeys()")[1]


@pytest.mark.parametrize("phantom", ["MATCH (n:A) SET n.ghost = null", "CREATE (:A {ghost: 1 / 0})"],
                         ids=["no-op SET", "failed write"])
def test_an_attribute_name_lost_in_replication_is_healed(tmp_path, phantom):
    """FalkorDB 4.16: a no-op `SET n.new = null` or a write failing part-way adds an attribute
    name on the primary alone (its effects lose it), so the next new attribute gets a different
    id on the replica: the replica read `n.z` as null, crashed later, and the primary's
    append-only file (the same effects) crashed the primary at its next start. The proxy sees
    the primary's names grow under such a write and re-syncs the replica (right away, or after
    the transaction that holds it); here the primary also restarts from its rewritten files.
    tests/integration/test_falkordb_upkeep.py has the other shapes."""
    data_dir = tmp_path / "data"
    with _serving(data_dir) as (proc, driver):
        driver.execute_query("CREATE (:A {x: 1})")
        driver.execute_query("MATCH (n:A) SET n.y = 2")                   # consistent: no re-sync
        assert "re-syncs in full" not in "".join(proc.output)
        replica = next(name for name in NAMES if name != primary_address(data_dir / "falkordb")[0].parent.name)
        if "/ 0" in phantom:
            # auto-commit, failed after creating: the replica, which never had the name, becomes
            # the primary (falkordb.pair.discard_failed_write), so the name is gone as in Neo4j
            with driver.session() as session, pytest.raises(neo4j.exceptions.ClientError):
                session.run(phantom).consume()
            assert primary_address(data_dir / "falkordb")[0].parent.name == replica
            expected = [[b"x"], [b"y"], [b"z"]]
        else:
            driver.execute_query(phantom)
            expected = [[b"x"], [b"y"], [b"ghost"], [b"z"]]
        driver.execute_query("MATCH (n:A) SET n.z = 5")                   # a transaction: checks first
        replica = next(name for name in NAMES if name != primary_address(data_dir / "falkordb")[0].parent.name)
        assert wait_until(lambda: _attribute_names(data_dir, replica) == expected, 15)
        if "/ 0" not in phantom:
            assert "re-syncs in full" in "".join(proc.output)
        socket_path, password = primary_address(data_dir / "falkordb")
        with redis.Redis(unix_socket_path=str(socket_path), password=password) as client:
            assert wait_until(lambda: not client.info("persistence")["aof_rewrite_in_progress"]
                              and not client.info("persistence")["aof_rewrite_scheduled"], 15)
        os.kill(_primary_pid(data_dir), signal.SIGKILL)
        with driver.session() as session:     # retried while the pair restarts on the same files
            record = session.execute_read(lambda tx: tx.run("MATCH (n:A) RETURN n.x AS x, n.z AS z").single())
        assert (record["x"], record["z"]) == (1, 5)
        assert "could not load its files" not in "".join(proc.output)
