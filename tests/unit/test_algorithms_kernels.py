"""Algorithm kernels and projections on synthetic graphs, against networkx (no database)."""

from __future__ import annotations

import json
import threading

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from extensions.algorithms import kernels, paths
from extensions.algorithms.parameters import SUBGRAPH, resolve
from extensions.algorithms.procedures import SPECS
from extensions.algorithms.projection import (Projection, Subgraph, build_window_projection, weight_array,
                                              build_projection)
from core.errors import CypherError
from extensions.windows import json_numbers


def random_projection(n: int, m: int, seed: int, weights: bool = False) -> tuple[Projection, nx.MultiDiGraph]:
    rng = np.random.default_rng(seed)
    s, t = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = s != t
    s, t = s[keep], t[keep]
    w = rng.uniform(0.5, 3.0, len(s)) if weights else np.ones(len(s))
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(range(n))
    graph.add_weighted_edges_from(zip(s.tolist(), t.tolist(), w.tolist()))
    return Projection(np.arange(n), s, t, w), graph


def undirected(graph: nx.MultiDiGraph) -> nx.MultiGraph:
    """Each relationship an undirected edge (nx.MultiGraph(g) merges a->b and b->a: same key)."""
    out = nx.MultiGraph()
    out.add_nodes_from(graph)
    out.add_weighted_edges_from(graph.edges(data="weight"))
    return out


def worst(values: np.ndarray, expected: dict) -> float:
    return max(abs(values[i] - expected[i]) for i in expected)


@pytest.mark.parametrize("direction", ["out", "in", "both"])
def test_pagerank_matches_networkx(direction):
    projection, graph = random_projection(300, 900, 1, weights=True)
    reference = {"out": graph, "in": graph.reverse(), "both": undirected(graph)}[direction]
    values = kernels.pagerank(projection, dict(direction=direction, damping_factor=0.8, max_iterations=1000,
                                               tolerance=1e-13))
    assert worst(values, nx.pagerank(reference, alpha=0.8, tol=1e-14, max_iter=1000)) < 1e-10


@pytest.mark.parametrize("direction,kind", [("out", nx.DiGraph), ("both", nx.Graph)])
def test_exact_betweenness_and_closeness_match_networkx(direction, kind):
    projection, graph = random_projection(250, 600, 2)
    simple = kind(graph)
    for normalized in (False, True):
        values = paths.betweenness(projection, dict(direction=direction, normalized=normalized))
        assert worst(values, nx.betweenness_centrality(simple, normalized=normalized)) < 1e-9
    values = paths.closeness(projection, dict(direction=direction, weighted=False))
    assert worst(values, nx.closeness_centrality(simple)) < 1e-12


def test_sampled_above_the_threshold_is_within_the_stated_margin(monkeypatch):
    """Above EXACT_MAX_NODES the default is sampling, within `margin` of the exact values."""
    projection, _ = random_projection(800, 2400, 3)
    exact = paths.betweenness(projection, dict(direction="both", normalized=True))
    monkeypatch.setattr(paths, "EXACT_MAX_NODES", 500)
    monkeypatch.setattr(paths, "DEFAULT_SAMPLE_SIZE", 120)
    sampled = paths.betweenness(projection, dict(direction="both", normalized=True, seed=4))
    assert 0 < np.abs(sampled - exact).max() <= paths.margin(800, 120)
    assert paths.sources(800, {"seed": 4}).size == 120
    assert paths.sources(800, {"sample_size": 5000}).size == 800       # as big as the graph: exact


def test_cancel_stops_a_kernel_between_steps():
    projection, _ = random_projection(200, 500, 5)
    cancel = threading.Event()
    cancel.set()
    for kernel, options in [(paths.betweenness, dict(direction="both", normalized=False)),
                            (paths.closeness, dict(direction="both", weighted=False)),
                            (kernels.pagerank, dict(direction="out", damping_factor=0.85, max_iterations=10,
                                                    tolerance=1e-9))]:
        with pytest.raises(kernels.Cancelled):
            kernel(projection, options, cancel)


def test_projection_rows_to_matrix():
    rows = [[10, [11, 11, 99], [2.0, 3.0, 1.0]], [11, [10], [1.0]], [12, [], []]]   # 99: outside the subgraph
    projection = build_projection(rows)
    assert projection.ids.tolist() == [10, 11, 12]
    assert projection.matrix("out").toarray().tolist() == [[0, 5, 0], [1, 0, 0], [0, 0, 0]]
    assert projection.matrix("out", "shortest").toarray().tolist() == [[0, 2, 0], [1, 0, 0], [0, 0, 0]]
    assert projection.matrix("both", "pattern").toarray().tolist() == [[0, 1, 0], [1, 0, 0], [0, 0, 0]]
    assert projection.matrix("in").toarray().tolist() == [[0, 1, 0], [5, 0, 0], [0, 0, 0]]
    assert build_projection([[1, [2, 2]], [2, []]]).matrix("out").toarray().tolist() == [[0, 2], [0, 0]]
    assert build_projection([["a", ["b"], [1.0]], ["b", [], []]]).ids.dtype == object
    with pytest.raises(CypherError, match="not numbers"):
        build_projection([[1, [2], ["heavy"]], [2, [], []]])


def test_subgraph_query_and_predicate_checks():
    query = Subgraph(("Field", "Company"), ("HAS_LICENSEE",), "share", "n.status = 'x'").query("id({})")
    assert query.startswith("MATCH (n) WHERE (n:Field OR n:Company) AND (n.status = 'x') OPTIONAL MATCH "
                            "(n)-[r:HAS_LICENSEE]->(m) WHERE (m:Field OR m:Company)")
    assert "coalesce(r.share, 1.0)" in query
    for bad in ("n.x = 1 RETURN 1 UNION MATCH (a) DETACH DELETE a", "n.x ="):
        with pytest.raises(CypherError):
            Subgraph(where=bad).query("id({})")


def test_parameters_resolve_aliases_and_check_types():
    params = (*SUBGRAPH, *next(s for s in SPECS if s.name == "pagerank").params)
    given = {"nodeLabels": ["Field"], "dampingFactor": 0.5, "orientation": "UNDIRECTED"}
    subgraph, options = resolve("pagerank", params, given)
    assert subgraph.labels == ("Field",) and options["damping_factor"] == 0.5 and options["direction"] == "both"
    assert options["max_iterations"] == 100 and options["weighted"] is False
    for bad, fragment in [({"damping_factor": 1.0}, "below 1"), ({"max_iterations": True}, "positive integer"),
                          ({"relationship": ["A", 3]}, "list of names"), ({"refresh": "yes"}, "true or false")]:
        with pytest.raises(CypherError, match=fragment):
            resolve("pagerank", params, bad)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 40), unique=True, max_size=25),
       st.lists(st.tuples(st.integers(0, 45), st.integers(0, 45), st.floats(0.1, 5.0)), max_size=80),
       st.booleans())
def test_window_read_builds_the_same_projection_as_the_row_read(node_ids, relationships, weighted):
    """FalkorDB's windowed JSON read and the per-node row read agree (parallel relationships, self
    loops, relationships to or from nodes outside the projection)."""
    known = set(node_ids)
    inside = [(a, b, w) for a, b, w in relationships if a in known]
    rows = [[i, [b for a, b, _ in inside if a == i], [w for a, _, w in inside if a == i]] for i in node_ids]
    if not weighted:
        rows = [row[:2] for row in rows]
    by_rows = build_projection(rows)
    joined = build_window_projection(json_numbers(json.dumps(node_ids), np.int64),
                                     json_numbers(json.dumps([a for a, _, _ in relationships]), np.int64),
                                     json_numbers(json.dumps([b for _, b, _ in relationships]), np.int64),
                                     weight_array(json.dumps([w for _, _, w in relationships])) if weighted else None)
    assert joined.ids.tolist() == by_rows.ids.tolist()
    for direction in ("out", "in", "both"):
        assert np.allclose(joined.matrix(direction).toarray(), by_rows.matrix(direction).toarray())
