"""The Neo4j backend against Neo4j's recorded behaviour: testkit's `boltstub` plays the upstream.

`neo4j-drivers/testkit`'s stub server speaks Bolt as a script says (its format: testkit's
`boltstub/README.md`). The scripts below are written in that format from the conversations
testkit records for Neo4j 5 (routing tables, `NotALeader`, failures with Neo4j's codes,
re-authentication, connections dropped mid-stream and mid-transaction, a stalled answer). A real
driver talks to the proxy, whose `--upstream` is the stub; the tests check what that client sees,
not what the proxy sends upstream, so they hold for any Neo4j backend. Each script allows what any client of
Neo4j may send around the scenario (RESET, LOGOFF, GOODBYE, the default-database question,
transactions), and the stub reports a "Script mismatch" when the proxy sends anything else.

The stub runs in its own environment (`.cache/boltstub`, built by `make install` from a pinned
testkit commit fetched from GitHub); where GitHub is out of reach the module skips, saying so.
"""

from __future__ import annotations

import concurrent.futures
import json
import signal
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import neo4j
import pytest
from neo4j.exceptions import AuthError, ClientError, ServiceUnavailable, SessionExpired, TransientError

from extensions.planner.catalog import build_registry
from extensions.planner.planner import ExtensionPlanner
from proxy.backends.neo4j.dialect import NEO4J
from tests.harness import REPO, ProxyProcess, free_port

STUB_ENV = REPO / ".cache" / "boltstub"
STUB_PYTHON = STUB_ENV / "bin" / "python"
pytestmark = pytest.mark.skipif(not (STUB_ENV / "src" / "boltstub").is_dir(), reason=(
    f"testkit's boltstub is not installed in {STUB_ENV} (make install builds it when GitHub "
    "is reachable)"))

USER, PASSWORD = "neo4j", "pass"
CONNECTION_LOST = (ServiceUnavailable, SessionExpired)
STEP_TIMEOUT = 20.0          # seconds any one client step may take: nothing may hang
STALL = 5                    # seconds the upstream stalls in the stall test


# --- scripts --------------------------------------------------------------------------------

def script(*branches: str, users: dict[str, str] | None = None, head: str = "", bolt: str = "5.4") -> str:
    """A Neo4j server speaking Bolt `bolt` to any number of concurrent connections: each logs in (LOGON) as one
    of `users` (user -> password; a wrong password gets Neo4j's Unauthorized), then any sequence
    of `branches` and the generic requests (alternatives in the stub's `{{ ... ---- ... }}`; the
    first that matches is taken). A branch may use `#USER#`, replaced by the logged-in user.
    `head`: more bang lines (e.g. `!: PY ...`)."""
    users = users or {USER: PASSWORD}
    logins = "\n----\n".join(_login(user, password, branches) for user, password in users.items())
    return f"""!: BOLT {bolt}
!: ALLOW CONCURRENT
{head}

A: HELLO {{"{{}}": "*"}}
{{*
    {{{{
{logins}
    ----
        C: LOGON {{"{{}}": "*"}}
        S: FAILURE {{"code": "Neo.ClientError.Security.Unauthorized", "message": "The client is unauthorized due to authentication failure."}}
    ----
        C: RESET
        S: SUCCESS {{}}
    }}}}
*}}
?: GOODBYE
"""


def _login(user: str, password: str, branches: tuple[str, ...]) -> str:
    alternatives = "\n----\n".join([*(b.replace("#USER#", user) for b in branches), GENERIC])
    return f"""
        C: LOGON {{"scheme": "basic", "principal": "{user}", "credentials": "{password}"}}
        S: SUCCESS {{}}
        {{*
            {{{{
{alternatives}
            }}}}
        *}}
        ?: LOGOFF
"""


#: What a logged-in client of Neo4j may send around any scenario.
GENERIC = """
        C: RESET
        S: SUCCESS {}
    ----
        C: RUN "SHOW DEFAULT DATABASE YIELD name" "*" "*"
        S: SUCCESS {"fields": ["name"]}
        {{
            C: PULL "*"
            S: RECORD ["neo4j"]
               SUCCESS {"type": "r"}
        ----
            C: DISCARD "*"
            S: SUCCESS {"type": "r"}
        }}
    ----
        C: BEGIN "*"
        S: SUCCESS {}
    ----
        C: COMMIT
        S: SUCCESS {"bookmark": "stub:1"}
    ----
        C: ROLLBACK
        S: SUCCESS {}
"""


def answer(query: str, rows: list[str], *, field: str = "x", then: str = 'SUCCESS {"type": "r"}') -> str:
    """A branch answering `query` with one-column `rows` (JSON values), then `then`."""
    records = "\n".join(f"        S: RECORD [{row}]" for row in rows)
    return f"""
        C: RUN "{query}" "*" "*"
        S: SUCCESS {{"fields": ["{field}"]}}
        C: PULL "*"
{records}
        S: {then}
"""


def failure(query: str, code: str, message: str, *, python: str = "pass", gql: dict | None = None) -> str:
    """A branch answering `query` with Neo4j's FAILURE (the pipelined PULL, if sent, is IGNORED),
    after running the Python line `python` in the stub. `gql`: the GQL status fields of Bolt
    5.7+, whose FAILURE names the code `neo4j_code`."""
    metadata = _failure_metadata(code, message, gql)
    return f"""
        C: RUN "{query}" "*" "*"
        PY: {python}
        S: FAILURE {json.dumps(metadata)}
        {{?
            C: PULL "*"
            S: IGNORED
        ?}}
"""


def failure_on_pull(query: str, code: str, message: str, *, python: str = "pass") -> str:
    """A branch running `query` and failing its PULL (as testkit's `retry_with_fail_after_pull`)."""
    return f"""
        C: RUN "{query}" "*" "*"
        S: SUCCESS {{"fields": ["x"]}}
        C: PULL "*"
        PY: {python}
        S: FAILURE {json.dumps(_failure_metadata(code, message, None))}
"""


def _failure_metadata(code: str, message: str, gql: dict | None) -> dict:
    return {"code": code, "message": message} if gql is None else {"neo4j_code": code, "message": message, **gql}


# --- processes ------------------------------------------------------------------------------

class Stub:
    """testkit's stub server on a fixed port, playing one script at a time."""

    def __init__(self, tmp: Path, port: int | None = None):
        self.tmp, self.port = tmp, port or free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.output = ""

    @contextmanager
    def playing(self, text: str):
        """Serve `text` until the block ends; then stop and fail on any script mismatch."""
        path = self.tmp / f"{self.port}-{threading.get_ident()}.script"
        path.write_text(text)
        process = subprocess.Popen([str(STUB_PYTHON), "-m", "boltstub", "-v", "-l", self.address, str(path)],
                                   cwd=STUB_ENV / "src", stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True)
        try:
            assert process.stdout.readline().strip() == "Listening", process.stdout.read()
            yield self
        finally:
            self.output = _stop(process)
            print(f"--- stub {self.address} ---\n{self.output}")     # pytest shows it when a test fails
        assert "Script mismatch" not in self.output and "Traceback" not in self.output, self.output


def _stop(process: subprocess.Popen) -> str:
    """testkit's way: a first SIGINT finishes the scripts, a second closes connections, then kill."""
    for sig in (signal.SIGINT, signal.SIGINT, signal.SIGKILL):
        if process.poll() is not None:
            break
        process.send_signal(sig)
        try:
            process.wait(3)
        except subprocess.TimeoutExpired:
            continue
    process.wait()
    return process.stdout.read()


def within(step, seconds: float = STEP_TIMEOUT):
    """Run `step()`; fail if it takes longer than `seconds` (a hang) instead of waiting forever."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    try:
        return pool.submit(step).result(seconds)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"the client waited more than {seconds:g} s: the proxy hangs")
    finally:
        pool.shutdown(wait=False)


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    return Stub(tmp_path_factory.mktemp("stub"))


@pytest.fixture(scope="module")
def proxy_to_stub(upstream):
    """A proxy whose upstream is the stub's port: the stub plays a plain Neo4j while the proxy
    starts, then each test's script."""
    process = ProxyProcess(args=["--upstream", f"bolt://{upstream.address}", "--workers", "1"])
    try:
        with upstream.playing(script()):
            process.start()
        yield process
    finally:
        process.stop()


@pytest.fixture
def client(proxy_to_stub):
    with neo4j.GraphDatabase.driver(proxy_to_stub.uri, auth=(USER, PASSWORD), connection_timeout=5,
                                    max_transaction_retry_time=0) as driver:
        yield driver


def rows(driver, query: str, **config) -> list:
    with driver.session(**config) as session:
        return [record.values() for record in session.run(query)]


# --- errors ---------------------------------------------------------------------------------

NEO4J_FAILURES = [
    ("RETURN 1 / 0 AS x", "Neo.ClientError.Statement.ArithmeticError", "/ by zero", ClientError),
    ("MATCH (n) RETURN n AS x", "Neo.TransientError.Transaction.DeadlockDetected",
     "ForsetiClient[transactionId=7] can't acquire ExclusiveLock", TransientError),
    ("CREATE (n) RETURN n AS x", "Neo.ClientError.Security.Forbidden",
     "Create node with labels '' on database 'neo4j' is not allowed for user 'neo4j'.", ClientError),
]


def test_neo4j_failures_reach_the_client_with_their_code_and_message(upstream, client):
    failures = (failure(query, code, message) for query, code, message, _ in NEO4J_FAILURES)
    with upstream.playing(script(*failures, answer("RETURN 1 AS x", ["1"]))):
        for query, code, message, kind in NEO4J_FAILURES:
            with pytest.raises(kind) as raised:
                within(lambda: rows(client, query))
            assert (raised.value.code, raised.value.message) == (code, message)
        assert within(lambda: rows(client, "RETURN 1 AS x")) == [[1]]


@pytest.mark.filterwarnings("ignore:GQLSTATUS support is a preview feature")
def test_a_bolt_57_failure_keeps_its_gql_status(upstream, client):
    """As Neo4j 5.26 sends it: the status description ends with the message."""
    gql = {"gql_status": "22012", "description": "error: data exception - division by zero. / by zero",
           "diagnostic_record": {"OPERATION": "", "OPERATION_CODE": "0", "CURRENT_SCHEMA": "/"}}
    query, code, message, kind = NEO4J_FAILURES[0]
    with upstream.playing(script(failure(query, code, message, gql=gql), bolt="5.7")):
        with pytest.raises(kind) as raised:
            within(lambda: rows(client, query))
    error = raised.value
    assert (error.code, error.message, error.gql_status) == (code, message, gql["gql_status"])
    assert error.gql_status_description == gql["description"]


# --- authentication -------------------------------------------------------------------------

def test_each_client_runs_as_its_own_user_and_bad_passwords_get_neo4js_error(upstream, proxy_to_stub):
    users = {"alice": "a-pass", "bob": "b-pass"}
    with upstream.playing(script(answer("RETURN 'who' AS x", ['"#USER#"']), users=users)):
        drivers = {user: neo4j.GraphDatabase.driver(proxy_to_stub.uri, auth=(user, password))
                   for user, password in users.items()}
        try:
            for user in [*users, *users]:
                assert within(lambda: rows(drivers[user], "RETURN 'who' AS x")) == [[user]]
            # Bolt 5.1 re-authentication: bob's session on alice's driver
            assert within(lambda: rows(drivers["alice"], "RETURN 'who' AS x", auth=("bob", "b-pass"))) == [["bob"]]
            assert within(lambda: rows(drivers["alice"], "RETURN 'who' AS x")) == [["alice"]]
        finally:
            for driver in drivers.values():
                driver.close()
        with neo4j.GraphDatabase.driver(proxy_to_stub.uri, auth=("alice", "wrong")) as intruder:
            with pytest.raises(AuthError) as raised:
                within(lambda: rows(intruder, "RETURN 'who' AS x"))
        assert raised.value.code == "Neo.ClientError.Security.Unauthorized"


# --- the upstream goes away -----------------------------------------------------------------

STREAM = "UNWIND range(1, 5) AS i RETURN i AS x"
EXIT_MID_STREAM = f"""
        C: RUN "{STREAM}" "*" "*"
        S: SUCCESS {{"fields": ["x"]}}
        C: PULL "*"
        S: RECORD [1]
           RECORD [2]
           <EXIT>
"""
WRITE = "CREATE (n:Item) RETURN 1 AS x"
EXIT_ON_RUN_IN_TX = f"""
        C: RUN "{WRITE}" {{}} {{}}
        S: <EXIT>
"""
EXIT_ON_COMMIT = f"""
        C: RUN "{WRITE}" {{}} {{}}
        S: SUCCESS {{"fields": ["x"]}}
        C: PULL "*"
        S: RECORD [1]
           SUCCESS {{"type": "w"}}
        C: COMMIT
        S: <EXIT>
"""


def _write_in_transaction(driver) -> None:
    with driver.session() as session, session.begin_transaction() as tx:
        list(tx.run(WRITE))
        tx.commit()


def test_upstream_lost_mid_stream_ends_the_clients_connection(upstream, client):
    with upstream.playing(script(EXIT_MID_STREAM)):
        with pytest.raises(CONNECTION_LOST):
            within(lambda: rows(client, STREAM))


@pytest.mark.parametrize("branch", [EXIT_ON_RUN_IN_TX, EXIT_ON_COMMIT], ids=["on-run", "on-commit"])
def test_upstream_lost_mid_transaction_ends_the_clients_connection(upstream, client, branch):
    """At COMMIT the driver raises IncompleteCommit (a ServiceUnavailable): it cannot know
    whether the transaction was committed."""
    with upstream.playing(script(branch)):
        with pytest.raises(CONNECTION_LOST):
            within(lambda: _write_in_transaction(client))


@pytest.mark.parametrize("branch", [EXIT_MID_STREAM, EXIT_ON_RUN_IN_TX, EXIT_ON_COMMIT],
                         ids=["mid-stream", "on-run-in-tx", "on-commit"])
def test_after_the_upstream_is_lost_clients_get_an_error_and_then_service_again(upstream, client, branch):
    """Whatever the error, it comes at once (nothing hangs), and once the upstream is back the
    same client is served again."""
    with upstream.playing(script(branch)):
        with pytest.raises((neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError)):
            within(lambda: rows(client, STREAM) if branch is EXIT_MID_STREAM else _write_in_transaction(client))
    with upstream.playing(script(answer("RETURN 1 AS x", ["1"]))):
        assert within(lambda: rows(client, "RETURN 1 AS x")) == [[1]]


# --- an extension query's probes, sent together ------------------------------------------------

#: An extension query whose node probe and value probe go upstream in one write.
SEPARATED = "MATCH (p:ProductionProfile) UNWIND ['2015', '2016'] AS y RETURN y, ts_avg(p.prd_oe_net, y) AS v"


def separated_probes(tmp: Path) -> tuple[str, str]:
    """The texts of SEPARATED's node probe and value probe, as the proxy plans them for Neo4j."""
    split = ExtensionPlanner(build_registry(tmp), dialect=NEO4J).plan(SEPARATED).steps[0].split
    return split.node_text, split.value_text


def test_a_failing_first_probe_gives_the_client_neo4js_error(upstream, client, tmp_path):
    """The value probe behind the failed node probe is IGNORED (if it was sent): the client gets
    the node probe's error, and the connection serves the next query."""
    node_probe, value_probe = map(json.dumps, separated_probes(tmp_path))
    query, code, message, kind = NEO4J_FAILURES[0]
    failed = f"""
        C: RUN {node_probe} "*" "*"
        S: FAILURE {json.dumps({"code": code, "message": message})}
        {{?
            C: PULL "*"
            S: IGNORED
            {{?
                C: RUN {value_probe} "*" "*"
                S: IGNORED
                C: PULL "*"
                S: IGNORED
            ?}}
        ?}}
"""
    with upstream.playing(script(failed, answer("RETURN 1 AS x", ["1"]))):
        with pytest.raises(kind) as raised:
            within(lambda: rows(client, SEPARATED))
        assert (raised.value.code, raised.value.message) == (code, message)
        assert within(lambda: rows(client, "RETURN 1 AS x")) == [[1]]


NODE_ROWS = """S: RECORD [["ProductionProfile"], [[1, "4:stub:1"]]]"""


@pytest.mark.parametrize("cut", ["mid-node-reply", "on-value-run"])
def test_upstream_lost_between_the_probes_ends_the_clients_connection(upstream, client, tmp_path, cut):
    node_probe, value_probe = map(json.dumps, separated_probes(tmp_path))
    node_end = "<EXIT>" if cut == "mid-node-reply" else 'SUCCESS {"type": "r"}'
    lost = f"""
        C: RUN {node_probe} "*" "*"
        S: SUCCESS {{"fields": ["__c2", "__ids"]}}
        C: PULL "*"
        {NODE_ROWS}
           {node_end}
        C: RUN {value_probe} "*" "*"
        S: <EXIT>
"""
    with upstream.playing(script(lost)):
        with pytest.raises(CONNECTION_LOST):
            within(lambda: rows(client, SEPARATED))
    with upstream.playing(script(answer("RETURN 1 AS x", ["1"]))):
        assert within(lambda: rows(client, "RETURN 1 AS x")) == [[1]]


# --- routing (neo4j://) ---------------------------------------------------------------------

WHERE = "RETURN 'where' AS x"
NOT_A_LEADER = ("Neo.ClientError.Cluster.NotALeader",
                "No write operations are allowed on this database. This is a read only Neo4j instance.")


def router_script(writer_before: Stub, writer_after: Stub, reader: Stub, router: Stub, moved: Path) -> str:
    """A router whose tables name `writer_before` the leader until `moved` exists (the old
    leader creates it when it refuses a write), then `writer_after`. A table names the database
    it was asked for (the default database when none)."""
    def table(database: str) -> str:
        def servers(writer: Stub) -> str:
            return ('SUCCESS {"rt": {"ttl": 300, "db": "%s", "servers": ['
                    '{"addresses": ["%s"], "role": "ROUTE"}, {"addresses": ["%s"], "role": "READ"}, '
                    '{"addresses": ["%s"], "role": "WRITE"}]}}'
                    % (database, router.address, reader.address, writer.address))
        return f"""
            IF: os.path.exists(MOVED)
                S: {servers(writer_after)}
            ELSE:
                S: {servers(writer_before)}
"""
    return script(f"""
        C: ROUTE "*" "*" {{"db": "system", "[imp_user]": "*"}}
{table("system")}
    ----
        C: ROUTE "*" "*" "*"
{table("neo4j")}
""", head=f'!: PY import os\n!: PY MOVED = "{moved}"')


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cluster")
    return {name: Stub(tmp) for name in ("router", "leader", "new_leader", "reader")}, tmp / "moved"


@pytest.mark.parametrize("refusal", [failure, failure_on_pull], ids=["on-run", "on-pull"])
def test_reads_go_to_readers_and_not_a_leader_makes_writes_follow_the_new_leader(cluster, refusal):
    """The old leader refuses the write at RUN (testkit's `writer_tx_with_leader_switch_and_retry`)
    or when its records are pulled (testkit's `retry_with_fail_after_pull`)."""
    stubs, moved = cluster
    moved.unlink(missing_ok=True)
    old_leader = refusal(WHERE, *NOT_A_LEADER, python=f'open("{moved}", "w").close()')
    with stubs["router"].playing(router_script(stubs["leader"], stubs["new_leader"], stubs["reader"],
                                               stubs["router"], moved)), \
            stubs["reader"].playing(script(answer(WHERE, ['"reader"']))), \
            stubs["leader"].playing(script(old_leader)), \
            stubs["new_leader"].playing(script(answer(WHERE, ['"new leader"']))), \
            ProxyProcess(args=["--upstream", f"neo4j://{stubs['router'].address}", "--workers", "1"]) as proxy, \
            neo4j.GraphDatabase.driver(proxy.uri, auth=(USER, PASSWORD)) as client:
        def query(routing: str) -> list:
            return [r.values() for r in client.execute_query(WHERE, routing_=routing).records]
        assert within(lambda: query("r")) == [["reader"]]
        # The old leader refuses; the client's driver retries the transaction function (as it
        # would against Neo4j: NotALeader on a direct connection is a WriteServiceUnavailable),
        # and the proxy's upstream side, told NotALeader, asks the router again.
        assert within(lambda: query("w")) == [["new leader"]]
        assert moved.exists()
        assert within(lambda: query("w")) == [["new leader"]]
        assert within(lambda: query("r")) == [["reader"]]


def test_an_upstream_stalling_one_query_holds_up_no_other_client(upstream, proxy_to_stub, client):
    """The upstream stops answering one client's query for a while; another client's query
    through the same proxy is answered meanwhile, and the stalled one completes afterwards."""
    stalled = f"""
        C: RUN "RETURN 'slow' AS x" "*" "*"
        S: SUCCESS {{"fields": ["x"]}}
        C: PULL "*"
        S: <SLEEP> {STALL}
           RECORD ["slow"]
           SUCCESS {{"type": "r"}}
"""
    finished: dict[str, float] = {}

    def run(driver, query: str, name: str) -> list:
        answer_rows = rows(driver, query)
        finished[name] = time.monotonic()
        return answer_rows
    with upstream.playing(script(stalled, answer("RETURN 1 AS x", ["1"]))), \
            neo4j.GraphDatabase.driver(proxy_to_stub.uri, auth=(USER, PASSWORD)) as other, \
            concurrent.futures.ThreadPoolExecutor(1) as background:
        slow = background.submit(run, client, "RETURN 'slow' AS x", "slow")
        time.sleep(0.5)                      # the slow query is on its way upstream
        assert within(lambda: run(other, "RETURN 1 AS x", "fast")) == [[1]]
        assert slow.result(STEP_TIMEOUT) == [["slow"]]
    assert finished["fast"] < finished["slow"]
