"""`text_score(n, 'property', 'query text')`: how relevant a node's text is to a query.

The score is `0.5 * cosine(text, query) + 0.5 * BM25(text, query)` (BM25 normalised to
[0, 1), see lexical.py), so it lies in [-0.5, 1): the cosine carries meaning ("falling crude
output" is about "oil production decline", a football match is not), BM25 carries rare shared
words such as field names.

`prepare` (on the event loop) makes sure the store's index of every (label, property) the
rows touch matches the current graph; `evaluate` then scores each distinct (index, query)
pair with one matrix-vector product over all the label's texts and picks the rows' values
out of it, so `ORDER BY text_score(...) DESC LIMIT k` over a whole label costs one product,
not one evaluation per node.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from neo4j.spatial import Point
from neo4j.time import Date, DateTime, Duration, Time

from extensions.cypher.render import name as quote_name
from extensions.registry import ArgKind, Extension, GraphContext, NodeRef
from proxy.errors import argument_error

from .store import TextIndex, TextStore

SIGNATURE = "text_score(node, 'property', 'query text')"
_SAMPLE = 1000          # nodes read to list a label's text properties in an error

# Cypher type names (as valueType() spells them), most specific first.
_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "BOOLEAN"), (int, "INTEGER"), (float, "FLOAT"), (bytes, "BYTE ARRAY"),
    (list, "LIST"), (dict, "MAP"), (Point, "POINT"), ((DateTime, dt.datetime), "DATETIME"),
    ((Date, dt.date), "DATE"), ((Time, dt.time), "TIME"), ((Duration, dt.timedelta), "DURATION"),
)


def type_name(value: Any) -> str:
    """The Cypher name of a value's type, for error messages."""
    for types, name in _TYPE_NAMES:
        if isinstance(value, types):
            return name
    return type(value).__name__.upper()


@dataclass(frozen=True)
class UnknownProperty:
    """No node of `label` has `key`: evaluating raises an error listing its text properties."""

    label: str
    key: str
    text_properties: tuple[str, ...]

    def error(self):
        known = ", ".join(self.text_properties) or "none"
        return argument_error(
            f"Unknown text property '{self.key}' on {self.label}: no {self.label} node has it. "
            f"Text properties of {self.label}: {known}. Usage: {SIGNATURE}")


class _TextScore:
    """The evaluator: `prepare` resolves indexes (async), `evaluate` scores (pure numpy)."""

    def __init__(self, store: TextStore):
        self.store = store

    async def prepare(self, graph: GraphContext, rows: Sequence[tuple]) -> dict:
        """{(node labels, property): TextIndex | UnknownProperty} for every row that needs one."""
        needed: dict[tuple[tuple[str, ...], str], NodeRef] = {}
        for row in rows:
            node, key, query = _checked(row)
            if key is not None and query is not None:
                needed.setdefault((node.labels, key), node)
        return {(labels, key): await self._resolve(graph, node, key)
                for (labels, key), node in needed.items()}

    async def _resolve(self, graph: GraphContext, node: NodeRef, key: str) -> TextIndex | UnknownProperty:
        """The index of the node's first label whose nodes have `key` at all."""
        if not node.labels:
            raise argument_error(f"text_score() needs a node with a label (texts are indexed per label); "
                                 f"node {node.element_id} has none.")
        for label in node.labels:
            index = await self.store.index(graph, label, key)
            if len(index.ids) or index.others:
                return index
        label = node.labels[0]
        sample = await graph.read(f"MATCH (n:{quote_name(label)}) RETURN properties(n) LIMIT {_SAMPLE}", {})
        names = sorted({k for (props,) in sample for k, v in (props or {}).items() if isinstance(v, str)})
        return UnknownProperty(label, key, tuple(names))

    def evaluate(self, rows: Sequence[tuple], prepared: dict) -> list:
        values: list = [None] * len(rows)
        groups: dict[tuple[tuple[str, ...], str, str], list[int]] = defaultdict(list)
        for i, (node, key, query) in enumerate(rows):
            if key is not None and query is not None:
                groups[(node.labels, key, query)].append(i)
        queries = self.store.queries([query for _, _, query in groups])
        for (labels, key, query), members in groups.items():
            index = prepared[(labels, key)]
            if isinstance(index, UnknownProperty):
                raise index.error()
            node_ids = np.fromiter((rows[i][0].id for i in members), dtype=np.int64, count=len(members))
            found = index.positions(node_ids)
            _check_strings(index, node_ids[found < 0])
            scores = index.scores(*queries[query])[found].tolist()
            for i, at, score in zip(members, found.tolist(), scores):
                values[i] = score if at >= 0 else None
        return values


def _checked(row: tuple) -> tuple[NodeRef, str | None, str | None]:
    node, key, query = row
    if key is not None and not isinstance(key, str):
        raise argument_error(f"The second argument of text_score() is the property name, a STRING; "
                             f"got {type_name(key)} {key!r}. Usage: {SIGNATURE}")
    if query is not None and not isinstance(query, str):
        raise argument_error(f"The third argument of text_score() is the query text, a STRING; "
                             f"got {type_name(query)} {query!r}. Usage: {SIGNATURE}")
    return node, key, query


def _check_strings(index: TextIndex, node_ids: np.ndarray) -> None:
    """Raise for the first node whose value is not a string (nodes without the property are null)."""
    for node_id in node_ids.tolist():
        if node_id in index.others:
            value = index.others[node_id]
            raise argument_error(
                f"text_score() scores STRING properties; {index.label}.{index.key} is "
                f"{type_name(value)} on node {node_id} ({value!r:.60}).")


def text_extensions(store: TextStore) -> list[Extension]:
    """The `text_score` extension over `store`."""
    evaluator = _TextScore(store)
    return [Extension(name="text_score", arg_kinds=(ArgKind.NODE, ArgKind.VALUE, ArgKind.VALUE), min_args=3,
                      evaluate=evaluator.evaluate, prepare=evaluator.prepare, signature=SIGNATURE)]
