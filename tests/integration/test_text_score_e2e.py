"""text_score through the real driver, on the demo graph's FieldDescription texts.

Relevance is checked against hand-written labels (tests/data/text_score_relevance.csv: 50
queries, each with the one description it is about); values against the same score computed
from independently fetched texts; errors, nulls and updates on nodes the tests create.
"""

from __future__ import annotations

import csv
import math

import neo4j
import pytest

from tests.harness import PASSWORD, REPO, USER, ProxyProcess

LABELS = REPO / "tests" / "data" / "text_score_relevance.csv"
#: recall@5 measured on LABELS with the default model: 0.86 (README); the test allows one miss more.
MIN_RECALL_AT_5 = 0.84
TOP = ("MATCH (d:FieldDescription) RETURN d.title AS title, text_score(d, 'text', $q) AS score "
       "ORDER BY score DESC LIMIT $k")


@pytest.fixture(scope="module")
def demo_driver(demo):
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        yield driver


@pytest.fixture
def notes(driver):
    """Nodes labelled TextNote on the shared (small) test graph, removed after the test.

    Not on the demo graph: a write transaction snapshots the graph (GRAPH.COPY), which can
    deadlock FalkorDB while it rewrites the demo's large append-only file (falkordb-notes.md)."""
    driver.execute_query("MATCH (n:TextNote) DETACH DELETE n")
    yield driver
    driver.execute_query("MATCH (n:TextNote) DETACH DELETE n")


def _top(driver, query: str, k: int = 5) -> list[str]:
    return [r["title"] for r in driver.execute_query(TOP, q=query, k=k).records]


def _score(driver, title: str, query: str) -> float | None:
    records = driver.execute_query("MATCH (n:TextNote {title: $t}) RETURN text_score(n, 'text', $q) AS s",
                                   t=title, q=query).records
    return records[0]["s"]


def test_named_field_development_ranks_first(demo_driver):
    assert _top(demo_driver, "How was the Johan Sverdrup field developed?", 1) == ["JOHAN SVERDRUP – Development"]
    assert _top(demo_driver, "development of the Ekofisk field", 1) == ["EKOFISK – Development"]


def test_every_fields_development_is_found(demo_driver):
    """'development of the X field' for all 142 fields: X's Development text in the top 5
    (measured: 139 of 142, and first for 100)."""
    fields = [r["f"] for r in demo_driver.execute_query(
        "MATCH (d:FieldDescription) WHERE d.heading = 'Development' "
        "RETURN split(d.title, ' – ')[0] AS f ORDER BY f").records]
    found = sum(f"{f} – Development" in _top(demo_driver, f"development of the {f.title()} field")
                for f in fields)
    assert len(fields) == 142 and found / len(fields) >= 0.95


def test_labelled_recall_at_5(demo_driver):
    with LABELS.open(encoding="utf-8") as handle:
        pairs = [(row["query"], row["relevant"]) for row in csv.DictReader(handle)]
    assert len(pairs) >= 30
    hits = [relevant in _top(demo_driver, query) for query, relevant in pairs]
    assert sum(hits) / len(hits) >= MIN_RECALL_AT_5, [q for (q, _), hit in zip(pairs, hits) if not hit]


def test_meaning_not_just_words(notes):
    notes.execute_query("UNWIND $texts AS t CREATE (:TextNote {title: t, text: t})",
                        texts=["falling crude output", "football match", "olive oil recipe"])
    query = "oil production decline"
    crude, football = _score(notes, "falling crude output", query), _score(notes, "football match", query)
    assert crude > football + 0.1          # no word in common with the query, yet clearly closer
    assert -1 <= football < crude <= 1


def test_in_every_clause_and_in_arithmetic(demo_driver):
    query = "water injection for pressure support"
    expected = {r["title"]: r["score"] for r in demo_driver.execute_query(
        "MATCH (d:FieldDescription) RETURN d.title AS title, text_score(d, 'text', $q) AS score", q=query).records}
    best = max(expected, key=expected.get)
    records = demo_driver.execute_query("""
        MATCH (d:FieldDescription)-[:DESCRIBES]->(f:Field)
        WITH d, f, text_score(d, 'text', $q) AS relevance
        WHERE text_score(d, 'text', $q) > 0.3
        RETURN d.title AS title, relevance,
               0.6 * text_score(d, 'text', $q) + 0.3 * log(1 + size([(f)--() | 1])) AS attention
        ORDER BY text_score(d, 'text', $q) DESC LIMIT 3""", q=query).records
    assert records[0]["title"] == best
    assert [r["relevance"] for r in records] == sorted((v for v in expected.values()), reverse=True)[:3]
    degrees = {r["title"]: r["degree"] for r in demo_driver.execute_query(
        "MATCH (d:FieldDescription)-[:DESCRIBES]->(f:Field) RETURN d.title AS title, size([(f)--() | 1]) AS degree"
    ).records}
    for r in records:
        assert r["relevance"] == pytest.approx(expected[r["title"]], abs=1e-12)
        assert r["attention"] == pytest.approx(0.6 * expected[r["title"]] + 0.3 * math.log(1 + degrees[r["title"]]),
                                               rel=1e-9)


def test_text_update_through_the_proxy_changes_the_score(notes):
    query = "gas exported by pipeline"
    notes.execute_query("CREATE (:TextNote {title: 'a', text: 'oil offloaded to shuttle tankers'}), "
                        "(:TextNote {title: 'b', text: 'the gas is exported by pipeline to Emden'})")
    before = _score(notes, "a", query)
    notes.execute_query("MATCH (n:TextNote {title: 'a'}) SET n.text = 'the gas is exported by pipeline to Emden'")
    after = _score(notes, "a", query)
    assert after == pytest.approx(_score(notes, "b", query), abs=1e-12)     # now the same text as b
    assert after > before + 0.2
    with notes.session() as session, session.begin_transaction() as tx:      # its own writes, uncommitted
        tx.run("MATCH (n:TextNote {title: 'a'}) SET n.text = 'football match'").consume()
        inside = tx.run("MATCH (n:TextNote {title: 'a'}) RETURN text_score(n, 'text', $q) AS s", q=query).single()["s"]
        tx.rollback()
    assert inside < after - 0.2
    assert _score(notes, "a", query) == pytest.approx(after, abs=1e-12)       # rolled back


def test_missing_property_is_null_and_null_arguments_give_null(notes):
    notes.execute_query("CREATE (:TextNote {title: 'with', text: 'gas'}), (:TextNote {title: 'without'})")
    assert _score(notes, "without", "gas") is None
    records = notes.execute_query("MATCH (n:TextNote {title: 'with'}) OPTIONAL MATCH (m:Nothing) "
                                  "RETURN text_score(n, 'text', null) AS a, text_score(m, 'text', 'x') AS b").records
    assert records[0]["a"] is None and records[0]["b"] is None


def _error(driver, query: str) -> neo4j.exceptions.ClientError:
    with pytest.raises(neo4j.exceptions.ClientError) as info:
        driver.execute_query(query)
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
    return info.value


def test_unknown_property_lists_the_labels_text_properties(demo_driver):
    error = _error(demo_driver, "MATCH (d:FieldDescription) RETURN text_score(d, 'summary', 'gas') LIMIT 1")
    assert "Unknown text property 'summary' on FieldDescription" in error.message
    assert "heading, id, text, title, updated" in error.message


def test_non_string_property_names_its_type(notes):
    notes.execute_query("CREATE (:TextNote {title: 'n', text: 'fine', size: 42, tags: ['a']})")
    assert "TextNote.size is INTEGER" in _error(notes, "MATCH (n:TextNote) RETURN text_score(n, 'size', 'x')").message
    assert "TextNote.tags is LIST" in _error(notes, "MATCH (n:TextNote) RETURN text_score(n, 'tags', 'x')").message
    assert "a STRING; got INTEGER" in _error(notes, "MATCH (n:TextNote) RETURN text_score(n, 'text', 7)").message
    assert "needs the property to score" in _error(notes, "MATCH (n:TextNote) RETURN text_score(n, 'text')").message
    assert "takes 2 to 3 arguments" in _error(notes, "MATCH (n:TextNote) RETURN text_score(n)").message


def test_embeddings_survive_a_restart(tmp_path):
    texts = [f"note {i} about {'gas export' if i % 2 else 'oil production'}" for i in range(200)]
    query = "MATCH (n:Note) RETURN n.i AS i, text_score(n, 'text', 'gas pipeline') AS s ORDER BY i"
    with ProxyProcess(data_dir=tmp_path) as first:
        with neo4j.GraphDatabase.driver(first.uri, auth=(USER, PASSWORD)) as driver:
            driver.execute_query("UNWIND range(0, size($t) - 1) AS i CREATE (:Note {i: i, text: $t[i]})", t=texts)
            scores = [r["s"] for r in driver.execute_query(query).records]
    (cache,) = (tmp_path / "text").rglob("Note/text.npz")
    written = cache.stat().st_mtime_ns
    with ProxyProcess(data_dir=tmp_path) as second:
        with neo4j.GraphDatabase.driver(second.uri, auth=(USER, PASSWORD)) as driver:
            assert [r["s"] for r in driver.execute_query(query).records] == scores
    assert cache.stat().st_mtime_ns == written           # nothing new to embed, nothing rewritten
    assert scores[1] > scores[0]                         # 'gas export' beats 'oil production'
