"""Variable-length ranges (`*1..3`, `*2..`) through the driver on the embedded FalkorDB
(extensions/bridges/ranges.py, range_unions.py, extensions/planner/cycles.py): Neo4j's rows,
checked against trails enumerated here, or a refusal, and a refusal only on a graph with a cycle
that could make FalkorDB's answer wrong, of a range that cannot be written one length per branch
(from 0, or unbounded over more than six relationships). Random small multigraphs have cycles, self-loops and parallel
relationships."""

from __future__ import annotations

from collections import Counter

import neo4j
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"
NODES = 4
#: (from, to, type) of each relationship; its id is its index
graphs = st.lists(st.tuples(st.integers(0, NODES - 1), st.integers(0, NODES - 1), st.sampled_from("TU")),
                  max_size=7)
ranges = st.sampled_from([(1, 2), (1, 3), (2, 3), (0, 2), (2, 4), (1, None)])


def trails(edges, low: int, high: int, directed: bool, kind: str | None):
    """Counter of (start, sorted relationship ids, end) of every trail of low..high relationships
    of `kind` (None: any): each relationship at most once, nodes any number of times."""
    steps = [(i, s, t) for i, (s, t, k) in enumerate(edges) if kind in (None, k)]
    if not directed:
        steps += [(i, t, s) for i, s, t in steps if s != t]      # a self-loop once
    found = Counter((n, (), n) for n in range(NODES) if low == 0)
    for start in range(NODES):
        walks = [((), start)]
        for length in range(1, high + 1):
            walks = [(ids + (i,), t) for ids, at in walks for i, s, t in steps if s == at and i not in ids]
            if length >= low:
                found.update((start, tuple(sorted(ids)), end) for ids, end in walks)
    return found


def has_cycle(edges, directed: bool, kind: str | None) -> bool:
    """A closed trail of `kind` relationships (directed ones if `directed`)."""
    return any(start == end and ids for start, ids, end in trails(edges, 1, len(edges), directed, kind))


def load(driver, edges) -> None:
    driver.execute_query("MATCH (n) DETACH DELETE n")
    driver.execute_query(
        "UNWIND range(0, $n - 1) AS i CREATE (:V {i: i}) WITH count(*) AS done "
        "UNWIND range(0, size($edges) - 1) AS id WITH id, $edges[id] AS e "
        "MATCH (a:V {i: e[0]}), (b:V {i: e[1]}) "
        "FOREACH (_ IN CASE WHEN e[2] = 'T' THEN [1] ELSE [] END | CREATE (a)-[:T {id: id}]->(b)) "
        "FOREACH (_ IN CASE WHEN e[2] = 'U' THEN [1] ELSE [] END | CREATE (a)-[:U {id: id}]->(b))",
        n=NODES, edges=[list(e) for e in edges])


def rows_or_refusal(driver, query):
    try:
        records, _, _ = driver.execute_query(query)
    except neo4j.exceptions.ClientError as exc:
        assert exc.code == UNSUPPORTED and "one fixed length per MATCH" in exc.message, exc.message
        return None
    return [list(r.values()) for r in records]


@pytest.fixture(scope="module")
def graph(driver):
    yield driver
    driver.execute_query("MATCH (n) DETACH DELETE n")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=graphs, bounds=ranges, directed=st.booleans(), kind=st.sampled_from([None, "T"]),
       form=st.sampled_from(["match", "optional", "bound"]))
def test_trails_or_a_refusal(graph, edges, bounds, directed, kind, form):
    """`form`: a MATCH of the path; an OPTIONAL MATCH from a bound start; an OPTIONAL MATCH between
    two bound nodes, which binds nothing new (a row per trail, else one)."""
    load(graph, edges)
    low, high = bounds
    rel = f"-[{':' + kind if kind else ''}*{low}..{high if high is not None else ''}]{'->' if directed else '-'}"
    ids = "[r IN relationships(p) | r.id]"
    query = {"match": f"MATCH p = (a:V){rel}(b:V) RETURN a.i, {ids}, b.i",
             "optional": f"MATCH (a:V) OPTIONAL MATCH p = (a){rel}(b:V) RETURN a.i, {ids}, b.i",
             "bound": f"MATCH (a:V), (b:V) OPTIONAL MATCH (a){rel}(b) RETURN a.i, b.i"}[form]
    got = rows_or_refusal(graph, query)
    event("refused" if got is None else "answered")
    if got is None:
        assert has_cycle(edges, directed, kind), f"refused on a graph without a cycle: {query}"
        relationships = sum(1 for _, _, k in edges if kind in (None, k))
        assert high is None and relationships > 6, f"a range that fits in hops refused: {query}"
        return
    expected = trails(edges, low, high if high is not None else len(edges), directed, kind)
    if form == "bound":
        pairs = Counter((a, b) for a, _, b in expected.elements())
        assert Counter(map(tuple, got)) == Counter({(a, b): pairs[(a, b)] or 1 for a in range(NODES)
                                                    for b in range(NODES)}), query
        return
    if form == "optional":  # a start without a trail: one row of nulls ([r IN null | ...] is null)
        expected.update((n, None, None) for n in range(NODES) if not any(s == n for s, _, _ in expected))
    assert Counter((a, ids if ids is None else tuple(sorted(ids)), b) for a, ids, b in got) == expected, query


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edges=graphs, high=st.sampled_from([2, 3, None]), directed=st.booleans(),
       form=st.sampled_from(["distinct", "predicate", "exists"]))
def test_reached_nodes_are_answered_on_any_graph(graph, edges, high, directed, form):
    """Which nodes a range from 1 reaches is right even where FalkorDB misses trails: never refused."""
    load(graph, edges)
    rel = f"-[*1..{high or ''}]{'->' if directed else '-'}"
    query = {"distinct": f"MATCH (a:V){rel}(b:V) RETURN DISTINCT a.i, b.i",
             "predicate": f"MATCH (a:V), (b:V) WHERE (a){rel}(b) RETURN a.i, b.i",
             "exists": f"MATCH (a:V), (b:V) WHERE EXISTS {{ MATCH (a){rel}(b) }} RETURN a.i, b.i"}[form]
    records, _, _ = graph.execute_query(query)
    expected = {(a, b) for a, _, b in trails(edges, 1, high or len(edges), directed, None)}
    assert sorted((r[0], r[1]) for r in records) == sorted(expected), query


def test_the_measured_gaps(graph):
    """a->b->a->c misses a->b->a->c; two loops on one node find 2 trails of 4; s->x->y->x->z
    misses z (a node other than the start passed twice): Neo4j's rows, one length per UNION ALL
    branch (an unbounded range up to the number of relationships)."""
    load(graph, [(0, 1, "T"), (1, 0, "T"), (0, 2, "T")])
    got = rows_or_refusal(graph, "MATCH (:V {i: 0})-[*1..3]->(x) RETURN x.i ORDER BY x.i")
    assert got == [[0], [1], [2], [2]]
    assert rows_or_refusal(graph, "MATCH (:V {i: 0})-[*]->(x) RETURN x.i ORDER BY x.i") == got
    load(graph, [(0, 0, "T"), (0, 0, "T")])
    assert rows_or_refusal(graph, "MATCH (:V {i: 0})-[*1..2]->(x) RETURN count(*)") == [[4]]
    load(graph, [(0, 1, "T"), (1, 2, "T"), (2, 1, "T"), (1, 3, "T")])
    assert rows_or_refusal(graph, "MATCH (:V {i: 0})-[*1..4]->(x:V {i: 3}) RETURN count(*)") == [[2]]
    assert rows_or_refusal(graph, "MATCH (:V {i: 0})-[*2..]->(x:V {i: 3}) RETURN count(*)") == [[2]]


def test_what_cannot_be_written_per_length_is_refused(graph):
    """A range longer than six relationships, one in a COUNT { }; length 0 is the start node."""
    edges = [(0, 1, "T"), (1, 1, "T"), (1, 2, "T"), (2, 3, "T"), (3, 2, "T"), (3, 1, "T"), (0, 3, "T")]
    load(graph, edges)
    got = rows_or_refusal(graph, "MATCH (:V {i: 0})-[*0..2]-(x) RETURN count(*)")
    assert got == [[sum(n for (start, _, _), n in trails(edges, 0, 2, False, None).items() if start == 0)]]
    assert rows_or_refusal(graph, "MATCH (:V {i: 0})-[*]->(x) RETURN count(*)") is None
    assert rows_or_refusal(graph, "MATCH (a:V {i: 0}) RETURN COUNT { (a)-[*1..2]-() }") is None


def test_optional_match_keeps_its_null_row(graph):
    load(graph, [(0, 1, "T"), (1, 0, "T"), (1, 1, "T")])
    query = ("UNWIND [0, 0, 2] AS i MATCH (s:V {i: i}) OPTIONAL MATCH p = (s)-[r:T*1..3]->(x) "
             "RETURN s.i, x.i, size(r), length(p)")
    got = sorted(rows_or_refusal(graph, query), key=repr)
    trail_rows = [[0, end, len(ids), len(ids)] for start, ids, end in trails([(0, 1, "T"), (1, 0, "T"), (1, 1, "T")],
                                                                          1, 3, True, "T").elements() if start == 0]
    assert got == sorted(trail_rows * 2 + [[2, None, None, None]], key=repr)


def test_the_exact_form_keeps_the_match_whole(graph):
    """The path, the relationship list, the MATCH's WHERE and its other relationships, and the
    variables bound before it, in each length's branch."""
    load(graph, [(0, 1, "T"), (1, 0, "T"), (0, 2, "T"), (2, 2, "T"), (2, 2, "T")])
    query = ("MATCH (s:V {i: 0}) MATCH p = (s)-[first:T]->(c:V {i: 2})-[r:T*1..3]-(x) "
             "WHERE all(e IN r WHERE e.id <> 9) "
             "RETURN x.i, [e IN r | e.id], [e IN relationships(p) | e.id], length(p)")
    got = sorted((x, tuple(ids), tuple(path), length) for x, ids, path, length in rows_or_refusal(graph, query))
    first = 2                               # the id of 0->2
    expected = sorted((end, ids, (first, *ids), len(ids) + 1)
                      for start, ids, end in _ordered_trails([(0, 1, "T"), (1, 0, "T"), (0, 2, "T"), (2, 2, "T"),
                                                               (2, 2, "T")], 2, 1, 3, exclude=first))
    assert got == expected


def _ordered_trails(edges, start, low, high, exclude):
    """(start, ids in path order, end) of the undirected trails from `start` avoiding `exclude`."""
    steps = [(i, s, t) for i, (s, t, _) in enumerate(edges) if i != exclude]
    steps += [(i, t, s) for i, s, t in steps if s != t]
    found, walks = [], [((), start)]
    for length in range(1, high + 1):
        walks = [(ids + (i,), t) for ids, at in walks for i, s, t in steps if s == at and i not in ids]
        if length >= low:
            found += [(start, ids, end) for ids, end in walks]
    return found


def test_a_cycle_too_long_to_matter_is_answered(graph):
    """A directed 2-cycle cannot make `*1..2` wrong (a trail of 2 passes a node twice only at its end)."""
    load(graph, [(0, 1, "T"), (1, 0, "T"), (1, 2, "T")])
    got = rows_or_refusal(graph, "MATCH (a:V {i: 0})-[*1..2]->(x) RETURN x.i ORDER BY x.i")
    assert got == [[0], [1], [2]]


def test_other_types_cycles_do_not_matter(graph):
    load(graph, [(0, 1, "T"), (1, 2, "T"), (2, 0, "U"), (0, 0, "U")])
    edges = [(0, 1, "T"), (1, 2, "T"), (2, 0, "U"), (0, 0, "U")]
    assert rows_or_refusal(graph, "MATCH (:V {i: 0})-[:T*]->(x) RETURN x.i ORDER BY x.i") == [[1], [2]]
    got = rows_or_refusal(graph, "MATCH (:V {i: 0})-[*]->(x) RETURN x.i")
    assert Counter(x for [x] in got) == Counter(end for start, _, end in trails(edges, 1, 4, True, None).elements()
                                                if start == 0)


def test_a_write_makes_the_check_see_the_new_cycle(graph):
    """The verdict is kept per graph state: a relationship closing a cycle is seen at once (here
    refused: an unbounded range over more than six relationships cannot be written per length)."""
    chain = [(i, i + 1, "T") for i in range(NODES - 1)] * 2 + [(0, 1, "T")]
    load(graph, chain)
    query = "MATCH (:V {i: 0})-[:T*]->(x) RETURN count(*)"
    from_start = sum(n for (start, _, _), n in trails(chain, 1, len(chain), True, "T").items() if start == 0)
    assert rows_or_refusal(graph, query) == [[from_start]] == [[3 + 3 * 2 + 3 * 2 * 2]]
    graph.execute_query("MATCH (a:V {i: 3}), (b:V {i: 0}) CREATE (a)-[:T {id: 9}]->(b)")
    assert rows_or_refusal(graph, query) is None


def test_explain_is_not_checked(graph):
    load(graph, [(0, 0, "T")])
    _, summary, _ = graph.execute_query("EXPLAIN MATCH (a:V)-[*1..3]->(x) RETURN count(*)")
    assert summary.plan is not None


def test_a_transaction_sees_the_cycle_it_wrote(graph):
    """Inside a transaction that wrote, a bounded range runs per length without reading the graph,
    an unbounded one is checked against the transaction's own relationships."""
    load(graph, [(0, 1, "T"), (0, 2, "T")])
    with graph.session() as session, session.begin_transaction() as tx:
        tx.run("MATCH (a:V {i: 1}), (b:V {i: 0}) CREATE (a)-[:T {id: 9}]->(b)").consume()
        for length in ("*1..3", "*"):
            got = tx.run(f"MATCH (:V {{i: 0}})-[:T{length}]->(x) RETURN x.i ORDER BY x.i").values()
            assert got == [[0], [1], [2], [2]], length          # a->b->a->c found
        tx.rollback()


@pytest.mark.parametrize("call", ["CALL { WITH s", "CALL (s) {"])
def test_a_range_in_a_call_subquery(graph, call):
    edges = [(0, 1, "T"), (1, 0, "T"), (0, 2, "T"), (2, 2, "T")]
    load(graph, edges)
    query = f"MATCH (s:V) {call} MATCH (s)-[*1..3]->(x) RETURN count(*) AS n }} RETURN s.i, n ORDER BY s.i"
    counts = Counter(start for start, _, _ in trails(edges, 1, 3, True, None).elements())
    assert rows_or_refusal(graph, query) == [[n, counts[n]] for n in range(NODES)]
