"""Which variable-length ranges get a graph check (extensions/bridges/ranges.py) and how the check
classes a graph's shortest cycle (extensions/planner/cycles.py)."""

from __future__ import annotations

import numpy as np
import pytest

from extensions.algorithms.projection import Projection
from extensions.bridges import range_unions, ranges
from extensions.cypher.parser import parse
from extensions.planner.cycles import shortest_cycle


def checked(query: str) -> list[tuple]:
    return [(c.pattern, c.types, c.directed, c.longest) for c in ranges.checks(parse(query), query)]


@pytest.mark.parametrize("query, expected", [
    ("MATCH (a:A)-[:T*1..3]->(x) RETURN x", [("-[:T*1..3]->", ("T",), True, 2)]),
    ("MATCH (a)-[:T|U*2..]-(x) RETURN count(*)", [("-[:T|U*2..]-", ("T", "U"), False, 1 << 30)]),
    ("MATCH p = (a)-[*1..3]->(x) RETURN DISTINCT p", [("-[*1..3]->", None, True, 2)]),
    ("MATCH (a)-[*2..3]->(x) RETURN DISTINCT x", [("-[*2..3]->", None, True, 2)]),
    ("MATCH (a)-[*1..3]->(x) RETURN x.name, count(*)", [("-[*1..3]->", None, True, 2)]),
    ("MATCH (a) RETURN COUNT { (a)-[*1..2]->() }", [("-[*1..2]->", None, True, 1)]),
    ("MATCH (a) RETURN size((a)-[*1..5]->())", [("-[*1..5]->", None, True, 4)]),
    ("MATCH (a)-[*0..1]-(b) RETURN b", [("-[*0..1]-", None, False, 1)]),
])
def test_ranges_that_are_checked(query, expected):
    assert checked(query) == expected


@pytest.mark.parametrize("query", [
    "MATCH (a)-[*1..3]->(x) RETURN DISTINCT x.name",
    "MATCH (a)-[r*]-(x) RETURN count(DISTINCT x), max(x.k)",
    "MATCH (a)-[*1..3]->(b) WITH DISTINCT b MATCH (b)-->(c) RETURN count(*)",
    "MATCH (a) WHERE (a)-[*1..5]->(:B) RETURN a",
    "MATCH (a) WHERE EXISTS { MATCH (a)-[*]->(:B) } RETURN a",
    "MATCH p = shortestPath((a)-[*]->(b)) RETURN p",
    "MATCH (a)-[*0..1]->(b) RETURN b",          # one relationship cannot pass a node twice
    "MATCH (a)-[*3..2]->(b) RETURN b",          # matches nothing
    "MATCH (a)-[*0]-(b) RETURN b",              # the start node alone
])
def test_ranges_that_are_not(query):
    assert checked(query) == []


def projection(edges: list[tuple[int, int]], n: int = 4) -> Projection:
    sources = np.array([s for s, _ in edges], dtype=np.int64)
    targets = np.array([t for _, t in edges], dtype=np.int64)
    return Projection(np.arange(n), sources, targets, np.ones(len(edges)))


@pytest.mark.parametrize("edges, directed, expected", [
    ([(0, 1), (1, 2)], True, None),
    ([(0, 1), (1, 2)], False, None),
    ([(0, 1), (2, 2)], True, 1),
    ([(0, 1), (1, 0)], True, 2),
    ([(0, 1), (1, 0)], False, 2),
    ([(0, 1), (0, 1)], True, None),             # parallel, one way: no directed cycle
    ([(0, 1), (0, 1)], False, 2),
    ([(0, 1), (1, 2), (2, 0)], True, 3),
    ([(0, 1), (1, 2), (0, 2)], True, None),
    ([(0, 1), (1, 2), (0, 2)], False, 3),
])
def test_shortest_cycle(edges, directed, expected):
    assert shortest_cycle(projection(edges), directed) == expected


def union(query: str) -> str | None:
    return range_unions.rewrite(parse(query), query)


def test_a_range_becomes_one_branch_per_length():
    text = union("MATCH (s:A) MATCH p = (s)-[r:T*1..2]->(x) WHERE x.k > 0 RETURN p, r")
    assert text.startswith("MATCH (s:A) CALL { WITH s MATCH p = (s)-[__h0_0:T]->(x) WHERE x.k > 0 ")
    assert " UNION ALL WITH s MATCH p = (s)-[__h1_0:T]->()-[__h1_1:T]->(x) WHERE x.k > 0 " in text
    assert text.count("RETURN p, r, x") == 2 and text.endswith("} RETURN p, r")
    parse(text)


@pytest.mark.parametrize("query", [
    "MATCH (a)-[*2..]->(b) RETURN b",                        # unbounded
    "MATCH (a)-[*1..7]->(b) RETURN b",                       # above MAX_HOPS
    "MATCH (a)-[*1..4]->(b)-[*1..4]->(c) RETURN c",          # 16 branches
])
def test_left_to_the_check(query):
    assert union(query) is None


def test_an_optional_match_unwinds_its_rows_or_one_of_nulls():
    text = union("MATCH (a) OPTIONAL MATCH (a)-[*1..2]->(b) RETURN b")
    assert text.startswith("MATCH (a) CALL { WITH a CALL { WITH a MATCH (a)-[__h0_0]->(b) RETURN b UNION ALL ")
    assert "WITH collect([b]) AS __hrows UNWIND CASE WHEN size(__hrows) = 0 THEN [[null]] ELSE __hrows END" in text
    parse(text)


def test_an_unbounded_range_up_to_the_relationships_there_are():
    query = "MATCH (a)-[:T*2..]->(b) RETURN b"
    assert union(query) is None
    text = range_unions.rewrite(parse(query), query, lambda rel: 3)
    assert text.count(" UNION ALL ") == 1 and "__h1_2" in text


def test_a_match_binding_nothing_new_counts_its_rows():
    text = union("MATCH (a), (b) OPTIONAL MATCH (a)-[*1..2]->(b) RETURN a")
    assert "RETURN 1 AS __hone UNION ALL" in text and text.endswith("RETURN __hrow[0] AS __hone } WITH a, b RETURN a")
    parse(text)
