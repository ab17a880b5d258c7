"""Algorithm CALLs bind only the rows their query needs (extensions/planner/reduce.py), through the real
driver on a random graph: a top k or a threshold gives the same rows as the same query written so
that every row is bound, and the reduced query seeks its rows instead of scanning every node."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

N, M = 300, 900

#: (the query the planner reduces, the same query with every row bound: a WITH in between)
REDUCED = ("CALL {name}({{node_type: 'Dot'}}) YIELD node, {column} {where}"
           "RETURN node.i AS i, {column} ORDER BY {column} {order}, i SKIP $skip LIMIT $limit")
EVERY_ROW = ("CALL {name}({{node_type: 'Dot'}}) YIELD node, {column} WITH node, {column} {where}"
             "RETURN node.i AS i, {column} ORDER BY {column} {order}, i SKIP $skip LIMIT $limit")


@pytest.fixture(scope="module")
def dots(driver):
    """A random graph with skewed in-degrees (ties and distinct scores alike)."""
    rng = np.random.default_rng(7)
    driver.execute_query("MATCH (n) DETACH DELETE n")
    driver.execute_query("UNWIND range(0, $n - 1) AS i CREATE (:Dot {i: i})", n=N)
    edges = [{"a": int(a), "b": int(b)} for a, b in zip(rng.integers(0, N, M), (N * rng.random(M) ** 3).astype(int))]
    driver.execute_query("UNWIND $edges AS e MATCH (a:Dot {i: e.a}), (b:Dot {i: e.b}) CREATE (a)-[:TO]->(b)",
                         edges=edges)
    yield driver
    driver.execute_query("MATCH (n) DETACH DELETE n")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from([("pagerank", "score"), ("degree", "score"), ("louvain", "community")]),
       limit=st.integers(0, 40), skip=st.integers(0, 3), descending=st.booleans(),
       threshold=st.sampled_from([None, 1.0, 0.004]))
def test_top_k_and_thresholds_give_the_rows_of_every_row(dots, name, limit, skip, descending, threshold):
    name, column = name
    where = f"WHERE {column} >= $t " if threshold is not None else ""
    parts = dict(name=name, column=column, where=where, order="DESC" if descending else "")
    params = dict(skip=skip, limit=limit, t=threshold)
    reduced = dots.execute_query(REDUCED.format(**parts), params).records
    every = dots.execute_query(EVERY_ROW.format(**parts), params).records
    assert [list(r) for r in reduced] == [list(r) for r in every]


def operators(plan) -> list[str]:
    return [plan.get("operatorType", "")] + [op for child in plan.get("children", []) for op in operators(child)]


def test_a_top_k_seeks_its_rows_instead_of_scanning(dots):
    query = "CALL pagerank({node_type: 'Dot'}) YIELD node, score RETURN node.i ORDER BY score DESC LIMIT 3"
    summary = dots.execute_query("PROFILE " + query).summary
    reduced = operators(summary.profile)
    summary = dots.execute_query("PROFILE " + query.replace("YIELD node, score", "YIELD node, score WITH *")).summary
    every = operators(summary.profile)
    assert any("Seek" in op for op in reduced) and not any("Scan" in op for op in reduced), reduced
    assert any("Scan" in op for op in every), every


def test_a_label_on_every_node_projects_like_cypher_counts(dots):
    """`Dot` is on every node: the projection is read without FalkorDB's label test."""
    degrees = dots.execute_query("CALL degree({node_type: 'Dot', direction: 'out'}) YIELD node, score "
                                 "RETURN node.i AS i, score").records
    expected = dots.execute_query("MATCH (n:Dot) OPTIONAL MATCH (n)-[r:TO]->() RETURN n.i AS i, count(r) AS d").records
    assert {r["i"]: r["score"] for r in degrees} == {r["i"]: float(r["d"]) for r in expected}
