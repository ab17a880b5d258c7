"""The neo4j 6.x Python driver (installed apart in .cache/neo4j6) against the proxy."""

from __future__ import annotations

import json

import pytest

from tests.harness import NEO4J6_PATH, PASSWORD, USER, run_neo4j6

pytestmark = pytest.mark.skipif(not (NEO4J6_PATH / "neo4j").exists(),
                                reason="neo4j 6.x not installed: run `make install`")

SCRIPT = r"""
import json, sys
import neo4j
uri, user, password = sys.argv[1:4]
out = {"version": neo4j.__version__}
for scheme in ("bolt", "neo4j"):
    with neo4j.GraphDatabase.driver(uri.replace("bolt://", scheme + "://"), auth=(user, password)) as drv:
        drv.verify_connectivity()
        recs, summary, keys = drv.execute_query("RETURN 1 AS one")
        out[scheme] = [keys, recs[0]["one"], summary.server.protocol_version[0]]
with neo4j.GraphDatabase.driver(uri, auth=(user, password)) as drv:
    with drv.session() as s:
        s.run("MATCH (n:V6) DETACH DELETE n").consume()
        with s.begin_transaction() as tx:
            tx.run("CREATE (:V6 {v: 1})").consume()
            tx.commit()
        with s.begin_transaction() as tx:
            tx.run("CREATE (:V6 {v: 2})").consume()
            tx.rollback()
        out["after_rollback"] = s.execute_read(
            lambda tx: sorted(r["v"] for r in tx.run("MATCH (n:V6) RETURN n.v AS v")))
        c = s.run("CREATE (a:V6 {v: 3})-[:R]->(b:V6 {v: 4})").consume().counters
        out["counters"] = [c.nodes_created, c.relationships_created]
        rec = s.run("MATCH p=(a:V6 {v: 3})-[r:R]->(b) RETURN a, r, p, date('2020-01-02') AS d").single()
        out["node"] = [sorted(rec["a"].labels), dict(rec["a"]), rec["a"].element_id == rec["r"].start_node.element_id]
        out["path_len"] = len(rec["p"])
        out["date"] = str(rec["d"])
        try:
            s.run("RETURN (").consume()
        except neo4j.exceptions.CypherSyntaxError as e:
            out["error"] = e.code
        s.run("MATCH (n:V6) DETACH DELETE n").consume()
print(json.dumps(out))
"""


def test_neo4j6_round_trip(proxy):
    done = run_neo4j6(SCRIPT, proxy.uri, USER, PASSWORD)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out["version"].startswith("6.")
    assert out["bolt"][:2] == [["one"], 1] and out["neo4j"][:2] == [["one"], 1]
    assert out["bolt"][2] >= 5
    assert out["after_rollback"] == [1]
    assert out["counters"] == [2, 1]
    assert out["node"] == [["V6"], {"v": 3}, True]
    assert out["path_len"] == 1
    assert out["date"] == "2020-01-02"
    assert out["error"] == "Neo.ClientError.Statement.SyntaxError"
