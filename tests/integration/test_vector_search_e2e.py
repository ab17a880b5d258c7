"""Cypher 25's `MATCH ... SEARCH v IN (VECTOR INDEX ...)` on the embedded database
(compat/vector.py): the same nodes and scores as `db.index.vector.queryNodes`, checked against
numpy; in-index WHERE filtering before the LIMIT; a search per input row. `size()`, subscripts and
slices of the stored vectors answer as for the lists written (compat/stored_vectors.py)."""

from __future__ import annotations

import neo4j
import numpy as np
import pytest

rng = np.random.default_rng(5)
VECTORS = rng.normal(size=(40, 8))
QUERY = rng.normal(size=8)


def _similarity(v: np.ndarray, q: np.ndarray) -> float:
    return (1 + float(v @ q / np.linalg.norm(v) / np.linalg.norm(q))) / 2


@pytest.fixture(scope="module")
def docs(driver):
    driver.execute_query("MATCH (d:SearchDoc) DETACH DELETE d")
    driver.execute_query("CREATE VECTOR INDEX search_docs IF NOT EXISTS FOR (d:SearchDoc) ON d.embedding OPTIONS "
                         "{indexConfig: {`vector.dimensions`: 8, `vector.similarity_function`: 'cosine'}}")
    driver.execute_query("UNWIND range(0, size($v) - 1) AS i CREATE (d:SearchDoc {i: i, even: i % 2 = 0}) WITH d, i "
                         "CALL db.create.setNodeVectorProperty(d, 'embedding', $v[i])", v=VECTORS.tolist())
    yield driver
    driver.execute_query("DROP INDEX search_docs IF EXISTS")
    driver.execute_query("MATCH (d:SearchDoc) DETACH DELETE d")


def _nearest(k: int, keep=lambda i: True) -> list[tuple[int, float]]:
    scored = sorted(((i, _similarity(v, QUERY)) for i, v in enumerate(VECTORS) if keep(i)), key=lambda p: -p[1])
    return scored[:k]


def test_search_matches_the_procedure_and_numpy(docs):
    search = docs.execute_query(
        "CYPHER 25 MATCH (node:SearchDoc) SEARCH node IN (VECTOR INDEX search_docs FOR $q LIMIT $k) SCORE AS score "
        "RETURN node.i AS i, score ORDER BY score DESC", q=QUERY.tolist(), k=5).records
    procedure = docs.execute_query("CALL db.index.vector.queryNodes('search_docs', $k, $q) YIELD node, score "
                                   "RETURN node.i AS i, score ORDER BY score DESC", q=QUERY.tolist(), k=5).records
    assert [r.data() for r in search] == [r.data() for r in procedure]
    expected = _nearest(5)
    assert [r["i"] for r in search] == [i for i, _ in expected]
    assert [r["score"] for r in search] == pytest.approx([s for _, s in expected], abs=1e-6)   # float32


def test_search_where_filters_before_the_limit(docs):
    got = docs.execute_query(
        "MATCH (node:SearchDoc) SEARCH node IN (VECTOR INDEX search_docs FOR $q WHERE node.even LIMIT 3) "
        "SCORE AS score RETURN node.i AS i, score ORDER BY score DESC", q=QUERY.tolist()).records
    expected = _nearest(3, lambda i: i % 2 == 0)
    assert [r["i"] for r in got] == [i for i, _ in expected]
    assert [r["score"] for r in got] == pytest.approx([s for _, s in expected], abs=1e-6)


def test_search_per_row_and_the_pattern_restricts(docs):
    got = docs.execute_query(
        "UNWIND [0, 1] AS n WITH n, $v[n] AS q MATCH (node:SearchDoc {even: true}) "
        "SEARCH node IN (VECTOR INDEX search_docs FOR q LIMIT 1) RETURN n, node.i AS i ORDER BY n",
        v=VECTORS[:2].tolist()).records
    assert [(r["n"], r["i"]) for r in got] == [(0, 0)]               # node 1 is its own nearest, and odd


def test_optional_match_search_is_refused(docs):
    with pytest.raises(neo4j.exceptions.ClientError, match="OPTIONAL MATCH ... SEARCH"):
        docs.execute_query("OPTIONAL MATCH (node:SearchDoc) SEARCH node IN (VECTOR INDEX search_docs FOR $q LIMIT 1) "
                           "RETURN node", q=QUERY.tolist())


@pytest.fixture(scope="module")
def links(driver):
    """SearchDoc-like vectors on relationships (issue 29: a path ranker scores links)."""
    driver.execute_query("MATCH (d:SearchEnd) DETACH DELETE d")
    driver.execute_query("CREATE VECTOR INDEX search_links IF NOT EXISTS FOR ()-[r:SEARCH_LINK]-() ON r.embedding "
                         "OPTIONS {indexConfig: {`vector.dimensions`: 8, `vector.similarity_function`: 'cosine'}}")
    driver.execute_query("UNWIND range(0, size($v) - 1) AS i CREATE (:SearchEnd {i: i})-[r:SEARCH_LINK {i: i}]->"
                         "(:SearchEnd) WITH r, i CALL db.create.setRelationshipVectorProperty(r, 'embedding', $v[i])",
                         v=VECTORS.tolist())
    yield driver
    driver.execute_query("DROP INDEX search_links IF EXISTS")
    driver.execute_query("MATCH (d:SearchEnd) DETACH DELETE d")


def test_query_relationships_matches_numpy(links):
    got = links.execute_query(
        "CALL db.index.vector.queryRelationships('search_links', $k, $q) YIELD relationship AS r, score "
        "RETURN r.i AS i, startNode(r).i AS start, score ORDER BY score DESC", q=QUERY.tolist(), k=4).records
    expected = _nearest(4)
    assert [(r["i"], r["start"]) for r in got] == [(i, i) for i, _ in expected]
    assert [r["score"] for r in got] == pytest.approx([s for _, s in expected], abs=1e-6)   # float32


def test_query_relationships_names_the_index_kind(links):
    with pytest.raises(neo4j.exceptions.ClientError, match="no such vector schema index on relationships: search_docs"):
        links.execute_query("CALL db.index.vector.queryRelationships('search_docs', 1, $q) YIELD relationship "
                            "RETURN relationship", q=QUERY.tolist())
    with pytest.raises(neo4j.exceptions.ClientError, match="no such vector schema index: search_links"):
        links.execute_query("CALL db.index.vector.queryNodes('search_links', 1, $q) YIELD node RETURN node",
                            q=QUERY.tolist())


def test_size_and_slices_of_stored_vectors_are_the_lists(docs):
    """FalkorDB reads nothing of a stored vecf32; the proxy answers size(), [i] and [a..b] as for
    the list written, wherever the expression goes, lists and nulls unchanged."""
    docs.execute_query("CREATE (:SearchDoc {i: 100, embedding: [1.0, 2.0]}), (:SearchDoc {i: 101})")
    try:
        got = {r["i"]: r.data() for r in docs.execute_query(
            "MATCH (d:SearchDoc) WHERE size(d.embedding) = 8 OR d.i >= 100 "
            "RETURN d.i AS i, d.embedding AS v, size(d.embedding) AS n, d.embedding[2] AS x, "
            "d.embedding[-2..] AS tail").records}
        assert set(got) == set(range(len(VECTORS))) | {100, 101}
        for i, v in enumerate(VECTORS):
            row = got.pop(i)
            read = row["v"]                                         # the whole vector, as stored (float32)
            assert read == pytest.approx(v, abs=1e-6) and row["n"] == 8
            assert row["x"] == pytest.approx(read[2], rel=1e-14)    # elements as the database returns floats
            assert row["tail"] == pytest.approx(read[-2:], rel=1e-14)
        for row in got.values():
            row.pop("v")
        assert got[100] == {"i": 100, "n": 2, "x": None, "tail": [1.0, 2.0]}
        assert got[101] == {"i": 101, "n": None, "x": None, "tail": None}
        summary = docs.execute_query(
            "MATCH (d:SearchDoc) WHERE d.i < 100 WITH d ORDER BY d.i WITH min(size(coalesce(d.embedding, []))) AS lo, "
            "max(size(coalesce(d.embedding, []))) AS hi, collect(d.embedding)[0][..3] AS first RETURN lo, hi, first"
        ).records[0].data()
        assert summary["lo"] == summary["hi"] == 8
        assert summary["first"] == pytest.approx(VECTORS[0][:3], abs=1e-6)
    finally:
        docs.execute_query("MATCH (d:SearchDoc) WHERE d.i >= 100 DETACH DELETE d")


def test_size_reads_every_vector_length_and_refuses_past_its_limit(docs):
    """Lengths 3 and 5 beside the 8 of the index: found in rounds (the shortest and longest, then
    between them); more lengths than the proxy writes the query for are refused while it runs."""
    docs.execute_query("UNWIND [3, 5, 11] AS n CREATE (d:SearchDoc {i: 200 + n}) WITH d, n "
                       "CALL db.create.setNodeVectorProperty(d, 'embedding', [x IN range(1, n) | 0.5])")
    try:
        lengths = docs.execute_query("MATCH (d:SearchDoc) RETURN size(d.embedding) AS n, count(*) AS c ORDER BY n")
        assert [(r["n"], r["c"]) for r in lengths.records] == [(3, 1), (5, 1), (8, len(VECTORS)), (11, 1)]
        docs.execute_query("UNWIND range(20, 40) AS n CREATE (d:SearchDoc {i: 200 + n}) WITH d, n "
                           "CALL db.create.setNodeVectorProperty(d, 'embedding', [x IN range(1, n) | 0.5])")
        with pytest.raises(neo4j.exceptions.ClientError, match="has another length"):
            docs.execute_query("MATCH (d:SearchDoc) RETURN size(d.embedding) AS n")
    finally:
        docs.execute_query("MATCH (d:SearchDoc) WHERE d.i >= 200 DETACH DELETE d")
