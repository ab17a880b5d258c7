"""Seed queries for the Cypher fuzzer: the openCypher TCK (when present), the demo's seed query,
and a built-in set that covers what agents and tools send (so the fuzzer works without the TCK)."""

from __future__ import annotations

from functools import lru_cache

from conformance.tck import read_tck
from proxy.demo import SEED_QUERY
from tests.harness import TCK_DIR

BUILT_IN = (
    "MATCH (n) RETURN n LIMIT 10",
    "MATCH (n:Person {name: $name})-[:KNOWS]->(m) WHERE m.age > 30 RETURN m.name ORDER BY m.name",
    "CREATE (a:Person {name: 'A', age: 42})-[:KNOWS {since: 2020}]->(b:Person {name: 'B'}) RETURN a, b",
    "MERGE (p:Person {id: $id}) ON CREATE SET p.created = timestamp() ON MATCH SET p.seen = p.seen + 1",
    "UNWIND $rows AS row MERGE (n:Item {id: row.id}) SET n += row.props",
    "MATCH (a)-[r*1..3]->(b) RETURN count(r)",
    "MATCH p = (a)-[:R]->(b) RETURN nodes(p), relationships(p), length(p)",
    "OPTIONAL MATCH (n:Missing) RETURN n, coalesce(n.x, 'none') AS x",
    "WITH [1, 2, 3] AS l RETURN [x IN l WHERE x > 1 | x * 2] AS doubled, reduce(s = 0, x IN l | s + x) AS sum",
    "RETURN CASE WHEN $x > 0 THEN 'pos' WHEN $x < 0 THEN 'neg' ELSE 'zero' END AS sign",
    "RETURN date('2024-02-29') + duration({months: 1}) AS d, localdatetime('2020-01-01T10:00:00') AS t",
    "RETURN point({latitude: 60.5, longitude: 3.1}) AS p, toString(3.5) AS s, toInteger('42') AS i",
    "MATCH (n) WITH labels(n) AS ls, count(*) AS c RETURN ls, c ORDER BY c DESC",
    "MATCH (n) WHERE n.name STARTS WITH 'A' OR n.name CONTAINS 'b' RETURN n.name",
    "CALL db.labels() YIELD label RETURN label",
    "MATCH (n) RETURN collect(DISTINCT n.name)[0..5] AS names, stDev(n.age) AS sd, percentileCont(n.age, 0.5) AS med",
    "MATCH (n) WHERE elementId(n) = $id RETURN n",
    "MATCH (n:A|B) WHERE EXISTS { (n)-->() } RETURN COUNT { (n)-->() } AS degree",
    "CREATE (n:Thing $props) RETURN n",
    "MATCH (f:Field)<-[:OF_FIELD]-(p:ProductionProfile) RETURN f.title, ts_sum(p.prd_oil_net, '2020') AS oil",
    "EXPLAIN MATCH (n) RETURN n",
    "PROFILE MATCH (n) RETURN count(n)",
    "MATCH (n) DETACH DELETE n",
    "UNWIND range(1, 100) AS i WITH i WHERE i % 7 = 0 RETURN sum(i)",
    "MATCH (a), (b) WHERE id(a) < id(b) RETURN a, b LIMIT 3",
    SEED_QUERY,
)


@lru_cache(maxsize=1)
def seed_queries() -> tuple[str, ...]:
    """The built-in queries, the demo's, and every TCK query when the TCK is present."""
    queries = list(BUILT_IN)
    if TCK_DIR.is_dir():
        for scenario in read_tck(TCK_DIR):
            queries += scenario.setup
            queries += [check.query for check in scenario.checks]
    return tuple(dict.fromkeys(q for q in queries if q.strip()))
