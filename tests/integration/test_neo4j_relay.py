"""The Neo4j backend's relay and its own upstream client, with real clients: proxy B
(`--upstream`) -> proxy A (FalkorDB backend, standing in for Neo4j).

- every Bolt version the neo4j 5.x and 6.x drivers speak sees through B what it sees at A;
- pass-through records are the bytes A sent, not decoded and encoded again;
- an upstream that disconnects, stalls or dies mid-stream or mid-transaction: the client's
  driver raises what it raises when Neo4j itself goes away (ServiceUnavailable, SessionExpired
  under neo4j://), and nothing hangs. The faults are made by a TCP forwarder between B and A
  (cut, stall) and by killing A.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading

import neo4j
import pytest
from neo4j.exceptions import ServiceUnavailable, SessionExpired, TransientError

from core.backend import TxConfig
from proxy.backends.neo4j import DATABASE_UNAVAILABLE, Neo4jBackend
from proxy.backends.neo4j.client import message_end
from proxy.bolt import messages as m
from proxy.bolt.chunking import chunk
from proxy.bolt.handshake import MAGIC
from core.errors import CypherError, DatabaseLost
from proxy.packstream import Packer
from tests.harness import NEO4J6_PATH, NO_LOCKOUT, PASSWORD, REPO, USER, ProxyProcess, run_with_neo4j6

BASIC = {"scheme": "basic", "principal": USER, "credentials": PASSWORD}
LOST = (ServiceUnavailable, SessionExpired)


@pytest.fixture(scope="module")
def hop_graph(driver):
    driver.execute_query("MATCH (n:HopPerson) DETACH DELETE n")
    driver.execute_query("CREATE (:HopPerson {name: 'Ann', tags: ['x']})-[:KNOWS {w: 0.5}]->(:HopPerson {name: 'Bob'})")
    yield
    driver.execute_query("MATCH (n:HopPerson) DETACH DELETE n")


# --- every Bolt version, both driver generations ------------------------------------------------

def _versions_report(done) -> dict:
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("driver_major", [5, 6])
def test_every_bolt_version_sees_through_the_hop_what_it_sees_upstream(proxy, chained, hop_graph, driver_major):
    args = ["tests/integration/hop_versions_client.py", proxy.uri, chained.uri]
    if driver_major == 6:
        if not (NEO4J6_PATH / "neo4j").exists():
            pytest.skip("neo4j 6.x not installed: run `make install`")
        report = _versions_report(run_with_neo4j6(args, timeout=300))
    else:
        report = _versions_report(subprocess.run([sys.executable, *args], capture_output=True, text=True,
                                                 timeout=300, cwd=REPO))
    assert report["driver"].startswith(f"{driver_major}.")
    expected = ["4.4", "5.0", "5.1", "5.2", "5.3", "5.4", "5.6", "5.7", "5.8", *(["6.0"] if driver_major == 6 else [])]
    assert list(report["versions"]) == expected
    for version, sides in report["versions"].items():
        assert sides["b"] == sides["a"], version
        assert sides["b"]["protocol"] == [int(part) for part in version.split(".")]
        assert sides["b"]["values"] and sides["b"]["tx"] == [[1, 2], [10, 11, 12], [3, 4, 5], 1]
        assert sides["b"]["rolled_back"] == 0 and sides["b"]["error"][0] == "Neo.ClientError.Statement.SyntaxError"


# --- the relay hands over the upstream's bytes -------------------------------------------------

class RawClient:
    """A bare Bolt 5.8 socket: requests in, responses as `(signature, framed bytes)` out."""

    def __init__(self, uri: str):
        host, port = uri.removeprefix("bolt://").rsplit(":", 1)
        self._packer = Packer((5, 8))
        self._sock = socket.create_connection((host, int(port)), timeout=20)
        self._sock.sendall(MAGIC + bytes((0, 0, 8, 5)) + bytes(12))
        assert self._sock.recv(4) == bytes((0, 0, 8, 5))
        self._data = b""
        self.request((m.HELLO, {"user_agent": "test"}), (m.LOGON, BASIC))
        assert [signature for signature, _ in self.responses(2)] == [m.SUCCESS, m.SUCCESS]

    def request(self, *messages: tuple) -> None:
        self._sock.sendall(b"".join(chunk(self._packer.pack_message(signature, list(fields)))
                                    for signature, *fields in messages))

    def responses(self, summaries: int) -> list[tuple[int, bytes]]:
        """Messages up to the `summaries`-th that is not a RECORD."""
        out: list[tuple[int, bytes]] = []
        while summaries:
            found = message_end(self._data, 0)
            if found is None:
                self._data += self._sock.recv(1 << 16)
                continue
            end, signature = found
            out.append((signature, self._data[:end]))
            self._data = self._data[end:]
            summaries -= signature != m.RECORD
        return out

    def close(self) -> None:
        self._sock.close()


def _raw_records(uri: str, query: str) -> bytes:
    """The framed RECORD messages of `query`, as they arrive on the wire."""
    client = RawClient(uri)
    try:
        client.request((m.RUN, query, {}, {}), (m.PULL, {"n": -1}))
        return b"".join(raw for signature, raw in client.responses(2) if signature == m.RECORD)
    finally:
        client.close()


def test_reset_mid_stream_and_partial_pulls_keep_the_connection_usable(chained):
    client = RawClient(chained.uri)
    try:
        client.request((m.RUN, "UNWIND range(1, 100000) AS i RETURN i", {}, {}), (m.PULL, {"n": 5}))
        replies = client.responses(2)
        assert [s for s, _ in replies] == [m.SUCCESS, *[m.RECORD] * 5, m.SUCCESS]
        assert b"has_more" in replies[-1][1]
        client.request((m.PULL, {"n": 3}))
        assert [s for s, _ in client.responses(1)] == [*[m.RECORD] * 3, m.SUCCESS]
        client.request((m.RESET,), (m.RUN, "RETURN 7 AS seven", {}, {}), (m.PULL, {"n": -1}))
        replies = client.responses(3)
        assert [s for s, _ in replies] == [m.SUCCESS, m.SUCCESS, m.RECORD, m.SUCCESS]
        assert replies[-2][1] == chunk(Packer((5, 8)).pack_message(m.RECORD, [[7]]))
        client.request((m.BEGIN, {}), (m.RUN, "UNWIND range(1, 3000) AS i RETURN i", {}, {}), (m.PULL, {"n": 2}),
                       (m.DISCARD, {"n": -1}), (m.ROLLBACK,))
        assert [s for s, _ in client.responses(5)] == [m.SUCCESS, m.SUCCESS, m.RECORD, m.RECORD, m.SUCCESS,
                                                       m.SUCCESS, m.SUCCESS]
    finally:
        client.close()


async def test_pass_through_records_are_the_bytes_the_upstream_sent(proxy, hop_graph):
    query = "MATCH (a:HopPerson)-[r]->(b) UNWIND range(1, 3000) AS i RETURN a, r, i, 'row-' + toString(i) AS s"
    backend = Neo4jBackend(proxy.uri)
    try:
        credentials = await backend.authenticate(BASIC)
        result = await backend.run(query, {}, TxConfig(encoding="bolt5"), credentials)
        framed = b""
        while True:
            data, count, more = await result.fetch_framed(-1)
            framed += data
            if not more:
                break
        await result.consume()
    finally:
        await backend.stop()
    assert result.framed_encoding == "bolt5"
    assert framed == _raw_records(proxy.uri, query)


# --- faults between B and its upstream ----------------------------------------------------------

class Forwarder:
    """A TCP forwarder on loopback whose connections can be cut or stalled, and which can refuse."""

    def __init__(self, target: str):
        host, port = target.removeprefix("bolt://").rsplit(":", 1)
        self._target = (host, int(port))
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.uri = f"bolt://127.0.0.1:{self._listener.getsockname()[1]}"
        self._flowing = threading.Event()
        self._flowing.set()
        self._pairs: list[tuple[socket.socket, socket.socket]] = []
        self._sent: list[bytearray] = []       # per connection: the bytes the proxy sent upstream
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self._target)
            except OSError:                    # the upstream is down: so is the forwarded connection
                client.close()
                continue
            self._pairs.append((client, server))
            self._sent.append(sent := bytearray())
            for source, sink, log in ((client, server, sent), (server, client, bytearray())):
                threading.Thread(target=self._pump, args=(source, sink, log), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, log: bytearray) -> None:
        try:
            while data := source.recv(1 << 16):
                self._flowing.wait()
                log += data
                sink.sendall(data)
        except OSError:
            pass
        for end in (source, sink):
            try:
                end.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def requests_from(self, marker: bytes) -> list[int]:
        """The signatures of the requests sent upstream on the connection that carried `marker`,
        from the message holding it on."""
        (sent,) = [bytes(log) for log in self._sent if marker in log]
        position, signatures = 20, []                  # past the handshake
        while (found := message_end(sent, position)) is not None:
            end, signature = found
            if signatures or marker in sent[position:end]:
                signatures.append(signature)
            position = end
        return signatures

    def cut(self) -> None:
        """Disconnect every forwarded connection (new ones still go through)."""
        pairs, self._pairs = self._pairs, []
        for pair in pairs:
            for end in pair:
                try:
                    end.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def stall(self) -> None:
        self._flowing.clear()

    def resume(self) -> None:
        self._flowing.set()

    def close(self) -> None:
        self.resume()
        self._listener.close()
        self.cut()


@pytest.fixture(scope="module")
def upstream():
    """A FalkorDB-backed proxy of this module's own: the last test kills it."""
    with ProxyProcess(args=NO_LOCKOUT) as process:
        yield process


@pytest.fixture(scope="module")
def forwarder(upstream):
    fwd = Forwarder(upstream.uri)
    yield fwd
    fwd.close()


@pytest.fixture(scope="module")
def faulty(forwarder):
    """Proxy B whose upstream is reached through the forwarder."""
    with ProxyProcess(args=["--upstream", forwarder.uri, *NO_LOCKOUT]) as process:
        yield process


@pytest.mark.timeout(60)
@pytest.mark.parametrize("scheme", ["bolt", "neo4j"])
def test_upstream_disconnect_mid_stream_is_a_lost_connection(faulty, forwarder, scheme):
    uri = faulty.uri.replace("bolt://", f"{scheme}://")
    with neo4j.GraphDatabase.driver(uri, auth=(USER, PASSWORD), max_transaction_retry_time=0) as drv:
        with drv.session(fetch_size=500) as session:
            result = session.run("UNWIND range(1, 200000) AS i RETURN i")
            assert result.fetch(10)[-1]["i"] == 10
            forwarder.cut()
            with pytest.raises(ServiceUnavailable if scheme == "bolt" else SessionExpired):
                for _ in result:
                    pass
        # The next query gets a new upstream connection.
        assert drv.execute_query("RETURN 1 AS one").records[0]["one"] == 1


@pytest.mark.timeout(60)
def test_upstream_disconnect_mid_transaction_rolls_it_back(faulty, forwarder, upstream):
    with neo4j.GraphDatabase.driver(faulty.uri, auth=(USER, PASSWORD)) as drv, drv.session() as session:
        tx = session.begin_transaction()
        tx.run("CREATE (:HopLost {v: 1})").consume()
        forwarder.cut()
        with pytest.raises(LOST):
            tx.run("RETURN 1").consume()
        tx.close()
    with neo4j.GraphDatabase.driver(upstream.uri, auth=(USER, PASSWORD)) as direct:
        assert direct.execute_query("MATCH (n:HopLost) RETURN count(n) AS c").records[0]["c"] == 0


async def test_a_stalled_upstream_is_given_up_after_the_timeouts(forwarder):
    backend = Neo4jBackend(forwarder.uri, connect_timeout=0.5, stall_grace=0.3)
    try:
        credentials = await backend.authenticate(BASIC)
        forwarder.stall()
        try:
            async with asyncio.timeout(10):
                with pytest.raises(DatabaseLost):          # the transaction's timeout, plus the grace
                    await backend.run("RETURN 1", {}, TxConfig(timeout=0.2), credentials)
                with pytest.raises(CypherError) as info:   # a new login cannot even finish its handshake
                    await backend.authenticate(dict(BASIC, realm="other"))
                assert info.value.code == DATABASE_UNAVAILABLE
        finally:
            forwarder.resume()
        result = await backend.run("RETURN 2", {}, TxConfig(), credentials)
        assert await result.fetch(-1) == [[2]]
        await result.consume()
    finally:
        await backend.stop()


@pytest.mark.timeout(60)
def test_a_run_sent_alone_is_reset_upstream_not_read_to_its_end(faulty, forwarder):
    """Neo4j rolls back an auto-commit query RESET before the client's PULL (a PULL or DISCARD
    would commit it): the proxy sends a RUN that came alone alone, and RESET behind it."""
    client = RawClient(faulty.uri)
    try:
        client.request((m.RUN, "CREATE (:Ghost) RETURN 'ghost run'", {}, {}))
        assert [s for s, _ in client.responses(1)] == [m.SUCCESS]
        client.request((m.RESET,))
        assert [s for s, _ in client.responses(1)] == [m.SUCCESS]
        client.request((m.RUN, "RETURN 'pipelined run'", {}, {}), (m.PULL, {"n": -1}))
        assert [s for s, _ in client.responses(2)] == [m.SUCCESS, m.RECORD, m.SUCCESS]
    finally:
        client.close()
    assert forwarder.requests_from(b"ghost run")[:2] == [m.RUN, m.RESET]
    assert forwarder.requests_from(b"pipelined run")[:2] == [m.RUN, m.PULL]   # one round trip


@pytest.mark.timeout(60)
def test_upstream_killed_mid_stream_then_unreachable(faulty, upstream):
    with neo4j.GraphDatabase.driver(faulty.uri, auth=(USER, PASSWORD), max_transaction_retry_time=0) as drv:
        with drv.session(fetch_size=500) as session:
            result = session.run("UNWIND range(1, 200000) AS i RETURN i")
            assert result.fetch(1)[0]["i"] == 1
            os.kill(upstream.pid, signal.SIGKILL)   # (the fixture cleans up after its servers stopped)
            with pytest.raises(LOST):
                for _ in result:
                    pass
        # While the upstream is down, a query is refused at once as a transient error.
        with pytest.raises(TransientError) as info:
            drv.execute_query("RETURN 1")
        assert info.value.code == DATABASE_UNAVAILABLE


# --- neo4j:// upstreams and what the client asks of a transaction ---------------------------------

async def test_a_routed_upstream_sends_writes_to_writers_and_reads_to_readers(proxy):
    backend = Neo4jBackend(proxy.uri.replace("bolt://", "neo4j://"))
    try:
        credentials = await backend.authenticate(BASIC)
        for mode in ("w", "r"):
            result = await backend.run("RETURN $mode AS mode", {"mode": mode}, TxConfig(mode=mode), credentials)
            assert await result.fetch(-1) == [[mode]]
            await result.consume()
        (table,) = [t for (database, _, _), t in backend._router._tables.items() if database is None]
        address = proxy.uri.removeprefix("bolt://")
        assert [str(a) for a in table.writers] == [str(a) for a in table.readers] == [address]
        backend._router.forget(table.writers[0])          # as after a connection failure: asked again
        tx = await backend.begin(TxConfig(), credentials)
        assert await (await tx.run("RETURN 1", {})).fetch(-1) == [[1]]
        await tx.rollback()
    finally:
        await backend.stop()


def test_transaction_options_reach_the_upstream_through_the_hop(chained):
    """Notification filters, metadata, timeouts and read mode pass through (the upstream refusing
    none of them), on both relayed and decoded paths."""
    with neo4j.GraphDatabase.driver(chained.uri, auth=(USER, PASSWORD),
                                    notifications_min_severity="WARNING") as drv:
        with drv.session(default_access_mode=neo4j.READ_ACCESS, fetch_size=3) as session:
            query = neo4j.Query("UNWIND range(1, 10) AS i RETURN i", timeout=5.0, metadata={"app": "hop"})
            assert [r["i"] for r in session.run(query)] == list(range(1, 11))
            with session.begin_transaction(timeout=5.0, metadata={"app": "hop"}) as tx:
                assert tx.run("RETURN 1 AS one").single()["one"] == 1
