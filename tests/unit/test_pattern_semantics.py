"""The uniqueness bridge's rewrites (text only) and the semantic analysis of variables, including
that its cheap pre-parse test never clears a query the analysis refuses (over the whole TCK)."""

from __future__ import annotations


import pytest

from conformance.tck import read_tck
from proxy.backends.falkordb.dialect import FALKORDB
from tests.harness import TCK_DIR, TCK_MISSING
from extensions.cypher import semantics
from extensions.cypher.parser import parse
from extensions.planner.planner import ExtensionPlanner
from core.errors import CypherError
from tests.unit.test_planner_support import registry



@pytest.fixture(scope="module")
def planner():
    return ExtensionPlanner(registry(), dialect=FALKORDB)


REWRITES = [
    ("MATCH (t:Person)-[:ACTED_IN]->(m)<-[:ACTED_IN]-(co) RETURN co",
     "MATCH (t:Person)-[__u0:ACTED_IN]->(m)<-[__u1:ACTED_IN]-(co) WHERE __u0 <> __u1 RETURN co"),
    ("MATCH (a)-->(b) RETURN *", "MATCH (a)-[__u0]->(b) WHERE __u0 IS NOT NULL RETURN a, b"),
    ("MATCH (a)-[r:X]->(b)<-[:Y]-(c) WHERE a.x = 1 OR a.y = 2 RETURN a",
     "MATCH (a)-[r:X]->(b)<-[__u0:Y]-(c) WHERE r IS NOT NULL AND __u0 IS NOT NULL AND (a.x = 1 OR a.y = 2) RETURN a"),
    ("MATCH ()-[r]->() WITH r MATCH (a)-[r]-(b) RETURN a",
     "MATCH ()-[r]->() WHERE r IS NOT NULL WITH r MATCH (a)-[__u0]-(b) WHERE __u0 = r RETURN a"),
    ("MATCH (a)-[:R*]->(b), (b)-[s:R]->(c) RETURN c",
     "MATCH __p0 = (a)-[:R*]->(b), (b)-[s:R]->(c) WHERE (all(__rl1 IN [[__x IN relationships(__p0) | id(__x)]] "
     "WHERE NOT id(s) IN __rl1) OR s IS NULL OR __p0 IS NULL) RETURN c"),
    ("MATCH (a:A|B)-->(b)-->(c) RETURN c",
     "MATCH (a)-[__u0]->(b)-[__u1]->(c) WHERE (a:A OR a:B) AND __u0 <> __u1 RETURN c"),
    ("OPTIONAL MATCH (a)-[:R]-(b)-[:R]-(c) RETURN c",
     "OPTIONAL MATCH (a)-[__u0:R]-(b)-[__u1:R]-(c) WHERE __u0 <> __u1 RETURN c"),
    ("MATCH (a)-[rs:R*2]->(b) RETURN rs",                             # a fixed length: hops (fixed_lengths)
     "MATCH (a)-[__h0:R]->()-[__h1:R]->(b) WHERE __h0 <> __h1 WITH a, b, [__h0, __h1] AS rs RETURN rs"),
    ("MATCH (a)-[rs:R*1..2]->(b) RETURN rs",
     "MATCH __p0 = (a)-[:R*1..2]->(b) WITH *, coalesce(relationships(__p0), []) AS __r2, coalesce(nodes(__p0), []) "
     "AS __n3 WITH *, CASE WHEN __p0 IS NULL THEN null ELSE CASE WHEN all(__j IN range(0, size(__r2) - 1) WHERE "
     "startNode(__r2[__j]) = __n3[0 + __j] AND endNode(__r2[__j]) = __n3[0 + __j + 1]) THEN __r2 "
     "ELSE reverse(__r2) END END AS rs RETURN rs"),
    ("MATCH (a)-[:X]->(b)-[:Y*]->(c) WHERE a.x = 1 RETURN c",       # X and Y: no repeat possible
     "MATCH __p0 = (a)-[:X]->(b)-[:Y*]->(c) WHERE a.x = 1 RETURN c"),
    ("MATCH (n) RETURN [(n)-[:T]->()-[:T]->(b) | b] AS bs",
     "MATCH (n) RETURN [(n)-[__u0:T]->()-[__u1:T]->(b) WHERE __u0 <> __u1 | b] AS bs"),
]


@pytest.mark.parametrize("query, rewritten", REWRITES)
def test_uniqueness_rewrites(planner, query, rewritten):
    assert planner.plan(query).text == rewritten


@pytest.mark.parametrize("query", ["MATCH (n) RETURN n", "MATCH (n:A {x: 1}) RETURN n.x",
                                   "RETURN 1 AS one", "UNWIND [1, 2] AS x RETURN x"])
def test_queries_without_relationships_are_untouched(planner, query):
    assert planner.plan(query) is None


@pytest.mark.parametrize("query", ["MATCH (n) WHERE (n)-[:R]->()-[:R]->() RETURN n",
                                   "MERGE (a)-[:R]->(b)<-[:R]-(c)"])
def test_what_cannot_take_the_predicates_is_refused(planner, query):
    with pytest.raises(CypherError, match="same relationship twice"):
        planner.plan(query)


VALID = [
    "MATCH (a)-[r]->(b) WITH r MATCH ()-[r]-() RETURN r",
    "MATCH (a) WITH a MATCH (a)-->(b) RETURN b",
    "MATCH ()-[r1]->()-[r2]->() WITH [r1, r2] AS rs MATCH (x)-[rs*]->(y) RETURN x",
    "CREATE (a:A) CREATE (a)-[:R]->(b:B) RETURN b",
    "CREATE (n:Foo)-[:T]->(n) RETURN n",
    "MATCH (a), (b) MERGE (a)-[:R]->(b)",
    "MATCH (n) WITH n, n.x AS x DELETE n RETURN x",
    "MATCH ()-[r]->() DELETE r RETURN type(r)",
    "MATCH (n) WHERE (n)-->() AND NOT (n)<--() RETURN n",
    "MATCH (a) RETURN DISTINCT a.name AS name ORDER BY a.name",
    "MATCH (n) RETURN count { (n)-->() } AS c",
    "MATCH p = (a)-->(b) RETURN length(p), nodes(p)",
    "CALL { MATCH (n) RETURN n } WITH n MATCH (n)-->(m) RETURN m",
    "MATCH (me)--(you) RETURN me.age, me.age + count(you.age)",
    "MATCH (n) RETURN n, n.x + count(*), $p + avg(n.x) - 1",
]


@pytest.mark.parametrize("query", VALID)
def test_valid_queries_pass_the_analysis(query):
    semantics.check(parse(query))


INVALID = [
    ("WITH 123 AS n MATCH (n) RETURN n", "expected Node but was Integer"),
    ("MATCH (n) WITH [n] AS users MATCH (users)-->(m) RETURN m", "expected Node but was List"),
    ("MATCH r = ()-[]-(), ()-[r]-() RETURN r", "expected Relationship but was Path"),
    ("MATCH (p)-->(), p = ()-->() RETURN p", "`p` already declared"),
    ("CREATE (n:Foo) CREATE (n:Bar)-[:OWNS]->(:Dog)", "`n` already declared"),
    ("MATCH ()-[r]->() CREATE ()-[r:R]->()", "`r` already declared"),
    ("MATCH (n) RETURN length(n)", "expected Path but was Node"),
    ("MATCH p = (a)-[*]->(b) RETURN size(p)", "but was Path"),
    ("MATCH (n) MATCH r = (n)-[*]->() WHERE r.name = 'apa' RETURN r", "but was Path"),
    ("MATCH (n) RETURN (n)-->() AS x", "pattern expression"),
    ("MATCH (a), (b) RETURN size((a)-->(b))", "pattern expression"),
    ("MATCH (n) DETACH DELETE n RETURN labels(n)", "deleted"),
    ("MATCH (me)--(you) RETURN me.age + count(you.age)", "`me` is read outside the aggregation"),
    ("MATCH (me)--(you) RETURN me.age + you.age, count(*) AS c ORDER BY me.age + you.age + count(*)",
     "implicit grouping"),
    ("RETURN NOT 0", "expected Boolean but was Integer"),
    ("WITH 1 AS x RETURN x IN 'abc'", "expected List<T> but was String"),
    ("RETURN [x IN [1.5] WHERE x AND true]", "expected Boolean but was Float"),
    ("MATCH (n {p: 1}) WHERE (n)-->(m) RETURN n", "introduce new variables: 'm'"),
    ("MERGE (n:N $props)", "Parameter maps"),
    ("MATCH (n) RETURN n SKIP 1.5", "non-negative integer"),
    ("RETURN count(rand())", "non-deterministic"),
]


@pytest.mark.parametrize("query, message", INVALID)
def test_invalid_queries_are_refused(query, message):
    with pytest.raises(CypherError, match=message.replace("(", r"\(").replace(")", r"\)")):
        semantics.check(parse(query))


def test_a_comprehension_over_mixed_types_is_left_to_the_database():
    semantics.check(parse("RETURN [x IN [1, 'a'] WHERE x % 2 = 0]"))


needs_tck = pytest.mark.skipif(not TCK_DIR.is_dir(), reason=TCK_MISSING)


@needs_tck
def test_the_cheap_test_never_clears_a_query_the_analysis_refuses():
    refused = 0
    for scenario in read_tck(TCK_DIR):
        for query in (check.query for check in scenario.checks if tree_parsed(check.query)):
            try:
                semantics.check(parse(query))
            except CypherError:
                refused += 1
                assert semantics.suspect(query), query
    assert refused > 150


@needs_tck
def test_the_analysis_refuses_no_query_the_tck_runs():
    """Every setup query and every query the TCK expects rows from passes (4,168 of them)."""
    passed = 0
    for scenario in read_tck(TCK_DIR):
        expected_rows = [c.query for c in scenario.checks if c.expected is not None and c.expected.kind != "error"]
        for query in [*scenario.setup, *expected_rows]:
            if tree_parsed(query):
                semantics.check(parse(query))
                passed += 1
    assert passed > 4000


def tree_parsed(text: str) -> bool:
    try:
        parse(text)
    except CypherError:
        return False
    return True
