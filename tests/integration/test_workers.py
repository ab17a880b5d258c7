"""`--workers N` (proxy/workers.py): N processes on the Bolt and HTTP ports, in front of an upstream.

Proxy B with two workers points at the session's proxy A (embedded FalkorDB), which plays the
upstream Neo4j. The tests look at what an operator sees: the processes, the sockets each one
serves, and what clients get while workers die and the server stops.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import ssl
import subprocess
import sys
import urllib.parse
from pathlib import Path

import httpx2
import neo4j
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.harness import NO_LOCKOUT, PASSWORD, REPO, USER, ProxyProcess, wait_until
from tests.http_client import basic, request


def children(pid: int) -> set[int]:
    """The live child processes of `pid`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


ESTABLISHED, LISTEN = "01", "0A"       # TCP states as /proc/net/tcp writes them


def sockets_on(port: int, state: str) -> set[str]:
    """Inodes of the TCP sockets on local `port` in `state`."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state:
                inodes.add(fields[9])
    return inodes


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


@pytest.fixture(scope="module")
def pool(proxy):
    """Proxy B, two workers, in front of the session's proxy A; SIGTERM stops them all."""
    with ProxyProcess(args=["--upstream", proxy.uri, "--workers", "2", *NO_LOCKOUT]) as process:
        assert wait_until(lambda: len(children(process.pid)) == 2)
        yield process
        workers = children(process.pid)
        assert process.stop(signal.SIGTERM) == 0
        assert wait_until(lambda: not any(alive(pid) for pid in workers))


def port(uri: str) -> int:
    return int(uri.rsplit(":", 1)[1])


def test_every_worker_listens_on_both_ports(pool):
    for listening in (sockets_on(port(pool.uri), LISTEN), sockets_on(port(pool.http_uri), LISTEN)):
        assert all(listening & socket_inodes(pid) for pid in children(pool.pid))


def test_connections_spread_over_the_workers(pool):
    drivers = [neo4j.GraphDatabase.driver(pool.uri, auth=(USER, PASSWORD)) for _ in range(16)]
    try:
        for number, driver in enumerate(drivers):
            assert driver.execute_query("RETURN $n AS n", n=number).records[0]["n"] == number
        served = sockets_on(port(pool.uri), ESTABLISHED)
        per_worker = [len(served & socket_inodes(pid)) for pid in sorted(children(pool.pid))]
        assert sum(per_worker) == 16
        assert all(per_worker), f"one worker served every connection: {per_worker}"
    finally:
        for driver in drivers:
            driver.close()


def test_http_transaction_spans_requests_on_new_connections(pool, driver):
    """Each request below is a new TCP connection, which the kernel gives to either worker: the
    one that did not begin the transaction hands the request to the one that did."""
    driver.execute_query("MATCH (n:WorkerTx) DELETE n")
    opened = request(pool.http_uri, "POST", "/db/neo4j/tx",
                     {"statements": [{"statement": "CREATE (:WorkerTx {k: 1})"}]})
    assert opened.status == 201, opened.text
    commit = opened.json["commit"]
    assert commit.startswith(pool.http_uri + "/db/neo4j/tx/")
    path = commit.removeprefix(pool.http_uri)
    for _ in range(12):                  # all on the owner: a 1 in 4096 chance
        follow = request(pool.http_uri, "POST", path.removesuffix("/commit"),
                         {"statements": [{"statement": "MATCH (n:WorkerTx) RETURN count(n) AS c"}]})
        assert follow.json["errors"] == [] and follow.json["results"][0]["data"][0]["row"] == [1]
        assert follow.json["commit"] == commit           # the URL says what the client reached
    assert request(pool.http_uri, "POST", path, {"statements": []}).json["errors"] == []
    assert request(pool.http_uri, "POST", path.removesuffix("/commit"), {"statements": []}).status == 404
    assert driver.execute_query("MATCH (n:WorkerTx) DELETE n RETURN count(*) AS c").records[0]["c"] == 1


async def test_an_mcp_session_spans_connections(pool):
    no_reuse = httpx2.Limits(max_keepalive_connections=0)
    async with httpx2.AsyncClient(auth=(USER, PASSWORD), limits=no_reuse) as http, \
            streamable_http_client(pool.http_uri + "/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        for number in range(8):
            result = await session.call_tool("read-cypher", {"query": f"RETURN {number} AS n"})
            header, *values = result.content[0].text.splitlines()       # JSON lines: names, then rows
            assert not result.is_error and (json.loads(header), json.loads(values[0])) == (["n"], [number])


def test_a_dead_worker_is_replaced_and_the_others_keep_serving(pool):
    before = children(pool.pid)
    victim = min(before)
    with neo4j.GraphDatabase.driver(pool.uri, auth=(USER, PASSWORD)) as driver:
        os.kill(victim, signal.SIGKILL)
        assert wait_until(lambda: len(children(pool.pid) - {victim}) == 2, timeout=60)
        for number in range(8):          # new connections: some land on the new worker
            with neo4j.GraphDatabase.driver(pool.uri, auth=(USER, PASSWORD)) as fresh:
                assert fresh.execute_query("RETURN $n AS n", n=number).records[0]["n"] == number
        assert driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
    assert "died (exit code -9): starting a new one" in "".join(pool.output)


def test_ctrl_c_stops_every_worker(proxy):
    """SIGINT (SIGTERM: the `pool` fixture's teardown)."""
    with ProxyProcess(args=["--upstream", proxy.uri, "--workers", "2"]) as process:
        workers = children(process.pid)
        assert len(workers) == 2
        assert process.stop(signal.SIGINT) == 0
        assert wait_until(lambda: not any(alive(pid) for pid in workers))


def test_workers_go_when_the_supervisor_is_killed(proxy):
    with ProxyProcess(args=["--upstream", proxy.uri, "--workers", "2"]) as process:
        workers = children(process.pid)
        try:
            process.stop(signal.SIGKILL)
            assert wait_until(lambda: not any(alive(pid) for pid in workers), timeout=30)
        finally:
            for pid in workers:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


def test_the_embedded_database_refuses_workers(tmp_path):
    result = subprocess.run([sys.executable, "-m", "proxy", "serve", "--data-dir", str(tmp_path),
                             "--workers", "2"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--workers needs --upstream" in result.stderr
    assert "--workers 1" in result.stderr


def test_over_tls_a_handed_over_request_is_answered_as_https(proxy, tmp_path):
    """The worker that owns the transaction answers with the URL the client reached (https://),
    though the request came to it over the workers' private socket."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    trust_any = ssl.create_default_context()
    trust_any.check_hostname, trust_any.verify_mode = False, ssl.CERT_NONE
    with ProxyProcess(args=["--upstream", proxy.uri, "--workers", "2", "--tls-cert", str(cert),
                            "--tls-key", str(key)]) as secure:
        https = secure.http_uri.replace("http://", "https://")
        statement = {"statements": [{"statement": "RETURN 1 AS one"}]}
        commit = post_over_tls(f"{https}/db/neo4j/tx", statement, trust_any)["commit"]
        assert commit.startswith(https)
        for _ in range(8):
            assert post_over_tls(commit.removesuffix("/commit"), statement, trust_any)["commit"] == commit
        assert post_over_tls(commit, {"statements": []}, trust_any)["errors"] == []


def post_over_tls(url: str, body: dict, context: ssl.SSLContext) -> dict:
    """POST `body` with the test login on a new TLS connection; the answer's JSON."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPSConnection(parts.hostname, parts.port, context=context, timeout=30)
    try:
        connection.request("POST", parts.path, json.dumps(body), {
            "Content-Type": "application/json", "Authorization": basic(USER, PASSWORD)})
        return json.loads(connection.getresponse().read())
    finally:
        connection.close()
