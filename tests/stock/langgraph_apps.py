"""Two LangGraph applications on the proxy, written as their users write them, with LangGraph and
the neo4j driver as installed from PyPI (no LLM: the graphs' nodes are plain functions).

- A long-term memory store: a `BaseStore` over the graph (namespaces as nodes holding memories,
  a memory's scalar fields as properties for filters, `text_score` for semantic search), used by
  a LangGraph graph that remembers what it is told and recalls by question.
- An agentic graph-RAG loop: a LangGraph state machine that picks an entry topic with
  `text_score`, then walks relationships, each hop expanded with the cap describe() advises and
  ranked by `text_score` on the relationships' notes, until the best note scores too low.

Usage: python langgraph_apps.py BOLT_URI; prints one JSON object of what each step returned.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import Any, TypedDict

import neo4j
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import (BaseStore, GetOp, Item, ListNamespacesOp, PutOp, SearchItem, SearchOp)

CAP = 5                          # relationships per node and hop (describe()'s advice, smaller)
ENOUGH = 0.2                     # a note scoring below this ends the walk


class GraphStore(BaseStore):
    """LangGraph's long-term memory in the graph: `(:MemorySpace {path})-[:HOLDS]->(:Memory)`."""

    def __init__(self, driver: neo4j.Driver):
        self.driver = driver
        driver.execute_query("CREATE CONSTRAINT memory_key IF NOT EXISTS FOR (m:Memory) REQUIRE (m.ns, m.key) IS UNIQUE")

    def batch(self, ops: Iterable[Any]) -> list[Any]:
        return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Any]) -> list[Any]:
        return self.batch(ops)

    def _run(self, op):
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise TypeError(f"unknown op {op!r}")

    def _put(self, op: PutOp) -> None:
        ns = "/".join(op.namespace)
        if op.value is None:
            self.driver.execute_query("MATCH (m:Memory {ns: $ns, key: $key}) DETACH DELETE m", ns=ns, key=op.key)
            return
        fields = {f"v_{k}": v for k, v in op.value.items() if isinstance(v, (str, int, float, bool))}
        self.driver.execute_query(
            "MERGE (s:MemorySpace {path: $ns}) MERGE (s)-[:HOLDS]->(m:Memory {ns: $ns, key: $key}) "
            "ON CREATE SET m.created = timestamp() "
            "SET m += $fields, m.value = $value, m.text = $text, m.updated = timestamp()",
            ns=ns, key=op.key, fields=fields, value=json.dumps(op.value), text=op.value.get("text", ""))

    def _get(self, op: GetOp) -> Item | None:
        records = self.driver.execute_query("MATCH (m:Memory {ns: $ns, key: $key}) RETURN m", ns="/".join(op.namespace),
                                            key=op.key).records
        return _item(records[0]["m"], Item) if records else None

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = "/".join(op.namespace_prefix)
        where = ["(m.ns = $prefix OR m.ns STARTS WITH $prefix + '/')"]
        where += [f"m[$f{i}] = $v{i}" for i in range(len(op.filter or {}))]
        params = {f"f{i}": f"v_{k}" for i, k in enumerate(op.filter or {})}
        params.update({f"v{i}": v for i, v in enumerate((op.filter or {}).values())})
        score = "text_score(m, 'text', $query)" if op.query else "null"
        order = "score DESC, m.key" if op.query else "m.updated DESC, m.key"
        records = self.driver.execute_query(
            f"MATCH (m:Memory) WHERE {' AND '.join(where)} WITH m, {score} AS score "
            f"RETURN m, score ORDER BY {order} SKIP $offset LIMIT $limit",
            prefix=prefix, query=op.query, offset=op.offset, limit=op.limit, **params).records
        return [_item(r["m"], SearchItem, score=r["score"]) for r in records]

    def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        paths = [tuple(r["p"].split("/")) for r in self.driver.execute_query(
            "MATCH (s:MemorySpace) WHERE (s)-[:HOLDS]->() RETURN s.path AS p ORDER BY p").records]
        for condition in op.match_conditions or ():
            size = len(condition.path)
            paths = [p for p in paths if (p[:size] if condition.match_type == "prefix" else p[-size:]) == condition.path]
        if op.max_depth is not None:
            paths = sorted({p[:op.max_depth] for p in paths})
        return paths[op.offset:op.offset + op.limit]


def _item(node, cls, **extra):
    return cls(value=json.loads(node["value"]), key=node["key"], namespace=tuple(node["ns"].split("/")),
               created_at=node["created"] / 1000, updated_at=node["updated"] / 1000, **extra)


# ------------------------------------------------------------------ the memory app

class Chat(TypedDict, total=False):
    user: str
    tell: list[dict]
    ask: str
    recalled: list[str]


def remember(state: Chat, *, store: BaseStore) -> dict:
    for fact in state.get("tell", []):
        store.put(("users", state["user"], "facts"), fact["id"], {"text": fact["text"], "kind": fact["kind"]})
    return {}


def recall(state: Chat, *, store: BaseStore) -> dict:
    found = store.search(("users", state["user"]), query=state["ask"], limit=2) if state.get("ask") else []
    return {"recalled": [item.key for item in found]}


def memory_app(driver: neo4j.Driver, out: dict) -> None:
    builder = StateGraph(Chat)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    store = GraphStore(driver)
    app = builder.compile(store=store)
    app.invoke({"user": "ann", "tell": [
        {"id": "f1", "text": "ann is anxious before exams and catastrophizes", "kind": "health"},
        {"id": "f2", "text": "ann goes bouldering at the climbing gym on fridays", "kind": "hobby"},
        {"id": "f3", "text": "ann works on the payment service auth middleware", "kind": "work"}]})
    app.invoke({"user": "bob", "tell": [{"id": "f1", "text": "bob climbs ropes at the gym", "kind": "hobby"}]})
    out["recall"] = app.invoke({"user": "ann", "ask": "which sport does she do at the gym"})["recalled"]
    out["recall_bob"] = app.invoke({"user": "bob", "ask": "gym"})["recalled"]
    store.put(("users", "ann", "facts"), "f2", {"text": "ann gave up bouldering", "kind": "hobby"})   # update
    out["updated"] = store.get(("users", "ann", "facts"), "f2").value
    out["filtered"] = [i.key for i in store.search(("users",), filter={"kind": "hobby"}, limit=10)]
    out["paged"] = [i.key for i in store.search(("users", "ann"), query="exams", limit=1, offset=1)]
    out["namespaces"] = [list(ns) for ns in store.list_namespaces(prefix=("users",))]
    out["namespaces_depth"] = [list(ns) for ns in store.list_namespaces(max_depth=2)]
    store.delete(("users", "bob", "facts"), "f1")
    out["deleted"] = store.get(("users", "bob", "facts"), "f1")
    out["namespaces_after_delete"] = [list(ns) for ns in store.list_namespaces()]


# ------------------------------------------------------------------ the graph-RAG loop

class Walk(TypedDict, total=False):
    question: str
    at: int
    path: list[dict]
    hops: list[dict]


def entry(state: Walk, *, driver: neo4j.Driver) -> dict:
    top = driver.execute_query("MATCH (t:RagTopic) RETURN id(t) AS id, t.name AS name, "
                               "text_score(t, 'description', $q) AS s ORDER BY s DESC LIMIT 1",
                               q=state["question"]).records[0]
    return {"at": top["id"], "path": [{"name": top["name"]}], "hops": []}


def expand(state: Walk, *, driver: neo4j.Driver) -> dict:
    """One hop: the node's relationships, capped per node, ranked by their notes (not back along
    the path)."""
    seen = [step["name"] for step in state["path"]]
    records = driver.execute_query(
        "MATCH (n) WHERE id(n) = $at CALL (n) { MATCH (n)-[r]-(m) RETURN r, m LIMIT $cap } "
        "RETURN id(r) AS rel, id(m) AS id, m.name AS name, text_score(r, 'note', $q) AS s ORDER BY s DESC",
        at=state["at"], cap=CAP, q=state["question"]).records
    fresh = [r for r in records if r["name"] not in seen]
    hop = {"from": state["path"][-1]["name"], "candidates": [{"rel": r["rel"], "s": r["s"]} for r in records],
           "pick": fresh[0]["rel"] if fresh and fresh[0]["s"] is not None and fresh[0]["s"] >= ENOUGH else None}
    if hop["pick"] is None:
        return {"hops": state["hops"] + [hop]}
    best = fresh[0]
    return {"at": best["id"], "path": state["path"] + [{"name": best["name"], "via": best["rel"]}],
            "hops": state["hops"] + [hop]}


def go_on(state: Walk) -> str:
    return "expand" if state["hops"][-1]["pick"] is not None and len(state["hops"]) < 4 else END


def rag_app(driver: neo4j.Driver, out: dict) -> None:
    builder = StateGraph(Walk)
    builder.add_node("entry", lambda state: entry(state, driver=driver))
    builder.add_node("expand", lambda state: expand(state, driver=driver))
    builder.add_edge(START, "entry")
    builder.add_edge("entry", "expand")
    builder.add_conditional_edges("expand", go_on)
    app = builder.compile()
    for question in ("who can help with catastrophizing before exams", "auth middleware token bug"):
        walk = app.invoke({"question": question})
        out.setdefault("walks", []).append({"question": question, "path": walk["path"], "hops": walk["hops"]})


def main() -> None:
    out: dict = {}
    with neo4j.GraphDatabase.driver(sys.argv[1], auth=("neo4j", "password")) as driver:
        for name, app in (("memory", memory_app), ("rag", rag_app)):
            try:
                app(driver, out)
            except Exception as error:  # noqa: BLE001 - the test reports which app failed and how
                out[f"{name}_error"] = f"{type(error).__name__}: {error}"[:1500]
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
