"""describe()'s parts on a real embedded FalkorDB: statistics checked against the pandas tables
the graph was loaded from, the text's layout and budgets, the state cache, and the family hook."""

from __future__ import annotations

import asyncio
import math
from contextlib import asynccontextmanager

import bpe_openai
import pytest

from extensions.describe import describe_text
from extensions.describe import render
from extensions.describe.cache import StateCache
from extensions.describe.describe import _types_argument
from extensions.describe.stats import VALUE_LIST_MAX, GraphStats, graph_stats, kind_of, type_stats
from extensions.registry import ArgKind, Describer, Extension, GraphContext, Registry
from core.backend import TxConfig
from proxy.backends.falkordb.backend import FalkorDBBackend
from proxy.demo.loader import load_tables
from core.errors import CypherError
from core.values import WGS84Point
from tests.synthetic_graph import synthetic_graph

AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}
CL100K = bpe_openai.get_encoding("cl100k_base")


@asynccontextmanager
async def falkordb(directory):
    """A real FalkorDB in `directory`: yields a function that runs a query and returns the rows."""
    backend = FalkorDBBackend(directory, persistent=False)
    await backend.start()
    credentials = await backend.authenticate(AUTH)

    async def read(query: str, params: dict) -> list[list]:
        result = await backend.run(query, params, TxConfig(), credentials)
        rows = await result.fetch(-1)
        await result.consume()
        return rows
    try:
        yield read
    finally:
        await backend.stop()


@pytest.fixture(scope="module")
async def graph(tmp_path_factory):
    """A small generated graph: (its GraphContext, the tables it was loaded from)."""
    async with falkordb(tmp_path_factory.mktemp("describe")) as read:
        generated = synthetic_graph(types=15, nodes=600, properties=8, seed=3)
        await load_tables(read, generated.tables, progress=lambda line: None)
        yield GraphContext("neo4j", "s1", read), generated.tables


# ---------------------------------------------------------------- statistics vs pandas

async def test_graph_stats_match_the_loaded_tables(graph):
    context, tables = graph
    stats = await graph_stats(context.read)
    assert stats.labels == {label: len(frame) for label, frame in tables.nodes.items()}
    expected: dict[tuple, int] = {}
    for rel in tables.relationships:
        key = (rel.start_label, rel.type, rel.end_label)
        expected[key] = expected.get(key, 0) + len(rel.frame)
    assert stats.patterns == expected
    assert stats.nodes == sum(map(len, tables.nodes.values()))
    assert stats.relationships == sum(expected.values())
    assert stats.conventions == {"id": 1.0, "title": 1.0}
    assert all(0 < len(sample) <= 20 for sample in stats.samples.values())


async def test_type_stats_match_pandas(graph):
    context, tables = graph
    for label in list(tables.nodes)[:6]:
        frame = tables.nodes[label]
        stats = await type_stats(context.read, label, len(frame))
        by_name = {p.name: p for p in stats.properties}
        columns = [c for c in frame.columns if c not in ("lat", "lon")]
        assert set(by_name) == set(columns) | ({"location"} if "lat" in frame else set())
        for column in columns:
            values = frame[column].dropna()
            prop = by_name[column]
            assert prop.present == len(values), (label, column)
            if prop.kind in ("text", "wkt"):
                continue
            assert prop.distinct == values.nunique(), (label, column)
            if values.nunique() <= VALUE_LIST_MAX and values.nunique() < len(values):
                assert prop.values == sorted(values.unique().tolist(), key=str)
            if prop.kind in ("int", "float", "isodate"):
                assert _same(prop.low, values.min()) and _same(prop.high, values.max()), (label, column)
        assert [p.present for p in stats.properties] == sorted((p.present for p in stats.properties), reverse=True)


def _same(a, b) -> bool:
    return math.isclose(a, b, rel_tol=1e-12) if isinstance(a, float) else a == b


async def test_kinds_of_locations_outlines_and_texts(graph):
    context, tables = graph
    kinds = {}
    for label, frame in tables.nodes.items():
        if {"lat", "geometry", "description"} & set(frame.columns):
            stats = await type_stats(context.read, label, len(frame))
            kinds.update({p.name: p.kind for p in stats.properties})
    assert kinds["location"] == "point" and kinds["geometry"] == "wkt" and kinds["description"] == "text"


async def test_empty_then_nearly_all_and_unlabelled(tmp_path):
    async with falkordb(tmp_path) as read:
        empty = await describe_text(GraphContext("neo4j", 0, read), Registry())
        assert empty.startswith("Graph: 0 nodes, 0 relationships\nCypher: standard Cypher works.")
        await read("UNWIND range(1, 40) AS i CREATE (:A {id: i, title: 'a' + toString(i)})", {})
        await read("CREATE (:B {title: 'no id'}), ({id: 0})-[:R]->(:A {id: 41, title: 'x'})", {})
        stats = await graph_stats(read)
        assert stats.nodes == 43 and stats.labels == {"A": 41, "B": 1}
        assert stats.relationships == 1 and stats.patterns == {}        # an unlabelled start: not described
        assert stats.conventions == {"id": 42 / 43, "title": 42 / 43}
        text = await describe_text(GraphContext("neo4j", 1, read), Registry())
        assert "Nearly all nodes have .id, .title" in text and "Connections" not in text


@pytest.mark.parametrize("values, kind", [
    ([1, 2], "int"), ([1.5], "float"), ([True], "bool"), (["a", "b"], "str"),
    (["2020-01-02", "1999-12"], "isodate"), (["POLYGON ((0 0, 1 0, 1 1, 0 0))"], "wkt"),
    (["word " * 30], "text"), (["x" * 200], "str"), ([WGS84Point((1.0, 2.0))], "point"),
    ([[1, 2]], "list"), ([1, 2, "a"], "int"), ([], "unknown"), ([None], "unknown"),
])
def test_kind_of(values, kind):
    assert kind_of(values) == kind


# ---------------------------------------------------------------- the text

async def test_inventory_stays_within_its_budget_and_names_every_type(graph):
    context, tables = graph
    text = await describe_text(context, Registry())
    assert len(CL100K.encode(text)) <= 400
    assert render.estimate_tokens(text) <= render.INLINE_TOKENS
    line = next(line for line in text.splitlines() if line.startswith("Node types (15): "))
    assert all(f"{label} ({len(frame):,})" in line for label, frame in tables.nodes.items())


def test_connections_merge_types_and_keep_every_type_when_cut():
    patterns = {("A", "R", "B"): 100, ("A", "S", "B"): 50, ("C", "R", "B"): 10, ("D", "T", "E"): 1,
                **{(f"X{i}", "LONG_RELATIONSHIP_NAME", f"Y{i}"): 40 for i in range(20)}}
    everything = render.connections(patterns, render.Budget(10_000))
    assert everything[:3] == ["Connections:", "  R: A, C -> B", "  S: A -> B"]     # R and S: different starts
    cut = render.connections(patterns, render.Budget(60))
    assert "  T: D -> E" in cut and cut[-1].endswith("more")                          # the rarest, yet every type
    merged = render.connections({("A", "R", "B"): 5, ("A", "S", "B"): 5}, render.Budget(100))
    assert merged == ["Connections:", "  R|S: A -> B"]


def test_capped_expand_is_advised_only_for_graphs_with_hubs():
    def advice(count: int, labels: dict[str, int]) -> list[str]:
        return render.capped_expand(GraphStats(sum(labels.values()), count, labels, {("A", "R", "B"): count}, {}, {}))
    assert advice(100, {"A": 100, "B": 50}) == [] and advice(0, {}) == []
    assert advice(1000, {"A": 1000, "B": 10}) == [f"Hubs: expand a hop at a time, capped per node: CALL (n) "
                                                  f"{{ MATCH (n)-[r]-(m) RETURN r, m LIMIT {render.EXPAND_CAP} }}"]


def test_merge_signatures():
    assert render.merge_signatures([
        "ts_sum(n.c, a?)", "ts_avg(n.c, a?)", "ts_at(n.c, d)",
        "CALL pagerank({damping: 0.85, f: g(x)}) YIELD node, score: exact (power iteration)",
        "CALL degree({direction: 'both'}) YIELD node, score", "CALL louvain({}) YIELD node, community",
        "CALL other(x) YIELD a",
    ]) == ["ts_sum/ts_avg(n.c, a?)", "ts_at(n.c, d)",
           "CALL pagerank/degree/louvain({...}) YIELD node, score|community", "CALL other(x) YIELD a"]


def test_fill_counts_what_does_not_fit():
    budget = render.Budget(12)
    text = render.fill("  Small: ", [f"Type{i}" for i in range(30)], budget, ", ")
    assert text.startswith("  Small: Type0") and text.endswith("more") and budget.left >= 0
    shown = text.count("Type")
    assert f"+{30 - shown} more" in text


@pytest.mark.parametrize("text", [
    "Graph: 11,107 nodes, 41,294 relationships\nAll nodes have .id, .title",
    "  OPERATED_BY: Facility, Licence, Discovery, Field, Pipeline -> Company",
    "    recoverable_oil_msm3 (float): 0..582.4\n    status (str): Approved for production|Producing",
    "  Timeseries: ts_sum/ts_avg/ts_min(n.channel, start?, end?); ts_at(n.channel, date)",
    "  Sample: {id: \"5091194\", title: \"Østensjø Rederi I AS\", org_number: 977249155}",
])
def test_token_estimate_is_close_to_cl100k(text):
    """Line by line it is rough; over a whole description it is within a few percent (the
    integration tests check whole texts)."""
    real = len(CL100K.encode(text))
    assert 0.85 * real <= render.estimate_tokens(text) <= 1.4 * real


# ---------------------------------------------------------------- arguments

@pytest.mark.parametrize("args, types", [
    ([], None), ([None], None), ([{}], None), ([{"types": ["A", "B"]}], ["A", "B"]),
    ([{"types": "A"}], ["A"]), ([["A"]], ["A"]), (["A"], ["A"]),
])
def test_types_argument(args, types):
    assert _types_argument(args) == types


@pytest.mark.parametrize("args, message", [
    ([{"tyeps": ["A"]}], "no option 'tyeps'"), ([{"types": [1]}], "list of node type names"),
    ([1], "list of node type names"), ([{}, {}], "takes one map argument"),
])
def test_bad_arguments(args, message):
    with pytest.raises(CypherError) as info:
        _types_argument(args)
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError" and message in info.value.message


async def test_unknown_type_names_the_closest(graph):
    context, tables = graph
    label = next(iter(tables.nodes))
    with pytest.raises(CypherError) as info:
        await describe_text(context, Registry(), [label[:-1] + "x"])
    assert f"Did you mean {label}" in info.value.message
    with pytest.raises(CypherError) as info:
        await describe_text(context, Registry(), [label.lower()])
    assert f"Did you mean {label}" in info.value.message


# ---------------------------------------------------------------- cache

async def test_state_cache_computes_once_per_state():
    cache, calls = StateCache(size=2), []

    async def compute():
        calls.append(1)
        await asyncio.sleep(0.01)
        return len(calls)

    assert await asyncio.gather(*(cache.get("k", 1, compute) for _ in range(5))) == [1] * 5
    assert await cache.get("k", 1, compute) == 1
    assert await cache.get("k", 2, compute) == 2                  # a write: the next call refreshes
    assert await cache.get("k", None, compute) == 3               # a transaction that wrote: not cached
    assert await cache.get("k", 2, compute) == 2
    await cache.get("a", 1, compute), await cache.get("b", 1, compute)
    assert await cache.get("k", 2, compute) == 6                  # evicted: at most `size` keys


async def test_state_cache_forgets_failures():
    cache, outcomes = StateCache(), iter([RuntimeError("down"), 42])

    async def compute():
        outcome = next(outcomes)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    with pytest.raises(RuntimeError):
        await cache.get("k", 1, compute)
    assert await cache.get("k", 1, compute) == 42


# ---------------------------------------------------------------- a family's describer

async def test_a_family_appears_through_its_describer(graph):
    context, tables = graph
    label = list(tables.nodes)[3]

    async def detail(graph_context, name, sample):
        return [f"Widgets: {len(await graph_context.read('MATCH (n) RETURN n LIMIT 2', {}))} gadgets"] if name == label else []

    widget = Extension("w_score", (ArgKind.NODE,), 1, lambda rows: [], signature="w_score(n)")
    registry = Registry([widget, Describer("Widgets", ("w_score",), notes=("Widgets are nodes.",),
                                           legend={"w": "widgets"},
                                           flags=lambda name, sample: ["w"] if name == label and sample else [],
                                           detail=detail)])
    context = GraphContext(context.database, "family", context.read)
    text = await describe_text(context, registry)
    assert f"{label} ({len(tables.nodes[label]):,}; w)" in text and "Flags: w = widgets" in text
    assert "  Widgets: w_score(n)\n    Widgets are nodes." in text
    assert f"  {label}: Widgets: 2 gadgets" in text
    assert "Widgets: 2 gadgets" in await describe_text(context, registry, [label])
    unclaimed = Registry([widget])
    assert "  Other: w_score(n)" in await describe_text(context, unclaimed)
