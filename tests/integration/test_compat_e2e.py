"""What Neo4j tools call, answered on the embedded database: start-up procedures, SHOW commands,
named schema commands, EXPLAIN without parameter values, CYPHER options, IN TRANSACTIONS, dynamic
labels, APOC merges, vector and fulltext search - through the real driver, checked against the
graph read with plain Cypher or against numpy."""

from __future__ import annotations

import math

import neo4j
import numpy as np
import pytest

from extensions.planner.catalog import build_registry
from proxy.backends.falkordb.dialect import FALKORDB


def rows(driver, query: str, database: str | None = None, **params) -> list[dict]:
    return [r.data() for r in driver.execute_query(query, params, database_=database).records]


def code_of(driver, query: str, **params) -> str:
    with pytest.raises(neo4j.exceptions.Neo4jError) as info:
        driver.execute_query(query, params)
    return info.value.code


def test_browser_start_up_calls_on_the_system_database(driver, tmp_path):
    @neo4j.unit_of_work(metadata={"type": "system", "app": "neo4j-browser_v2025.6.0"})
    def components_of(tx):
        return tx.run("CALL dbms.components() YIELD name, versions, edition").data()

    with driver.session(database="system") as session:
        components = session.execute_read(components_of)
        assert components == [{"name": "Neo4j Kernel", "versions": ["5.26.0"], "edition": "community"}]
        databases = session.run("SHOW DATABASES").data()
        assert {d["name"] for d in databases} >= {"neo4j", "system"}
        home = [d for d in databases if d["home"] and d["default"]]
        assert [d["name"] for d in home] == ["neo4j"]
        config = {r["name"]: r["value"] for r in session.run("CALL dbms.clientConfig()").data()}
        assert "browser.post_connect_cmd" in config
        assert session.run("CALL dbms.showCurrentUser()").single()["username"] == "neo4j"
        procedures = {r["name"] for r in session.run("SHOW PROCEDURES yield name, description, signature")}
        functions = {r["name"] for r in session.run("SHOW FUNCTIONS yield name, description, signature")}
    registry = build_registry(tmp_path)
    served = ({v.name for v in registry.virtual_procedures(FALKORDB) if v.callable}
              | {p.name for p in registry.procedures()} | {r.name for r in registry.rewrites(FALKORDB)})
    assert served <= procedures
    assert {e.name for e in registry} <= functions


def test_labels_and_types_list_only_what_exists(clean_graph):
    clean_graph.execute_query("CREATE (:StockKeep)-[:STOCK_KEEP]->(:StockGone)-[:STOCK_GONE]->(:StockKeep)")
    clean_graph.execute_query("MATCH (n:StockGone) DETACH DELETE n")
    labels = {r["label"] for r in rows(clean_graph, "CALL db.labels()")}
    types = {r["relationshipType"] for r in rows(clean_graph, "CALL db.relationshipTypes() YIELD relationshipType")}
    present = {r["l"] for r in rows(clean_graph, "MATCH (n) UNWIND labels(n) AS l RETURN DISTINCT l")}
    assert labels == present == {"StockKeep"} and types == set()
    union = rows(clean_graph, "CALL db.labels() YIELD label RETURN {name: 'labels', data: collect(label)} AS result "
                              "UNION ALL CALL db.propertyKeys() YIELD propertyKey "
                              "RETURN {name: 'propertyKeys', data: collect(propertyKey)} AS result")
    assert union[0]["result"] == {"name": "labels", "data": ["StockKeep"]}


def test_named_index_round_trip(clean_graph):
    create = "CREATE INDEX $name IF NOT EXISTS FOR (n:StockIdx) ON (n.code)"
    assert clean_graph.execute_query(create, name="stock_code").summary.counters.indexes_added == 1
    assert clean_graph.execute_query(create, name="stock_code").summary.counters.indexes_added == 0
    assert code_of(clean_graph, "CREATE INDEX stock_code FOR (n:StockIdx) ON (n.code)") == \
        "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
    listed = rows(clean_graph, "SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties "
                               "WHERE name = $name RETURN name, type, labelsOrTypes, properties", name="stock_code")
    assert listed == [{"name": "stock_code", "type": "RANGE", "labelsOrTypes": ["StockIdx"], "properties": ["code"]}]
    clean_graph.execute_query("CALL db.awaitIndexes(10)")        # built in the background, as in Neo4j
    plan = clean_graph.execute_query("EXPLAIN MATCH (n:StockIdx) WHERE n.code = 7 RETURN n").summary.plan
    assert "Index" in str(plan)                                  # FalkorDB really has the index
    assert clean_graph.execute_query("DROP INDEX stock_code").summary.counters.indexes_removed == 1
    assert code_of(clean_graph, "DROP INDEX stock_code") == "Neo.ClientError.Schema.IndexDropFailed"
    clean_graph.execute_query("DROP INDEX stock_code IF EXISTS")
    assert rows(clean_graph, "SHOW INDEXES YIELD name WHERE name = 'stock_code' RETURN name") == []


def test_a_new_index_is_populating_until_filled_and_await_indexes_waits_for_it(clean_graph):
    clean_graph.execute_query("UNWIND range(0, 199999) AS i CREATE (:Big {i: i})")
    clean_graph.execute_query("CREATE INDEX big_i FOR (n:Big) ON (n.i)")
    states = [r["state"] for r in rows(clean_graph, "SHOW INDEXES YIELD name, state WHERE name = 'big_i'")]
    assert states in (["POPULATING"], ["ONLINE"])           # FalkorDB fills it in the background
    clean_graph.execute_query("CALL db.awaitIndexes(60)")
    assert rows(clean_graph, "SHOW INDEXES YIELD name, state WHERE name = 'big_i'") == \
        [{"name": "big_i", "state": "ONLINE"}]
    with clean_graph.session() as session:
        plan = session.run("EXPLAIN MATCH (n:Big {i: 5}) RETURN n").consume().plan
    assert "Node By Index Scan" in str(plan)
    clean_graph.execute_query("CALL db.awaitIndex('big_i')")
    assert code_of(clean_graph, "CALL db.awaitIndexes('soon')") == "Neo.ClientError.Statement.ArgumentError"


def test_uniqueness_and_node_keys_are_enforced(clean_graph):
    clean_graph.execute_query("CREATE CONSTRAINT stock_key FOR (n:StockKey) REQUIRE (n.a, n.b) IS NODE KEY")
    try:
        clean_graph.execute_query("CREATE (:StockKey {a: 1, b: 1}), (:StockKey {a: 1, b: 2})")
        assert code_of(clean_graph, "CREATE (:StockKey {a: 1, b: 1})") == \
            "Neo.ClientError.Schema.ConstraintValidationFailed"
        assert code_of(clean_graph, "CREATE (:StockKey {a: 2})") == "Neo.ClientError.Schema.ConstraintValidationFailed"
        assert rows(clean_graph, "MATCH (n:StockKey) RETURN count(n) AS n") == [{"n": 2}]
        (shown,) = rows(clean_graph, "SHOW CONSTRAINTS YIELD name, type, properties, ownedIndex")
        assert shown == {"name": "stock_key", "type": "NODE_KEY", "properties": ["a", "b"], "ownedIndex": "stock_key"}
        assert code_of(clean_graph, "DROP INDEX stock_key") == "Neo.ClientError.Schema.IndexDropFailed"
        assert rows(clean_graph, "RETURN 1 AS one") == [{"one": 1}]     # FalkorDB survived the refusal
    finally:
        clean_graph.execute_query("DROP CONSTRAINT stock_key IF EXISTS")
    assert rows(clean_graph, "SHOW CONSTRAINTS") == []


def test_a_constraint_the_data_violates_is_refused_and_leaves_nothing(clean_graph):
    clean_graph.execute_query("CREATE (:StockDup {id: 1}), (:StockDup {id: 1})")
    assert code_of(clean_graph, "CREATE CONSTRAINT stock_dup FOR (n:StockDup) REQUIRE n.id IS UNIQUE") == \
        "Neo.ClientError.Schema.ConstraintCreationFailed"
    assert rows(clean_graph, "SHOW CONSTRAINTS") == []
    clean_graph.execute_query("CREATE (:StockDup {id: 1})")                       # not enforced
    for name in [r["name"] for r in rows(clean_graph, "SHOW INDEXES YIELD name, labelsOrTypes "
                                                       "WHERE labelsOrTypes = ['StockDup'] RETURN name")]:
        clean_graph.execute_query(f"DROP INDEX `{name}`")


def test_explain_plans_without_parameter_values(clean_graph):
    clean_graph.execute_query("CREATE INDEX stock_explain IF NOT EXISTS FOR (n:StockExplain) ON (n.k)")
    try:
        read = clean_graph.execute_query("EXPLAIN MATCH (n:StockExplain) WHERE n.k = $k RETURN n LIMIT $n").summary
        write = clean_graph.execute_query("EXPLAIN UNWIND $rows AS r CREATE (:StockExplain {k: r})").summary
        assert (read.query_type, write.query_type) == ("r", "w")
        assert rows(clean_graph, "MATCH (n:StockExplain) RETURN count(n) AS n") == [{"n": 0}]
    finally:
        clean_graph.execute_query("DROP INDEX stock_explain")


@pytest.mark.parametrize("prefix", ["CYPHER 5", "CYPHER 25", "CYPHER runtime=slotted", "CYPHER 5 planner=cost"])
def test_cypher_options_are_accepted(driver, prefix):
    assert rows(driver, f"{prefix} RETURN 1 + 1 AS two") == [{"two": 2}]


def test_value_type_names_as_neo4j(driver):
    got = rows(driver, "RETURN valueType(1) AS i, valueType('a') AS s, valueType(null) AS n, "
                       "valueType([1.5, 2.0]) AS l, valueType([]) AS e, valueType({a: 1}) AS m")
    assert got == [{"i": "INTEGER NOT NULL", "s": "STRING NOT NULL", "n": "NULL",
                    "l": "LIST<FLOAT NOT NULL> NOT NULL", "e": "LIST<NOTHING> NOT NULL", "m": "MAP NOT NULL"}]


def test_unknown_procedure_and_transaction_metadata(driver):
    assert code_of(driver, "CALL apoc.nope()") == "Neo.ClientError.Procedure.ProcedureNotFound"
    with driver.session() as session:
        with session.begin_transaction(metadata={"app": "stock", "n": 2}) as tx:
            assert tx.run("CALL tx.getMetaData() YIELD metadata").single()["metadata"] == {"app": "stock", "n": 2}


def test_call_in_transactions_writes_every_row(clean_graph):
    clean_graph.execute_query("UNWIND range(1, 5) AS i CALL (i) { CREATE (:StockBatch {i: i}) } "
                              "IN TRANSACTIONS OF 2 ROWS")
    clean_graph.execute_query("UNWIND range(1, 7) AS i CALL { WITH i MERGE (:StockMerged {i: i % 4}) } "
                              "IN TRANSACTIONS")
    got = rows(clean_graph, "MATCH (n:StockBatch) WITH count(n) AS batch MATCH (m:StockMerged) "
                            "RETURN batch, count(m) AS merged")
    assert got == [{"batch": 5, "merged": 4}]


def test_dynamic_labels_and_apoc_merge(clean_graph):
    people = [{"id": "a", "labels": ["StockPerson"]}, {"id": "b", "labels": ["StockPerson", "StockAdmin"]},
              {"id": "c", "labels": "StockOrg"}]
    clean_graph.execute_query("UNWIND $rows AS row CREATE (n:StockThing {id: row.id}) SET n:$(row.labels)",
                              rows=people)
    got = {r["id"]: sorted(r["l"]) for r in rows(clean_graph, "MATCH (n:StockThing) RETURN n.id AS id, labels(n) AS l")}
    assert got == {"a": ["StockPerson", "StockThing"], "b": ["StockAdmin", "StockPerson", "StockThing"],
                   "c": ["StockOrg", "StockThing"]}
    assert [r["id"] for r in rows(clean_graph, "MATCH (n:$($label)) RETURN n.id AS id", label="StockAdmin")] == ["b"]
    merge = ("UNWIND $rows AS row CALL apoc.merge.node([row.type], {key: row.key}, {created: true}, {matched: true}) "
             "YIELD node RETURN node.key AS key, node.created AS created, node.matched AS matched")
    first = rows(clean_graph, merge, rows=[{"type": "StockM", "key": 1}, {"type": "StockN", "key": 1}])
    again = rows(clean_graph, merge, rows=[{"type": "StockM", "key": 1}])
    assert sorted(r["key"] for r in first) == [1, 1] and all(r["created"] for r in first)
    assert again == [{"key": 1, "created": True, "matched": True}]
    assert rows(clean_graph, "MATCH (n) WHERE n:StockM OR n:StockN RETURN count(n) AS n") == [{"n": 2}]
    rel = ("MATCH (a:StockM), (b:StockN) CALL apoc.merge.relationship(a, $type, {}, {w: 1}, b, {w: 2}) "
           "YIELD rel RETURN type(rel) AS t, rel.w AS w")
    assert rows(clean_graph, rel, type="STOCK_LINK") == [{"t": "STOCK_LINK", "w": 1}]
    assert rows(clean_graph, rel, type="STOCK_LINK") == [{"t": "STOCK_LINK", "w": 2}]


def test_dynamic_labels_in_merge_and_create(clean_graph):
    """Neo4j 5.26's `MERGE (n:$($label) {id: $id})` and `CREATE (n:$(...))-[:$(...)]->()` (issue 29)."""
    merge = "MERGE (n:$($label) {id: $id}) ON CREATE SET n.new = true ON MATCH SET n.new = false RETURN n.new AS new"
    assert rows(clean_graph, merge, label="StockDoc", id=1) == [{"new": True}]
    assert rows(clean_graph, merge, label="StockDoc", id=1) == [{"new": False}]
    assert rows(clean_graph, merge, label="StockPage", id=1) == [{"new": True}]
    rows(clean_graph, "UNWIND ['StockDoc', 'StockDoc'] AS l MERGE (:$(l) {id: 2})")    # one value on every row
    rows(clean_graph, "CREATE (a:StockBase:$($label))-[:$($type)]->(:$(['StockX', 'StockY']))",
         label="StockDoc", type="STOCK_CITES")
    got = rows(clean_graph, "MATCH (n) RETURN labels(n) AS l, n.id AS id, [(n)-[r]->() | type(r)] AS out")
    assert sorted((sorted(r["l"]), r["id"], r["out"]) for r in got) == [
        (["StockBase", "StockDoc"], None, ["STOCK_CITES"]), (["StockDoc"], 1, []), (["StockDoc"], 2, []),
        (["StockPage"], 1, []), (["StockX", "StockY"], None, [])]
    created = rows(clean_graph, "UNWIND $rows AS row CREATE (n:StockBase:$(row.l) {id: row.id}) "
                                "RETURN n.id AS id, labels(n) AS l", rows=[{"l": "StockA", "id": 3},
                                                                          {"l": ["StockB", "StockC"], "id": 4}])
    assert sorted((r["id"], sorted(r["l"])) for r in created) == [
        (3, ["StockA", "StockBase"]), (4, ["StockB", "StockBase", "StockC"])]          # a label per row
    with pytest.raises(neo4j.exceptions.ClientError, match="label or type computed per row .* takes 2 values"):
        rows(clean_graph, "UNWIND ['StockA', 'StockB'] AS l MERGE (:$(l) {id: 5})")
    with pytest.raises(neo4j.exceptions.ClientError, match="must be a non-empty STRING"):
        rows(clean_graph, "MERGE (:$($label) {id: 5})", label=None)
    with pytest.raises(neo4j.exceptions.ClientError, match="must be a non-empty STRING"):
        rows(clean_graph, "UNWIND ['StockA', null] AS l CREATE (:$(l) {id: 5})")
    assert rows(clean_graph, "MATCH (n {id: 5}) RETURN count(n) AS n") == [{"n": 0}]


def test_vector_and_fulltext_search_by_index_name(clean_graph):
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(20, 8))
    query = rng.normal(size=8)
    clean_graph.execute_query("CREATE VECTOR INDEX stock_vec IF NOT EXISTS FOR (n:StockVec) ON n.emb OPTIONS "
                              "{indexConfig: {`vector.dimensions`: 8, `vector.similarity_function`: 'cosine'}}")
    clean_graph.execute_query("CREATE VECTOR INDEX stock_euc IF NOT EXISTS FOR (n:StockEuc) ON n.emb OPTIONS "
                              "{indexConfig: {`vector.dimensions`: 8, `vector.similarity_function`: 'euclidean'}}")
    clean_graph.execute_query("CREATE FULLTEXT INDEX stock_text IF NOT EXISTS FOR (n:StockVec) ON EACH [n.text]")
    try:
        data = [{"i": i, "v": v.tolist(), "text": f"well number {i}"} for i, v in enumerate(vectors)]
        clean_graph.execute_query("UNWIND $rows AS row CREATE (n:StockVec {i: row.i, text: row.text}) "
                                  "WITH n, row CALL db.create.setNodeVectorProperty(n, $key, row.v)",
                                  rows=data, key="emb")
        clean_graph.execute_query("UNWIND $rows AS row CREATE (n:StockEuc {i: row.i}) "
                                  "WITH n, row CALL db.create.setNodeVectorProperty(n, 'emb', row.v)", rows=data)
        unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        cos = (1 + unit @ (query / np.linalg.norm(query))) / 2
        euc = 1 / (1 + ((vectors - query) ** 2).sum(axis=1))
        for index, expected in (("stock_vec", cos), ("stock_euc", euc)):
            got = rows(clean_graph, "CALL db.index.vector.queryNodes($index, 3, $q) YIELD node, score "
                                    "RETURN node.i AS i, score", index=index, q=query.tolist())
            best = np.argsort(-expected)[:3]
            assert [r["i"] for r in got] == best.tolist()
            assert [r["score"] for r in got] == pytest.approx(expected[best].tolist(), rel=1e-5)
        exact = rows(clean_graph, "MATCH (n:StockVec) RETURN n.i AS i, vector.similarity.cosine(n.emb, $q) AS s",
                     q=query.tolist())
        assert {r["i"]: r["s"] for r in exact} == pytest.approx(dict(enumerate(cos.tolist())), rel=1e-5)
        text = rows(clean_graph, "CALL db.index.fulltext.queryNodes('stock_text', 'number', {limit: 4}) "
                                 "YIELD node, score RETURN node.i AS i, score")
        assert len(text) == 4 and all(math.isfinite(r["score"]) for r in text)
        assert code_of(clean_graph, "CALL db.index.vector.queryNodes('nope', 1, [1.0]) YIELD node RETURN node") == \
            "Neo.ClientError.Procedure.ProcedureCallFailed"
    finally:
        for name in ("stock_vec", "stock_euc", "stock_text"):
            clean_graph.execute_query(f"DROP INDEX {name} IF EXISTS")
