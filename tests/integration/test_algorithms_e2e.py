"""Graph algorithm procedures on the demo graph, through the real driver, checked against networkx
(and scikit-network run directly) on a reference graph the test reads itself with plain Cypher."""

from __future__ import annotations

import asyncio
import math
import os
import time

import networkx as nx
import neo4j
import numpy as np
import pytest
import scipy.sparse as sp
from sknetwork.clustering import Louvain, get_modularity

from extensions.algorithms.paths import margin
from tests.harness import PASSWORD, USER
from tests.unit.test_bolt_support import RawClient

SUBGRAPH = ["Field", "Company", "Licence"]          # 1,593 nodes: under the exact threshold


@pytest.fixture(scope="module")
def drv(private_demo):
    """This module writes to the demo graph (cache invalidation) and measures the proxy's CPU."""
    with neo4j.GraphDatabase.driver(private_demo.uri, auth=(USER, PASSWORD)) as driver:
        yield driver


def reference(driver, labels=None, types=None, weight=None) -> nx.MultiDiGraph:
    """The (sub)graph as networkx sees it, read with standard Cypher (one edge per relationship)."""
    graph = nx.MultiDiGraph()
    for record in driver.execute_query("MATCH (n) RETURN id(n) AS id, labels(n) AS labels").records:
        if labels is None or set(record["labels"]) & set(labels):
            graph.add_node(record["id"])
    edges = driver.execute_query(f"MATCH (a)-[r]->(b) RETURN id(a) AS a, id(b) AS b, type(r) AS type"
                                 f"{', r.' + weight + ' AS w' if weight else ''}").records
    for record in edges:
        if record["a"] in graph and record["b"] in graph and (types is None or record["type"] in types):
            graph.add_edge(record["a"], record["b"], weight=(record["w"] if weight and record["w"] is not None
                                                            else 1.0))
    return graph


def undirected(graph: nx.MultiDiGraph) -> nx.MultiGraph:
    """Each relationship an undirected edge (nx.MultiGraph(g) merges a->b and b->a: same key)."""
    out = nx.MultiGraph()
    out.add_nodes_from(graph)
    out.add_weighted_edges_from(graph.edges(data="weight"))
    return out


def scores(driver, query: str, column: str = "score") -> dict[int, float]:
    records = driver.execute_query(query).records
    return {r["id"]: r[column] for r in records}


def assert_close(got: dict, expected: dict, tol: float) -> None:
    assert set(got) == set(expected)
    worst = max(abs(got[k] - expected[k]) for k in expected)
    assert worst <= tol, worst


# ------------------------------------------------------------------ values against networkx

def test_pagerank_equals_networkx(drv):
    got = scores(drv, "CALL pagerank({max_iterations: 1000, tolerance: 1e-12}) YIELD node, score "
                      "RETURN id(node) AS id, score")
    expected = nx.pagerank(reference(drv), tol=1e-13, max_iter=1000)
    assert_close(got, expected, 1e-6)
    assert math.isclose(sum(got.values()), 1.0, rel_tol=1e-9)


def test_pagerank_on_an_undirected_weighted_subgraph(drv):
    got = scores(drv, "CALL pagerank({nodeLabels: ['Field', 'Company'], relationshipTypes: 'HAS_LICENSEE', "
                      "relationshipWeightProperty: 'share', orientation: 'UNDIRECTED', dampingFactor: 0.7, "
                      "maxIterations: 1000, tolerance: 1e-12}) YIELD node, score RETURN id(node) AS id, score")
    graph = undirected(reference(drv, ["Field", "Company"], ["HAS_LICENSEE"], weight="share"))
    assert_close(got, nx.pagerank(graph, alpha=0.7, tol=1e-13, max_iter=1000), 1e-6)


@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_degree_is_exact(drv, direction):
    got = scores(drv, f"CALL degree({{direction: '{direction}'}}) YIELD node, score RETURN id(node) AS id, score")
    graph = reference(drv)
    view = {"out": graph.out_degree, "in": graph.in_degree, "both": graph.degree}[direction]
    assert got == {n: float(d) for n, d in view()}


def test_weighted_degree(drv):
    got = scores(drv, "CALL degree({node_type: ['Field', 'Company'], relationship: 'HAS_LICENSEE', "
                      "weight_property: 'share', direction: 'in'}) YIELD node, score RETURN id(node) AS id, score")
    graph = reference(drv, ["Field", "Company"], ["HAS_LICENSEE"], weight="share")
    assert_close(got, dict(graph.in_degree(weight="weight")), 1e-9)


def test_louvain_modularity_within_one_percent_of_scikit_network(drv):
    records = drv.execute_query("CALL louvain({seed: 7}) YIELD node, community "
                                "RETURN id(node) AS id, community").records
    graph = undirected(reference(drv))
    nodes = list(graph)
    adjacency = sp.csr_matrix(nx.to_scipy_sparse_array(graph, nodelist=nodes, format="csr").astype(float))
    ours = dict((r["id"], r["community"]) for r in records)
    mine = get_modularity(adjacency, np.array([ours[n] for n in nodes]))
    direct = get_modularity(adjacency, Louvain().fit_predict(adjacency))
    assert mine >= direct * 0.99, (mine, direct)
    assert mine > 0.5                                   # a real community structure, not one blob


@pytest.mark.parametrize("direction,components", [("both", nx.weakly_connected_components),
                                                  ("out", nx.strongly_connected_components)])
def test_connected_components_equal_networkx(drv, direction, components):
    records = drv.execute_query(f"CALL connected_components({{direction: '{direction}'}}) YIELD node, component "
                                "RETURN id(node) AS id, component").records
    groups: dict[int, set] = {}
    for r in records:
        groups.setdefault(r["component"], set()).add(r["id"])
    expected = {frozenset(c) for c in components(reference(drv))}
    assert {frozenset(g) for g in groups.values()} == expected
    sizes = [len(groups[c]) for c in sorted(groups)]
    assert sizes == sorted(sizes, reverse=True)        # numbered by size, largest 0


@pytest.mark.parametrize("normalized", [False, True])
def test_betweenness_exact_under_the_threshold(drv, normalized):
    got = scores(drv, f"CALL betweenness({{node_type: {SUBGRAPH!r}, normalized: {str(normalized).lower()}}}) "
                      "YIELD node, score RETURN id(node) AS id, score")
    graph = nx.Graph(reference(drv, SUBGRAPH))
    expected = nx.betweenness_centrality(graph, normalized=normalized)
    assert_close(got, expected, 1e-9 * max(1.0, max(expected.values())))


def test_betweenness_sampled_within_the_stated_error(drv):
    k = 200
    got = scores(drv, f"CALL betweenness({{node_type: {SUBGRAPH!r}, normalized: true, sample_size: {k}, "
                      "seed: 3}) YIELD node, score RETURN id(node) AS id, score")
    graph = nx.Graph(reference(drv, SUBGRAPH))
    expected = nx.betweenness_centrality(graph, normalized=True)
    assert_close(got, expected, margin(len(graph), k))
    assert got != pytest.approx(expected, abs=1e-12)    # really sampled


def test_closeness_exact_under_the_threshold(drv):
    got = scores(drv, f"CALL closeness({{node_type: {SUBGRAPH!r}}}) YIELD node, score RETURN id(node) AS id, score")
    expected = nx.closeness_centrality(nx.Graph(reference(drv, SUBGRAPH)))
    assert_close(got, expected, 1e-9)


def test_closeness_directed_and_weighted(drv):
    got = scores(drv, "CALL closeness({node_type: ['Field', 'Company'], relationship: 'HAS_LICENSEE', "
                      "weight_property: 'share', direction: 'out'}) YIELD node, score RETURN id(node) AS id, score")
    multi = reference(drv, ["Field", "Company"], ["HAS_LICENSEE"], weight="share")
    graph = nx.DiGraph()
    graph.add_nodes_from(multi)
    for a, b, w in multi.edges(data="weight"):      # parallel relationships: the shortest one counts
        if not graph.has_edge(a, b) or graph[a][b]["weight"] > w:
            graph.add_edge(a, b, weight=w)
    assert_close(got, nx.closeness_centrality(graph, distance="weight"), 1e-9)


def test_closeness_sampled_within_the_stated_error(clean_graph):
    """A connected graph (the stated error is for mean distances on connected graphs)."""
    n, k = 600, 150
    rng = np.random.default_rng(5)
    edges = [[i, int(rng.integers(0, i))] for i in range(1, n)] + \
            [[int(a), int(b)] for a, b in rng.integers(0, n, (600, 2)) if a != b]
    clean_graph.execute_query("UNWIND range(0, $n - 1) AS i CREATE (:C {i: i})", n=n)
    clean_graph.execute_query("CREATE INDEX FOR (c:C) ON (c.i)")
    clean_graph.execute_query("UNWIND $e AS e MATCH (a:C {i: e[0]}), (b:C {i: e[1]}) CREATE (a)-[:L]->(b)", e=edges)
    got = {r["i"]: r["score"] for r in clean_graph.execute_query(
        f"CALL closeness({{sample_size: {k}, seed: 11}}) YIELD node, score RETURN node.i AS i, score").records}
    graph = nx.Graph(edges)
    exact = nx.closeness_centrality(graph)
    bound = margin(n, k) * nx.diameter(graph)
    worst = max(abs(1 / got[v] - 1 / exact[v]) for v in graph)      # mean distances
    assert worst <= bound, (worst, bound)
    assert got != pytest.approx(exact, abs=1e-12)


# ------------------------------------------------------------------ composable with the query

def test_yield_then_match_where_order_limit(drv):
    records = drv.execute_query(
        "CALL pagerank({}) YIELD node, score WHERE node:Field "
        "MATCH (node)<-[:IN_FIELD]-(w:WellBore) WITH node, score, count(w) AS wells WHERE wells > 10 "
        "RETURN id(node) AS id, node.title AS title, score, wells ORDER BY score DESC LIMIT 5").records
    graph = reference(drv)
    rank = nx.pagerank(graph)
    wells = {r["id"]: r["wells"] for r in drv.execute_query(
        "MATCH (f:Field)<-[:IN_FIELD]-(w:WellBore) RETURN id(f) AS id, count(w) AS wells").records}
    expected = sorted((f for f, c in wells.items() if c > 10), key=lambda f: -rank[f])[:5]
    assert [r["id"] for r in records] == expected
    assert all(abs(r["score"] - rank[r["id"]]) < 1e-6 and r["wells"] == wells[r["id"]] for r in records)


def test_aggregate_over_communities(drv):
    per_node = drv.execute_query("CALL label_propagation({}) YIELD node, community "
                                 "RETURN community, labels(node)[0] AS label").records
    summary = drv.execute_query(
        "CALL label_propagation({}) YIELD node, community "
        "WITH community, count(*) AS size, collect(DISTINCT labels(node)[0]) AS labels "
        "RETURN community, size, size(labels) AS kinds ORDER BY size DESC, community LIMIT 3").records
    sizes: dict[int, int] = {}
    kinds: dict[int, set] = {}
    for r in per_node:
        sizes[r["community"]] = sizes.get(r["community"], 0) + 1
        kinds.setdefault(r["community"], set()).add(r["label"])
    expected = sorted(sizes, key=lambda c: (-sizes[c], c))[:3]
    assert [(r["community"], r["size"], r["kinds"]) for r in summary] == \
        [(c, sizes[c], len(kinds[c])) for c in expected]


def test_yield_renamed_and_subset_columns(drv):
    records = drv.execute_query("CALL connected_components({node_type: 'Field'}) YIELD component AS c "
                                "RETURN count(DISTINCT c) AS n, count(*) AS rows").records
    assert records[0]["rows"] == 142 and records[0]["n"] == 142      # no Field-Field relationships


def test_where_predicate_restricts_the_projection(drv):
    got = scores(drv, "CALL degree({node_type: 'Field', where: \"n.status = 'Producing'\", direction: 'both'}) "
                      "YIELD node, score RETURN id(node) AS id, score")
    producing = {r["id"] for r in drv.execute_query(
        "MATCH (n:Field) WHERE n.status = 'Producing' RETURN id(n) AS id").records}
    assert set(got) == producing and producing


def test_explain_succeeds_without_computing(drv):
    summary = drv.execute_query("EXPLAIN CALL pagerank({}) YIELD node, score RETURN node.title, score").summary
    assert summary.plan is not None and summary.query_type == "r"


# ------------------------------------------------------------------ errors

@pytest.mark.parametrize("query,code,fragment", [
    ("CALL pagerank({damping: 0.5}) YIELD node, score RETURN node", "ArgumentError", "Did you mean"),
    ("CALL pagerank({damping_factor: 'high'}) YIELD node, score RETURN node", "ArgumentError",
     "damping_factor must be a number above 0 and below 1, got 'high' (String)"),
    ("CALL pagerank({max_iterations: 2.5}) YIELD node, score RETURN node", "ArgumentError", "positive integer"),
    ("CALL degree({direction: 'sideways'}) YIELD node, score RETURN node", "ArgumentError", "'out', 'in' or 'both'"),
    ("CALL louvain({node_type: 5}) YIELD node, community RETURN node", "ArgumentError", "a name or a list of names"),
    ("CALL pagerank({where: 'n.status ='}) YIELD node, score RETURN node", "ArgumentError", "does not parse"),
    ("CALL betweenness({weight_property: 'share'}) YIELD node, score RETURN node", "ArgumentError",
     "unweighted shortest paths"),
    ("CALL degree({weight_property: 'as_of'}) YIELD node, score RETURN node", "ArgumentError", "not numbers"),
    ("CALL pagerank({}) YIELD node, community RETURN node", "SyntaxError", "yields node, score"),
    ("CALL pagerank('Field') YIELD node, score RETURN node", "ArgumentError", "one map of parameters"),
])
def test_errors_teach(drv, query, code, fragment):
    with pytest.raises(neo4j.exceptions.ClientError) as info:
        drv.execute_query(query)
    assert info.value.code == f"Neo.ClientError.Statement.{code}"
    assert fragment in info.value.message


# ------------------------------------------------------------------ cache and cancellation

def test_writes_through_the_proxy_invalidate_the_projection(clean_graph):
    clean_graph.execute_query("CREATE (:W {i: 0})-[:R]->(:W {i: 1})")
    query = "CALL degree({node_type: 'W'}) YIELD node, score RETURN node.i AS i, score ORDER BY i"
    assert [tuple(r) for r in clean_graph.execute_query(query).records] == [(0, 1.0), (1, 1.0)]
    clean_graph.execute_query("MATCH (a:W {i: 0}) CREATE (a)-[:R]->(:W {i: 2})")
    assert [tuple(r) for r in clean_graph.execute_query(query).records] == [(0, 2.0), (1, 1.0), (2, 1.0)]
    refreshed = clean_graph.execute_query(query.replace("'W'}", "'W', refresh: true}")).records
    assert [tuple(r) for r in refreshed] == [(0, 2.0), (1, 1.0), (2, 1.0)]


def test_whole_graph_read_keeps_parallel_relationships_self_loops_and_id_holes(clean_graph):
    """Every node (its ids taken as 0 .. n - 1 when none is a hole, read when one is), each of
    several relationships between the same nodes and a self-loop counted."""
    run = lambda query: [tuple(r) for r in clean_graph.execute_query(query).records]
    run("UNWIND range(0, 4) AS i CREATE (:V {i: i})")
    run("MATCH (a:V {i: 0}), (b:V {i: 1}), (c:V {i: 4}) "
        "CREATE (a)-[:R]->(b), (a)-[:R]->(b), (a)-[:S]->(b), (b)-[:R]->(b), (c)-[:R]->(a)")
    query = "CALL degree({direction: 'out'}) YIELD node, score RETURN node.i AS i, score ORDER BY i"
    assert run(query) == [(0, 3.0), (1, 1.0), (2, 0.0), (3, 0.0), (4, 1.0)]
    run("MATCH (n:V {i: 2}) DELETE n")
    assert run(query) == [(0, 3.0), (1, 1.0), (3, 0.0), (4, 1.0)]
    ranks = dict(run("CALL pagerank({}) YIELD node, score RETURN node.i, score"))
    graph = nx.MultiDiGraph([(0, 1), (0, 1), (0, 1), (1, 1), (4, 0)])
    graph.add_node(3)
    assert_close(ranks, nx.pagerank(graph), 1e-5)


def test_an_open_write_transaction_sees_its_own_writes(clean_graph):
    clean_graph.execute_query("CREATE (:T {i: 0})-[:R]->(:T {i: 1})")
    with clean_graph.session() as session, session.begin_transaction() as tx:
        tx.run("MATCH (a:T {i: 1}) CREATE (a)-[:R]->(:T {i: 2})").consume()
        rows = tx.run("CALL degree({node_type: 'T'}) YIELD node, score RETURN node.i AS i, score ORDER BY i").values()
        assert rows == [[0, 1.0], [1, 2.0], [2, 1.0]]
        tx.rollback()


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def test_reset_stops_a_long_computation(private_demo):
    """RESET answers at once, the worker thread stops computing, the server keeps serving."""
    port = int(private_demo.uri.rsplit(":", 1)[1])
    client = await RawClient.connect(port)
    client.send(0x10, "CALL betweenness({sample_size: 11000}) YIELD node, score RETURN max(score) AS m", {}, {})
    client.send(0x3F, {"n": -1})
    await asyncio.sleep(3.0)                       # projection read, kernel running in its thread
    busy = _cpu_seconds(private_demo.pid)
    for _ in range(20):                            # it really is computing (slowly on a loaded machine)
        await asyncio.sleep(0.5)
        if _cpu_seconds(private_demo.pid) - busy > 0.5:
            break
    assert _cpu_seconds(private_demo.pid) - busy > 0.5
    started = time.monotonic()
    client.send(0x0F)
    assert [(await client.recv())[0] for _ in range(3)] == [0x7E, 0x7E, 0x70]   # IGNORED x2, SUCCESS
    assert time.monotonic() - started < 1.0
    # The kernel notices between two BFS levels (later on a loaded machine): within a few
    # seconds a whole second passes with the proxy nearly idle; uncancelled, it computes for minutes.
    quiet = False
    for _ in range(5):
        idle = _cpu_seconds(private_demo.pid)
        await asyncio.sleep(1.0)
        if _cpu_seconds(private_demo.pid) - idle < 0.2:
            quiet = True
            break
    assert quiet, "the computation kept running after RESET"
    client.send(0x10, "CALL degree({node_type: 'Field'}) YIELD node, score RETURN count(*) AS c", {}, {})
    client.send(0x3F, {"n": -1})
    assert (await client.recv())[0] == 0x70
    assert (await client.recv_until_summary())[0][1] == [[142]]
    client.close()
