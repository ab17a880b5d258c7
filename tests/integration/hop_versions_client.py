"""Run one conversation per Bolt version against two servers and print what a client sees, as JSON.

`python tests/integration/hop_versions_client.py URI_A URI_B` under the neo4j 5.x driver (or 6.x,
on PYTHONPATH): for every Bolt version the driver speaks, the driver is made to offer only that
version (a legacy handshake slot; 6.0 only exists through the manifest, the driver's default) and
runs the same queries against both servers. test_neo4j_relay.py compares the two sides.
"""

from __future__ import annotations

import json
import sys
import warnings

import neo4j
from neo4j._sync.io import Bolt
from neo4j.exceptions import Neo4jError
from neo4j.graph import Node, Path, Relationship

USER, PASSWORD = "neo4j", "password"
MAJOR = int(neo4j.__version__.split(".")[0])
VERSIONS = [(4, 4), (5, 0), (5, 1), (5, 2), (5, 3), (5, 4), (5, 6), (5, 7), (5, 8), *([(6, 0)] if MAJOR >= 6 else [])]
VALUES = ("MATCH p = (a:HopPerson {name: 'Ann'})-[r:KNOWS]->(b) "
          "RETURN a, r, b, p, [a, {r: r}] AS nested, date('2024-02-29') AS d, "
          "datetime('2024-02-29T09:11:12Z') AS dt, localdatetime('2024-02-29T10:11:12') AS ldt, "
          "localtime('10:11:12') AS lt, duration({months: 14, days: 3, seconds: 5}) AS dur, "
          "point({latitude: 60.5, longitude: 3.25}) AS pt, $param AS param")
PARAM = {"list": [1, 2.5, "three", None, True], "map": {"k": "ünï"}, "n": -2**63}


def plain(value):
    """A driver value as JSON-able data (graph entities by content, not identity)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if isinstance(value, Node):
            return ["node", value.id, value.element_id, sorted(value.labels), plain(dict(value))]
        if isinstance(value, Relationship):
            return ["rel", value.id, value.element_id, value.type, value.start_node.element_id,
                    value.end_node.element_id, plain(dict(value))]
    if isinstance(value, Path):
        return ["path", [plain(n) for n in value.nodes], [plain(r) for r in value.relationships]]
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return ["bytes", value.hex()]
    return value if isinstance(value, (int, float, str, bool, type(None))) else [type(value).__name__, str(value)]


def conversation(uri: str) -> dict:
    out: dict = {}
    with neo4j.GraphDatabase.driver(uri, auth=(USER, PASSWORD)) as driver, driver.session(fetch_size=2) as session:
        result = session.run(VALUES, param=PARAM)
        out["values"] = [plain(record.values()) for record in result]
        out["protocol"] = list(result.consume().server.protocol_version)
        partial = session.run("UNWIND range(1, 7) AS i RETURN i")
        out["partial"] = [partial.fetch(3)[-1]["i"], [r["i"] for r in partial]]
        with session.begin_transaction(metadata={"app": "hop"}, timeout=30) as tx:
            first = tx.run("UNWIND range(1, 5) AS i RETURN i")
            head = [r["i"] for r in first.fetch(2)]
            second = tx.run("UNWIND range(10, 12) AS i RETURN i").value()
            written = tx.run("CREATE (:HopTx {v: 1})").consume().counters.nodes_created
            out["tx"] = [head, second, [r["i"] for r in first], written]
            tx.rollback()
        out["rolled_back"] = session.run("MATCH (n:HopTx) RETURN count(n) AS c").single()["c"]
        try:
            session.run("RETURN 1 +").consume()
        except Neo4jError as error:
            out["error"] = [error.code, error.message]
        summary = session.run("CREATE (n:HopWrite) DELETE n").consume()
        out["summary"] = [summary.query_type, summary.counters.nodes_created, summary.counters.nodes_deleted,
                          bool(session.last_bookmarks().raw_values)]
    return out


def main(uri_a: str, uri_b: str) -> None:
    default = Bolt.get_handshake
    report = {}
    for major, minor in VERSIONS:
        if (major, minor) == (6, 0):
            Bolt.get_handshake = default
        else:
            offer = bytes((0, 0, minor, major)) + bytes(12)
            Bolt.get_handshake = classmethod(lambda cls, offer=offer: offer)
        report[f"{major}.{minor}"] = {"a": conversation(uri_a), "b": conversation(uri_b)}
    print(json.dumps({"driver": neo4j.__version__, "versions": report}))


if __name__ == "__main__":
    main(*sys.argv[1:3])
