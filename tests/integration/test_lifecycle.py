"""Process lifecycle: clean shutdown, persistence across restarts, no orphaned database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import neo4j

from tests.harness import PASSWORD, REPO, USER, ProxyProcess, free_port, wait_until


def _database_pids(data_dir: Path) -> list[int]:
    """PIDs of redis-server processes using `data_dir` (read from /proc)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "redis-server" in cmdline and str(data_dir) in cmdline:
            pids.append(int(entry.name))
    return pids


def _count(uri: str, label: str) -> int:
    with neo4j.GraphDatabase.driver(uri, auth=(USER, PASSWORD)) as drv:
        records, _, _ = drv.execute_query(f"MATCH (n:{label}) RETURN count(n) AS c")
        return records[0]["c"]


def test_data_survives_restart_and_sigkill(tmp_path):
    data_dir = tmp_path / "data"
    first = ProxyProcess(data_dir=data_dir).start()
    with neo4j.GraphDatabase.driver(first.uri, auth=(USER, PASSWORD)) as drv:
        drv.execute_query("UNWIND range(1, 500) AS i CREATE (:Kept {i: i})")
    assert _database_pids(data_dir), "the embedded database should be running"
    assert first.stop(signal.SIGTERM) == 0
    assert wait_until(lambda: not _database_pids(data_dir)), "SIGTERM must stop the database"

    second = ProxyProcess(data_dir=data_dir).start()
    assert _count(second.uri, "Kept") == 500
    with neo4j.GraphDatabase.driver(second.uri, auth=(USER, PASSWORD)) as drv:
        drv.execute_query("UNWIND range(1, 10) AS i CREATE (:AfterRestart {i: i})")
    second.stop(signal.SIGKILL)
    assert wait_until(lambda: not _database_pids(data_dir), timeout=15), \
        "the database must die with a killed proxy"

    third = ProxyProcess(data_dir=data_dir).start()
    try:
        assert _count(third.uri, "Kept") == 500
        assert _count(third.uri, "AfterRestart") == 10
    finally:
        third.stop()


def test_configuration_from_environment(tmp_path):
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CYPHER_PROXY_")}
    env.update(CYPHER_PROXY_BOLT=f"127.0.0.1:{port}", CYPHER_PROXY_HTTP=f"127.0.0.1:{free_port()}",
               CYPHER_PROXY_DATA_DIR=str(tmp_path / "d"), CYPHER_PROXY_USER="alice",
               CYPHER_PROXY_PASSWORD="s3cret", CYPHER_PROXY_LOG_LEVEL="warning")
    proc = subprocess.Popen([sys.executable, "-m", "proxy", "serve"], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = ""
        for line in proc.stdout:
            if line.startswith("ready: "):
                break
        assert line.strip() == f"ready: bolt://127.0.0.1:{port}"
        with neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("alice", "s3cret")) as drv:
            assert drv.execute_query("RETURN 7 AS x").records[0]["x"] == 7
        with neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=(USER, PASSWORD)) as drv:
            try:
                drv.verify_connectivity()
                raise AssertionError("the default password must not work when another is configured")
            except neo4j.exceptions.AuthError:
                pass
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(20) == 0
    assert wait_until(lambda: not _database_pids(tmp_path / "d"))


def test_tls(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    with ProxyProcess(args=["--tls-cert", str(cert), "--tls-key", str(key)]) as proc:
        assert proc.uri.startswith("bolt+s://")
        uri = proc.uri.replace("bolt+s://", "bolt+ssc://")      # self-signed: trust any cert
        with neo4j.GraphDatabase.driver(uri, auth=(USER, PASSWORD)) as drv:
            assert drv.execute_query("RETURN 'secure' AS s").records[0]["s"] == "secure"
