"""Driver round trip run in a subprocess with whichever `neo4j` package is importable (5.x from the
venv, 6.x from .cache/neo4j6); prints one JSON object of observations for `conformance.drivers`.

Usage: python driver_script.py URI USER PASSWORD
"""

import json
import sys

import neo4j

uri, user, password = sys.argv[1:4]
out = {"version": neo4j.__version__}
for scheme in ("bolt", "neo4j"):
    try:
        with neo4j.GraphDatabase.driver(uri.replace("bolt://", scheme + "://"), auth=(user, password)) as drv:
            drv.verify_connectivity()
            records, summary, keys = drv.execute_query("RETURN 1 AS one, 'ü' AS s")
            out[scheme] = {"keys": keys, "row": [records[0]["one"], records[0]["s"]],
                           "protocol": list(summary.server.protocol_version)}
    except Exception as exc:                        # reported, not raised: the suite decides
        out[scheme] = {"error": f"{type(exc).__name__}: {exc}"}
with neo4j.GraphDatabase.driver(uri, auth=(user, password)) as drv, drv.session() as s:
    s.run("MATCH (n:ConformanceDriver) DETACH DELETE n").consume()
    out["autocommit"] = s.run("CREATE (:ConformanceDriver {v: 1})").consume().counters.nodes_created
    with s.begin_transaction() as tx:
        tx.run("CREATE (:ConformanceDriver {v: 2})-[:R]->(:ConformanceDriver {v: 3})").consume()
        tx.commit()
    with s.begin_transaction() as tx:
        tx.run("CREATE (:ConformanceDriver {v: 99})").consume()
        tx.rollback()
    out["committed"] = s.execute_read(lambda tx: sorted(
        r["v"] for r in tx.run("MATCH (n:ConformanceDriver) RETURN n.v AS v")))
    rec = s.run("MATCH p = (a:ConformanceDriver {v: 2})-[r:R]->(b) RETURN a, r, p").single()
    out["graph"] = [sorted(rec["a"].labels), dict(rec["a"]), rec["r"].type, len(rec["p"]),
                    rec["r"].start_node.element_id == rec["a"].element_id]
    try:
        s.run("RETURN (").consume()
        out["syntax_error"] = None
    except neo4j.exceptions.Neo4jError as exc:
        out["syntax_error"] = exc.code
    out["after_error"] = s.run("RETURN 7 AS seven").single()["seven"]
    s.run("MATCH (n:ConformanceDriver) DETACH DELETE n").consume()
print(json.dumps(out))
