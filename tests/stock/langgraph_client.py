"""A LangGraph application persisting its state in the graph with langchain-neo4j's checkpointer
(`Neo4jSaver`), as its documentation shows: a note-taking graph run for a few turns on two
threads, its state and history read back, a turn replayed from an earlier checkpoint (time
travel), and a thread deleted. Usage: python langgraph_client.py BOLT_URI; prints one JSON object,
each step's answer or its error."""

from __future__ import annotations

import json
import operator
import sys
from typing import Annotated, TypedDict

from langchain_neo4j.checkpoint import Neo4jSaver
from langgraph.graph import END, START, StateGraph


class Notes(TypedDict):
    notes: Annotated[list[str], operator.add]
    turns: int


def remember(state: Notes) -> dict:
    """Each turn keeps the note it was given, upper-cased, and counts itself."""
    return {"notes": [state["notes"][-1].upper()], "turns": state.get("turns", 0) + 1}


def step(out: dict, name: str, action) -> None:
    try:
        out[name] = action()
    except Exception as error:  # noqa: BLE001 - the test reports which step failed and how
        out[name] = {"error": f"{type(error).__name__}: {error}"[:1500]}


def main() -> None:
    out: dict = {}
    builder = StateGraph(Notes)
    builder.add_node("remember", remember)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", END)
    with Neo4jSaver.from_conn_string(uri=sys.argv[1], user="neo4j", password="password") as saver:
        step(out, "setup", lambda: saver.setup() or "ok")
        step(out, "setup_again", lambda: saver.setup() or "ok")
        graph = builder.compile(checkpointer=saver)
        first, second = {"configurable": {"thread_id": "t1"}}, {"configurable": {"thread_id": "t2"}}
        for note in ("buy milk", "call ada", "read paper"):
            step(out, f"turn {note}", lambda: graph.invoke({"notes": [note]}, first))
        step(out, "other thread", lambda: graph.invoke({"notes": ["other"]}, second))
        step(out, "state", lambda: graph.get_state(first).values)
        history = []
        step(out, "history", lambda: history.extend(graph.get_state_history(first))
             or [[s.values.get("turns"), s.metadata.get("step")] for s in history])
        # time travel: go back to the checkpoint after the first turn and take another turn from it
        print(json.dumps(out, default=str), file=sys.stderr)
        after_first = next(s for s in history if s.values.get("turns") == 1 and s.metadata.get("step") == 1)
        step(out, "replayed", lambda: graph.invoke({"notes": ["fork"]}, after_first.config))
        step(out, "state_after_fork", lambda: graph.get_state(first).values)
        step(out, "checkpoints_t1", lambda: len(list(saver.list(first))))
        step(out, "delete", lambda: saver.delete_thread("t2") or "ok")
        step(out, "state_t2_after_delete", lambda: graph.get_state(second).values)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
