"""Fuzz the real server: mutated Cypher with odd parameters through the driver, and raw Bolt
byte streams through a socket. Every input must get an answer (a result, a Neo4j ClientError or
TransientError, or for broken Bolt a FAILURE or a closed connection) within 10 s, and the
server must keep serving. The report (pytest's summary) counts crashes, hangs and unexpected
errors; all must be 0. `FUZZ_LONG=1` runs the long form.
"""

from __future__ import annotations

import re
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neo4j.exceptions import DriverError, Neo4jError

from proxy.backends.falkordb.roles import NAMES
from proxy.bolt.chunking import chunk
from proxy.packstream import Packer
from tests.fuzz.report import HANG_SECONDS, LONG, QUERY_TIMEOUT, Report
from tests.fuzz.strategies import (AUTH, CONSTRAINED_LABELS, CONSTRAINED_WRITES, HANDSHAKES, PARAMETERS,
                                  bolt_messages, mutated_queries)
from tests.harness import PASSWORD, USER

CYPHER_EXAMPLES = 20_000 if LONG else 1_200
BOLT_EXAMPLES = 5_000 if LONG else 300
CONSTRAINT_EXAMPLES = 1_000 if LONG else 25
#: What the proxy answers while the embedded database is lost or restarting.
DATABASE_LOST = "Neo.TransientError.General.DatabaseUnavailable"
#: CI's sample is the same every run, so a red CI reproduces; the long form draws new inputs each time.
FUZZ_SETTINGS = dict(deadline=None, database=None, derandomize=not LONG,
                     suppress_health_check=list(HealthCheck))
pytestmark = pytest.mark.timeout(0 if LONG else 600)


class CypherClient:
    """Runs one query at a time through the driver, giving up after HANG_SECONDS."""

    def __init__(self, proxy):
        self.proxy = proxy
        self.pool = ThreadPoolExecutor(1)
        self.driver = self._driver()

    def _driver(self):
        return neo4j.GraphDatabase.driver(self.proxy.uri, auth=(USER, PASSWORD), max_transaction_retry_time=0)

    def run(self, query: str, params: dict) -> tuple[str, str]:
        future = self.pool.submit(self._run, query, params)
        try:
            return future.result(HANG_SECONDS)
        except FutureTimeout:
            stuck, self.driver = self.driver, self._driver()
            stuck.close()                           # unblocks the worker thread's socket
            self.pool = ThreadPoolExecutor(1)
            return "hang", f"no answer in {HANG_SECONDS:g} s"

    def _run(self, query: str, params: dict) -> tuple[str, str]:
        try:
            with self.driver.session() as session:
                result = session.run(neo4j.Query(query, timeout=QUERY_TIMEOUT), params)
                result.fetch(100)
                result.consume()
            return "ok", ""
        except Neo4jError as exc:
            if exc.code == DATABASE_LOST:                # the embedded database died or hung
                return "crash", f"{exc.code}: {exc.message}"
            if (exc.code or "").startswith("Neo.DatabaseError"):
                return "unexpected", f"{exc.code}: {exc.message}"
            return exc.code or "no code", ""
        except DriverError as exc:
            return self._dropped(exc)
        except (ValueError, TypeError, OverflowError) as exc:
            return "refused by the driver", str(exc)

    def _dropped(self, exc: Exception) -> tuple[str, str]:
        """The connection ended without an answer: a crash if the server stopped serving."""
        if not self.serving():
            return "crash", f"{type(exc).__name__}: {exc}"
        return "unexpected", f"connection dropped: {type(exc).__name__}: {exc}"

    def serving(self) -> bool:
        if self.proxy._proc.poll() is not None:
            return False
        try:
            with neo4j.GraphDatabase.driver(self.proxy.uri, auth=(USER, PASSWORD)) as driver:
                return driver.execute_query("RETURN 1 AS one").records[0]["one"] == 1
        except Exception:
            return False

    def close(self) -> None:
        self.driver.close()
        self.pool.shutdown(wait=False)


def _run_and_check(run, report: Report, client: CypherClient, proxy, since: int) -> None:
    """Run the hypothesis loop, then: the server still serves, and logged no traceback."""
    try:
        run()
        if not client.serving():
            report.record("crash", "not serving after the run")
    finally:
        client.close()
    log = "".join(proxy.output[since:])
    for traceback in re.findall(r"^.*\nTraceback \(most recent call last\):\n(?:(?!\d{4}-\d\d-\d\d ).*\n)*", log, re.M):
        report.record("unexpected", "traceback in the proxy log", traceback[-600:])
    assert report.bad() == 0, report.summary()


def test_fuzz_cypher(fuzz_proxy):
    report = Report("cypher (mutated TCK/demo queries x odd parameters)")
    since = len(fuzz_proxy.output)
    client = CypherClient(fuzz_proxy)
    count = 0

    @settings(max_examples=CYPHER_EXAMPLES, **FUZZ_SETTINGS)
    @given(query=mutated_queries(), params=PARAMETERS)
    def run(query, params):
        nonlocal count
        outcome, detail = client.run(query, params)
        report.record(outcome, detail, query)
        count += 1
        if count % 100 == 0:
            outcome, detail = client.run("MATCH (n) DETACH DELETE n", {})
            report.record(outcome, detail, "(cleanup) MATCH (n) DETACH DELETE n")

    _run_and_check(run, report, client, fuzz_proxy, since)


def _exchange(address: tuple[str, int], stream: bytes) -> tuple[str, bytes]:
    """Send `stream`, end our side, read until the server closes; the outcome and the reply."""
    try:
        sock = socket.create_connection(address, timeout=HANG_SECONDS)
    except OSError as exc:
        return "crash", str(exc).encode()
    reply = b""
    with sock:
        try:
            sock.sendall(stream)
            time.sleep(0.02)                         # let it answer before it sees our end
            sock.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + HANG_SECONDS
            while data := sock.recv(65536):
                reply += data
                if time.monotonic() > deadline:
                    return "hang", reply
        except socket.timeout:
            return "hang", reply
        except OSError:
            return "closed", reply                   # reset: it closed while we were sending
    if b"Neo.DatabaseError" in reply:
        return "unexpected", reply
    return ("failure then closed" if b"Neo.ClientError" in reply else "closed"), reply


def test_fuzz_bolt(fuzz_proxy):
    report = Report("bolt (handshakes x message streams)")
    since = len(fuzz_proxy.output)
    host, port = fuzz_proxy.uri.removeprefix("bolt://").rsplit(":", 1)
    login = chunk(Packer((5, 4)).pack_message(0x01, [{"user_agent": "fuzz/1"}])) + \
        chunk(Packer((5, 4)).pack_message(0x6A, [AUTH]))
    client = CypherClient(fuzz_proxy)
    count = 0

    @settings(max_examples=BOLT_EXAMPLES, **FUZZ_SETTINGS)
    @given(handshake=HANDSHAKES, logged_in=st.booleans(), messages=st.lists(bolt_messages(), max_size=8))
    def run(handshake, logged_in, messages):
        nonlocal count
        stream = handshake + (login if logged_in else b"") + b"".join(messages)
        outcome, reply = _exchange((host, int(port)), stream)
        report.record(outcome, reply[:200].hex(), stream[:300].hex())
        count += 1
        if count % 25 == 0 and not client.serving():
            report.record("crash", "not serving", stream[:300].hex())

    _run_and_check(run, report, client, fuzz_proxy, since)


def _constrained_write(session, form: str, label: str, key: int) -> None:
    """One write of `CONSTRAINED_WRITES` (a refused one raises the driver's ConstraintError)."""
    if form.startswith("tx"):
        with session.begin_transaction() as tx:
            tx.run(f"MERGE (n:{label} {{k: $k}}) SET n.seen = timestamp()", k=key + 10).consume()
            tx.run(f"CREATE (:{label} {{k: $k}})", k=key + 10 if form == "tx refused" else key).consume()
            if form == "tx rolled back":
                tx.rollback()
        return
    query = {
        "create": "CREATE (:{l} {{k: $k}})",
        "merge set": "MERGE (n:{l} {{uid: $k}}) ON CREATE SET n.k = $k",
        "two-row merge": "UNWIND [$k + 5, $k] AS k MERGE (n:{l} {{k: k, row: true}}) ON CREATE SET n.at = k",
        "create many": "UNWIND range(0, 3) AS i CREATE (:{l} {{k: $k + i}})",
        "delete": "MATCH (n:{l} {{k: $k}}) DETACH DELETE n",
        "set key": "MATCH (n:{l}) WHERE n.k = $k + 1 SET n.k = $k",
    }[form].format(l=label)
    session.run(query, k=key).consume()


def test_fuzz_constraint_writes(fuzz_proxy):
    """Sequences of writes that break unique constraints (FalkorDB 4.16 crashed on several;
    proxy/backends/falkordb/upkeep.py): each is answered, refused ones with
    ConstraintValidationFailed, and neither the database nor the proxy crashes."""
    report = Report("constraint writes (refused, committed, rolled back)")
    since, crashed_before = len(fuzz_proxy.output), _database_crashes(fuzz_proxy)
    client = CypherClient(fuzz_proxy)
    for label in CONSTRAINED_LABELS:
        client.run(f"CREATE CONSTRAINT {label.lower()}_k IF NOT EXISTS FOR (n:{label}) REQUIRE n.k IS UNIQUE", {})

    @settings(max_examples=CONSTRAINT_EXAMPLES, **FUZZ_SETTINGS)
    @given(writes=st.lists(CONSTRAINED_WRITES, min_size=1, max_size=6))
    def run(writes):
        for form, label, key in writes:
            try:
                with client.driver.session() as session:
                    _constrained_write(session, form, label, key)
                outcome, detail = "ok", ""
            except Neo4jError as exc:
                outcome = "crash" if exc.code == DATABASE_LOST else exc.code or "no code"
                detail = exc.message if outcome == "crash" else ""
                if (exc.code or "").startswith("Neo.DatabaseError"):
                    outcome, detail = "unexpected", f"{exc.code}: {exc.message}"
            except DriverError as exc:
                outcome, detail = client._dropped(exc)
            report.record(outcome, detail, f"{form} {label} k={key}")

    def run_and_count_crashes():
        run()
        for _ in range(_database_crashes(fuzz_proxy) - crashed_before):    # the replica's too
            report.record("crash", "a crash report in the embedded database's log")

    _run_and_check(run_and_count_crashes, report, client, fuzz_proxy, since)


def _database_crashes(proxy) -> int:
    logs = (proxy.data_dir / "falkordb" / name / "falkordb.log" for name in NAMES)
    return sum(log.read_text(errors="replace").count("crashed by signal") for log in logs if log.exists())
