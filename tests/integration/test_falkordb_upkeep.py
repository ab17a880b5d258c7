"""FalkorDB 4.16's bookkeeping bugs that the long fuzz found, through the proxy and the real
driver (proxy/backends/falkordb/upkeep.py): both servers must end up with the graph the client
wrote, and neither may crash.

- Deleting nodes once the graph outgrew their labels' matrices left the deleted nodes in those
  labels' scans, on both servers: the next `MATCH (n:L)` or DETACH DELETE crashed FalkorDB, again
  after every restart.
- A write that failed or changed nothing added a label or property name that replication lost:
  the replica filed the next new name under another id, read it back wrong and crashed.
- Indexes rebuilt after a rollback while the old primary re-synced in full: the sync's snapshot
  carried a rebuilt index without its constraint (still being built), and the replica crashed
  enforcing the constraint on the index it had loaded.
"""

from __future__ import annotations

import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import neo4j
import pytest
import redis

from proxy.backends.falkordb.roles import NAMES, primary_address
from scripts.replay_falkordb import deleted_nodes_in_label_scans
from tests.harness import PASSWORD, REPO, USER, ProxyProcess, wait_until

#: More nodes than FalkorDB's first block of node slots (16,384): the node table grows past
#: the matrices of labels that are not used meanwhile.
PAST_FIRST_BLOCK = 20_000


@contextmanager
def _serving(tmp_path: Path):
    with ProxyProcess(data_dir=tmp_path / "data") as proc, \
            neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
        yield proc, driver, tmp_path / "data" / "falkordb"


def _servers(root: Path) -> dict[str, redis.Redis]:
    """Both embedded servers, by role, for looking under the proxy."""
    socket_path, password = primary_address(root)
    primary = socket_path.parent.name
    replica = next(name for name in NAMES if name != primary)
    return {role: redis.Redis(unix_socket_path=str(root / name / "falkordb.sock"), password=password)
            for role, name in (("primary", primary), ("replica", replica))}


def _synced(servers: dict[str, redis.Redis]) -> bool:
    primary = servers["primary"]
    primary.incr("upkeep-test")                          # WAIT counts this connection's writes
    return primary.execute_command("WAIT", 1, 10_000) == 1


def _crashes(root: Path) -> int:
    return sum((root / name / "falkordb.log").read_text(errors="replace").count("crashed by signal") for name in NAMES)


def _pids(root: Path) -> dict[str, int]:
    return {name: int((root / name / "redis.pid").read_text()) for name in NAMES}


@pytest.mark.parametrize("how", ["auto-commit", "transaction"])
def test_deleting_nodes_after_the_graph_grew_leaves_no_deleted_node_in_a_label_scan(tmp_path, how):
    with _serving(tmp_path) as (proc, driver, root):
        driver.execute_query("CALL { CREATE (:A:B:C {i: 1}), (:A:B {i: 2}), (:B:C {i: 3}), (:C {i: 4}) }")
        driver.execute_query("CREATE CONSTRAINT needs_i FOR (n:B) REQUIRE n.i IS NOT NULL")
        driver.execute_query("CREATE CONSTRAINT unique_i FOR (n:C) REQUIRE n.i IS UNIQUE")
        grow = f"UNWIND range(1, {PAST_FIRST_BLOCK}) AS i CREATE ()"
        if how == "transaction":
            with driver.session() as session, session.begin_transaction() as tx:
                tx.run(grow).consume()
                tx.run("MATCH (n) DETACH DELETE n").consume()
                tx.commit()
        else:
            driver.execute_query(grow)
            driver.execute_query("MATCH (n) DETACH DELETE n")
        pids = _pids(root)
        # These crashed FalkorDB (reading, then deleting, a node that no longer exists).
        assert driver.execute_query("MATCH (n:B) RETURN n.i AS i").records == []
        driver.execute_query("MATCH (n:C) DETACH DELETE n")
        servers = _servers(root)
        assert _synced(servers)
        phantoms = {role: deleted_nodes_in_label_scans(server, "neo4j") for role, server in servers.items()}
        assert phantoms == {"primary": {}, "replica": {}}
        assert _pids(root) == pids and "restarting" not in "".join(proc.output)


def _name_tables(server: redis.Redis) -> list:
    return [server.execute_command("GRAPH.RO_QUERY", "neo4j", f"CALL {procedure}()")[1]
            for procedure in ("db.labels", "db.relationshipTypes", "db.propertyKeys")]


@pytest.mark.parametrize("lost", [
    ("CREATE (n:Ghost) SET n = $props", neo4j.exceptions.ClientError),     # ParameterMissing
    ("CREATE (n:A {ghost: 1 / 0})", neo4j.exceptions.ClientError),           # fails part-way
    ("MATCH (n:A) SET n.ghost = null", None),                                # changes nothing
    ("MATCH (n:A) REMOVE n.ghost", None),
], ids=["missing parameter", "failed write", "no-op SET", "no-op REMOVE"])
def test_a_name_an_auto_commit_write_added_without_effects_reaches_the_replica(tmp_path, lost):
    query, error = lost
    with _serving(tmp_path) as (proc, driver, root):
        driver.execute_query("CREATE (:A {x: 1})")
        with driver.session() as session:
            if error:
                with pytest.raises(error):
                    session.run(query).consume()
            else:
                session.run(query).consume()
            session.run("CREATE (:New {z: 5})-[:NEW_TYPE {w: 6}]->(:A {z: 7})").consume()
        servers = _servers(root)
        assert wait_until(lambda: _synced(servers) and
                          _name_tables(servers["replica"]) == _name_tables(servers["primary"]), 20)
        for server in servers.values():                  # the replica reads what was written
            assert server.execute_command(
                "GRAPH.RO_QUERY", "neo4j", "MATCH (a:New)-[r:NEW_TYPE]->(b) RETURN a.z, r.w, b.z")[1] == [[5, 6, 7]]
        assert _crashes(root) == 0
        # healed by a full re-sync, or (a write that failed after creating) by promoting the replica
        assert "re-syncs in full" in "".join(proc.output) or "becomes the primary" in "".join(proc.output)


def test_a_name_a_transaction_added_without_effects_is_healed_before_the_next_write(tmp_path):
    with _serving(tmp_path) as (proc, driver, root):
        driver.execute_query("CREATE (:A {x: 1})")
        with driver.session() as session, session.begin_transaction() as tx:
            tx.run("MATCH (n:A) SET n.ghost = null").consume()       # the replica is held meanwhile
            tx.run("MATCH (n:A) SET n.y = 2").consume()
            tx.commit()
        driver.execute_query("CREATE (:B {z: 5})")
        servers = _servers(root)
        assert wait_until(lambda: _synced(servers) and
                          _name_tables(servers["replica"]) == _name_tables(servers["primary"]), 20)
        for server in servers.values():
            assert server.execute_command("GRAPH.RO_QUERY", "neo4j",
                                          "MATCH (a:A), (b:B) RETURN a.x, a.y, b.z")[1] == [[1, 2, 5]]


#: Nodes enough that FalkorDB takes seconds to enforce a unique constraint on them (~20 µs a node).
SLOW_TO_ENFORCE = 120_000


#: More than CREATE CONSTRAINT waits for (~2 s): it answers while the constraint is being built.
TOO_SLOW_TO_WAIT_FOR = 250_000


def _constraint_built(server: redis.Redis) -> bool:
    return server.execute_command("GRAPH.RO_QUERY", "neo4j", "CALL db.constraints() YIELD label, status "
                                  "RETURN label, status")[1] == [[b"U", b"OPERATIONAL"]]


def _replica_holds_the_constraint_and_finds_the_zero(replica: redis.Redis) -> bool:
    found = replica.execute_command("GRAPH.RO_QUERY", "neo4j", "MATCH (n:U) WHERE n.k = 0 RETURN count(n)")[1]
    return _constraint_built(replica) and found == [[1]]


def test_indexes_rebuilt_while_the_replica_syncs_in_full_do_not_crash_it(tmp_path):
    """After a rollback the old primary re-syncs in full while the next write rebuilds the new
    primary's loaded indexes (dropping and re-creating their unique constraints). The long fuzz
    crashed the replica when the primary's sync snapshot fell while a rebuilt constraint was
    still being enforced: the snapshot carried the index but not the constraint, the replica
    loaded the index without its zero, then enforced the constraint the primary re-issued once
    active on it (EnforceUniqueEntity). Here the primary holds its snapshot back until the
    replica has waited a second by its clock (0-2 s: more replicas may come, as a busy machine
    would be late), so the snapshot falls in the seconds the constraint takes to enforce (but
    for the ~1% of syncs asked for a few milliseconds before the second turns)."""
    with _serving(tmp_path) as (proc, driver, root):
        driver.execute_query("UNWIND range(0, $n - 1) AS k CREATE (:U {k: k})", n=SLOW_TO_ENFORCE)
        driver.execute_query("CREATE CONSTRAINT u_k FOR (n:U) REQUIRE n.k IS UNIQUE")
        for server in _servers(root).values():
            server.config_set("repl-diskless-sync-delay", 1)
        with driver.session() as session:
            with session.begin_transaction() as tx:              # the replica becomes the primary
                tx.run("CREATE (:U {k: -1})").consume()
                tx.rollback()
            session.run("CREATE (:Other)").consume()              # auto-commit: rebuilds at once
        servers = _servers(root)
        assert wait_until(lambda: _crashes(root) > 0 or _synced(servers) and
                          _replica_holds_the_constraint_and_finds_the_zero(servers["replica"]), 30)
        assert _crashes(root) == 0
        with pytest.raises(neo4j.exceptions.ConstraintError):
            driver.execute_query("CREATE (:U {k: 0})")


def test_a_full_sync_waits_for_a_constraint_still_being_built(tmp_path):
    """The same crash from the other side: CREATE CONSTRAINT on many nodes answers while FalkorDB
    still builds the constraint, and a write that lost a name then re-syncs the replica in full
    at once; the snapshot carried the index without the constraint, and the replica crashed on
    the copy the primary sent once it was built. The re-sync waits until the primary built it."""
    with _serving(tmp_path) as (proc, driver, root):
        driver.execute_query("UNWIND range(0, $n - 1) AS k CREATE (:U {k: k})", n=TOO_SLOW_TO_WAIT_FOR)
        driver.execute_query("CREATE (:A {x: 1})")
        with driver.session() as session:
            session.run("CREATE CONSTRAINT u_k FOR (n:U) REQUIRE n.k IS UNIQUE").consume()
            session.run("MATCH (n:A) SET n.ghost = null").consume()     # a name lost: a full re-sync
        servers = _servers(root)
        assert wait_until(lambda: _crashes(root) > 0 or _synced(servers) and
                          all(_constraint_built(server) for server in servers.values()), 60)
        assert _crashes(root) == 0
        assert "re-syncs in full" in "".join(proc.output)


def test_a_merge_of_a_new_relationship_type_keeps_every_row_and_the_replica_its_names(tmp_path):
    """FalkorDB drops the rows of a MERGE whose relationship type is new (TCK Merge5[14]); the
    proxy puts the type in the schema first, with a write whose effects reach the replica, and
    again after a rolled-back transaction took it away."""
    merge = ("CREATE (a:Foo), (b:Bar) WITH a, b UNWIND [1, 1] AS x "
             "MERGE (a)-[r:{type} {{v: x}}]->(b) RETURN x, id(r) = id(r) AS same")
    with _serving(tmp_path) as (proc, driver, root):
        with driver.session() as session, session.begin_transaction() as tx:
            assert len(list(tx.run(merge.format(type="T_ROLLED_BACK")))) == 2
            tx.rollback()
        for name in ("T_ROLLED_BACK", "T_NEW"):
            assert [tuple(r) for r in driver.execute_query(merge.format(type=name)).records] == [(1, True)] * 2
        servers = _servers(root)
        assert wait_until(lambda: _synced(servers) and
                          _name_tables(servers["replica"]) == _name_tables(servers["primary"]), 20)
        for server in servers.values():
            assert server.execute_command("GRAPH.RO_QUERY", "neo4j",
                                          "MATCH ()-[r]->() RETURN type(r), count(*) ORDER BY type(r)")[1] == [
                [b"T_NEW", 1], [b"T_ROLLED_BACK", 1]]
            assert server.execute_command("GRAPH.RO_QUERY", "neo4j", "MATCH (n) RETURN count(n)")[1] == [[4]]
        assert _crashes(root) == 0


def test_writes_with_known_names_send_nothing_else(tmp_path):
    """The upkeep costs nothing on the common path: auto-commit writes of names the graph has,
    and deletes with no create since the last one, send FalkorDB nothing but themselves."""
    with _serving(tmp_path) as (proc, driver, root), driver.session() as session:
        for warm_up in ("CREATE (:A {x: 1}), (:A {x: 2})", "MATCH (n:Nobody) DELETE n", "MATCH (n:A) RETURN n"):
            session.run(warm_up).consume()          # names read, label matrices grown, ids cached
        # (DETACH: a plain DELETE of nodes also gets the still-has-relationships check in its text)
        writes = ["MATCH (n:A) SET n.x = n.x + 1", "MATCH (n:A {x: 2}) DETACH DELETE n", "MATCH (n:A) SET n.x = 0"]
        with _servers(root)["primary"].monitor() as monitor:
            for query in writes:
                session.run(query).consume()
            seen = []
            while len(seen) < len(writes):
                command = monitor.next_command()["command"]
                if command.startswith("GRAPH."):
                    seen.append(command.split(" ", 2)[2].split(" --compact")[0])
        assert seen == writes


def test_the_replay_script_finds_the_write_that_broke_falkordb(tmp_path):
    """scripts/replay_falkordb.py, on what the servers received (the fuzz's MONITOR logs), finds
    the first command after which FalkorDB is broken: here, unguarded, the delete of bug one."""
    commands = ["CREATE (:A:B {i: 1})", f"UNWIND range(1, {PAST_FIRST_BLOCK}) AS i CREATE ()",
                "MATCH (n) WHERE n.i IS NULL DELETE n", "MATCH (n:A) DELETE n", "RETURN 1"]
    log = tmp_path / "fuzz.monitor.a"
    log.write_bytes(b"".join(f'{i}.5 [0 unix:/x.sock] "GRAPH.QUERY" "neo4j" "{c}"\n'.encode()
                             for i, c in enumerate(commands)))
    done = subprocess.run([sys.executable, "scripts/replay_falkordb.py", str(log), "--bisect"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "deleted nodes in label scans {'B': [0]}" in done.stdout
    assert done.stdout.rstrip().endswith(f"it goes wrong with command 3:\nGRAPH.QUERY neo4j {commands[3]}")
