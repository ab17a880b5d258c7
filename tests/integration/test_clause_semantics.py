"""Neo4j's answers for CASE, writes in CALL subqueries and SKIP/LIMIT through the proxy on the
embedded FalkorDB (issue 25): each shape FalkorDB answers differently on its own, through the
real driver, with the graph checked after the write."""

from __future__ import annotations

import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.harness import NO_LOCKOUT, PASSWORD, USER, ProxyProcess


@pytest.fixture(scope="module")
def db():
    with ProxyProcess(args=NO_LOCKOUT) as process, \
            neo4j.GraphDatabase.driver(process.uri, auth=(USER, PASSWORD)) as driver:
        yield driver


@pytest.fixture
def graph(db):
    db.execute_query("MATCH (n) DETACH DELETE n")
    return db


def values(driver, query, **params):
    records, _, _ = driver.execute_query(query, params)
    return [record[0] for record in records]


def count(driver, label):
    return values(driver, f"MATCH (n:{label}) RETURN count(n)")[0]


# -- CASE evaluates the branch it takes only

@pytest.mark.parametrize("query", [
    "UNWIND [0, 5] AS n RETURN CASE WHEN n = 0 THEN 0 ELSE 100 / n END",
    "UNWIND [0, 5] AS n RETURN CASE n WHEN 0 THEN 0 ELSE 100 / n END",
    "UNWIND [0, 5] AS n RETURN CASE WHEN n = 0 THEN 0 WHEN 100 / n > 30 THEN 1 ELSE 20 END",
    "UNWIND [0, 5] AS n RETURN CASE WHEN n = 0 THEN 0 ELSE CASE WHEN n > 3 THEN 100 / n ELSE -1 END END",
])
def test_case_skips_the_untaken_division(graph, query):
    assert values(graph, query) == [0, 20]


def test_case_in_where_order_by_and_set(graph):
    assert values(graph, "UNWIND [0, 4, 5] AS n WITH n WHERE CASE WHEN n = 0 THEN true ELSE 100 / n > 30 END "
                         "RETURN n ORDER BY CASE WHEN n = 0 THEN 1000 ELSE 100 / n END") == [0]
    assert values(graph, "UNWIND [0, 5] AS n CREATE (m:Ratio) SET m.v = CASE WHEN n = 0 THEN -1 ELSE 100 / n END "
                         "RETURN m.v ORDER BY m.v") == [-1, 20]


def test_case_with_duration_of_null_in_the_untaken_branch(graph):
    got = values(graph, "UNWIND [null, 2] AS d RETURN CASE WHEN d IS NULL THEN 0 ELSE duration({days: d}) END")
    assert got[0] == 0 and got[1].days == 2
    assert values(graph, "RETURN CASE WHEN $d IS NULL THEN 'none' ELSE duration({days: $d}) END", d=None) == ["none"]


def test_case_keeps_list_results_and_nulls(graph):
    assert values(graph, "UNWIND [0, 1, 2] AS n RETURN CASE WHEN n = 0 THEN [1, 2] WHEN n = 1 THEN null "
                         "ELSE [x IN range(1, n) | 10 / x] END") == [[1, 2], None, [10, 5]]


# -- writes inside CALL { } run for every row

ROWS = [{"k": i % 4} for i in range(6)]


@pytest.mark.parametrize("query", [
    "UNWIND $rows AS row CALL { WITH row MERGE (:Item {k: row.k}) }",
    "UNWIND $rows AS row CALL (row) { MERGE (:Item {k: row.k}) }",
    "UNWIND $rows AS row CALL { WITH row MERGE (:Item {k: row.k}) } RETURN count(*) AS rows",
    "UNWIND $rows AS row CALL { WITH row MERGE (i:Item {k: row.k}) RETURN i } RETURN count(*) AS rows",
    "UNWIND [$rows] AS batch CALL { WITH batch UNWIND batch AS row MERGE (:Item {k: row.k}) } RETURN 1",
    "UNWIND $rows AS row CALL { WITH row MERGE (:Item {k: row.k}) } IN TRANSACTIONS OF 2 ROWS",
])
def test_merge_in_a_subquery_runs_per_row(graph, query):
    got = values(graph, query, rows=ROWS)
    assert count(graph, "Item") == 4
    assert got in ([], [6], [1])


def test_merge_actions_and_row_order_in_a_subquery(graph):
    got = values(graph, "UNWIND $rows AS row CALL { WITH row MERGE (i:Item {k: row.k}) ON CREATE SET i.c = 1 "
                        "ON MATCH SET i.c = i.c + 1 } RETURN row.k", rows=ROWS)
    assert got == [r["k"] for r in ROWS]
    assert values(graph, "MATCH (i:Item) RETURN [i.k, i.c] ORDER BY i.k") == [[0, 2], [1, 2], [2, 1], [3, 1]]


def test_returning_merge_subquery_keeps_outer_rows(graph):
    got = values(graph, "UNWIND $rows AS row CALL { WITH row MERGE (i:Item {k: row.k}) RETURN i.k AS k } "
                        "RETURN [row.k, k]", rows=ROWS)
    assert sorted(got) == sorted([r["k"], r["k"]] for r in ROWS)      # no ORDER BY: any order


def test_returning_subquery_with_several_merges(graph):
    pairs = [{"a": 1, "b": 2}, {"a": 2, "b": 1}, {"a": 1, "b": 2}, {"a": 3, "b": 3}]
    got = values(graph, "UNWIND $rows AS row CALL { WITH row MERGE (a:Acct {k: row.a}) MERGE (b:Acct {k: row.b}) "
                        "MERGE (a)-[:PAYS]->(b) RETURN b.k AS k } RETURN [row.a, k]", rows=pairs)
    assert sorted(got) == sorted([p["a"], p["b"]] for p in pairs)
    assert count(graph, "Acct") == 3
    assert values(graph, "MATCH ()-[r:PAYS]->() RETURN count(r)") == [3]


def test_union_of_unit_subqueries_and_delete(graph):
    values(graph, "UNWIND $rows AS row CALL { WITH row MERGE (:A {k: row.k}) UNION WITH row MERGE (:B {k: row.k}) }",
           rows=ROWS)
    assert (count(graph, "A"), count(graph, "B")) == (4, 4)
    assert values(graph, "MATCH (a:A) CALL { WITH a DETACH DELETE a } RETURN count(*)") == [4]
    assert count(graph, "A") == 0


def test_match_then_delete_in_a_subquery_runs_per_row(graph):
    graph.execute_query("UNWIND range(0, 2) AS i CREATE (p:P {id: i}) CREATE (p)-[:R]->(:Q {i: i}), "
                        "(p)-[:R]->(:Q {i: i + 10})")
    got = values(graph, "MATCH (p:P) CALL { WITH p MATCH (p)-[r:R]->(q) WHERE q.i < 10 DELETE r SET q.cut = true } "
                        "RETURN p.id ORDER BY p.id")
    assert got == [0, 1, 2]
    assert sorted(values(graph, "MATCH (:P)-[:R]->(q) RETURN collect(q.i)")[0]) == [10, 11, 12]
    assert values(graph, "MATCH (q:Q) WHERE q.cut RETURN count(q)") == [3]


def test_subqueries_that_cannot_run_per_row_are_refused(graph):
    graph.execute_query("CREATE (:A)-[:R]->(:B)")
    with pytest.raises(neo4j.exceptions.ClientError, match="first row only"):
        graph.execute_query("MATCH (a:A) CALL { WITH a MATCH (b:B) DETACH DELETE b } RETURN count(*)")
    with pytest.raises(neo4j.exceptions.ClientError, match="not defined"):
        graph.execute_query("MATCH (a:A), (b:B) CALL { WITH a MERGE (:C {b: b.x}) } RETURN 1")
    assert values(graph, "MATCH ()-[r]->() RETURN count(r)") == [1]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.integers(min_value=0, max_value=6), max_size=12))
def test_random_rows_merged_in_a_subquery(db, keys):
    db.execute_query("MATCH (n:Rand) DELETE n")
    db.execute_query("UNWIND $rows AS row CALL { WITH row MERGE (n:Rand {k: row.k}) ON MATCH SET n.seen = "
                     "coalesce(n.seen, 1) + 1 }", {"rows": [{"k": k} for k in keys]})
    stored = dict(values(db, "MATCH (n:Rand) RETURN [n.k, coalesce(n.seen, 1)]"))
    assert stored == {k: keys.count(k) for k in set(keys)}


# -- LIMIT 0 and big or computed counts

@pytest.mark.parametrize("query, params", [
    ("CREATE (n:N) RETURN n LIMIT 0", {}),
    ("CREATE (n:N) RETURN n LIMIT $l", {"l": 0}),
    ("CREATE (n:N) WITH n LIMIT 0 RETURN n", {}),
    ("CREATE (n:N) RETURN n SKIP 1 LIMIT 0", {}),
    ("UNWIND [1] AS i CALL { WITH i CREATE (n:N) RETURN n LIMIT 0 } RETURN n", {}),
])
def test_limit_zero_keeps_the_writes(graph, query, params):
    assert values(graph, query, **params) == []
    assert count(graph, "N") == 1


def test_limit_zero_after_set_and_delete(graph):
    graph.execute_query("UNWIND range(1, 3) AS i CREATE (:N {i: i})")
    assert values(graph, "MATCH (n:N) SET n.x = 1 RETURN n LIMIT 0") == []
    assert values(graph, "MATCH (n:N) WHERE n.x = 1 RETURN count(n)") == [3]
    assert values(graph, "MATCH (n:N) DETACH DELETE n RETURN 1 LIMIT 0") == []
    assert count(graph, "N") == 0


def test_counts_past_32_bits_and_expressions(graph):
    assert values(graph, "UNWIND range(1, 3) AS i RETURN i LIMIT 4294967296") == [1, 2, 3]
    assert values(graph, "UNWIND range(1, 3) AS i RETURN i SKIP 4294967296") == []
    assert values(graph, "UNWIND range(1, 3) AS i RETURN i LIMIT $l", l=2**62) == [1, 2, 3]
    assert values(graph, "UNWIND range(1, 5) AS i RETURN i SKIP $page * 2 LIMIT toInteger($limit)",
                  page=1, limit="2") == [3, 4]
    assert values(graph, "UNWIND range(1, 5) AS i RETURN i LIMIT toInteger(ceil(1.7))") == [1, 2]
    with pytest.raises(neo4j.exceptions.ClientError):
        graph.execute_query("RETURN 1 LIMIT $l", {"l": -1})


# -- shims: schema properties, point.distance, vector similarity on stored lists and vectors

def test_schema_type_properties_list_the_properties(graph):
    graph.execute_query("CREATE (:Ticket {title: 't', id: 7})-[:ABOUT {since: 2020}]->(:Topic)")
    nodes = graph.execute_query("CALL db.schema.nodeTypeProperties() YIELD nodeLabels, propertyName "
                                "RETURN nodeLabels, propertyName ORDER BY propertyName").records
    assert [(r["nodeLabels"], r["propertyName"]) for r in nodes if r["nodeLabels"] == ["Ticket"]] == [
        (["Ticket"], "id"), (["Ticket"], "title")]
    rels = graph.execute_query("CALL db.schema.relTypeProperties() YIELD relType, propertyName "
                               "RETURN relType, propertyName").records
    assert [(r["relType"], r["propertyName"]) for r in rels] == [(":`ABOUT`", "since")]


def test_point_distance_is_neo4js_haversine(graph):
    # Neo4j's documented example: Copenhagen central station to the office, 27842 m
    assert values(graph, "WITH point({longitude: 12.564590, latitude: 55.672874}) AS t, "
                         "point({longitude: 12.994341, latitude: 55.611784}) AS o "
                         "RETURN round(point.distance(t, o))") == [27842.0]
    assert values(graph, "RETURN point.distance(point({longitude: 1, latitude: 2}), null)") == [None]


def test_vector_similarity_on_stored_lists_and_vectors(graph):
    graph.execute_query("CREATE (:Doc {embedding: [1.0, 0.0, 1.0]})")
    graph.execute_query("CREATE (d:Doc) WITH d CALL db.create.setNodeVectorProperty(d, 'embedding', [1.0, 0.0, 1.0])")
    got = values(graph, "MATCH (d:Doc) RETURN vector.similarity.cosine(d.embedding, $q)", q=[1.0, 0.0, 0.0])
    assert got == pytest.approx([0.853553, 0.853553], abs=1e-6)       # (1 + cos 45°) / 2, as Neo4j
    got = values(graph, "MATCH (d:Doc) WITH d.embedding AS e RETURN vector.similarity.euclidean(e, [1.0, 0.0, 0.0])")
    assert got == [0.5, 0.5]                                             # 1 / (1 + d²), d = 1


# -- NOT NULL constraints hold when the statement ends (Neo4j checks them at commit)

@pytest.fixture
def titled(graph):
    graph.execute_query("CREATE CONSTRAINT ticket_title FOR (t:Ticket) REQUIRE t.title IS NOT NULL")
    yield graph
    graph.execute_query("DROP CONSTRAINT ticket_title IF EXISTS")


def test_merge_on_create_set_fills_a_required_property(titled):
    query = "MERGE (t:Ticket {id: 7}) ON CREATE SET t += $props RETURN t.id AS id, t.title AS title"
    assert titled.execute_query(query, props={"title": "Printer"}).records[0].data() == {"id": 7, "title": "Printer"}
    assert values(titled, "CREATE (t:Ticket {id: 8}) SET t.title = 'Mouse'") == []
    assert values(titled, "UNWIND [9, 10] AS i CREATE (t:Ticket {id: i}) SET t.title = 'x' RETURN t.id ORDER BY t.id DESC") \
        == [10, 9]
    assert count(titled, "Ticket") == 4
    shown = titled.execute_query("SHOW CONSTRAINTS YIELD name, type, labelsOrTypes, properties").records
    assert [r.data() for r in shown] == [{"name": "ticket_title", "type": "NODE_PROPERTY_EXISTENCE",
                                          "labelsOrTypes": ["Ticket"], "properties": ["title"]}]


def test_relationship_existence_and_transactions(graph):
    graph.execute_query("CREATE CONSTRAINT since FOR ()-[r:SINCE]-() REQUIRE r.year IS NOT NULL")
    try:
        graph.execute_query("CREATE (a:Pa)-[r:SINCE]->(b:Pb) SET r.year = 2020")
        with pytest.raises(neo4j.exceptions.ClientError, match="Relationship with type `SINCE`"):
            graph.execute_query("MATCH (a:Pa), (b:Pb) CREATE (a)-[:SINCE]->(b)")
        with graph.session() as session, session.begin_transaction() as tx:
            tx.run("MATCH (a:Pa), (b:Pb) CREATE (a)-[r:SINCE]->(b) SET r.year = 2021").consume()
            tx.commit()
        assert sorted(values(graph, "MATCH ()-[r:SINCE]->() RETURN r.year")) == [2020, 2021]
    finally:
        graph.execute_query("DROP CONSTRAINT since IF EXISTS")


@pytest.mark.parametrize("query", [
    "MERGE (t:Ticket {id: 11}) ON CREATE SET t += $props",
    "MATCH (t:Ticket) SET t.title = null",
    "MATCH (t:Ticket) REMOVE t.title RETURN t.id",
    "CREATE (:Ticket {id: 12})",
    "PROFILE CREATE (:Ticket {id: 13}) RETURN 1",
])
def test_a_statement_leaving_a_required_property_unset_fails_whole(titled, query):
    titled.execute_query("CREATE (:Ticket {id: 1, title: 'kept'})")
    with pytest.raises(neo4j.exceptions.ClientError) as failure:
        titled.execute_query(query, props={"other": 1})
    assert failure.value.code == "Neo.ClientError.Schema.ConstraintValidationFailed"
    assert "Node with label `Ticket` must have the property `title`" in failure.value.message
    assert values(titled, "MATCH (t:Ticket) RETURN [t.id, t.title]") == [[1, "kept"]]


def test_existing_data_without_the_property_refuses_the_constraint(graph):
    graph.execute_query("CREATE (:Untitled {id: 1})")
    with pytest.raises(neo4j.exceptions.ClientError) as failure:
        graph.execute_query("CREATE CONSTRAINT untitled FOR (u:Untitled) REQUIRE u.title IS NOT NULL")
    assert failure.value.code == "Neo.ClientError.Schema.ConstraintCreationFailed"
    assert values(graph, "SHOW CONSTRAINTS YIELD name RETURN name") == []
