"""text_score ordered and limited (top k) or past a threshold binds only the rows that can reach
the result (`reduce.plan_projection`), and answers exactly what binding every row answers.

Each reduced query is compared, through the real driver on the real embedded database, with
the same question asked so that nothing is reduced (the score computed in one WITH, ordered or
filtered in the next): same rows, ties at the k-th score, extra predicates, SKIP, ascending
order, nodes without the text (null scores) and rows without the node (OPTIONAL MATCH).
That the cut happens is checked on the planner itself, over the embedded database: the bound
parameter holds the top rows only.
"""

from __future__ import annotations

import pytest

from extensions.planner.catalog import build_registry
from extensions.planner.planner import ExtensionPlanner
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_planner_support import RecordingRunner, rows

AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}
#: Few distinct names, so that many nodes tie at every score.
NAMES = ["oil field production decline", "gas pipeline export", "oil field", "drilling rig contract",
         "seismic survey", "gas field development plan"]
QUERY = "oil production"


def _items(count: int, named: bool = True) -> list[dict]:
    return [{"id": i, "grp": i % 3, **({"name": NAMES[i * 7 % len(NAMES)]} if named or i % 4 else {})}
            for i in range(count)]


@pytest.fixture(scope="module")
def graph(driver):
    """:TopkItem nodes, all named (a tie at every score); :TopkPart nodes, a quarter unnamed."""
    driver.execute_query("MATCH (n:TopkItem|TopkPart) DETACH DELETE n")
    driver.execute_query("UNWIND $items AS i CREATE (:TopkItem {id: i.id, grp: i.grp, name: i.name})",
                         items=_items(60))
    driver.execute_query("UNWIND $items AS i CREATE (n:TopkPart {id: i.id, grp: i.grp}) SET n.name = i.name",
                         items=_items(40, named=False))
    yield driver
    driver.execute_query("MATCH (n:TopkItem|TopkPart) DETACH DELETE n")


def _rows(driver, query: str, **params) -> list[tuple]:
    return [tuple(r.values()) for r in driver.execute_query(query, q=QUERY, **params).records]


TOP = ("MATCH (n:{label}) {where} RETURN n.id AS id, text_score(n, 'name', $q) AS s "
       "ORDER BY s {order}, id SKIP $skip LIMIT $k")
FULL = ("MATCH (n:{label}) {where} WITH n, text_score(n, 'name', $q) AS s "
        "WITH n.id AS id, s RETURN id, s ORDER BY s {order}, id SKIP $skip LIMIT $k")


@pytest.mark.parametrize("label", ["TopkItem", "TopkPart"])
@pytest.mark.parametrize("where", ["", "WHERE n.grp <> 1"])
@pytest.mark.parametrize("order", ["DESC", "ASC"])
def test_top_k_reads_the_rows_of_every_row_bound(graph, label, where, order):
    for skip, k in [(0, 0), (0, 1), (0, 5), (3, 7), (0, 100)]:
        params = {"skip": skip, "k": k}
        expected = _rows(graph, FULL.format(label=label, where=where, order=order), **params)
        assert _rows(graph, TOP.format(label=label, where=where, order=order), **params) == expected
        assert len(expected) == min(k, max(0, (40 if label == "TopkItem" and where else 60 if label == "TopkItem"
                                                else 27 if where else 40) - skip))


@pytest.mark.parametrize("label", ["TopkItem", "TopkPart"])
def test_top_k_of_a_text_expression(graph, label):
    """The cut keeps a row by the node the expression is computed from; the expression itself
    (`'Item ' + n.name`, null where the name is) stays whole in it."""
    for order in ("DESC", "ASC"):
        top = f"MATCH (n:{label}) RETURN n.id AS id, text_score('Item ' + n.name, $q) AS s ORDER BY s {order}, id LIMIT 5"
        full = (f"MATCH (n:{label}) WITH n, text_score('Item ' + n.name, $q) AS s WITH n.id AS id, s "
                f"RETURN id, s ORDER BY s {order}, id LIMIT 5")
        expected = _rows(graph, full)
        assert _rows(graph, top) == expected and len(expected) == 5


def test_ties_at_the_cut_are_all_candidates(graph):
    """Without a second sort key the database picks among the tied rows: the scores are the same."""
    top = _rows(graph, "MATCH (n:TopkItem) RETURN text_score(n, 'name', $q) AS s ORDER BY s DESC LIMIT 12")
    full = _rows(graph, "MATCH (n:TopkItem) WITH text_score(n, 'name', $q) AS s WITH s RETURN s "
                        "ORDER BY s DESC LIMIT 12")
    assert top == full and len(set(top)) < len(top)


def test_threshold_with_other_conditions(graph):
    scores = sorted({s for _, s in _rows(graph, "MATCH (n:TopkItem) RETURN n.id, text_score(n, 'name', $q)")})
    threshold = scores[-2]
    query = ("MATCH (n:TopkItem) WITH n, text_score(n, 'name', $q) AS s WHERE s >= $t AND n.grp <> 2 "
             "RETURN n.id AS id, s ORDER BY id")
    full = ("MATCH (n:TopkItem) WITH n, text_score(n, 'name', $q) AS s WITH n, s WHERE s >= $t AND n.grp <> 2 "
            "RETURN n.id AS id, s ORDER BY id")
    expected = _rows(graph, full, t=threshold)
    assert _rows(graph, query, t=threshold) == expected and 0 < len(expected) < 40


def test_a_second_call_in_the_clause_is_read_for_the_kept_rows(graph):
    query = ("MATCH (n:TopkItem)-[:NEXT]->(m:TopkItem) {project} ORDER BY s DESC, id, other LIMIT 7")
    graph.execute_query("MATCH (a:TopkItem), (b:TopkItem) WHERE b.id = a.id + 1 OR b.id = a.id + 5 "
                        "CREATE (a)-[:NEXT]->(b)")
    top = _rows(graph, query.format(project="RETURN n.id AS id, text_score(n, 'name', $q) AS s, "
                                            "text_score(m, 'name', 'gas') AS other"))
    full = _rows(graph, query.format(project="WITH n, m, text_score(n, 'name', $q) AS s, "
                                             "text_score(m, 'name', 'gas') AS other "
                                             "RETURN n.id AS id, s, other"))
    assert top == full and len(top) == 7


def test_rows_without_the_node_stay(graph):
    """OPTIONAL MATCH rows without a node score null, first when descending, with or without a cut."""
    query = ("UNWIND [1, 2, 100] AS i OPTIONAL MATCH (n:TopkItem {{id: i}}) {project} "
             "ORDER BY s DESC, i LIMIT 2")
    top = _rows(graph, query.format(project="RETURN i, text_score(n, 'name', $q) AS s"))
    full = _rows(graph, query.format(project="WITH i, text_score(n, 'name', $q) AS s RETURN i, s"))
    assert top == full and top[0] == (100, None)


@pytest.fixture(scope="module")
async def planner_db(embedded, tmp_path_factory):
    runner = RecordingRunner(embedded, await embedded.authenticate(AUTH))
    await (await runner.run("UNWIND $items AS i CREATE (:TopkItem {id: i.id, name: i.name})",
                            {"items": _items(60)})).consume()
    await (await runner.run("UNWIND $items AS i CREATE (n:TopkPart {id: i.id}) SET n.name = i.name",
                            {"items": _items(40, named=False)})).consume()
    registry = build_registry(tmp_path_factory.mktemp("topk"))
    return runner, ExtensionPlanner(registry, dialect=FALKORDB)


async def test_only_the_top_rows_are_bound(planner_db):
    runner, planner = planner_db
    query = "MATCH (n:TopkItem) RETURN n.id AS id, text_score(n, 'name', $q) AS s ORDER BY s DESC, id LIMIT 3"
    top = await rows(await planner.execute(query, {"q": QUERY}, runner))
    text, params = runner.queries[-1]
    bound = [v for v in params["__ext0"] if v is not None]
    assert "IS NOT NULL" in text and 3 <= len(bound) < 60 and min(bound) == pytest.approx(top[-1][1])


@pytest.mark.parametrize("order", ["DESC", "ASC"])
async def test_nodes_without_the_text_are_kept_apart(planner_db, order):
    """A quarter of the nodes lack the text: they are kept (nulls, wherever the database orders
    them) and bound apart, the others cut to the top rows."""
    runner, planner = planner_db
    query = f"MATCH (n:TopkPart) RETURN n.id AS id, text_score(n, 'name', $q) AS s ORDER BY s {order}, id LIMIT 3"
    top = await rows(await planner.execute(query, {"q": QUERY}, runner))
    text, params = runner.queries[-1]
    bound = [v for v in params["__ext0"] if v is not None]
    nulls = [v for v in params["__ext0_nulls"] if v is not None]
    assert "IS NOT NULL" in text and nulls == [True] * 10 and 3 <= len(bound) < 30
    assert [s is None for _, s in top] == ([True] * 3 if order == "DESC" else [False] * 3)
