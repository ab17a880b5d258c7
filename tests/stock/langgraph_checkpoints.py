"""langchain-neo4j's LangGraph checkpointer (`Neo4jSaver`) as its documentation shows it, next to
LangGraph's own `InMemorySaver` running the same graph: a note-taking graph run for a few turns on
two threads, state and history read back, a turn replayed from an earlier checkpoint (time
travel), a thread deleted. On the embedded database `setup()` is followed by `DROP CONSTRAINT
thread_unique` (README: FalkorDB's index leaves out the empty string, LangGraph's root
namespace). Usage: python langgraph_checkpoints.py BOLT_URI; prints one JSON object with each
saver's answers."""

from __future__ import annotations

import json
import operator
import sys
from typing import Annotated, TypedDict

from langchain_neo4j.checkpoint import Neo4jSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]
    turns: int


def remember(state: Notes) -> dict:
    """Each turn keeps the note it was given, upper-cased, and counts itself."""
    return {"notes": [state["notes"][-1].upper()], "turns": state.get("turns", 0) + 1}


def session(saver) -> dict:
    """The same conversation on any checkpointer; what the application sees of it."""
    builder = StateGraph(Notes)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    graph = builder.compile(checkpointer=saver)
    first, second = {"configurable": {"thread_id": "t1"}}, {"configurable": {"thread_id": "t2"}}
    out = {"turns": [graph.invoke({"notes": [note]}, first) for note in ("buy milk", "call ada", "read paper")]}
    graph.invoke({"notes": ["other"]}, second)
    out["state"] = graph.get_state(first).values
    history = list(graph.get_state_history(first))
    out["history"] = [[s.values, s.metadata.get("step"), s.metadata.get("source"), list(s.next)] for s in history]
    after_first = next(s for s in history if s.values.get("turns") == 1 and not s.next)
    out["replayed"] = graph.invoke({"notes": ["fork"]}, after_first.config)
    out["state_after_fork"] = graph.get_state(first).values
    out["checkpoints_t1"] = len(list(saver.list(first)))
    out["state_t2"] = graph.get_state(second).values
    saver.delete_thread("t2")
    out["state_t2_after_delete"] = graph.get_state(second).values
    return out


def main() -> None:
    out = {"memory": session(InMemorySaver())}
    with Neo4jSaver.from_conn_string(uri=sys.argv[1], user="neo4j", password="password") as saver:
        saver.setup()
        saver._driver.execute_query("DROP CONSTRAINT thread_unique")      # see the docstring
        out["neo4j"] = session(saver)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
