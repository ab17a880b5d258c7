"""langchain-neo4j's LangGraph checkpointer (`Neo4jSaver`) with its schema as `setup()` makes it,
uniqueness constraints kept: one graph turn on a thread in LangGraph's root namespace (`''`), whose
MERGE on `(thread_id, checkpoint_ns)` the embedded database cannot answer (its index trims strings,
and under the constraint writing `''` crashed the server), then a checkpoint put in a named
namespace, read back. Usage: python neo4j_saver_constrained.py BOLT_URI; prints one JSON object."""

from __future__ import annotations

import json
import operator
import sys
from typing import Annotated, TypedDict

from langchain_neo4j.checkpoint import Neo4jSaver
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.graph import END, START, StateGraph
from neo4j.exceptions import Neo4jError


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]


def main() -> None:
    out = {}
    with Neo4jSaver.from_conn_string(uri=sys.argv[1], user="neo4j", password="password") as saver:
        saver.setup()
        builder = StateGraph(Notes)
        builder.add_node("remember", lambda state: {"notes": [state["notes"][-1].upper()]})
        builder.add_edge(START, "remember")
        builder.add_edge("remember", END)
        graph = builder.compile(checkpointer=saver)
        try:
            out["root"] = graph.invoke({"notes": ["buy milk"]}, {"configurable": {"thread_id": "t1"}})
        except Neo4jError as exc:
            out["root_error"] = [exc.code, exc.message]
        named = {"configurable": {"thread_id": "t2", "checkpoint_ns": "inner"}}
        checkpoint = empty_checkpoint()
        saver.put(named, checkpoint, {"source": "input", "step": -1}, {})
        out["named"] = saver.get_tuple(named).checkpoint["id"] == checkpoint["id"]
        out["constraints"] = sorted(r["name"] for r in saver._driver.execute_query("SHOW CONSTRAINTS").records)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
