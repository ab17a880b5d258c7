"""The stock Neo4j agent tools, unchanged, against the proxy on the demo graph.

langchain-neo4j, neo4j-graphrag and mcp-neo4j-cypher (over stdio, started by the `mcp` client
library as an MCP host would) run in their own environment (`.cache/stock`, made by `make
install`: they need the neo4j 6.x driver, the proxy's own is 5.x). Each client script prints what
the package returned as JSON; the tests compare it with what the graph holds, read with plain
Cypher, and with values computed from the Sodir CSVs with pandas.

The proxy is private to this module (the packages write: imported documents, vectors, indexes,
constraints, chat messages), so the shared demo fixture stays untouched.
"""

from __future__ import annotations

import json
import subprocess

import neo4j
import pandas as pd
import pytest

from tests.harness import PASSWORD, REPO, USER
from tests.stock.embedding import cosine, embed

STOCK_PYTHON = REPO / ".cache" / "stock" / "bin" / "python"
CLIENTS = REPO / "tests" / "stock"
TEXTS = ["Troll is a gas field in the North Sea", "Johan Sverdrup is an oil field",
         "Ekofisk was the first field", "Snorre produces oil and gas"]
QUERY = "gas field Troll"
PRODUCTION = REPO / "examples" / "sodir" / "sodir_current" / "field_production_monthly.csv.gz"


@pytest.fixture(scope="module")
def graph_facts(private_demo):
    """What the demo graph holds, by plain Cypher (read before any package writes)."""
    with neo4j.GraphDatabase.driver(private_demo.uri, auth=(USER, PASSWORD)) as driver:
        labels = {r["l"]: r["n"] for r in driver.execute_query(
            "MATCH (n) UNWIND labels(n) AS l RETURN l, count(*) AS n").records}
        patterns = {(r["a"], r["t"], r["b"]) for r in driver.execute_query(
            "MATCH (a)-[r]->(b) UNWIND labels(a) AS la UNWIND labels(b) AS lb "
            "RETURN DISTINCT la AS a, type(r) AS t, lb AS b").records}
        field_types = {r["k"]: r["t"] for r in driver.execute_query(
            "MATCH (f:Field) UNWIND keys(f) AS k RETURN DISTINCT k, typeOf(f[k]) AS t").records}
        titles = [r["t"] for r in driver.execute_query("MATCH (f:Field) RETURN f.title AS t").records]
    return {"labels": labels, "patterns": patterns, "field_types": field_types, "titles": titles}


def run_client(script: str, *args: str) -> dict:
    assert STOCK_PYTHON.exists(), "the stock tools' environment is missing: run `make install`"
    done = subprocess.run([str(STOCK_PYTHON), str(CLIENTS / script), *args], capture_output=True,
                          text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, f"{script} failed:\n{done.stderr[-4000:]}"
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def langchain(private_demo, graph_facts):
    return run_client("langchain_client.py", private_demo.uri, json.dumps(TEXTS), QUERY)


@pytest.fixture(scope="module")
def graphrag(private_demo, langchain):
    cypher = ("MATCH (f:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile) "
              "RETURN f.title AS field, ts_sum(p.prd_oil_net, 2020) AS oil_2020")
    return run_client("graphrag_client.py", private_demo.uri, "TROLL", cypher)


@pytest.fixture(scope="module")
def mcp(private_demo, graphrag):
    return run_client("mcp_client.py", private_demo.uri,
                      "MATCH (f:Field) WHERE f.title = $title RETURN f.title AS title, f.npdid AS npdid",
                      "MATCH (f:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile) "
                      "RETURN ts_avg(p.prd_oe_net, 2020) AS avg_2020",
                      "--schema-sample-size", "1000")


def troll_2020(column: str) -> pd.Series:
    frame = pd.read_csv(PRODUCTION, encoding="utf-8-sig")
    return frame[(frame.prfInformationCarrier == "TROLL") & (frame.prfYear == 2020)][column]


APOC_TYPES = {"String": "STRING", "Integer": "INTEGER", "Float": "FLOAT", "Boolean": "BOOLEAN",
              "Point": "POINT", "List": "LIST"}

# ------------------------------------------------------------------ langchain-neo4j


def test_langchain_schema_lists_the_demo_labels_relationships_and_types(langchain, graph_facts):
    structured = langchain["structured"]
    assert set(structured["node_props"]) == set(graph_facts["labels"])
    relationships = {(r["start"], r["type"], r["end"]) for r in structured["relationships"]}
    assert relationships == graph_facts["patterns"]
    field = {p["property"]: p["type"] for p in structured["node_props"]["Field"]}
    assert field == {k: APOC_TYPES[t] for k, t in graph_facts["field_types"].items()}
    assert "(:ProductionProfile)-[:OF_FIELD]->(:Field)" in langchain["schema"]


def test_langchain_enhanced_schema_has_values_per_label(langchain, graph_facts):
    enhanced = langchain["enhanced"]
    for label in graph_facts["labels"]:
        assert f"- **{label}**" in enhanced
    assert "`main_area`: STRING Available options:" in enhanced
    assert "`npdid`: INTEGER Min:" in enhanced


def test_add_graph_documents_with_and_without_base_entity_label(langchain):
    assert langchain["plain_import"] == [{"a": "EquinorA", "country": "NO", "since": 1995, "b": "TrollA"}]
    (row,) = langchain["base_import"]
    assert (row["a"], row["type"], row["b"]) == ("EquinorB", "STOCK_OPERATES", "TrollB")
    assert sorted(row["a_labels"]) == ["StockOperator", "__Entity__"]
    assert sorted(row["b_labels"]) == ["StockField", "__Entity__"]
    (constraint,) = langchain["constraints"]
    assert (constraint["type"], constraint["labelsOrTypes"], constraint["properties"]) == \
        ("UNIQUENESS", ["__Entity__"], ["id"])
    assert langchain["duplicate"] == "Neo.ClientError.Schema.ConstraintValidationFailed"


def test_neo4j_vector_from_texts_finds_the_nearest_text(langchain):
    query = embed(QUERY)
    expected = sorted(((text, (1 + cosine(embed(text), query)) / 2) for text in TEXTS),
                      key=lambda pair: -pair[1])[:3]
    got = langchain["similar"]
    assert [text for text, _ in got] == [text for text, _ in expected]
    assert [score for _, score in got] == pytest.approx([s for _, s in expected], abs=1e-6)  # float32
    assert langchain["indexes"] == [{"name": "stock_chunks", "type": "VECTOR",
                                     "labelsOrTypes": ["StockChunk"], "properties": ["embedding"]}]


def test_chat_message_history_round_trip(langchain):
    """FalkorDB alone drops the SET of the first message (OPTIONAL MATCH ... CREATE ... SET ...
    WITH ... WHERE); the proxy's `WITH v AS v` bridge keeps it (extensions/bridges/writes.py)."""
    assert langchain["chat"] == [["human", "How much gas does Troll produce?"],
                                 ["ai", "About 30 billion cubic metres a year."], ["human", "And oil?"]]

# ------------------------------------------------------------------ neo4j-graphrag


def test_graphrag_vector_retriever_on_an_index_it_created(graphrag, graph_facts):
    query = embed("TROLL")
    expected = sorted(((1 + cosine(embed(t), query)) / 2 for t in graph_facts["titles"]), reverse=True)[:3]
    contents = [content for content, _ in graphrag["vector"]]
    assert contents[0] == "{'title': 'TROLL'}"
    assert [score for _, score in graphrag["vector"]] == pytest.approx(expected, abs=1e-6)


def test_graphrag_text2cypher_reads_the_schema_and_runs_the_answer(graphrag):
    prompt = graphrag["prompt"]
    assert "(:ProductionProfile)-[:OF_FIELD]->(:Field)" in prompt
    assert "Field {" in prompt and "title: STRING" in prompt
    (record,) = graphrag["text2cypher"]
    assert "field='TROLL'" in record
    oil = float(record.split("oil_2020=")[1].rstrip(">"))
    assert oil == pytest.approx(troll_2020("prfPrdOilNetMillSm3").sum(), rel=1e-9)

# ------------------------------------------------------------------ mcp-neo4j-cypher


def test_mcp_tools_schema_reads_and_writes(mcp, graph_facts):
    assert mcp["tools"] == ["get_neo4j_schema", "read_neo4j_cypher", "write_neo4j_cypher"]
    assert not mcp["schema"]["error"]
    schema = json.loads(mcp["schema"]["text"])
    for label, count in graph_facts["labels"].items():
        assert schema[label]["type"] == "node" and schema[label]["count"] >= count
    assert schema["Field"]["relationships"]["OF_FIELD"]["direction"] == "in"
    assert schema["Field"]["properties"]["id"]["indexed"] is True
    assert json.loads(mcp["read"]["text"]) == [{"title": "TROLL", "npdid": 46437}]
    (row,) = json.loads(mcp["extension"]["text"])
    assert row["avg_2020"] == pytest.approx(troll_2020("prfPrdOeNetMillSm3").mean(), rel=1e-9)
    assert json.loads(mcp["write"]["text"])["nodes_created"] == 1
    assert mcp["refused"]["error"] and "Only MATCH queries are allowed" in mcp["refused"]["text"]
