"""`text_score(n, 'property', 'query text')`: how relevant a node's (or relationship's) text is
to a query; `text_score(text, 'query text')` for any string expression.

The score is `0.5 * cosine(text, query) + 0.5 * BM25(text, query)` (BM25 normalised to
[0, 1), see lexical.py), so it lies in [-0.5, 1): the cosine carries meaning ("falling crude
output" is about "oil production decline", a football match is not), BM25 carries rare shared
words such as field names.

`prepare` (on the event loop) makes sure the store's index of every (label or type, property)
the rows touch matches the current graph; `evaluate` then scores each distinct (index, query)
pair with one matrix-vector product over all the label's texts and picks the rows' values
out of it, so `ORDER BY text_score(...) DESC LIMIT k` over a whole label costs one product,
not one evaluation per node.

A text the query computes (`n.description + ' ' + n.name`) belongs to no stored corpus: it is
embedded per distinct text (cached by its hash) and its BM25 is its own corpus's
(`BM25.own_corpus_scores`), so its score depends on the text and the query only, never on which
other rows a clause happens to see. The planner binds such a call by the node's id when the
text is computed from one node, so the texts travel once (probe) and are cached with the rows.
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
from extensions.registry import ArgKind, Extension, GraphContext, NodeRef, RelationshipRef
from core.errors import argument_error

from .store import TextIndex, TextStore

SIGNATURE = "text_score(node|rel, 'property', 'query text')"
#: What errors teach: both forms (describe() shows SIGNATURE, and the text form per type's texts).
USAGE = f"{SIGNATURE} or text_score(text, 'query text')"
_SAMPLE = 1000          # nodes read to list a label's text properties in an error

# Cypher type names (as valueType() spells them), most specific first.
_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (bool, "BOOLEAN"), (str, "STRING"), (int, "INTEGER"), (float, "FLOAT"), (bytes, "BYTE ARRAY"),
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
    """No node of `label` (relationship of that type) has `key`: evaluating raises an error
    listing its text properties."""

    label: str
    key: str
    text_properties: tuple[str, ...]
    entity: str = "node"

    def error(self):
        known = ", ".join(self.text_properties) or "none"
        return argument_error(
            f"Unknown text property '{self.key}' on {self.label}: no {self.label} {self.entity} has it. "
            f"Text properties of {self.label}: {known}. Usage: {USAGE}")


Entity = NodeRef | RelationshipRef
#: Which texts an entity's score reads: (relationship?, its labels or (type,)).
Owner = tuple[bool, tuple[str, ...]]


def _owner(entity: Entity) -> Owner:
    if isinstance(entity, RelationshipRef):
        return True, (entity.type,)
    return False, entity.labels


class _TextScore:
    """The evaluator: `prepare` resolves indexes (async), `evaluate` scores (pure numpy)."""

    def __init__(self, store: TextStore):
        self.store = store

    async def prepare(self, graph: GraphContext, rows: Sequence[tuple]) -> dict:
        """{(owner, property): TextIndex | UnknownProperty} for every stored-text row."""
        needed: dict[tuple[Owner, str], Entity] = {}
        for row in rows:
            if len(row) == 3:
                entity, key, query = _checked_stored(row)
                if key is not None and query is not None:
                    needed.setdefault((_owner(entity), key), entity)
        return {(owner, key): await self._resolve(graph, entity, key)
                for (owner, key), entity in needed.items()}

    async def _resolve(self, graph: GraphContext, entity: Entity, key: str) -> TextIndex | UnknownProperty:
        """The index of the node's first label whose nodes have `key` at all (a relationship's type)."""
        relationship, labels = _owner(entity)
        if not labels:
            raise argument_error(f"text_score() needs a node with a label (texts are indexed per label); "
                                 f"node {entity.element_id} has none.")
        for label in labels:
            index = await self.store.index(graph, label, key, relationship)
            if len(index.ids) or index.others:
                return index
        label = labels[0]
        pattern = f"()-[n:{quote_name(label)}]->()" if relationship else f"(n:{quote_name(label)})"
        sample = await graph.read(f"MATCH {pattern} RETURN properties(n) LIMIT {_SAMPLE}", {})
        names = sorted({k for (props,) in sample for k, v in (props or {}).items() if isinstance(v, str)})
        return UnknownProperty(label, key, tuple(names), "relationship" if relationship else "node")

    async def score_nodes(self, graph: GraphContext, groups: list[tuple[Sequence[str], np.ndarray]],
                          key: Any, query: Any) -> list[np.ndarray]:
        """text_score(n, key, query) of many nodes at once, per (labels, node ids) group (NaN: null):
        one product over each label's cached texts, for a query that keeps only the top rows."""
        samples = [(NodeRef(int(ids[0]), str(ids[0]), tuple(labels)), key, query) for labels, ids in groups if len(ids)]
        prepared = await self.prepare(graph, samples)
        if key is None or query is None:
            return [np.full(len(ids), np.nan) for _, ids in groups]
        vector, tokens = self.store.queries([query])[query]
        scored = []
        for labels, ids in groups:
            index = prepared.get(((False, tuple(labels)), key))
            if index is None:                 # an empty group
                scored.append(np.full(0, np.nan))
                continue
            if isinstance(index, UnknownProperty):
                raise index.error()
            found = index.positions(ids)
            _check_strings(index, ids[found < 0])
            scores = index.scores(vector, tokens) if len(index.ids) else np.full(1, np.nan)
            scored.append(np.where(found >= 0, scores[found], np.nan))
        return scored

    def evaluate(self, rows: Sequence[tuple], prepared: dict) -> list:
        values: list = [None] * len(rows)
        stored: list[int] = []
        free: list[int] = []
        for i, row in enumerate(rows):
            (stored if len(row) == 3 else free).append(i)
        self._score_stored(rows, stored, prepared, values)
        self._score_free(rows, free, values)
        return values

    def _score_stored(self, rows: Sequence[tuple], members: list[int], prepared: dict, values: list) -> None:
        """text_score(entity, key, query): per (index, query), one product over the index."""
        groups: dict[tuple[Owner, str, str], list[int]] = defaultdict(list)
        for i in members:
            entity, key, query = rows[i]
            if key is not None and query is not None:
                groups[(_owner(entity), key, query)].append(i)
        queries = self.store.queries([query for _, _, query in groups])
        for (owner, key, query), group in groups.items():
            index = prepared[(owner, key)]
            if isinstance(index, UnknownProperty):
                raise index.error()
            ids = np.fromiter((rows[i][0].id for i in group), dtype=np.int64, count=len(group))
            found = index.positions(ids)
            _check_strings(index, ids[found < 0])
            scores = index.scores(*queries[query])[found].tolist()
            for i, at, score in zip(group, found.tolist(), scores):
                values[i] = score if at >= 0 else None

    def _score_free(self, rows: Sequence[tuple], members: list[int], values: list) -> None:
        """text_score(text, query): each distinct text embedded once, scored alone."""
        groups: dict[str, list[int]] = defaultdict(list)
        for i in members:
            text, query = rows[i]
            if type(text) is not str or type(query) is not str:        # else nothing to check
                text, query = _checked_free(rows[i])
                if text is None or query is None:
                    continue
            groups[query].append(i)
        if not groups:
            return
        corpus = self.store.free_corpus(list(dict.fromkeys(rows[i][0] for group in groups.values() for i in group)))
        queries = self.store.queries(list(groups))
        for query, group in groups.items():
            scores = corpus.scores(*queries[query]).tolist()
            for i in group:
                values[i] = scores[corpus.rows[rows[i][0]]]


def _checked_stored(row: tuple) -> tuple[Entity, str | None, str | None]:
    entity, key, query = row
    if not isinstance(entity, (NodeRef, RelationshipRef)):
        raise argument_error(f"With three arguments, the first argument of text_score() is a node or a "
                             f"relationship; got {type_name(entity)} {entity!r:.60}. Usage: {USAGE}")
    if key is not None and not isinstance(key, str):
        raise argument_error(f"The second argument of text_score() is the property name, a STRING; "
                             f"got {type_name(key)} {key!r}. Usage: {USAGE}")
    _check_query(query, "third")
    return entity, key, query


def _checked_free(row: tuple) -> tuple[str | None, str | None]:
    text, query = row
    if isinstance(text, (NodeRef, RelationshipRef)):
        raise argument_error(f"text_score() of a node or relationship needs the property to score: "
                             f"text_score(n, 'property', 'query text'). Usage: {USAGE}")
    if text is not None and not isinstance(text, str):
        raise argument_error(f"With two arguments, the first argument of text_score() is the text, a STRING; "
                             f"got {type_name(text)} {text!r:.60}. Usage: {USAGE}")
    _check_query(query, "second")
    return text, query


def _check_query(query: Any, position: str) -> None:
    if query is not None and not isinstance(query, str):
        raise argument_error(f"The {position} argument of text_score() is the query text, a STRING; "
                             f"got {type_name(query)} {query!r}. Usage: {USAGE}")


def _check_strings(index: TextIndex, ids: np.ndarray) -> None:
    """Raise for the first entity whose value is not a string (those without the property are null)."""
    for entity_id in ids.tolist():
        if entity_id in index.others:
            value = index.others[entity_id]
            raise argument_error(
                f"text_score() scores STRING properties; {index.label}.{index.key} is "
                f"{type_name(value)} on {index.entity} {entity_id} ({value!r:.60}).")


def text_extensions(store: TextStore) -> list[Extension]:
    """The `text_score` extension over `store`."""
    evaluator = _TextScore(store)
    return [Extension(name="text_score", arg_kinds=(ArgKind.ENTITY_OR_VALUE, ArgKind.VALUE, ArgKind.VALUE), min_args=2,
                      evaluate=evaluator.evaluate, prepare=evaluator.prepare, signature=SIGNATURE,
                      score_nodes=evaluator.score_nodes)]
