"""FalkorDB dialect bridges, each checked differentially on a real FalkorDB: the Neo4j-style
query through the planner returns what a hand-written FalkorDB query returns."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from extensions.cypher import ast as A
from extensions.cypher.parser import parse
from extensions.planner.planner import ExtensionPlanner
from core.errors import CypherError
from proxy.backends.falkordb.dialect import FALKORDB
from proxy.backends.neo4j.dialect import NEO4J
from tests.unit.test_planner_support import RecordingRunner, registry, rows

AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}


@pytest.fixture(scope="module")
async def runner(embedded):
    db = embedded
    runner = RecordingRunner(db, await db.authenticate(AUTH))
    await rows(await runner.run("CREATE (:A {x: 1})-[:R]->(:B {x: 2}), (:C {x: 3}), (:A:B {x: 4}), "
                                "(:D {x: 5})-[:R]->(:D {x: 6})-[:S]->(:A {x: 7})", {}))
    return runner


@pytest.fixture(scope="module")
def planner():
    return ExtensionPlanner(registry(), dialect=FALKORDB)


BRIDGES = [
    # elementId -> toString(id()), and a seekable equality / IN
    ("MATCH (n {x: 1}) RETURN elementId(n) AS e", "MATCH (n {x: 1}) RETURN toString(id(n)) AS e"),
    ("MATCH (m {x: 2}) WITH elementId(m) AS e MATCH (n) WHERE elementId(n) = e RETURN n.x",
     "MATCH (n) WHERE n.x = 2 RETURN n.x"),
    (("MATCH (m) WHERE m.x IN [1, 3] WITH collect(elementId(m)) AS ids "
     "MATCH (n) WHERE elementId(n) IN ids RETURN n.x ORDER BY n.x"),
     "MATCH (n) WHERE n.x IN [1, 3] RETURN n.x ORDER BY n.x"),
    ("MATCH ()-[r:S]->() RETURN elementId(r) AS e", "MATCH ()-[r:S]->() RETURN toString(id(r)) AS e"),
    # label expressions in MATCH and WHERE
    ("MATCH (n:A|C) RETURN n.x ORDER BY n.x", "MATCH (n) WHERE n:A OR n:C RETURN n.x ORDER BY n.x"),
    ("MATCH (n:A|C) WHERE n.x > 1 RETURN n.x ORDER BY n.x",
     "MATCH (n) WHERE (n:A OR n:C) AND n.x > 1 RETURN n.x ORDER BY n.x"),
    ("MATCH (n:A&B) RETURN n.x", "MATCH (n:A:B) RETURN n.x"),
    ("MATCH (n:(A|C)&!(B)) RETURN n.x ORDER BY n.x", "MATCH (n) WHERE (n:A OR n:C) AND NOT n:B RETURN n.x ORDER BY n.x"),
    ("MATCH (n:!A) RETURN n.x ORDER BY n.x", "MATCH (n) WHERE NOT n:A RETURN n.x ORDER BY n.x"),
    ("MATCH (:A|D)-[:R]->(m) RETURN m.x ORDER BY m.x", "MATCH (a)-[:R]->(m) WHERE a:A OR a:D RETURN m.x ORDER BY m.x"),
    ("MATCH (n) WHERE n:B|C RETURN n.x ORDER BY n.x", "MATCH (n) WHERE n:B OR n:C RETURN n.x ORDER BY n.x"),
    ("MATCH (n) RETURN n.x, n:A|B AS ab ORDER BY n.x", "MATCH (n) RETURN n.x, (n:A OR n:B) AS ab ORDER BY n.x"),
    # relationship type expressions -> a filter on type(r) (one relationship has one type)
    ("MATCH (a)-[r:!S]->(b) RETURN a.x, type(r), b.x ORDER BY a.x", "MATCH (a)-[r:R]->(b) RETURN a.x, 'R', b.x ORDER BY a.x"),
    ("MATCH (a:!A)-[:!(R&S)|%]->(b) WHERE b.x > 6 RETURN a.x, b.x", "MATCH (a)-[:S]->(b) RETURN a.x, b.x"),
    ("MATCH (a)-[IS R&S]->(b) RETURN count(*) AS c", "RETURN 0 AS c"),
    ("MATCH ()-[r:S]->() WITH r MATCH (a)-[r:!R]->(b) RETURN a.x, b.x", "MATCH (a)-[:S]->(b) RETURN a.x, b.x"),
    ("MATCH (a {x: 1}) OPTIONAL MATCH (a)-[:!R]->(b) RETURN a.x, b.x", "RETURN 1, null"),
    ("MATCH (a:D) RETURN a.x, [(a)-[:!S]->(b) | b.x] AS bs ORDER BY a.x",
     "MATCH (a:D) RETURN a.x, [(a)-[:R]->(b) | b.x] AS bs ORDER BY a.x"),
    # EXISTS / COUNT subqueries
    ("MATCH (n) WHERE EXISTS { (n)-[:R]->() } RETURN n.x ORDER BY n.x",
     "MATCH (n) WHERE (n)-[:R]->() RETURN n.x ORDER BY n.x"),
    ("MATCH (n) WHERE NOT EXISTS { MATCH (n)-->(m:A) } RETURN n.x ORDER BY n.x",
     "MATCH (n) WHERE NOT (n)-->(:A) RETURN n.x ORDER BY n.x"),
    ("MATCH (n) WHERE exists((n)-[:S]->(m)) RETURN n.x", "MATCH (n) WHERE (n)-[:S]->() RETURN n.x"),
    ("MATCH (n) RETURN n.x, EXISTS { (n)-->(m) WHERE m.x > 2 } AS e ORDER BY n.x",
     "MATCH (n) RETURN n.x, size([(n)-->(m) WHERE m.x > 2 | 1]) > 0 AS e ORDER BY n.x"),
    ("MATCH (n) RETURN n.x, COUNT { (n)--() } AS c ORDER BY n.x",
     "MATCH (n) RETURN n.x, size([(n)--(m) | m]) AS c ORDER BY n.x"),
    # CALL (x) { } scope clause
    ("MATCH (n:D) CALL (n) { MATCH (n)-->(m) RETURN m.x AS y } RETURN n.x, y ORDER BY n.x",
     "MATCH (n:D) CALL { WITH n MATCH (n)-->(m) RETURN m.x AS y } RETURN n.x, y ORDER BY n.x"),
    # ... with a UNION body: each part imports the scope (llama-index's get_triplets)
    ("MATCH (n:D) CALL (n) { WITH n MATCH (n)-->(m) RETURN m.x AS y UNION ALL MATCH (n)<--(m) RETURN m.x AS y } "
     "RETURN n.x, y ORDER BY n.x, y",
     "MATCH (n:D) CALL { WITH n MATCH (n)-->(m) RETURN m.x AS y UNION ALL WITH n MATCH (n)<--(m) RETURN m.x AS y } "
     "RETURN n.x, y ORDER BY n.x, y"),
    ("MATCH (n:D) CALL (*) { MATCH (n)--(m) RETURN n.x < m.x AS up UNION MATCH (n)--(m) RETURN true AS up } "
     "RETURN n.x, up ORDER BY n.x, up",
     "UNWIND [[5, true], [6, false], [6, true]] AS p RETURN p[0], p[1]"),
    # CREATE with a parameter map
    (("CREATE (n:T $p)-[:R $q]->(:T $p) WITH n MATCH (n)-[r:R]->(m) "
     "WITH n, m, n.k AS k, r.w AS w, m.k AS mk DETACH DELETE n, m RETURN k, w, mk"),
     "RETURN 'v' AS k, 2 AS w, 'v' AS mk"),
    # temporal: date(datetime()) is today's date; datetime(string) parses like localdatetime
    ("RETURN date(datetime()) = date() AS same", "RETURN true AS same"),
    ("RETURN datetime('2020-01-02T03:04:05').year AS y, datetime().year > 2000 AS now",
     "RETURN localdatetime('2020-01-02T03:04:05').year AS y, true AS now"),
]


@pytest.mark.parametrize("neo4j_query, falkordb_query", BRIDGES)
async def test_bridge_matches_hand_written_query(planner, runner, neo4j_query, falkordb_query):
    bridged = await rows(await planner.execute(neo4j_query, {"p": {"k": "v"}, "q": {"w": 2}}, runner))
    expected = await rows(await runner.run(falkordb_query, {}))
    assert bridged == expected
    assert bridged, "a bridge test must return rows"


async def test_seek_stays_a_seek(planner, runner):
    await rows(await planner.execute("MATCH (n) WHERE elementId(n) = $id RETURN n.x", {"id": "0"}, runner))
    assert runner.queries[-1][0] == "MATCH (n) WHERE id(n) = toInteger($id) RETURN n.x"


def test_bridges_never_apply_to_neo4j():
    planner = ExtensionPlanner(registry(), dialect=NEO4J)
    for query, _ in BRIDGES:
        assert planner.plan(query) is None


def test_unparsable_bridge_candidate_passes_through(planner):
    assert planner.plan("MATCH (n:A|B) RETURN n ORDER BY") is None


def test_unparsable_extension_query_reports_the_syntax_error(planner):
    with pytest.raises(CypherError) as info:
        planner.plan("MATCH (n) RETURN ts_avg(n.x, ")
    assert info.value.code == "Neo.ClientError.Statement.SyntaxError"


@pytest.mark.parametrize("query, error", [
    ("MATCH (n) WHERE n.x IS :: INTEGER RETURN n", ""),
    ("MATCH (n) WHERE EXISTS { (n)-->(m) WHERE m.x > 2 } RETURN n", ""),
    ("MATCH (n) WHERE COUNT { (n)-->() } > 1 RETURN n", ""),
    ("SHOW INDEXES", ""),
])
async def test_unbridgeable_reach_falkordb_unchanged(planner, runner, query, error):
    plan = planner.plan(query)
    assert plan is None or plan.text == query
    with pytest.raises(CypherError) as info:
        await rows(await planner.execute(query, {}, runner))
    assert error in info.value.message


@pytest.mark.parametrize("query, advice", [
    ("MATCH (a)-[:!S*1..2]->(b) RETURN a", "list the types (`[:A|B*1..3]`)"),
    ("MATCH (a) WHERE (a)-[:!S]->() RETURN a", "List the types (`-[:A|B]->`), or match it"),
    ("MATCH (a) WHERE EXISTS { MATCH (a)-[r:!S]->() } RETURN a", "List the types (`-[:A|B]->`), or match it"),
])
def test_type_expression_the_bridge_cannot_place_is_refused_saying_what_to_write(planner, query, advice):
    with pytest.raises(CypherError) as info:
        planner.plan(query)
    assert info.value.code == "Neo.ClientError.Statement.UnsupportedOperationError"
    assert advice in info.value.message


TYPE_EXPRESSIONS = st.recursive(
    st.sampled_from(["R", "S", "T", "%"]),
    lambda inner: st.one_of(inner.map(lambda x: f"!{x}"), inner.map(lambda x: f"({x})"),
                            st.tuples(inner, st.sampled_from(["|", "&"]), inner).map(lambda t: f"{t[0]}{t[1]}{t[2]}")),
    max_leaves=5)


def _holds(types: A.LabelExpr, rel_type: str) -> bool:
    """Neo4j's meaning of a relationship type expression, for a relationship of `rel_type`."""
    if isinstance(types, A.LabelName):
        return types.name == rel_type
    if isinstance(types, A.LabelWildcard):
        return True
    if isinstance(types, A.LabelNot):
        return not _holds(types.operand, rel_type)
    either = _holds(types.left, rel_type), _holds(types.right, rel_type)
    return any(either) if isinstance(types, A.LabelOr) else all(either)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(TYPE_EXPRESSIONS, st.booleans()), min_size=8, max_size=8))
async def test_relationship_type_expressions_match_as_in_neo4j(planner, runner, expressions):
    relationships = await rows(await runner.run("MATCH ()-[r]->() RETURN id(r), type(r)", {}))
    for text, named in expressions:
        query = f"MATCH (a)-[{'r' if named else ''}:{text}]->(b) RETURN count(*)"
        types = parse(query).parts[0].clauses[0].pattern.paths[0].elements[1].types
        [[count]] = await rows(await planner.execute(query, {}, runner))
        assert count == sum(_holds(types, t) for _, t in relationships), query


def test_parse_is_shared_with_parser_cache():
    assert parse("MATCH (n:A|B) RETURN n") is parse("MATCH (n:A|B) RETURN n")


@pytest.mark.parametrize("query, bridged", [
    ("CREATE (n:A $props)", True), ("CREATE (n $p)", True), ("create (:A:B $p)", True),
    ("CREATE ()-[r:T $p]->()", True), ("CREATE (n:`odd label` $p)", True),
    ("CREATE (n {a: $p})", False), ("MATCH (n) WHERE n.x = $x CREATE (m)", False),
    ("CREATE (n) SET n = $p", False),
])
def test_the_create_parameter_trigger_finds_what_the_bridge_rewrites(planner, query, bridged):
    """The trigger (a linear regex; an earlier one was quadratic in brackets) and the
    bridge agree: the planner rewrites exactly the CREATE patterns with a parameter map."""
    plan = planner.plan(query)
    assert (plan is not None and "SET" in plan.text) is bridged
