"""APOC behind a Neo4j that lacks it (compat/apoc_upstream.py): proxy B (`--upstream`) -> proxy A
(`--without-apoc`: the embedded database presented as a Neo4j without APOC, which lists no APOC
procedure and refuses APOC calls with Neo4j's errors). B asks A once whether APOC is installed
and serves the census in Neo4j's Cypher; in front of a proxy with APOC it passes APOC through.
The stock packages' APOC flows (langchain-neo4j's schema and imports, llama-index's upsert and
schema) run unchanged through B, checked against plain Cypher on A.
"""

from __future__ import annotations

import json

import neo4j
import pytest

from tests.harness import NO_LOCKOUT, PASSWORD, USER, ProxyProcess
from tests.integration.test_stock_agents import LLAMA, STOCK, run_client


@pytest.fixture(scope="module")
def bare():
    with ProxyProcess(args=["--without-apoc", *NO_LOCKOUT]) as process:
        yield process


@pytest.fixture(scope="module")
def front(bare):
    with ProxyProcess(args=["--upstream", bare.uri, "--workers", "1", *NO_LOCKOUT]) as process:
        yield process


def _driver(process):
    return neo4j.GraphDatabase.driver(process.uri, auth=(USER, PASSWORD))


@pytest.fixture(scope="module")
def upstream(bare):
    with _driver(bare) as drv:
        yield drv


@pytest.fixture(scope="module")
def served(front):
    with _driver(front) as drv:
        yield drv


def one(driver, query: str, **params) -> dict:
    return driver.execute_query(query, params).records[0].data()


def test_the_stand_in_has_no_apoc(upstream):
    with pytest.raises(neo4j.exceptions.ClientError, match="no procedure with the name `apoc.meta.data`") as info:
        upstream.execute_query("CALL apoc.meta.data()")
    assert info.value.code == "Neo.ClientError.Procedure.ProcedureNotFound"
    with pytest.raises(neo4j.exceptions.CypherSyntaxError, match="Unknown function 'apoc.coll.toSet'"):
        upstream.execute_query("RETURN apoc.coll.toSet([1])")
    assert one(upstream, "SHOW PROCEDURES YIELD name WHERE name STARTS WITH 'apoc.' RETURN count(name) AS n")["n"] == 0


def test_functions_answer_as_apoc_does(served):
    got = one(served, """
        WITH {a: 1, b: null, c: 2} AS m
        RETURN apoc.coll.toSet([1, 1, 2, null, null]) AS to_set, apoc.coll.flatten([[1, 2], [3], 4, null]) AS flat,
               apoc.coll.union([1, 2], [2, 3]) AS union_, apoc.coll.intersection([1, 2, 3, 3], [2, 3, 4]) AS inter,
               apoc.coll.subtract([1, 2, 3, 1], [2]) AS sub, apoc.coll.sum([1, 2.5]) AS total,
               apoc.coll.avg([1, 2]) AS mean, apoc.coll.max([3, 9, 1]) AS top, apoc.coll.min([3, 9, 1]) AS bottom,
               apoc.coll.contains([1, 2], 2) AS has, apoc.coll.indexOf(['a', 'b'], 'b') AS at,
               apoc.text.join(['a', 'b', 'c'], '-') AS joined, apoc.text.capitalize('troll') AS cap,
               apoc.meta.cypher.type([1, 2]) AS list_type, apoc.meta.cypher.type('x') AS string_type,
               apoc.any.property(m, 'c') AS prop, apoc.map.clean(m, ['c'], []) AS cleaned,
               apoc.map.merge({a: 1}, {b: 2, a: 3}) AS merged, apoc.map.removeKeys(m, ['a', 'b']) AS removed,
               apoc.map.fromPairs([['x', 1], ['y', 2]]) AS pairs, apoc.convert.fromJsonMap('{"k": [1, 2]}') AS json
        """)
    assert got == {"to_set": [1, 2, None], "flat": [1, 2, 3, 4, None], "union_": [1, 2, 3], "inter": [2, 3],
                   "sub": [1, 3], "total": 3.5, "mean": 1.5, "top": 9, "bottom": 1, "has": True, "at": 1,
                   "joined": "a-b-c", "cap": "Troll", "list_type": "LIST OF INTEGER", "string_type": "STRING",
                   "prop": 2, "cleaned": {"a": 1}, "merged": {"a": 3, "b": 2}, "removed": {"c": 2},
                   "pairs": {"x": 1, "y": 2}, "json": {"k": [1, 2]}}
    with pytest.raises(neo4j.exceptions.ClientError, match="not served behind a Neo4j without APOC"):
        served.execute_query("RETURN apoc.coll.sort([2, 1])")


def test_meta_data_and_writes_match_plain_cypher(served, upstream):
    served.execute_query("UNWIND [{t: 'Field', id: 'troll'}, {t: 'Company', id: 'equinor'}] AS row "
                         "CALL apoc.merge.node([row.t], {id: row.id}, {made: true}, {seen: true}) YIELD node "
                         "RETURN count(*)")
    served.execute_query("MATCH (c:Company {id: 'equinor'}), (f:Field {id: 'troll'}) "
                         "CALL apoc.merge.relationship(c, 'OPERATES', {}, {since: 1995}, f) YIELD rel "
                         "WITH f CALL apoc.create.addLabels(f, ['GasField']) YIELD node RETURN count(*)")
    graph = one(upstream, "MATCH (c:Company)-[r:OPERATES]->(f:Field) RETURN c.made AS made, r.since AS since, "
                          "labels(f) AS labels")
    assert graph == {"made": True, "since": 1995, "labels": ["Field", "GasField"]}
    rows = {(r["label"], r["property"], r["type"]) for r in served.execute_query(
        "CALL apoc.meta.data() YIELD label, property, type, elementType WHERE label IN ['Field', 'Company', "
        "'OPERATES'] RETURN label, property, type").records}
    keys = {(r["label"], r["key"]) for r in upstream.execute_query(
        "MATCH (n) WHERE n:Field OR n:Company UNWIND labels(n) AS label UNWIND keys(n) AS key "
        "RETURN DISTINCT label, key").records if r["label"] != "GasField"}
    assert {(label, key) for label, key, t in rows if t != "RELATIONSHIP"} >= keys | {("OPERATES", "since")}
    assert ("Company", "OPERATES", "RELATIONSHIP") in rows
    assert ("Field", "id", "STRING") in rows and ("OPERATES", "since", "INTEGER") in rows
    stats = one(served, "CALL apoc.meta.stats() YIELD nodeCount, relCount RETURN nodeCount, relCount")
    assert stats == one(upstream, "MATCH (n) OPTIONAL MATCH (n)-[r]->() RETURN count(DISTINCT n) AS nodeCount, "
                                  "count(r) AS relCount")


def test_apoc_is_detected_once_per_database(front, served):
    for _ in range(3):
        served.execute_query("RETURN apoc.coll.toSet([1]) AS s")
    assert sum("has no APOC" in line for line in front.output) == 1


def test_in_front_of_apoc_calls_pass_through(proxy):
    """The shared embedded proxy has APOC: `apoc.coll.sort`, which the Neo4j rewrite refuses,
    is answered by the upstream's own."""
    with ProxyProcess(args=["--upstream", proxy.uri, "--workers", "1", *NO_LOCKOUT]) as chained, \
            _driver(chained) as drv:
        assert one(drv, "RETURN apoc.coll.sort([3, 1, 2]) AS s")["s"] == [1, 2, 3]
        assert not any("has no APOC" in line for line in chained.output)


def test_llama_index_through_a_neo4j_without_apoc(front, upstream):
    """llama-index 0.8.0's property graph store (apoc.meta.data / subGraph / schema.nodes,
    apoc.map.clean, apoc.create.addLabels, apoc.merge.relationship, apoc.any.property) and the
    legacy store (apoc.coll.flatten / toSet) through proxy -> proxy."""
    out = run_client(LLAMA, "llamaindex_client.py", front.uri)
    errors = {k: v for k, v in out.items() if isinstance(v, dict) and "error" in v}
    assert not errors
    stored = upstream.execute_query("MATCH (e:__Entity__) RETURN e.name AS name, labels(e) AS labels, keys(e) AS keys "
                                    "ORDER BY name").records
    assert [r["name"] for r in stored] == ["Ada Lovelace", "Analytical Engine", "Charles Babbage", "London"]
    assert all("empty" not in r["keys"] and len(r["labels"]) == 3 for r in stored)    # cleaned, label added
    assert "PERSON {about: STRING, embedding: LIST, id: STRING, name: STRING}" in out["schema"]
    assert ["WORKED_WITH", "Charles Babbage", "DESIGNED", "Analytical Engine"] in out["legacy_rel_map"]["Ada Lovelace"]


def test_langchain_through_a_neo4j_without_apoc(front, upstream):
    """langchain-neo4j 0.11.0: the schema refresh (apoc.meta.data) and add_graph_documents
    (apoc.merge.node / relationship) through proxy -> proxy."""
    out = run_client(STOCK, "langchain_client.py", front.uri, json.dumps(["Troll is a gas field", "Ekofisk is old"]),
                     "gas field")
    labels = {r["label"] for r in upstream.execute_query("MATCH (n) UNWIND labels(n) AS label "
                                                         "RETURN DISTINCT label").records}
    assert set(out["structured"]["node_props"]) <= labels and "StockChunk" in labels
    assert out["plain_import"] == [{"a": "EquinorA", "country": "NO", "since": 1995, "b": "TrollA"}]
    assert {(r["a"], r["type"], r["b"]) for r in out["base_import"]} >= {("EquinorB", "STOCK_OPERATES", "TrollB")}
    assert out["chat"][0] == ["human", "How much gas does Troll produce?"]
