"""The embedded database's indexes and constraints in Neo4j's shape, with Neo4j's names.

FalkorDB indexes have no names: they are (label, property) fields of a kind (RANGE, FULLTEXT,
VECTOR), and constraints are (kind, label, properties). Neo4j tools create, list and drop them by
name, so the names given in `CREATE INDEX name ...` are kept in a small JSON file (`NameStore`)
with the definition they were given for. Listing matches definitions against what FalkorDB
reports: a named definition is listed under its name while FalkorDB still backs it; whatever
else FalkorDB has gets a stable generated name (`index_1a2b3c4d`), as Neo4j names unnamed indexes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from extensions.registry import GraphContext
from core.errors import CypherError

from .dbms import neo4j_cypher

#: FalkorDB's index fields and constraints (named constants, read through the client's runner).
INDEXES = ("CALL db.indexes() YIELD label, properties, types, options, entitytype, status "
           "RETURN label, properties, types, options, entitytype, status")
#: How FalkorDB's `status` reads while an index is still being filled (queries do not use it yet).
UNDER_CONSTRUCTION = "UNDER CONSTRUCTION"
CONSTRAINTS = ("CALL db.constraints() YIELD type, label, properties, entitytype, status "
               "RETURN type, label, properties, entitytype, status")

#: Neo4j constraint type names by (kind, entity).
CONSTRAINT_TYPES = {("UNIQUE", "NODE"): "UNIQUENESS", ("UNIQUE", "RELATIONSHIP"): "RELATIONSHIP_UNIQUENESS",
                    ("KEY", "NODE"): "NODE_KEY", ("KEY", "RELATIONSHIP"): "RELATIONSHIP_KEY",
                    ("NOT NULL", "NODE"): "NODE_PROPERTY_EXISTENCE",
                    ("NOT NULL", "RELATIONSHIP"): "RELATIONSHIP_PROPERTY_EXISTENCE"}
#: FalkorDB field kind each Neo4j index kind is stored as.
FIELD_KIND = {"RANGE": "RANGE", "TEXT": "RANGE", "POINT": "RANGE", "VECTOR": "VECTOR", "FULLTEXT": "FULLTEXT"}


@dataclass(frozen=True)
class Definition:
    """An index or constraint as Neo4j defines it. what: 'INDEX' or 'CONSTRAINT'; kind: the
    index kind (RANGE, TEXT, POINT, VECTOR, FULLTEXT) or constraint kind (UNIQUE, KEY, NOT NULL);
    entity: 'NODE' or 'RELATIONSHIP'."""

    what: str
    kind: str
    entity: str
    labels: tuple[str, ...]
    properties: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "kind": self.kind, "entity": self.entity, "labels": list(self.labels),
                "properties": list(self.properties), "options": self.options}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Definition:
        return cls(data["what"], data["kind"], data["entity"], tuple(data["labels"]),
                   tuple(data["properties"]), data.get("options") or {})

    def generated_name(self) -> str:
        """A stable name for an unnamed definition, like Neo4j's `index_343aff4e`."""
        digest = hashlib.sha1(repr((self.kind, self.entity, self.labels, self.properties)).encode()).hexdigest()
        return f"{self.what.lower()}_{digest[:8]}"

    def fields(self) -> set[tuple[str, str, str, str]]:
        """The FalkorDB index fields (kind, entity, label, property) this definition needs."""
        if self.what == "INDEX":
            return {(FIELD_KIND[self.kind], self.entity, label, prop)
                    for label in self.labels for prop in self.properties}
        if self.kind in ("UNIQUE", "KEY"):          # FalkorDB backs uniqueness with range fields
            return {("RANGE", self.entity, self.labels[0], prop) for prop in self.properties}
        return set()

    def constraints(self) -> set[tuple[str, str, str, tuple[str, ...]]]:
        """The FalkorDB constraints (type, entity, label, properties) this definition needs.
        Existence (NOT NULL, and KEY's) is not one: FalkorDB checks its MANDATORY constraint at
        every operation, so `MERGE (t:T {id: 7}) ON CREATE SET t += $props` and `CREATE (t:T)
        SET t.title = ...` fail; the proxy checks existence when the statement ends, as Neo4j
        does at commit (`existence()`, extensions/planner/existence.py)."""
        if self.what != "CONSTRAINT" or self.kind not in ("UNIQUE", "KEY"):
            return set()
        # sorted: FalkorDB lists a composite constraint's properties in its own (attribute id) order
        return {("UNIQUE", self.entity, self.labels[0], tuple(sorted(self.properties)))}

    def existence(self) -> set[tuple[str, str, str]]:
        """(entity, label, property) for each property this constraint requires to exist."""
        if self.what != "CONSTRAINT" or self.kind not in ("KEY", "NOT NULL"):
            return set()
        return {(self.entity, self.labels[0], p) for p in self.properties}


class NameStore:
    """Names given to indexes and constraints, per database, in one JSON file."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._existence: dict[str, tuple[int, tuple]] = {}
        self._strings: dict[str, tuple[int, Any]] = {}

    def load(self, database: str) -> dict[str, Definition]:
        return {name: Definition.from_json(d) for name, d in self._read().get(database, {}).items()}

    def existence(self, database: str) -> tuple[tuple[str, str, str, str], ...]:
        """(name, entity, label, property) of every existence constraint of `database`, sorted;
        read again only when the file changed (every write statement asks)."""
        try:
            stamp = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            return ()
        cached = self._existence.get(database)
        if cached is None or cached[0] != stamp:
            found = tuple(sorted((name, *e) for name, d in self.load(database).items() for e in d.existence()))
            self._existence[database] = cached = (stamp, found)
        return cached[1]

    def string_index_schema(self, database: str):
        """The range-indexed and uniquely constrained properties of `database`
        (`extensions.trimmed_index.Schema`); read again only when the file changed."""
        from extensions.trimmed_index import Schema
        try:
            stamp = self.path.stat().st_mtime_ns
        except FileNotFoundError:
            return Schema()
        cached = self._strings.get(database)
        if cached is None or cached[0] != stamp:
            definitions = self.load(database).values()
            ranged = {(e, label, p) for d in definitions for kind, e, label, p in d.fields() if kind == "RANGE"}
            unique = {(d.entity, d.labels[0], p) for d in definitions if d.constraints() for p in d.properties}
            self._strings[database] = cached = (stamp, Schema(frozenset(ranged), frozenset(unique)))
        return cached[1]

    def put(self, database: str, name: str, definition: Definition | None) -> None:
        """Record `name` for `definition` (None: forget the name)."""
        with self._lock:
            data = self._read()
            names = data.setdefault(database, {})
            if definition is None:
                names.pop(name, None)
            else:
                names[name] = definition.to_json()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".names-")
            with os.fdopen(fd, "w") as out:
                json.dump(data, out, indent=1, sort_keys=True, default=str)
            os.replace(tmp, self.path)

    def _read(self) -> dict[str, Any]:
        try:
            return json.loads(self.path.read_text())
        except FileNotFoundError:
            return {}


@dataclass(frozen=True)
class Entry:
    """One listed index or constraint: its name, definition and FalkorDB state."""

    name: str
    definition: Definition
    state: str = "ONLINE"
    #: For an index backing a uniqueness constraint: the constraint's name (and vice versa).
    owner: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


@dataclass
class Catalog:
    indexes: list[Entry]
    constraints: list[Entry]

    def find(self, name: str, what: str = "INDEX") -> Entry | None:
        """The entry called `name`; a constraint's backing index has its name, so `what` says
        which of the two comes first."""
        entries = self.indexes + self.constraints if what == "INDEX" else self.constraints + self.indexes
        return next((e for e in entries if e.name == name), None)

    def equivalent(self, definition: Definition) -> Entry | None:
        entries = self.indexes if definition.what == "INDEX" else self.constraints
        return next((e for e in entries if e.definition == definition), None)


async def await_indexes(graph: GraphContext, timeout: float) -> None:
    """Wait until FalkorDB has filled every index (it fills a new one in the background, and
    queries do not use it until then): Neo4j's `db.awaitIndexes`."""
    deadline = time.monotonic() + timeout
    while any(UNDER_CONSTRUCTION in (row[5] or "") for row in await graph.read(INDEXES, {})):
        if time.monotonic() > deadline:
            raise CypherError("Neo.ClientError.Procedure.ProcedureCallFailed",
                              f"Indexes were still being populated after {timeout:g} s; "
                              "SHOW INDEXES lists them as POPULATING.")
        await asyncio.sleep(0.02)


#: Neo4j's own listings (behind a Neo4j without APOC, for the apoc.meta and apoc.schema shims).
NEO4J_INDEXES = ("SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state, owningConstraint "
                 "WHERE labelsOrTypes IS NOT NULL RETURN name, type, entityType, labelsOrTypes, properties, state, "
                 "owningConstraint")
NEO4J_CONSTRAINTS = ("SHOW CONSTRAINTS YIELD name, type, entityType, labelsOrTypes, properties "
                     "RETURN name, type, entityType, labelsOrTypes, properties")
_NEO4J_CONSTRAINT_KINDS = {t: kind for (kind, _), t in CONSTRAINT_TYPES.items()}


async def read_catalog(graph: GraphContext, names: NameStore) -> Catalog:
    """What FalkorDB has, named: stored names where FalkorDB still backs them, generated ones else.
    Behind a Neo4j, what it lists itself."""
    if neo4j_cypher(graph.dialect):
        return await _neo4j_catalog(graph)
    fields: dict[tuple, dict] = {}
    populating: set[tuple] = set()
    for row in await graph.read(INDEXES, {}):
        label, properties, types, options, entity, status = (row[k] for k in range(6))
        for prop in properties:
            for kind in types.get(prop, ()):
                fields[(kind, entity, label, prop)] = options.get(prop) or {}
                if UNDER_CONSTRUCTION in (status or ""):
                    populating.add((kind, entity, label, prop))
    constraints = {(row[0], row[3], row[1], tuple(sorted(row[2]))): row[4]
                   for row in await graph.read(CONSTRAINTS, {})}
    named = [(name, d) for name, d in names.load(graph.database).items()
             if d.fields() <= set(fields) and d.constraints() <= set(constraints) or pending_vector_index(d)]
    covered = set().union(*(d.fields() for _, d in named)) if named else set()
    held = set().union(*(d.constraints() for _, d in named)) if named else set()
    index_entries: list[Entry] = []
    constraint_entries: list[Entry] = []
    for name, d in named:
        if d.what == "INDEX":
            state = "POPULATING" if d.fields() & populating else "ONLINE"
            index_entries.append(Entry(name, d, state, options=_index_options(d, fields)))
        else:
            state = "FAILED" if any(constraints[c] == "FAILED" for c in d.constraints()) else "ONLINE"
            constraint_entries.append(Entry(name, d, state, owner=name if d.fields() else None))
            if d.fields():
                index = Definition("INDEX", "RANGE", d.entity, d.labels, d.properties)
                index_entries.append(Entry(name, index, owner=name))
    for (kind, entity, label, properties), status in sorted(constraints.items()):
        if (kind, entity, label, properties) in held:
            continue
        d = Definition("CONSTRAINT", "UNIQUE" if kind == "UNIQUE" else "NOT NULL", entity, (label,), properties)
        name = d.generated_name()
        constraint_entries.append(Entry(name, d, "FAILED" if status == "FAILED" else "ONLINE",
                                        owner=name if kind == "UNIQUE" else None))
        if kind == "UNIQUE":
            covered |= d.fields()
            index_entries.append(Entry(name, Definition("INDEX", "RANGE", entity, (label,), properties), owner=name))
    index_entries += _unnamed_indexes(fields, covered, populating)
    return Catalog(sorted(index_entries, key=lambda e: e.name), sorted(constraint_entries, key=lambda e: e.name))


def pending_vector_index(d: Definition) -> bool:
    """A vector index named before any vector gave its dimensions (schema_commands)."""
    return d.kind == "VECTOR" and d.what == "INDEX" and d.options.get("dimension", 0) is None


def _unnamed_indexes(fields: dict[tuple, dict], covered: set, populating: set) -> list[Entry]:
    """FalkorDB fields no name covers: one range/vector index per field, one fulltext per label."""
    fulltext: dict[tuple[str, str], list[str]] = {}
    entries = []
    for (kind, entity, label, prop) in sorted(fields):
        if (kind, entity, label, prop) in covered:
            continue
        if kind == "FULLTEXT":
            fulltext.setdefault((entity, label), []).append(prop)
            continue
        d = Definition("INDEX", kind, entity, (label,), (prop,))
        state = "POPULATING" if (kind, entity, label, prop) in populating else "ONLINE"
        entries.append(Entry(d.generated_name(), d, state, options=_index_options(d, fields)))
    for (entity, label), props in fulltext.items():
        d = Definition("INDEX", "FULLTEXT", entity, (label,), tuple(props))
        state = "POPULATING" if d.fields() & populating else "ONLINE"
        entries.append(Entry(d.generated_name(), d, state))
    return entries


async def _neo4j_catalog(graph: GraphContext) -> Catalog:
    indexes = [Entry(name, Definition("INDEX", kind, entity, tuple(labels), tuple(properties)), state, owner)
               for name, kind, entity, labels, properties, state, owner in await graph.read(NEO4J_INDEXES, {})]
    constraints = [Entry(name, Definition("CONSTRAINT", _NEO4J_CONSTRAINT_KINDS.get(kind, kind), entity,
                                          tuple(labels), tuple(properties)))
                   for name, kind, entity, labels, properties in await graph.read(NEO4J_CONSTRAINTS, {})]
    return Catalog(indexes, constraints)


def _index_options(d: Definition, fields: dict[tuple, dict]) -> dict[str, Any]:
    """Neo4j's `options` of an index: provider and, for vector indexes, the vector config."""
    if d.kind != "VECTOR":
        provider = {"FULLTEXT": "fulltext-1.0", "TEXT": "text-2.0", "POINT": "point-1.0"}.get(d.kind, "range-1.0")
        return {"indexProvider": provider, "indexConfig": {}}
    native = fields.get(("VECTOR", d.entity, d.labels[0], d.properties[0]), {})
    return {"indexProvider": "vector-2.0",
            "indexConfig": {"vector.dimensions": native.get("dimension"),
                            "vector.similarity_function": str(native.get("similarityFunction", "cosine")).upper()}}
