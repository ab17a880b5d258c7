"""LangGraph applications end to end on the embedded database (issue 29): a long-term memory
store over the graph and an agentic graph-RAG walk (tests/stock/langgraph_apps.py), and
langchain-neo4j's checkpointer against LangGraph's in-memory one (tests/stock/langgraph_checkpoints.py),
run with LangGraph from PyPI in `.cache/stock`.

What the apps answer is checked against the graph read with plain Cypher and against the walk
recomputed here in Python from the relationships and every note's score: each hop's candidates
are the node's own relationships, min(degree, cap) of them, and the pick is the best fresh one.
"""

from __future__ import annotations

import json

import pytest

from tests.integration.test_stock_agents import STOCK, run_client

CAP, ENOUGH = 5, 0.2                       # as in the app
TOPICS = [("CBT", "cognitive behavioural therapy for anxious, catastrophizing thinking"),
          ("Auth", "middleware that checks tokens on every request"),
          ("Climbing", "bouldering and rope climbing in a gym")]
#: (from, to, note): CBT has more relationships than the cap; Auth's walk is fully determined.
LINKS = [("lee", "CBT", "runs a CBT group for students with exam anxiety and catastrophizing"),
         *[(f"member{i}", "CBT", f"attended session {i} of the evening course") for i in range(6)],
         ("lee", "kim", "referred kim, who helps students catastrophizing before exams"),
         ("kim", "ann", "tutors ann in statistics"),
         ("raj", "Auth", "wrote the token middleware and knows its auth bugs"),
         ("raj", "sam", "pairs with sam on the auth middleware token refresh bug"),
         ("sam", "Climbing", "climbs with the team on fridays"),
         ("ann", "Climbing", "bouldering at the gym")]


def seed_rag_graph(driver) -> None:
    driver.execute_query("UNWIND $topics AS t CREATE (:RagTopic {name: t[0], description: t[1]})",
                         topics=[list(t) for t in TOPICS])
    people = sorted({a for a, _, _ in LINKS} | {b for _, b, _ in LINKS} - {t for t, _ in TOPICS})
    driver.execute_query("UNWIND $people AS p CREATE (:RagPerson {name: p})", people=people)
    driver.execute_query("UNWIND $links AS l MATCH (a {name: l[0]}), (b {name: l[1]}) WHERE (a:RagPerson OR a:RagTopic) "
                         "AND (b:RagPerson OR b:RagTopic) "
                         "CREATE (a)-[:RAG_LINK {note: l[2]}]->(b)", links=[list(link) for link in LINKS])


LABELS = ("RagTopic", "RagPerson", "Memory", "MemorySpace")


def _clear(driver) -> None:
    driver.execute_query("MATCH (n) WHERE " + " OR ".join(f"n:{label}" for label in LABELS) + " DETACH DELETE n")
    driver.execute_query("DROP CONSTRAINT memory_key IF EXISTS")


@pytest.fixture(scope="module")
def apps(proxy, driver):
    """The apps' answers, on the shared proxy (behind an upstream with THROUGH_NEO4J_BACKEND=1)."""
    _clear(driver)
    seed_rag_graph(driver)
    yield run_client(STOCK, "langgraph_apps.py", proxy.uri)
    _clear(driver)


def rows(driver, query: str, **params) -> list[dict]:
    return [r.data() for r in driver.execute_query(query, params).records]


# ------------------------------------------------------------------ the checkpointer

SAVER_LABELS = ("Thread", "Checkpoint", "ChannelState", "PendingWrite", "Branch")
SAVER_SCHEMA = ("CONSTRAINT thread_unique", "CONSTRAINT checkpoint_id_unique", "CONSTRAINT channel_state_unique",
                "CONSTRAINT branch_id_unique", "INDEX checkpoint_id_idx", "INDEX checkpoint_created_idx",
                "INDEX branch_name_idx")


def _clear_saver(driver) -> None:
    driver.execute_query("MATCH (n) WHERE " + " OR ".join(f"n:{label}" for label in SAVER_LABELS) + " DETACH DELETE n")
    for rule in SAVER_SCHEMA:
        driver.execute_query(f"DROP {rule} IF EXISTS")


@pytest.fixture(scope="module")
def checkpoints(proxy, driver):
    _clear_saver(driver)
    yield run_client(STOCK, "langgraph_checkpoints.py", proxy.uri)
    _clear_saver(driver)


def test_neo4j_saver_keeps_what_the_in_memory_saver_keeps(checkpoints):
    """State, history (values, steps, sources, next nodes), time travel and thread deletion."""
    assert checkpoints["neo4j"] == checkpoints["memory"]
    assert checkpoints["neo4j"]["state"]["turns"] == 3 and checkpoints["neo4j"]["state_t2_after_delete"] == {}


def test_neo4j_saver_checkpoints_are_in_the_graph(checkpoints, driver):
    stored = rows(driver, "MATCH (t:Thread)-[:HAS_CHECKPOINT]->(c:Checkpoint) "
                          "RETURN t.thread_id AS thread, t.checkpoint_ns AS ns, count(c) AS n")
    assert stored == [{"thread": "t1", "ns": "", "n": checkpoints["neo4j"]["checkpoints_t1"]}]


# ------------------------------------------------------------------ the memory store

def test_memory_store_puts_gets_updates_and_deletes(apps, driver):
    assert "memory_error" not in apps, apps.get("memory_error")
    stored = rows(driver, "MATCH (s:MemorySpace)-[:HOLDS]->(m:Memory) RETURN s.path AS ns, m.key AS key, "
                          "m.value AS value, m.v_kind AS kind ORDER BY ns, key")
    assert [(r["ns"], r["key"], r["kind"]) for r in stored] == [
        ("users/ann/facts", "f1", "health"), ("users/ann/facts", "f2", "hobby"), ("users/ann/facts", "f3", "work")]
    assert apps["updated"] == json.loads(stored[1]["value"]) == {"text": "ann gave up bouldering", "kind": "hobby"}
    assert apps["deleted"] is None
    assert apps["namespaces_after_delete"] == [["users", "ann", "facts"]]


def test_memory_store_search_ranks_filters_and_pages(apps, driver):
    def ranked(ns: str, query: str) -> list[str]:
        return [r["key"] for r in rows(driver, "MATCH (m:Memory) WHERE m.ns STARTS WITH $ns "
                                               "RETURN m.key AS key, text_score(m, 'text', $q) AS s "
                                               "ORDER BY s DESC, key", ns=ns, q=query)]
    assert apps["recall"][0] == "f2" and len(apps["recall"]) == 2         # the climbing-gym fact, of ann's 3
    assert apps["recall_bob"] == ["f1"]                                   # bob's own namespace only
    assert apps["paged"] == ranked("users/ann/", "exams")[1:2]
    assert apps["filtered"] == ["f2", "f1"]        # the two hobbies (bob's deleted later), newest update first
    assert apps["namespaces"] == [["users", "ann", "facts"], ["users", "bob", "facts"]]
    assert apps["namespaces_depth"] == [["users", "ann"], ["users", "bob"]]


# ------------------------------------------------------------------ the graph-RAG walk

@pytest.fixture(scope="module")
def graph(driver):
    """Relationship ends and names, read with plain Cypher."""
    links = rows(driver, "MATCH (a)-[r:RAG_LINK]->(b) RETURN id(r) AS r, a.name AS a, b.name AS b, r.note AS note")
    return {link["r"]: link for link in links}


def scores(driver, question: str) -> dict[int, float]:
    return {r["r"]: r["s"] for r in rows(driver, "MATCH ()-[r:RAG_LINK]->() RETURN id(r) AS r, "
                                                 "text_score(r, 'note', $q) AS s", q=question)}


def _other(link: dict, here: str) -> str:
    return link["b"] if link["a"] == here else link["a"]


def test_rag_walk_starts_at_the_best_topic(apps, driver):
    assert "rag_error" not in apps, apps.get("rag_error")
    for walk in apps["walks"]:
        best = rows(driver, "MATCH (t:RagTopic) RETURN t.name AS name, text_score(t, 'description', $q) AS s "
                            "ORDER BY s DESC LIMIT 1", q=walk["question"])[0]["name"]
        assert walk["path"][0]["name"] == best
    assert [walk["path"][0]["name"] for walk in apps["walks"]] == ["CBT", "Auth"]


def test_rag_walk_hops_are_capped_and_pick_the_best_fresh_note(apps, driver, graph):
    for walk in apps["walks"]:
        score = scores(driver, walk["question"])
        for index, hop in enumerate(walk["hops"]):
            here = walk["path"][index]["name"]
            incident = {r for r, link in graph.items() if here in (link["a"], link["b"])}
            seen = {rel["rel"] for rel in hop["candidates"]}
            assert seen <= incident and len(hop["candidates"]) == min(len(incident), CAP)
            assert [c["s"] for c in hop["candidates"]] == pytest.approx([score[c["rel"]] for c in hop["candidates"]])
            visited = {step["name"] for step in walk["path"][:index + 1]}
            fresh = [r for r in seen if _other(graph[r], here) not in visited]
            best = max(fresh, key=score.get, default=None)
            assert hop["pick"] == (best if best is not None and score[best] >= ENOUGH else None)


def test_rag_walk_within_the_cap_is_the_walk_computed_here(apps, driver, graph):
    """Auth's walk never meets a node over the cap: it is fully determined."""
    walk = next(w for w in apps["walks"] if w["path"][0]["name"] == "Auth")
    score, here, expected = scores(driver, walk["question"]), "Auth", ["Auth"]
    while len(expected) <= 4:
        fresh = [r for r, link in graph.items() if here in (link["a"], link["b"])
                 and _other(link, here) not in expected]
        best = max(fresh, key=score.get, default=None)
        if best is None or score[best] < ENOUGH:
            break
        here = _other(graph[best], here)
        expected.append(here)
    assert [step["name"] for step in walk["path"]] == expected and len(expected) >= 3
