"""CALL describe() through the real driver: the demo graph (labels, flags, connections, timeseries
detail, errors, budgets), the agent's path to the seed answer, freshness after writes, a
generated 100-type graph's token budgets, and the Neo4j backend.

Expectations come from the data by other routes: plain Cypher counts through the proxy, the
timeseries store's own files read with pandas, the tables a graph was generated from.
"""

from __future__ import annotations

import math
import re

import bpe_openai
import neo4j
import pandas as pd
import pytest
from neo4j.exceptions import ClientError

from extensions.planner.catalog import build_registry
from extensions.describe import render
from extensions.timeseries.store import SERIES_FILE, TimeseriesStore, default_root
from proxy.demo import SEED_QUERY
from proxy.demo.loader import load_tables
from tests.harness import PASSWORD, REPO, USER, ProxyProcess
from tests.http_client import request
from tests.seed import expected_seed_answer
from tests.synthetic_graph import synthetic_graph, timeseries_frame

CL100K = bpe_openai.get_encoding("cl100k_base")
PATH_A = ("MATCH (f:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile) "
          "RETURN f.title, ts_avg(p.production) AS avg LIMIT 1")


def tokens(text: str) -> int:
    return len(CL100K.encode(text))


def describe(driver, types: list[str] | None = None) -> str:
    query = "CALL describe($options)" if types else "CALL describe()"
    records = driver.execute_query(query, options={"types": types}).records
    assert len(records) == 1 and records[0].keys() == ["description"]
    return records[0]["description"]


def inventory_types(text: str) -> dict[str, tuple[int | None, list[str]]]:
    """label -> (count or None, flags) from the inventory's type list (one line, or size bands)."""
    found = {}
    for line in text.splitlines():
        if (line.startswith("Node types") or re.match(r"  (Large|Medium|Small)\b", line)) and ": " in line:
            items = line.split(": ", 1)[1]
            for name, inside in re.findall(r"(\w+)(?: \(([^)]*)\))?", items):
                if name in ("more",) or name.isdigit():
                    continue
                parts = [p.strip() for p in inside.split(";")] if inside else []
                count = int(parts.pop(0).replace(",", "")) if parts and parts[0].replace(",", "").isdigit() else None
                flags = [f for part in parts for f in part.split(", ") if f]
                found[name] = (count, flags)
    return found


def inventory_connections(text: str) -> set[tuple[str, str, str]]:
    """{(start, type, end)} from the `T1|T2: A, B -> C` lines."""
    section = text.split("Connections:\n", 1)[1].split("\nCypher:", 1)[0]
    found = set()
    for line in section.splitlines():
        match = re.fullmatch(r"  ([\w|]+): ([\w, ]+) -> (\w+)", line)
        if match:
            for rel_type in match[1].split("|"):
                found |= {(start, rel_type, match[3]) for start in match[2].split(", ")}
    return found


@pytest.fixture(scope="module")
def demo_driver(demo):
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        yield driver


# ---------------------------------------------------------------- the demo graph

def test_inventory_names_every_label_with_counts_and_flags(demo, demo_driver):
    text = describe(demo_driver)
    counts = {r["label"]: r["n"] for r in demo_driver.execute_query(
        "MATCH (n) UNWIND labels(n) AS label RETURN label, count(*) AS n").records}
    series_labels = set(TimeseriesStore(default_root(demo.data_dir)).labels())
    assert series_labels == {"ProductionProfile"}
    listed = inventory_types(text)
    assert {label: count for label, (count, _) in listed.items()} == counts
    assert {label for label, (_, flags) in listed.items() if "ts" in flags} == series_labels
    nodes, rels = (demo_driver.execute_query(q).records[0][0]
                   for q in ("MATCH (n) RETURN count(n)", "MATCH ()-[r]->() RETURN count(r)"))
    assert text.startswith(f"Graph: {nodes:,} nodes, {rels:,} relationships\nAll nodes have .id, .title\n")
    assert demo_driver.execute_query("MATCH (n) WHERE n.id IS NULL OR n.title IS NULL "
                                     "RETURN count(n)").records[0][0] == 0


def detail_connections(text: str) -> set[tuple[str, str, str]]:
    """{(start, type, end)} from a type detail's `-[:T]-> A (n), B (m)` / `<-[:T]- A (n)` lines."""
    label = text.split(" (", 1)[0]
    found = set()
    for arrow, rel_type, others in re.findall(r"^    (-|<-)\[:(\w+)\]-?>? (.*)$", text, re.M):
        for other in re.findall(r"(\w+) \([\d,]+\)", others):
            found.add((label, rel_type, other) if arrow == "-" else (other, rel_type, label))
    return found


def test_connections_with_their_directions(demo_driver):
    """The inventory shows the most frequent connections, at least one per type, and counts the
    rest; the types' details show all of them."""
    text = describe(demo_driver)
    patterns = {(r["a"], r["t"], r["b"]) for r in demo_driver.execute_query(
        "MATCH (a)-[r]->(b) RETURN DISTINCT labels(a)[0] AS a, type(r) AS t, labels(b)[0] AS b").records}
    shown = inventory_connections(text)
    assert shown <= patterns and ("ProductionProfile", "OF_FIELD", "Field") in shown
    assert {label for pattern in shown for label in (pattern[0], pattern[2])} == set(inventory_types(text))
    if shown != patterns:
        assert re.search(r"\n  \+\d+ more\nCypher:", text)
    every = set().union(*(detail_connections(describe(demo_driver, [label])) for label in inventory_types(text)))
    assert every == patterns


def test_inventory_lists_the_registry_extensions(demo, demo_driver):
    text = describe(demo_driver)
    extensions = text.split("Cypher: standard Cypher works. Extensions:\n", 1)[1]
    for extension in build_registry(demo.data_dir):
        assert re.search(rf"\b{extension.name}\b", extensions), extension.name
    assert "'YYYY-M'" in extensions and "describe" not in extensions


def test_production_profile_detail(demo, demo_driver):
    text = describe(demo_driver, ["ProductionProfile"])
    store = TimeseriesStore(default_root(demo.data_dir))
    meta = store.meta("ProductionProfile")
    line = next(line for line in text.splitlines() if line.startswith("  Timeseries ("))
    resolution, first, last, channels = re.fullmatch(r"  Timeseries \((\w+), ([\d-]+)\.\.([\d-]+)\): (.*)", line).groups()
    assert resolution == "monthly" and meta.resolution == "month"
    units = {}
    for group in channels.split("; "):
        names, unit = group.split(" in ", 1)
        units.update({name: unit for name in names.split(", ")})
    assert units == meta.units and sorted(units) == sorted(meta.channels) and len(units) == 6
    times = pd.read_parquet(store.root / "ProductionProfile" / SERIES_FILE, columns=["time"])["time"]
    assert (first, last) == (times.min().strftime("%Y-%m"), times.max().strftime("%Y-%m"))
    low, high, count = demo_driver.execute_query(
        "MATCH (p:ProductionProfile) RETURN min(p.months), max(p.months), count(p)").records[0]
    assert text.startswith(f"ProductionProfile ({count} nodes; ts):")
    assert f"    months (int): {low}..{high}" in text
    linked = demo_driver.execute_query("MATCH (:ProductionProfile)-[r:OF_FIELD]->(:Field) RETURN count(r)").records[0][0]
    assert f"    -[:OF_FIELD]-> Field ({linked})" in text


def test_details_of_two_types_bound_into_a_query(demo_driver):
    records = demo_driver.execute_query(
        "CALL describe({types: ['Field', 'ProductionProfile']}) YIELD description "
        "WITH description WHERE description CONTAINS 'OF_FIELD' "
        "RETURN size(description) AS length, description").records
    text = records[0]["description"]
    assert records[0]["length"] == len(text)
    field, profile = text.split("\n\n")
    assert field.startswith("Field (") and profile.startswith("ProductionProfile (")
    assert "    <-[:OF_FIELD]- ProductionProfile (124)" in field
    statuses = sorted(r[0] for r in demo_driver.execute_query("MATCH (f:Field) RETURN DISTINCT f.status").records)
    assert f"    status (str): {'|'.join(statuses)}" in field


def test_describe_inside_an_explicit_transaction(demo_driver):
    with demo_driver.session() as session, session.begin_transaction() as tx:
        inside = tx.run("MATCH (f:Field {title: 'TROLL'}) CALL describe() YIELD description "
                        "RETURN f.title AS title, description").single()
        tx.rollback()
    assert inside["title"] == "TROLL" and inside["description"] == describe(demo_driver)


@pytest.mark.parametrize("types, hint", [(["Feild"], "Did you mean Field?"),
                                         (["productionprofile"], "Did you mean ProductionProfile"),
                                         (["Field", "Zzzzzz"], "Unknown node type 'Zzzzzz'. Node types: WellBore")])
def test_unknown_type_gets_the_closest_names(demo_driver, types, hint):
    with pytest.raises(ClientError) as info:
        describe(demo_driver, types)
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError" and hint in info.value.message


def test_readme_shows_the_demo_output_verbatim(demo_driver):
    readme = (REPO / "README.md").read_text()
    count, block = re.search(r"On the demo graph `CALL describe\(\)` returns \((\d+) tokens.*?```\n(.*?)\n```",
                             readme, re.S).groups()
    text = describe(demo_driver)
    assert block == text and int(count) == tokens(text)


def test_the_advised_capped_expand_caps_each_hop_per_node(demo_driver):
    """The demo has hubs (TROLL: 908 relationships), so describe() says how to expand with a
    cap; its query, run as written, gives each node min(degree, cap) relationships."""
    advice = next(line for line in describe(demo_driver).splitlines() if line.startswith("Hubs:"))
    call = advice[advice.index("CALL (n)"):]
    capped = {r["t"]: r["c"] for r in demo_driver.execute_query(
        f"MATCH (n:Field) {call} RETURN n.title AS t, count(DISTINCT r) AS c").records}
    links = demo_driver.execute_query("MATCH (n:Field)-[r]-() RETURN n.title AS t, id(r) AS r").records
    degrees = pd.Series([r["t"] for r in links]).value_counts()
    assert capped == {t: min(d, render.EXPAND_CAP) for t, d in degrees.items()}
    assert degrees.max() > 10 * render.EXPAND_CAP and len(capped) > 100


def test_demo_token_budgets(demo_driver):
    text = describe(demo_driver)
    assert tokens(text) <= 450
    for label in inventory_types(text):
        detail = describe(demo_driver, [label])
        assert tokens(detail) <= 250, (label, tokens(detail))
        assert 0.95 <= render.estimate_tokens(detail) / tokens(detail) <= 1.25, label


def test_agent_path_a_wrong_channel_then_the_seed_answer(demo_driver):
    """Path A of docs/describe-design.md with no LLM: what describe() says, the query the agent
    guesses, the error that teaches the channel names, the corrected query."""
    text = describe(demo_driver)
    assert "All nodes have .id, .title" in text                     # -> {title: 'TROLL'}
    assert inventory_types(text)["ProductionProfile"][1] == ["ts"]  # -> it has channels
    assert ("ProductionProfile", "OF_FIELD", "Field") in inventory_connections(text)
    assert re.search(r"[ /]ts_avg[\w/]*\(n\.channel, start\?, end\?\)", text)  # -> ts_avg(p.channel, y)
    with pytest.raises(ClientError) as info:
        demo_driver.execute_query(PATH_A)
    message = info.value.message
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
    channels = message.split("Available: ", 1)[1].split(", ")
    detail = describe(demo_driver, ["ProductionProfile"])
    assert all(channel in detail for channel in channels) and len(channels) == 6
    chosen = next(channel for channel in channels if "oe" in channel.split("_"))   # oil equivalent
    corrected = SEED_QUERY.replace("prd_oe_net", chosen)
    row = demo_driver.execute_query(corrected).records[0]
    expected = expected_seed_answer()
    assert row["n_years"] == expected["n_years"]
    assert math.isclose(row["mean_ratio"], expected["mean_ratio"], rel_tol=1e-9)


def test_served_by_a_neo4j_backend(demo, demo_driver):
    """A proxy in front of a Neo4j server (here: the demo proxy) answers describe() itself, from
    the same statistics (its own data directory has no timeseries: no `ts` there)."""
    with ProxyProcess(args=["--upstream", demo.uri]) as upstream, \
            neo4j.GraphDatabase.driver(upstream.uri, auth=(USER, PASSWORD)) as driver:
        through = describe(driver)
        details = {label: describe(driver, [label]) for label in inventory_types(through)}
    direct = describe(demo_driver)
    assert through.splitlines()[:2] == direct.splitlines()[:2]
    assert {label: count for label, (count, _) in inventory_types(through).items()} == \
        {label: count for label, (count, _) in inventory_types(direct).items()}
    for label, detail in details.items():
        expected = [line for line in describe(demo_driver, [label]).replace("; ts)", ")").splitlines()
                    if not line.startswith("  Timeseries (")]
        assert detail.splitlines() == expected, label


def test_get_describe_over_http(demo, demo_driver):
    reply = request(demo.http_uri, "GET", "/describe")
    assert reply.status == 200 and reply.headers["Content-Type"] == "text/plain; charset=utf-8"
    assert reply.text == describe(demo_driver)
    two = request(demo.http_uri, "GET", "/db/neo4j/describe?types=Field,ProductionProfile")
    assert two.status == 200 and two.text == describe(demo_driver, ["Field", "ProductionProfile"])
    wrong = request(demo.http_uri, "GET", "/db/neo4j/describe?types=Feild")
    assert wrong.status == 400 and wrong.json["errors"][0]["code"] == "Neo.ClientError.Statement.ArgumentError"
    assert "Did you mean Field?" in wrong.json["errors"][0]["message"]
    assert request(demo.http_uri, "GET", "/describe", auth=None).status == 401


# ---------------------------------------------------------------- freshness

def test_a_write_shows_up_in_the_next_describe(clean_graph):
    driver = clean_graph
    driver.execute_query("CREATE (:Alpha {id: 1, title: 'a'})-[:LINKS]->(:Beta {id: 2, title: 'b'})")
    first = describe(driver)
    assert inventory_types(first) == {"Alpha": (1, []), "Beta": (1, [])}
    assert describe(driver) == first                                      # cached
    driver.execute_query("MATCH (b:Beta) CREATE (b)-[:FEEDS]->(:Gamma {id: 3, title: 'c', depth: 7})")
    second = describe(driver)
    assert inventory_types(second)["Gamma"] == (1, [])
    assert inventory_connections(second) == {("Alpha", "LINKS", "Beta"), ("Beta", "FEEDS", "Gamma")}
    assert "    depth (int)" in describe(driver, ["Gamma"])
    with driver.session() as session:
        with session.begin_transaction() as tx:
            tx.run("CREATE (:Delta {id: 4, title: 'd'})").consume()
            inside = tx.run("CALL describe()").single()["description"]
            tx.rollback()
    assert "Delta (1)" in inside
    assert "Delta" not in describe(driver)


# ---------------------------------------------------------------- a 100-type graph

@pytest.fixture(scope="module")
async def synthetic(tmp_path_factory):
    """A generated 100-type, 50-property graph (6k nodes) behind its own proxy, with series for
    a few types: (driver, the generated graph)."""
    graph = synthetic_graph(types=100, nodes=6000, properties=50)
    data_dir = tmp_path_factory.mktemp("synthetic")
    store = TimeseriesStore(default_root(data_dir))
    for label in graph.timeseries:
        store.write(label, timeseries_frame(graph, label), key_property="id", resolution="month")
    with ProxyProcess(data_dir=data_dir) as process:
        async with neo4j.AsyncGraphDatabase.driver(process.uri, auth=(USER, PASSWORD)) as driver, \
                driver.session() as session:
            async def run(query: str, params: dict) -> None:
                # auto-commit: a write transaction per batch would snapshot the graph each time
                await (await session.run(query, params)).consume()
            await load_tables(run, graph.tables, progress=lambda line: None)
        with neo4j.GraphDatabase.driver(process.uri, auth=(USER, PASSWORD)) as driver:
            yield driver, graph


def test_hundred_type_token_budgets(synthetic):
    driver, graph = synthetic
    text = describe(driver)
    assert tokens(text) <= 400
    assert 0.95 <= render.estimate_tokens(text) / tokens(text) <= 1.25
    listed = inventory_types(text)
    sizes = sorted(((len(frame), label) for label, frame in graph.tables.nodes.items()), reverse=True)
    assert [label for _, label in sizes[:20]] == list(listed)[:20]       # the biggest are named
    assert "Details: CALL describe({types: ['Name', ...]})" in text
    shown_ts = {label for label, (_, flags) in listed.items() if "ts" in flags}
    assert shown_ts and shown_ts <= set(graph.timeseries)
    hub = max(graph.tables.nodes, key=lambda label: sum(r.end_label == label for r in graph.tables.relationships))
    for label in {sizes[0][1], next(iter(graph.timeseries)), hub}:
        detail = describe(driver, [label])
        assert tokens(detail) <= 250, (label, tokens(detail))
        assert detail.startswith(f"{label} ({len(graph.tables.nodes[label]):,} nodes")
