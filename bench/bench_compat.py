"""What stock tools pay at start-up on the demo graph: the schema shims, cold (first call after a
write) and warm (cached by graph state), the SHOW commands and the vector search rewrite, as
ratios to `MATCH (n) RETURN count(n)` on the same proxy and session.
"""

from __future__ import annotations

import neo4j

from bench import median_seconds
from tests.harness import PASSWORD, USER, ProxyProcess

BASELINE = "MATCH (n) RETURN count(n)"
QUERIES = {
    "apoc.meta.data (langchain)": "CALL apoc.meta.data({sample: 1000}) YIELD label RETURN count(*)",
    "apoc.meta.schema (mcp)": "CALL apoc.meta.schema({sample: 1000}) YIELD value RETURN size(keys(value))",
    "SHOW INDEXES": "SHOW INDEXES",
    "SHOW PROCEDURES": "SHOW PROCEDURES YIELD name, description, signature",
    "dbms.components()": "CALL dbms.components() YIELD name, versions, edition",
    "db.labels()": "CALL db.labels()",
}


def main() -> None:
    with ProxyProcess(command="demo") as proc, neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver, \
            driver.session() as session:
        def run(query: str) -> int:
            return len(list(session.run(query)))

        base = median_seconds(lambda: run(BASELINE), 20)
        print(f"baseline {BASELINE}: {base * 1000:.2f} ms")
        for name, query in QUERIES.items():
            def cold(query=query) -> None:
                session.run("CREATE (:BenchTouch)").consume()          # a write: caches start over
                run(query)
            warm = median_seconds(lambda: run(query), 20)
            first = median_seconds(cold, 5) - median_seconds(lambda: session.run("CREATE (:BenchTouch)").consume(), 5)
            print(f"{name:32s} warm {warm / base:6.2f}x  cold {first / base:6.2f}x  (warm {warm * 1000:.1f} ms)")
        session.run("CREATE VECTOR INDEX bench_vec IF NOT EXISTS FOR (f:Field) ON f.v OPTIONS "
                    "{indexConfig: {`vector.dimensions`: 2, `vector.similarity_function`: 'cosine'}}").consume()
        session.run("MATCH (f:Field) CALL db.create.setNodeVectorProperty(f, 'v', [toFloat(f.npdid % 97), 1.0])").consume()
        native = median_seconds(lambda: run("CALL db.idx.vector.queryNodes('Field', 'v', 10, vecf32([3.0, 1.0])) "
                                            "YIELD node RETURN node.title"), 20)
        named = median_seconds(lambda: run("CALL db.index.vector.queryNodes('bench_vec', 10, [3.0, 1.0]) "
                                           "YIELD node RETURN node.title"), 20)
        print(f"vector search by name vs FalkorDB's own call: {named / native:.2f}x "
              f"({named * 1000:.2f} ms vs {native * 1000:.2f} ms)")
