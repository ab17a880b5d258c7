"""Which indexed properties hold nothing FalkorDB's trimming index mis-finds, per graph state.

`trimmed_index.py` compares indexed strings exactly. Where the value is known only while the
query runs (`UNWIND $rows AS r MATCH (n:L {k: r.k})`, the shape of every batched load) that
costs the index: a label scan per row. Yet the index answers equality and `IN` exactly when no
value stored under the property is an untrimmed string: a lookup value is not trimmed, so an
untrimmed one finds nothing there, as in Neo4j, and every stored string is indexed as it is.
So the planner asks, per property the statement may compare and graph state, whether the graph
stores such a value (a list counts, as it may hold one), through the probe cache
(`planner/probe_cache.py`: once per graph state), and the statement keeps the index on the
properties that hold none, unless it writes them itself (`trimmed_index.written_keys`).
Ranges on strings stay exact either way: the index orders non-ASCII strings by signed bytes.

It asks only where the answer changes the statement, and only where the answer can be cached
(not inside a transaction that has written): elsewhere the exact form stands.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from .cypher.render import name as quote
from .trimmed_index import WHITESPACE, WHITESPACE_PARAM, Schema, analyse, mentioned, untrimmed_condition

#: Runs a read-only probe and returns its rows (the planner's cached `_probe_rows`).
ReadRows = Callable[[str, dict[str, Any]], Awaitable[list[list[Any]]]]


def probe(entity: str, label: str, key: str) -> str:
    """A row when an entity of `label` holds an untrimmed string, or a list, under `key`."""
    element = f"(n:{quote(label)})" if entity == "NODE" else f"()-[n:{quote(label)}]->()"
    value = f"n.{quote(key)}"
    return f"MATCH {element} WHERE typeOf({value}) = 'List' OR {untrimmed_condition(value)} RETURN 1 LIMIT 1"


async def with_clean_keys(schema: Schema, text: str, read: ReadRows) -> Schema:
    """`schema` with `clean` holding the indexed properties `text` compares that store no value
    the index mis-finds; probed only when knowing it changes how `text` runs."""
    named = mentioned(text, schema)
    if not named or analyse(text, schema) == analyse(text, replace(schema, clean=frozenset(named))):
        return schema
    params = {WHITESPACE_PARAM: list(WHITESPACE)}
    clean = [key for key in sorted(named) if not await read(probe(*key), params)]
    return replace(schema, clean=frozenset(clean))
