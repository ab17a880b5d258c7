"""More stock Neo4j packages, unchanged, against the proxy on an empty embedded database:
neomodel (the OGM), llama-index's Neo4j graph stores and mcp-neo4j-memory (over stdio).

They run in their own environments (`.cache/agents`: neomodel pins the neo4j driver to 6.1,
`.cache/llama`: llama-index needs it below 6; both made by `make install`). Each client script
prints what the package returned as JSON; the tests compare it with the graph read with plain
Cypher, or with an answer computed here from the data the script wrote.
"""

from __future__ import annotations

import json
import re
import subprocess

import neo4j
import numpy as np
import pytest

from tests.harness import PASSWORD, REPO, USER, ProxyProcess
from tests.stock.embedding import cosine, embed

CLIENTS = REPO / "tests" / "stock"
AGENTS = REPO / ".cache" / "agents" / "bin" / "python"
LLAMA = REPO / ".cache" / "llama" / "bin" / "python"
STOCK = REPO / ".cache" / "stock" / "bin" / "python"


@pytest.fixture(scope="module")
def server():
    with ProxyProcess() as process:
        yield process


@pytest.fixture(scope="module")
def driver(server):
    with neo4j.GraphDatabase.driver(server.uri, auth=(USER, PASSWORD)) as drv:
        yield drv


def run_client(python, script: str, *args: str, cwd=REPO) -> dict:
    assert python.exists(), f"{python.parent.parent} is missing: run `make install`"
    done = subprocess.run([str(python), "-W", "ignore", str(CLIENTS / script), *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd)
    assert done.returncode == 0, f"{script} failed:\n{done.stderr[-4000:]}"
    return json.loads(done.stdout.splitlines()[-1])


def rows(driver, query: str, **params) -> list[dict]:
    return [r.data() for r in driver.execute_query(query, params).records]

# ------------------------------------------------------------------ neomodel


@pytest.fixture(scope="module")
def neomodel(server, tmp_path_factory):
    models = tmp_path_factory.mktemp("neomodel") / "models.py"
    return run_client(AGENTS, "neomodel_client.py", server.uri, str(models))


def test_neomodel_installs_its_schema_twice(neomodel, driver):
    assert "Error" not in neomodel["install_first"].replace("EquivalentSchemaRuleAlreadyExists", "")
    assert neomodel["install_second"].count("EquivalentSchemaRuleAlreadyExists") == 7     # told, not failed
    constraints = {(r["labelsOrTypes"][0], r["properties"][0]) for r in rows(
        driver, "SHOW CONSTRAINTS YIELD labelsOrTypes, properties, type WHERE type = 'UNIQUENESS' "
                "RETURN labelsOrTypes, properties")}
    assert constraints >= {("OgmCountry", "code"), ("OgmPerson", "uid"), ("OgmPerson", "name")}


def test_neomodel_saves_queries_and_raises_unique_property(neomodel, driver):
    assert neomodel["duplicate"].startswith("UniqueProperty: Node already exists with label `OgmPerson`")
    older = rows(driver, "MATCH (p:OgmPerson) WHERE p.age > 40 RETURN p.name AS n ORDER BY n")
    assert neomodel["older_than_40"] == [r["n"] for r in older] == ["Alan", "Grace"]
    linked = rows(driver, "MATCH (p:OgmPerson)-[:OGM_IS_FROM]->(:OgmCountry {code: 'NO'}) RETURN p.name AS n ORDER BY n")
    assert neomodel["from_norway"] == [r["n"] for r in linked]


def test_neomodel_refused_batch_then_upsert_keeps_both_servers_alive(neomodel, driver, server):
    """get_or_create whose second row breaks a unique constraint, then create_or_update (issue 24):
    refused whole, the upsert lands, and neither embedded server crashed."""
    assert neomodel["user_batch"] == "UniqueProperty"
    assert neomodel["users"] == [["a", "a@x"], ["d", "d@x"]]
    assert rows(driver, "MATCH (u:OgmUser) RETURN u.uid AS uid ORDER BY uid") == [{"uid": "a"}, {"uid": "d"}]
    logs = (server.data_dir / "falkordb" / name / "falkordb.log" for name in ("a", "b"))
    assert sum(log.read_text(errors="replace").count("crashed by signal") for log in logs) == 0


def test_neomodel_inspect_database_writes_the_models(neomodel):
    inspected = neomodel["inspect"]
    assert inspected["returncode"] == 0, inspected["stderr"]
    models = inspected["models"]
    person = models.split("class OgmPerson(StructuredNode):")[1].split("\nclass ")[0]
    assert re.search(r"name = StringProperty\(unique_index=True\)", person)
    assert re.search(r"age = IntegerProperty\(index=True\)", person)
    assert 'RelationshipTo("OgmCountry", "OGM_IS_FROM"' in person

# ------------------------------------------------------------------ llama-index


@pytest.fixture(scope="module")
def llama(server, neomodel):
    return run_client(LLAMA, "llamaindex_client.py", server.uri)


def test_llama_property_graph_upserts_and_reads_back(llama, driver):
    assert llama["upsert_nodes"] == "ok" and llama["upsert_relations"] == "ok"
    stored = rows(driver, "MATCH (e:__Entity__) RETURN e.name AS name, e.about AS about, labels(e) AS labels, "
                          "keys(e) AS keys ORDER BY name")
    assert [(r["name"], r["about"]) for r in stored] == sorted((n, a) for n, _, a in ENTITIES)
    for r in stored:
        label = next(lab for n, lab, _ in ENTITIES if n == r["name"])
        assert set(r["labels"]) == {"__Node__", "__Entity__", label}
        assert "empty" not in r["keys"]                                 # apoc.map.clean dropped the null
    assert llama["get"] == [[n, "__Node__", a] for n, _, a in sorted(ENTITIES) if n in ("Ada Lovelace", "London")]
    assert llama["cypher"] == [{"p": a, "r": t, "x": b} for a, t, b in sorted(RELATIONS)]


def test_llama_vectors_are_stored_as_written(driver, llama):
    for r in rows(driver, "MATCH (e:__Entity__) RETURN e.name AS name, e.embedding AS v"):
        assert cosine(r["v"], embed(r["name"])) == pytest.approx(1.0, abs=1e-6)


def test_llama_vector_query_on_the_index_it_created_without_dimensions(llama):
    """`entity` is created without dimensions before any vector exists; the first query builds it."""
    query = embed("Ada Lovelace")
    expected = sorted(((n, (1 + cosine(embed(n), query)) / 2) for n, _, _ in ENTITIES), key=lambda p: -p[1])[:2]
    assert [n for n, _ in llama["vector"]] == [n for n, _ in expected]
    assert [s for _, s in llama["vector"]] == pytest.approx([s for _, s in expected], abs=1e-6)


def _numpy_similarity(name: str, query: str) -> float:
    v, q = np.array(embed(name)), np.array(embed(query))
    return (1 + float(v @ q / np.linalg.norm(v) / np.linalg.norm(q))) / 2


def test_llama_vector_query_with_filters_reads_the_stored_vectors(llama):
    """With filters llama-index scans `size(e.embedding) = $dimension AND e.about <> $param_0` and
    ranks by `vector.similarity.cosine`: the stored vecf32 values are measured, not refused."""
    kept = [n for n, _, about in ENTITIES if about != "wrote the first program"]
    expected = sorted(((n, _numpy_similarity(n, "Ada Lovelace")) for n in kept), key=lambda p: -p[1])[:2]
    assert [n for n, _ in llama["vector_filtered"]] == [n for n, _ in expected]
    assert [s for _, s in llama["vector_filtered"]] == pytest.approx([s for _, s in expected], abs=1e-6)


def test_llama_enhanced_schema_measures_vectors(llama, driver):
    """The enhanced schema's `min(size(coalesce(n.embedding, [])))` and `collect(n.embedding)[0][..3]`."""
    embedding = llama["enhanced_embedding"]
    assert embedding["min_size"] == embedding["max_size"] == len(embed("Ada Lovelace"))
    people = [n for n, label, _ in ENTITIES if label == "PERSON"]
    assert any(embedding["values"] == pytest.approx(embed(n)[:3], abs=1e-6) for n in people)
    assert llama["enhanced_schema"].count("Min Size: 32, Max Size: 32") == len({label for _, label, _ in ENTITIES})


def test_llama_rel_map_expands_two_hops(llama, driver):
    """`get_rel_map` pages with `LIMIT toInteger($limit)` (bridged as a derived parameter)."""
    within_two_hops = rows(driver, "MATCH (:__Entity__ {name: 'Charles Babbage'})-[*0..1]-(a:__Entity__) WITH DISTINCT a "
                                   "MATCH (a)-[r]-(b:__Entity__) WITH DISTINCT r "
                                   "RETURN startNode(r).name AS a, type(r) AS t, endNode(r).name AS b")
    assert llama["rel_map"] == sorted([r["a"], r["t"], r["b"]] for r in within_two_hops) == \
        [list(t) for t in sorted(RELATIONS)]


def test_llama_triplets_both_ways(llama, driver):
    """`get_triplets` sends `CALL (e) { ... UNION ALL ... }` (each part imports `e` on FalkorDB),
    with `relation_names` as a `[r:`A`|`B`]` type alternative."""
    def around(name, types):
        return sorted([r["a"], r["t"], r["b"]] + ([r["since"]] if types else []) for r in rows(
            driver, "MATCH (:__Entity__ {name: $name})-[r]-(:__Entity__) WHERE $types IS NULL OR type(r) IN $types "
                    "RETURN startNode(r).name AS a, type(r) AS t, endNode(r).name AS b, r.since AS since",
            name=name, types=types))
    assert llama["triplets"] == around("Ada Lovelace", None) == [["Ada Lovelace", "LIVED_IN", "London"],
                                                                 ["Ada Lovelace", "WORKED_WITH", "Charles Babbage"]]
    assert llama["triplets_typed"] == around("Charles Babbage", ["WORKED_WITH", "DESIGNED"])
    assert len(llama["triplets_typed"]) == 2


def test_llama_legacy_graph_store(llama, driver):
    assert llama["legacy_get"] == [["LIVED_IN", "London"], ["WORKED_WITH", "Charles Babbage"]]
    paths = llama["legacy_rel_map"]["Ada Lovelace"]
    assert ["WORKED_WITH", "Charles Babbage", "DESIGNED", "Analytical Engine"] in paths
    assert "LegacyEntity {id: STRING}" in llama["legacy_schema"]


ENTITIES = [("Ada Lovelace", "PERSON", "wrote the first program"), ("Charles Babbage", "PERSON", "designed engines"),
            ("Analytical Engine", "MACHINE", "a mechanical computer"), ("London", "CITY", "capital")]
RELATIONS = [("Ada Lovelace", "LIVED_IN", "London"), ("Ada Lovelace", "WORKED_WITH", "Charles Babbage"),
             ("Charles Babbage", "DESIGNED", "Analytical Engine")]

# ------------------------------------------------------------------ neo4j-graphrag entity resolution


def test_graphrag_resolver_merges_entities_with_one_name_and_label(server, driver, llama):
    before = rows(driver, "MATCH (e:__Entity__) RETURN count(e) AS n")[0]["n"]
    answer = run_client(STOCK, "resolver_client.py", server.uri)
    assert answer["resolved"] == before + 4                                   # the script writes 4
    groups = rows(driver, "MATCH (e:__Entity__) UNWIND labels(e) AS lab WITH e, lab WHERE NOT lab IN "
                          "['__Entity__', '__KGBuilder__'] RETURN count(DISTINCT [e.name, lab]) AS n")[0]["n"]
    assert answer["created"] == groups
    ada = rows(driver, "MATCH (p:Person {name: 'Ada'}) RETURN properties(p) AS props")
    assert len(ada) == 1 and ada[0]["props"] == {"name": "Ada", "born": 1815, "city": "London"}
    rels = {(r["a"], r["t"], r["b"]) for r in rows(
        driver, "MATCH (a:Person)-[r:KNOWS|LIVED_IN]->(b) RETURN a.name AS a, type(r) AS t, b.name AS b")}
    assert rels == {("Ada", "KNOWS", "Charles"), ("Ada", "LIVED_IN", "Ada")}
    assert rows(driver, "MATCH (p:Place {name: 'Ada'}) RETURN count(p) AS n")[0]["n"] == 1    # other label: kept

# ------------------------------------------------------------------ mcp-neo4j-memory

SEARCHES = {"Lovelace London": {"Ada Lovelace", "London"},         # Lucene: OR by default
            "ada AND lovelace": {"Ada Lovelace"},
            "name:London": {"London"},
            "person NOT babbage": {"Ada Lovelace"},
            "babage~": {"Charles Babbage"},                          # edit distance 2
            "lovel*": {"Ada Lovelace"},
            '"charles babbage"': {"Charles Babbage"},
            "program": {"Ada Lovelace"},                              # a word inside the observations list
            "observations:royal AND city": {"London"}}


@pytest.fixture(scope="module")
def memory(server, llama):
    return run_client(AGENTS, "memory_client.py", server.uri, *SEARCHES)


def test_memory_tools_write_the_graph(memory, driver):
    assert "search_memories" in memory["tools"]
    stored = {r["name"]: r for r in rows(driver, "MATCH (m:Memory) RETURN m.name AS name, m.type AS type, "
                                                 "m.observations AS observations")}
    assert set(stored) == {"Ada Lovelace", "Charles Babbage", "London"}
    assert stored["London"]["observations"] == ["capital of England", "home of the Royal Society"]
    graph = memory["graph"]
    assert {e["name"] for e in graph["entities"]} == set(stored)
    assert {(r["source"], r["relationType"], r["target"]) for r in graph["relations"]} == {
        ("Ada Lovelace", "WORKED_WITH", "Charles Babbage"), ("Ada Lovelace", "LIVED_IN", "London")}


@pytest.mark.parametrize("query", list(SEARCHES))
def test_memory_search_reads_lucene_syntax(memory, query):
    assert {e["name"] for e in memory["search"][query]["entities"]} == SEARCHES[query]
