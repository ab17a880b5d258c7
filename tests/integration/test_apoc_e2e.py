"""APOC as agents' tools use it, on the embedded database (extensions/bridges/apoc_functions.py,
apoc_meta.py, apoc_merge.py): each function against a Python computation of APOC's documented
result, inside other expressions and over aggregates; the procedures against the graph read with
plain Cypher; and the schema and statement errors OGMs branch on."""

from __future__ import annotations

import json
import random
import time
from collections import defaultdict

import neo4j
import pytest

from extensions.bridges import apoc_functions
from extensions.compat import apoc_maps


def rows(driver, query: str, **params) -> list[dict]:
    return [r.data() for r in driver.execute_query(query, params).records]


def one(driver, query: str, **params):
    (row,) = driver.execute_query(query, params).records
    return row[0]


def _dedup(values: list) -> list:
    out: list = []
    for v in values:
        if v not in out:
            out.append(v)
    return out


def _flatten(values: list) -> list:
    return [x for v in values for x in (v if isinstance(v, list) else [v])]


#: (function, arguments, APOC's result computed in Python)
CASES = [
    ("apoc.coll.toSet", lambda a: [_dedup(a)]),
    ("apoc.coll.sum", lambda a: [float(sum(a))]),
    ("apoc.coll.avg", lambda a: [sum(a) / len(a) if a else None]),
    ("apoc.coll.max", lambda a: [max(a) if a else None]),
    ("apoc.coll.min", lambda a: [min(a) if a else None]),
    ("apoc.coll.sort", lambda a: [sorted(a)]),
]


@pytest.mark.parametrize("name, expected", CASES, ids=[c[0] for c in CASES])
def test_list_functions_match_apoc_on_random_lists(driver, name, expected):
    rng = random.Random(name)
    lists = [[rng.randint(-5, 5) for _ in range(rng.randint(0, 8))] for _ in range(25)]
    got = one(driver, f"RETURN [l IN $lists | {name}(l)]", lists=lists)
    want = [expected(values)[0] for values in lists]
    close = [pytest.approx(w, rel=1e-13) if isinstance(w, float) else w for w in want]  # FalkorDB: 15 digits
    assert got == close


def test_two_list_functions_match_python_sets(driver):
    rng = random.Random(7)
    pairs = [[[rng.randint(0, 6) for _ in range(6)], [rng.randint(0, 6) for _ in range(4)]] for _ in range(25)]
    got = rows(driver, "UNWIND $pairs AS p RETURN apoc.coll.union(p[0], p[1]) AS u, "
                       "apoc.coll.intersection(p[0], p[1]) AS i, apoc.coll.subtract(p[0], p[1]) AS s, "
                       "apoc.coll.contains(p[0], p[1][0]) AS c, apoc.coll.indexOf(p[0], p[1][0]) AS x", pairs=pairs)
    for (a, b), row in zip(pairs, got):
        assert row["u"] == _dedup(a + b)
        assert row["i"] == _dedup([x for x in a if x in b])
        assert row["s"] == _dedup([x for x in a if x not in b])
        assert row["c"] is (b[0] in a)
        assert row["x"] == (a.index(b[0]) if b[0] in a else -1)


def test_text_and_type_functions(driver):
    row = rows(driver, "RETURN apoc.text.join(['a', 'b', 'c'], '-') AS j, apoc.text.capitalize('north sea') AS c, "
                       "[v IN [1, 1.5, 'x', true, [1, 2], ['a', 1], {k: 1}, null] | apoc.meta.cypher.type(v)] AS t")[0]
    assert row["j"] == "a-b-c" and row["c"] == "North sea"
    assert row["t"] == ["INTEGER", "FLOAT", "STRING", "BOOLEAN", "LIST OF INTEGER", "LIST OF ANY", "MAP", "NULL"]
    assert one(driver, "CREATE (n:ApocTyped) WITH n RETURN apoc.meta.cypher.type(n)") == "NODE"
    driver.execute_query("MATCH (n:ApocTyped) DELETE n")


def test_functions_nest_and_go_anywhere_an_expression_goes(driver):
    assert one(driver, "WITH [[1, 2], [2, 3]] AS l WHERE size(apoc.coll.toSet(apoc.coll.flatten(l))) = 3 "
                       "RETURN apoc.coll.sum(apoc.coll.flatten(l)) + 1") == 9.0
    assert one(driver, "RETURN [x IN range(1, 3) | apoc.coll.max([x, 2])]") == [2, 2, 3]
    assert one(driver, "UNWIND [[3, 1], [2]] AS l WITH l ORDER BY apoc.coll.min(l) RETURN collect(l)") == [[3, 1], [2]]


def test_an_iteration_over_an_aggregate_is_grouped_first(driver):
    """llama-index's get_rel_map: `apoc.coll.flatten(apoc.coll.toSet(collect([...])))` per group."""
    rng = random.Random(3)
    data = [{"k": rng.choice("abc"), "v": [rng.randint(0, 3), rng.randint(0, 3)]} for _ in range(40)]
    got = rows(driver, "UNWIND $data AS r WITH r.k AS key, apoc.coll.flatten(apoc.coll.toSet(collect(r.v))) AS f "
                       "RETURN key, f ORDER BY key", data=data)
    groups = defaultdict(list)
    for r in data:
        groups[r["k"]].append(r["v"])
    assert got == [{"key": k, "f": _flatten(_dedup(v))} for k, v in sorted(groups.items())]
    (row,) = rows(driver, "UNWIND $data AS r RETURN apoc.coll.avg(collect(size(r.v))), count(*) AS n", data=data)
    assert row == {"apoc.coll.avg(collect(size(r.v)))": 2.0, "n": 40}


def test_map_functions_build_maps_with_keys_from_the_data(driver):
    """llama-index's `SET e += apoc.map.clean(row.properties, [], [])` and neomodel's
    `apoc.meta.cypher.types(properties(n))`, against Python on random maps."""
    rng = random.Random(11)
    maps = [{k: rng.choice([None, 1, 2.5, "x", "", [1, 2], True]) for k in rng.sample("abcdef", rng.randint(0, 5))}
            for _ in range(30)]
    got = rows(driver, "UNWIND $maps AS m RETURN apoc.map.clean(m, ['f'], ['', 2.5]) AS clean, "
                       "apoc.meta.cypher.types(m) AS types, apoc.map.merge(m, {a: 0}) AS merged, "
                       "apoc.map.removeKeys(m, ['a', 'b']) AS removed", maps=maps)
    names = {type(None): "NULL", int: "INTEGER", float: "FLOAT", str: "STRING", list: "LIST OF INTEGER", bool: "BOOLEAN"}
    for m, row in zip(maps, got):
        assert row["clean"] == {k: v for k, v in m.items() if v is not None and k != "f" and v not in ("", 2.5)}
        assert row["types"] == {k: names[type(v)] for k, v in m.items()}
        assert row["merged"] == {**m, "a": 0}
        assert row["removed"] == {k: v for k, v in m.items() if k not in "ab"}
    assert one(driver, "RETURN apoc.map.fromPairs([['a', 1], ['b', 2], ['a', 3]])") == {"a": 3, "b": 2}
    assert one(driver, "RETURN apoc.meta.cypher.types(1)") == {}


def test_json_is_read_as_python_reads_it(driver):
    rng = random.Random(13)
    documents = [{k: rng.choice([1, -2.5, "x'y", None, True, [1, "a"], {"inner": [None, 2]}])
                  for k in rng.sample(["a", "b_1", "c", "d"], rng.randint(0, 4))} for _ in range(20)]
    texts = [json.dumps(d) for d in documents]
    got = one(driver, "UNWIND $texts AS t RETURN collect(apoc.convert.fromJsonMap(t))", texts=texts)
    assert got == documents
    lists = [json.dumps(d.get("a", [])) if isinstance(d.get("a"), list) else "[]" for d in documents]
    assert one(driver, "UNWIND $l AS t RETURN collect(apoc.convert.fromJsonList(t))", l=lists) == \
        [json.loads(t) for t in lists]
    with pytest.raises(neo4j.exceptions.ClientError, match="UNWIND the list"):
        driver.execute_query("RETURN [t IN $l | apoc.convert.fromJsonList(t)]", l=lists)
    with pytest.raises(neo4j.exceptions.ClientError, match="not a JSON map"):
        driver.execute_query("RETURN apoc.convert.fromJsonMap('[1]')")


def test_map_clean_in_a_write(clean_graph):
    data = [{"id": 1, "properties": {"a": 1, "b": None}}, {"id": 2, "properties": {"c": "x", "d": ""}}]
    clean_graph.execute_query("UNWIND $data AS row MERGE (e:MapClean {id: row.id}) SET e.b = 'kept' "
                              "SET e += apoc.map.clean(row.properties, [], ['']) ", data=data)
    got = rows(clean_graph, "MATCH (e:MapClean) RETURN properties(e) AS p ORDER BY e.id")
    assert [r["p"] for r in got] == [{"id": 1, "a": 1, "b": "kept"}, {"id": 2, "b": "kept", "c": "x"}]


def test_unserved_and_misused_functions_are_refused(driver):
    with pytest.raises(neo4j.exceptions.ClientError, match="apoc.convert.toJson"):
        driver.execute_query("RETURN apoc.convert.toJson({a: 1})")
    with pytest.raises(neo4j.exceptions.ClientError, match="Usage: apoc.coll.toSet"):
        driver.execute_query("RETURN apoc.coll.toSet([1], 2)")
    with pytest.raises(neo4j.exceptions.ClientError, match="one level at a time"):
        driver.execute_query("RETURN apoc.coll.flatten([[1]], true)")


def test_show_functions_lists_apoc_signatures(driver):
    shown = {r["name"]: r["signature"] for r in rows(
        driver, "SHOW FUNCTIONS YIELD name, signature WHERE name STARTS WITH 'apoc.' RETURN name, signature")}
    assert shown == {f.name: f.signature for f in [*apoc_functions.listed(), *apoc_maps.listed()]}
    assert shown["apoc.coll.toSet"] == "apoc.coll.toSet(coll :: LIST<ANY>) :: LIST<ANY>"


def test_show_procedures_lists_the_served_apoc_procedures(driver):
    shown = {r["name"]: r["mode"] for r in rows(
        driver, "SHOW PROCEDURES YIELD name, mode WHERE name STARTS WITH 'apoc.' RETURN name, mode")}
    writes = {"apoc.merge.node", "apoc.merge.relationship", "apoc.create.addLabels", "apoc.refactor.mergeNodes"}
    reads = {"apoc.meta.data", "apoc.meta.schema", "apoc.meta.graph", "apoc.meta.graphSample", "apoc.meta.subGraph",
             "apoc.meta.stats", "apoc.schema.nodes", "apoc.schema.properties.distinct", "apoc.util.sleep"}
    assert shown == {**dict.fromkeys(writes, "WRITE"), **dict.fromkeys(reads, "READ")}

# ------------------------------------------------------------------ procedures


def test_meta_sub_graph_counts_what_plain_cypher_counts(clean_graph):
    clean_graph.execute_query("UNWIND range(1, 3) AS i CREATE (:SubA {i: i})-[:SUB_R]->(:SubB)-[:SUB_S]->(:SubC)")
    got = rows(clean_graph, "CALL apoc.meta.subGraph({}) YIELD nodes, relationships "
                            "RETURN nodes, [rel in relationships | {name: apoc.any.property(rel, 'type'), "
                            "count: apoc.any.property(rel, 'count')}] AS relationships")[0]
    labels = {r["l"]: r["n"] for r in rows(clean_graph, "MATCH (n) UNWIND labels(n) AS l RETURN l, count(*) AS n")}
    types = {r["t"]: r["n"] for r in rows(clean_graph, "MATCH ()-[r]->() RETURN type(r) AS t, count(*) AS n")}
    assert {n["name"]: n["count"] for n in got["nodes"]} == labels
    assert {r["name"]: r["count"] for r in got["relationships"]} == types
    only = rows(clean_graph, "CALL apoc.meta.subGraph({labels: ['SubA', 'SubB']})")[0]
    assert [n["name"] for n in only["nodes"]] == ["SubA", "SubB"] and len(only["relationships"]) == 1


def test_create_add_labels_from_the_data(clean_graph):
    clean_graph.execute_query("UNWIND range(1, 4) AS i CREATE (:AddL {i: i})")
    got = rows(clean_graph, "UNWIND $rows AS row MATCH (e:AddL {i: row.i}) WITH e, row "
                            "CALL apoc.create.addLabels(e, [row.label]) YIELD node RETURN row.i AS i, labels(node) AS l",
               rows=[{"i": 1, "label": "Red"}, {"i": 2, "label": "Blue"}, {"i": 3, "label": "Red"}])
    assert sorted((r["i"], sorted(r["l"])) for r in got) == [(1, ["AddL", "Red"]), (2, ["AddL", "Blue"]),
                                                             (3, ["AddL", "Red"])]
    assert one(clean_graph, "MATCH (n:AddL) WHERE size(labels(n)) = 1 RETURN collect(n.i)") == [4]
    nodes = one(clean_graph, "MATCH (n:AddL) WITH collect(n) AS all CALL apoc.create.addLabels(all, ['Green']) "
                             "YIELD node RETURN count(node)")
    assert nodes == 4 == one(clean_graph, "MATCH (n:Green) RETURN count(n)")


def test_util_sleep_waits(driver):
    started = time.monotonic()
    driver.execute_query("CALL apoc.util.sleep(200)")
    assert time.monotonic() - started >= 0.2

# ------------------------------------------------------------------ what OGMs branch on


def test_an_identical_named_constraint_again_is_an_equivalent_schema_rule(driver):
    create = "CREATE CONSTRAINT apoc_twice FOR (n:ApocTwice) REQUIRE n.k IS UNIQUE"
    driver.execute_query(create)
    try:
        with pytest.raises(neo4j.exceptions.ClientError) as same:
            driver.execute_query(create)
        assert same.value.code == "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
        with pytest.raises(neo4j.exceptions.ClientError) as other:
            driver.execute_query("CREATE CONSTRAINT apoc_twice FOR (n:ApocTwice) REQUIRE n.j IS UNIQUE")
        assert other.value.code == "Neo.ClientError.Schema.ConstraintWithNameAlreadyExists"
        assert other.value.message == "There already exists a constraint called 'apoc_twice'."
        driver.execute_query("CREATE (:ApocTwice {k: 1})")
        with pytest.raises(neo4j.exceptions.ClientError) as duplicate:
            driver.execute_query("CREATE (:ApocTwice {k: 1})")
        assert duplicate.value.code == "Neo.ClientError.Schema.ConstraintValidationFailed"
        assert "already exists with label `ApocTwice`" in duplicate.value.message
    finally:
        driver.execute_query("DROP CONSTRAINT apoc_twice IF EXISTS")
        driver.execute_query("MATCH (n:ApocTwice) DELETE n")


def test_a_composite_key_keeps_its_name_whatever_order_falkordb_lists_it_in(clean_graph):
    """FalkorDB lists a composite constraint's properties in the order the graph first saw them."""
    clean_graph.execute_query("CREATE (:KeyOrder {zeta: 1, alpha: 1})")
    clean_graph.execute_query("CREATE CONSTRAINT key_order FOR (n:KeyOrder) REQUIRE (n.alpha, n.zeta) IS NODE KEY")
    try:
        shown = rows(clean_graph, "SHOW CONSTRAINTS YIELD name, type, labelsOrTypes WHERE labelsOrTypes = ['KeyOrder'] "
                                  "RETURN name, type")
        assert shown == [{"name": "key_order", "type": "NODE_KEY"}]
        with pytest.raises(neo4j.exceptions.ClientError, match="already exists with label `KeyOrder`"):
            clean_graph.execute_query("CREATE (:KeyOrder {alpha: 1, zeta: 1})")
    finally:
        clean_graph.execute_query("DROP CONSTRAINT key_order IF EXISTS")
    assert rows(clean_graph, "SHOW CONSTRAINTS YIELD labelsOrTypes WHERE labelsOrTypes = ['KeyOrder'] "
                             "RETURN count(*) AS n") == [{"n": 0}]


@pytest.mark.parametrize("tail", [";", "; ", ";\n", "; // done", "; /* done */ "])
def test_a_final_semicolon_may_be_followed_by_blanks_and_comments(driver, tail):
    assert one(driver, "RETURN 1" + tail) == 1


def test_two_statements_are_still_refused(driver):
    with pytest.raises(neo4j.exceptions.ClientError, match="exactly one statement"):
        driver.execute_query("RETURN 1; RETURN 2")


def test_a_vector_index_without_dimensions_takes_them_from_the_vectors(clean_graph):
    """llama-index creates `entity` without dimensions at start, writes vectors, then queries."""
    create = "CREATE VECTOR INDEX nodims IF NOT EXISTS FOR (m:NoDims) ON m.embedding"
    try:
        clean_graph.execute_query(create)
        (shown,) = rows(clean_graph, "SHOW VECTOR INDEXES YIELD name, options WHERE name = 'nodims'")
        assert shown["options"]["indexConfig"]["vector.dimensions"] is None
        with pytest.raises(neo4j.exceptions.ClientError, match="no vector is stored yet"):
            clean_graph.execute_query("CALL db.index.vector.queryNodes('nodims', 1, [1.0, 0.0, 0.0])")
        clean_graph.execute_query("UNWIND $v AS v CREATE (n:NoDims) WITH n, v "
                                  "CALL db.create.setNodeVectorProperty(n, 'embedding', v)",
                                  v=[[1.0, 0.0, 0.0], [0.6, 0.8, 0.0]])
        scores = one(clean_graph, "CALL db.index.vector.queryNodes('nodims', 2, [1.0, 0.0, 0.0]) YIELD score "
                                  "RETURN collect(score)")
        assert scores == pytest.approx([1.0, (1 + 0.6) / 2], abs=1e-6)
        (shown,) = rows(clean_graph, "SHOW VECTOR INDEXES YIELD name, options WHERE name = 'nodims'")
        assert shown["options"]["indexConfig"]["vector.dimensions"] == 3
        clean_graph.execute_query(create)                                   # again: nothing to do
    finally:
        clean_graph.execute_query("DROP INDEX nodims IF EXISTS")


def test_refactor_merge_nodes_as_apoc_merges(clean_graph):
    """neo4j-graphrag's entity resolution: `collect(entity)` per name, `apoc.refactor.mergeNodes(entities,
    {properties: 'discard', mergeRels: true})`. Expected: the first node keeps its values and gains
    the others' labels, missing properties and relationships (merged by type and end node; between
    merged nodes, loops); the others are gone."""
    clean_graph.execute_query(
        "CREATE (a:Ent:P {name: 'x', rank: 1, a: 1}), (b:Ent:Q {name: 'x', rank: 2, a: 9, b: 2}), "
        "(c:Ent:Q {name: 'x', rank: 3, b: 3, c: 3}), (y:Ent {name: 'y', rank: 4}), (t:Target {name: 't'}), "
        "(a)-[:R {w: 1}]->(t), (b)-[:R {w: 2}]->(t), (c)-[:S]->(t), (b)-[:S]->(y), (y)-[:U]->(c), (a)-[:V]->(b)")
    merged = one(clean_graph, "MATCH (e:Ent) WITH e ORDER BY e.rank WITH e.name AS name, collect(e) AS entities "
                              "CALL apoc.refactor.mergeNodes(entities, {properties: 'discard', mergeRels: true}) "
                              "YIELD node RETURN collect([node.name, node.rank])")
    assert sorted(merged) == [["x", 1], ["y", 4]]
    nodes = {r["name"]: r for r in rows(clean_graph, "MATCH (n) RETURN n.name AS name, labels(n) AS labels, "
                                                     "properties(n) AS p")}
    assert set(nodes) == {"x", "y", "t"}
    assert sorted(nodes["x"]["labels"]) == ["Ent", "P", "Q"]
    assert nodes["x"]["p"] == {"name": "x", "rank": 1, "a": 1, "b": 2, "c": 3}
    relationships = sorted((r["a"], r["t"], r["b"], r["w"]) for r in rows(
        clean_graph, "MATCH (a)-[r]->(b) RETURN a.name AS a, type(r) AS t, b.name AS b, r.w AS w"))
    assert relationships == [("x", "R", "t", 1), ("x", "S", "t", None), ("x", "S", "y", None),
                             ("x", "V", "x", None), ("y", "U", "x", None)]


def test_refactor_merge_nodes_keeps_parallel_relationships_without_merge_rels(clean_graph):
    clean_graph.execute_query("CREATE (a:Twin {i: 1}), (b:Twin {i: 2}), (t:Tgt), (a)-[:R {w: 1}]->(t), "
                              "(b)-[:R {w: 2}]->(t)")
    clean_graph.execute_query("MATCH (n:Twin) WITH n ORDER BY n.i WITH collect(n) AS l "
                              "CALL apoc.refactor.mergeNodes(l, {properties: 'overwrite'}) YIELD node RETURN node")
    assert one(clean_graph, "MATCH (n:Twin) RETURN collect(n.i)") == [2]                   # overwrite: the last wins
    assert sorted(one(clean_graph, "MATCH (:Twin)-[r:R]->(:Tgt) RETURN collect(r.w)")) == [1, 2]
