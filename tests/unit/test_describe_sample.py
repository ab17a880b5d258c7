"""describe() on a graph it samples (stats.EXACT_MAX lowered, so a small graph takes the path a
million-node one takes), on a real embedded FalkorDB: counts stay exact, a property on 5% of a
type's nodes is seen, small types are read whole, rare types are sampled by a scan, connections
are estimated, and what is read stays bounded by the sample, not the graph."""

from __future__ import annotations

import pytest

from extensions.describe import describe_text, sample, stats
from extensions.registry import GraphContext, Registry
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_describe import falkordb

BIG, MEDIUM, SMALL = 5000, 300, 40


@pytest.fixture(scope="module")
async def graph(tmp_path_factory):
    """Big (5% with `rare`, 0-3 LINKs each to Big), Medium (read by a scan), Small (one node with
    `odd`, the only starts of the rare `OWNS`)."""
    async with falkordb(tmp_path_factory.mktemp("sampled")) as read:
        await read(f"UNWIND range(0, {BIG - 1}) AS i CREATE (:Big {{id: i, name: 'b' + toString(i), "
                   "rare: CASE WHEN i % 20 = 7 THEN true END})", {})
        await read(f"UNWIND range(0, {MEDIUM - 1}) AS i CREATE (:Medium {{id: i, code: i % 3}})", {})
        await read(f"UNWIND range(0, {SMALL - 1}) AS i CREATE (:Small {{id: i, odd: CASE WHEN i = 5 THEN 1 END}})", {})
        await read("MATCH (a:Big) WITH a ORDER BY a.id WITH collect(a) AS nodes UNWIND nodes AS a "
                   f"UNWIND range(1, a.id % 4) AS k WITH a, nodes[(a.id * 7 + k) % {BIG}] AS b "
                   "CREATE (a)-[:LINK]->(b)", {})
        await read("MATCH (s:Small {id: 3}), (m:Medium) WHERE m.id < 10 CREATE (s)-[:OWNS]->(m)", {})
        await read("CREATE (:Gone)-[:WAS]->(:Gone)", {})
        await read("MATCH (g:Gone) DETACH DELETE g", {})          # the label and type stay in FalkorDB
        yield read


@pytest.fixture
def sampled(monkeypatch):
    """Sampling from 0 nodes on; ids drawn for Big only (Medium's share is below 200 / 2000)."""
    monkeypatch.setattr(stats, "EXACT_MAX", 0)
    monkeypatch.setattr(sample, "MAX_DRAWS", 2000)


def counting(read):
    """`read` that also counts the rows it returned."""
    seen = {"rows": 0}

    async def wrapped(query, params):
        rows = await read(query, params)
        seen["rows"] += len(rows)
        return rows
    return wrapped, seen


async def test_counts_exact_and_samples_bounded(graph, sampled):
    read, seen = counting(graph)
    result = await stats.graph_stats(read, True)
    assert result.sampled
    assert result.labels == {"Big": BIG, "Medium": MEDIUM, "Small": SMALL}
    links = sum(i % 4 for i in range(BIG))
    assert result.relationships == links + 10
    assert 100 <= len(result.samples["Big"]) <= 320           # ~200 drawn ids of ~5,340
    assert 120 <= len(result.samples["Medium"]) <= 280        # Bernoulli 2/3 of 300
    assert len(result.samples["Small"]) == SMALL              # small: read whole
    # O(sample): rows read are a fraction of the 5,340 nodes and ~7,500 relationships
    assert seen["rows"] < 1500


async def test_a_property_on_5_percent_is_seen(graph, sampled):
    """Missed with probability <= exp(-0.05 x 200) = 4.5e-5 (sample.py); a one-node property of a
    type read whole is always seen."""
    result = await stats.graph_stats(graph, True)
    assert any(props.get("rare") for props in result.samples["Big"])
    assert any(props.get("odd") == 1 for props in result.samples["Small"])
    assert set(result.conventions) == {"id"}


async def test_connections_estimated_and_rare_types_kept(graph, sampled):
    result = await stats.graph_stats(graph, True)
    links = sum(i % 4 for i in range(BIG))
    assert abs(result.patterns[("Big", "LINK", "Big")] - links) < 0.25 * links
    assert result.patterns[("Small", "OWNS", "Medium")] == 10   # its first relationships: all 10


async def test_text_says_what_is_estimated(graph, sampled):
    context = GraphContext("neo4j", None, graph, dialect=FALKORDB)
    inventory = await describe_text(context, Registry())
    assert f"Node types (3): Big ({BIG:,}), Medium ({MEDIUM}), Small ({SMALL})" in inventory
    assert "Nearly all nodes have .id" in inventory
    detail = await describe_text(context, Registry(), ["Big"])
    assert "-[:LINK]-> Big (~" in detail


async def test_other_databases_sample_by_label_scans(clean_graph, monkeypatch):
    """element ids (Neo4j): no id seeks, every type sampled by a rand() label scan and keyed by elementId
    (read through the proxy, which answers Neo4j's elementId on the embedded database)."""
    monkeypatch.setattr(stats, "EXACT_MAX", 0)
    clean_graph.execute_query("UNWIND range(0, 999) AS i CREATE (:A {id: i, rare: CASE WHEN i % 20 = 0 THEN 1 END})"
                              "-[:R]->(:B {id: i})")

    async def read(query, params):
        return [list(record) for record in clean_graph.execute_query(query, params).records]
    result = await stats.graph_stats(read, False)
    assert result.labels == {"A": 1000, "B": 1000} and result.relationships == 1000
    assert 120 <= len(result.samples["A"]) <= 280
    assert any(props.get("rare") for props in result.samples["A"])
    assert abs(result.patterns[("A", "R", "B")] - 1000) < 250
