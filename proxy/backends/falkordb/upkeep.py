"""Bookkeeping FalkorDB 4.16 gets wrong around writes, and what the proxy does about it.

Its bugs corrupt the graph from sequences of valid writes (found by the long fuzz and by
applications keeping unique constraints, reduced by replaying what the servers received;
tests/integration/test_falkordb_upkeep.py, test_constraint_crashes.py):

| bug | effect | what the proxy does |
|---|---|---|
| a label's matrix grows only when that label is used, while deleting a node clears it with a mask the size of the node table (fixed upstream in 4.20, #2104) | once the graph passed ~16k nodes, deleting nodes whose labels had not been used since leaves them in those labels' scans: `MATCH (n:L)` then returns deleted nodes, and reading or deleting one segfaults the server, again after every restart | before a statement that deletes, if nodes may have been created since the last time, one write creates and deletes a node carrying every label (`touch_query`): each label's matrix grows to the node table, on the primary and, through its effects, on the replica |
| a write that fails or changes nothing can still add a label, type or property name, and its effects (replication, append-only file) do not carry it | the replica files the next new name under another id: it reads properties back wrong, fails with "undefined attribute" or crashes, and so does the primary when it replays its own files | when a write's text or parameters hold a name the primary may not have yet (`written_names`), the proxy reads the primary's names before it and, if the write failed or changed nothing, again after it; if they grew, the replica re-syncs in full, at once or after the transaction holding it (`ServerPair.heal_lost_names`) |
| a MERGE of a relationship whose type the graph has never had drops the rows after the one that created it: under `UNWIND [1, 1] AS x`, `MERGE (a)-[r:T]->(b) RETURN x, id(r)` gives one row, two once `T` exists (measured on 4.16.3; TCK Merge5[14]) | rows missing from the answer without an error (the writes are right) | before a write whose MERGE names a relationship type the primary does not have (`Effects.merged_types`, extensions/cypher/effects.py), one write creates and deletes a relationship of each such type between two unlabelled nodes (`register_types_query`), so that the MERGE finds its type in the schema |
| a label whose range index has one field is loaded (a start from files, a replica's full sync) with its index missing every node whose value is numeric zero (0, 0.0, false), and values written later too; measured on 4.16.3 | `MATCH (n:L) WHERE n.k = 0` misses them; a unique constraint on that property looks up a violating write's node, finds nothing and dereferences NULL (`EnforceUniqueEntity`): the primary segfaulted, and again on every retry; a replica applying `GRAPH.CONSTRAINT CREATE` did too, and so did a replica whose full sync's snapshot fell while a rebuilt (or new) unique constraint was still being built on the primary: only active constraints are saved, so it loaded the index broken without the constraint, then enforced the one the primary's indexer re-issues once active (the long fuzz: ~1 input in 4,000, after a rollback) | after every load, before anything relies on the loaded server (start, a hold, an auto-commit write, a constraint command), those indexes are rebuilt on the primary (`rebuild_commands`), their unique constraints dropped and re-created around them; the replica rebuilds its own from the same commands, which reach it in its stream: the rebuild waits until the replica has finished any full sync, and a full sync starts only once the primary has built its indexes and constraints (`PairRecovery.rebuild_loaded_indexes`, `_resync_fresh`) |
"""

from __future__ import annotations

import secrets
from typing import Any, Iterable, Iterator

from proxy.backends.falkordb.guards import TOKENS

#: A longer write text (or parameters with more items) is not scanned for names: the primary's
#: names are read before the write and compared after it, as for a write naming a new one.
MAX_SCANNED_CHARS = 65_536
MAX_SCANNED_ITEMS = 10_000
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_SKIPPED = frozenset(("comment", "param", "number"))


def written_names(text: str, params: dict[str, Any] | None) -> set[str] | None:
    """The labels, types and property keys a write may add: names after `:` (outside a map),
    `|` (between types) and `.`, map keys, the keys of parameter maps, and the strings passed to
    a procedure (`db.idx.fulltext.createNodeIndex('L', 'p')`). More than it adds (a function's
    namespace, a list comprehension's variable), never less; None when it cannot tell
    (LOAD CSV takes its keys from a file; too long to scan)."""
    if len(text) > MAX_SCANNED_CHARS:
        return None
    names: set[str] = set()
    budget = [MAX_SCANNED_ITEMS]
    if not all(_parameter_keys(value, names, budget) for value in (params or {}).values()):
        return None
    lexemes = list(_lexemes(text))
    words = {value.upper() for kind, value in lexemes if kind == "word"}
    if "LOAD" in words:
        return None
    calls = "CALL" in words
    brackets: list[str] = []
    previous, type_list = "", False            # the last lexeme that was code; inside `:A|B`
    for i, (kind, value) in enumerate(lexemes):        # (comments, parameters, numbers left out)
        if kind == "string":
            if calls:
                names.add(value[1:-1])
            previous = "string"
            continue
        if kind == "mark":
            if value in _OPENERS:
                brackets.append(value)
            elif brackets and value == _OPENERS[brackets[-1]]:
                brackets.pop()
            type_list = type_list and value == "|"
            previous = value
            continue
        in_map = bool(brackets) and brackets[-1] == "{"
        following = lexemes[i + 1][1] if i + 1 < len(lexemes) else ""
        label = previous == ":" and not in_map
        if label or previous in (".", "..") or (previous == "|" and type_list) or (in_map and following == ":"):
            names.add(value)
        type_list = label or (previous == "|" and type_list)
        previous = "name"
    return names


def _lexemes(text: str) -> Iterator[tuple[str, str]]:
    """(kind, text) of each lexeme that matters here (`falkordb.guards.TOKENS`): a string, a
    quoted name (its text, without backticks), a word, or a mark (any other symbol)."""
    for match in TOKENS.finditer(text):
        kind = match.lastgroup
        if kind is None or kind in _SKIPPED:
            continue
        value = match.group(kind)
        if kind == "string" and value.startswith("`"):
            yield "quoted", value[1:-1] if len(value) > 1 and value.endswith("`") else value[1:]
        elif kind in ("string", "word"):
            yield kind, value
        else:
            yield "mark", value


def _parameter_keys(value: Any, names: set[str], budget: list[int]) -> bool:
    """Add every map key inside `value`; False once `budget` items are spent."""
    if isinstance(value, dict):
        budget[0] -= len(value)
        if budget[0] < 0:
            return False
        names.update(k for k in value if isinstance(k, str))
        return all(_parameter_keys(v, names, budget) for v in value.values())
    if isinstance(value, (list, tuple)):
        budget[0] -= len(value)
        return budget[0] >= 0 and all(_parameter_keys(v, names, budget) for v in value
                                      if isinstance(v, (dict, list, tuple)))
    return True


#: The node properties that a constraint requires (a node with these labels must have them).
CONSTRAINED_KEYS = ("CALL db.constraints() YIELD properties, entitytype WHERE entitytype = 'NODE' "
                    "UNWIND properties AS key RETURN DISTINCT key")


#: The value every property of a touch node starts with: how `sweep_query` knows one.
TOUCH_MARK = "cypher-proxy:"


def touch_query(labels: Iterable[str], constrained_keys: Iterable[str], property_keys: Iterable[str]) -> str | None:
    """A write that grows every label's matrix to the node table, on both servers: one node with
    every label, deleted in the same statement. It carries the properties that constraints
    require, with a value no other node has (UNIQUE), or else one existing property, so that a
    node a crash could leave behind is recognised at start (`sweep_query`); a name with a
    backtick cannot be written (FalkorDB has no escape for it), and so cannot be on a node
    either. None: no labels."""
    labels = [label for label in labels if "`" not in label]
    if not labels:
        return None
    keys = [key for key in constrained_keys if "`" not in key]
    keys = keys or [key for key in property_keys if "`" not in key][:1]
    value = f"{TOUCH_MARK}{secrets.token_hex(8)}"
    properties = " {" + ", ".join(f"`{key}`: '{value}'" for key in keys) + "}" if keys else ""
    return f"CREATE (t{_labels(labels)}{properties}) DELETE t"


def register_types_query(types: Iterable[str]) -> str | None:
    """A write that leaves each of `types` in the graph's schema: a relationship of each between
    two unlabelled nodes, all deleted in the same statement. None: nothing it can write (a name
    with a backtick cannot be written, FalkorDB has no escape for it)."""
    types = sorted(t for t in types if "`" not in t)
    if not types:
        return None
    paths = ", ".join(f"(a{i})-[r{i}:`{t}`]->(b{i})" for i, t in enumerate(types))
    created = ", ".join(f"r{i}, a{i}, b{i}" for i in range(len(types)))
    return f"CREATE {paths} DELETE {created}"


def sweep_query(labels: Iterable[str]) -> str | None:
    """Deletes what a touch node left by a crash would be: a node with every label whose
    properties are all touch marks (a client's node never has one). None: no labels."""
    labels = [label for label in labels if "`" not in label]
    if not labels:
        return None
    return (f"MATCH (t{_labels(labels)}) WITH t, [k IN keys(t) | t[k]] AS values WHERE size(values) > 0 "
            f"AND all(v IN values WHERE typeOf(v) = 'String' AND v STARTS WITH '{TOUCH_MARK}') DETACH DELETE t")


def _labels(labels: list[str]) -> str:
    return "".join(f":`{label}`" for label in labels)


#: Labels whose range index has exactly one field, and that field (what a load leaves broken).
SINGLE_FIELD_INDEXES = ("CALL db.indexes() YIELD label, properties, types, entitytype WHERE entitytype = 'NODE' "
                        "WITH label, [p IN properties WHERE 'RANGE' IN types[p]] AS ranged "
                        "WHERE size(ranged) = 1 RETURN label, ranged[0]")
#: One-property unique node constraints (they rest on such an index: rebuilt with it).
SINGLE_FIELD_UNIQUE = ("CALL db.constraints() YIELD type, label, properties, entitytype "
                       "WHERE type = 'UNIQUE' AND entitytype = 'NODE' AND size(properties) = 1 "
                       "RETURN label, properties[0]")


def rebuild_commands(key: str, indexes: Iterable[tuple[str, str]],
                     unique: Iterable[tuple[str, str]]) -> list[tuple[str, ...]]:
    """The commands that rebuild each single-field node index `(label, property)` of graph `key`
    at run time (exact, unlike a loaded one): unique constraints on it are dropped first (an
    index a constraint rests on cannot be dropped) and created again after it."""
    unique = set(unique)
    commands: list[tuple[str, ...]] = []
    for label, key_name in indexes:
        if "`" in label or "`" in key_name:
            continue                                    # no such name can exist (no escape for it)
        constrained = (label, key_name) in unique
        constraint = ("UNIQUE", "NODE", label, "PROPERTIES", "1", key_name)
        if constrained:
            commands.append(("GRAPH.CONSTRAINT", "DROP", key, *constraint))
        pattern = f"FOR (n:`{label}`) ON (n.`{key_name}`)"
        commands += [("GRAPH.QUERY", key, f"DROP INDEX {pattern}"), ("GRAPH.QUERY", key, f"CREATE INDEX {pattern}")]
        if constrained:
            commands.append(("GRAPH.CONSTRAINT", "CREATE", key, *constraint))
    return commands
