"""What a query does to the graph, read from its syntax tree: the one answer to "does it write?".

The backend sends reads as read-only queries and takes its writer lock for writes, grows label
matrices before deletes and registers relationship types before a MERGE (FalkorDB); the planner
checks NOT NULL constraints after a statement that creates or sets, and records the date-time
kinds a write stores. They all ask `effects(text)`, cached by text like `parse`:

    effects("MATCH (n) SET n.seen = true").sets        # True
    effects("RETURN 'CREATE' AS `SET`").writes           # False: words in strings and names

Every clause that changes something starts with one of a few keywords (CREATE, MERGE, SET,
DELETE, REMOVE, DROP, CALL), so a text in which none of them stands as a word is a read with no
parse at all (`_KEYWORD`; bench/bench_statement.py: the backend's check and statement of a
one-line read with a new text take 25 µs, as before, where parsing it would add 46 µs). Otherwise the text is parsed (a cache hit when the planner
parsed it) and the tree decides. Text the parser refuses gets `scanned`: the keywords outside
strings and comments, an over-estimate (`parsed` is False); the database still refuses a
write sent as a read, and the backend's retry catches what a scan misses.

Procedures are reported by name only (`procedures`): which of them write is the backend's
knowledge, not the text's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from core.errors import CypherError

from . import ast as A
from .parser import parse
from .tokens import code_only

#: A keyword that may start a clause that changes something, standing as a word.
_KEYWORD = re.compile(r"(?<![\w.$])(?:CREATE|MERGE|SET|DELETE|REMOVE|DROP|CALL)(?!\w)", re.I)
#: Commands (kept opaque by the parser) that change something outside the data.
_CHANGING_COMMANDS = ("CREATE", "DROP")
#: Longer texts get a smaller cache (their trees are large; `parse` caches them anyway).
_LONG_CHARS = 65_536


@dataclass(frozen=True, slots=True)
class Effects:
    """What one query text does; the default is a read that calls no procedure."""

    creates: bool = False          # CREATE or MERGE: may add nodes and relationships
    merges: bool = False           # MERGE
    sets: bool = False             # SET or REMOVE (also a MERGE's ON CREATE / ON MATCH SET)
    deletes: bool = False          # DELETE, DETACH DELETE
    schema: bool = False           # creates or drops an index or constraint (or another command)
    procedures: frozenset = frozenset()     # lower-case names of the procedures it CALLs
    merged_types: frozenset = frozenset()   # relationship types its MERGE patterns name
    parsed: bool = True            # False: the parser refused the text, this is `scanned`

    @property
    def writes(self) -> bool:
        """Changes the graph or its schema (procedures aside: ask the backend about those)."""
        return self.creates or self.sets or self.deletes or self.schema


READS = Effects()


def effects(text: str) -> Effects:
    """What `text` does (see the module docstring); cached by text."""
    if not _KEYWORD.search(text):
        return READS
    return _cached(text) if len(text) <= _LONG_CHARS else _cached_long(text)


def _analyse(text: str) -> Effects:
    try:
        tree = parse(text)
    except CypherError:
        return scanned(text)
    return of_tree(tree)


_cached = lru_cache(maxsize=2048)(_analyse)
_cached_long = lru_cache(maxsize=8)(_analyse)


def of_tree(tree: A.Query) -> Effects:
    """What the parsed query `tree` does."""
    found: dict[type, list] = {}
    for node in _clauses_and_patterns(tree):
        found.setdefault(type(node), []).append(node)
    merges = found.get(A.Merge, ())
    commands = found.get(A.Command, ())
    return Effects(
        creates=A.Create in found or bool(merges),
        merges=bool(merges),
        sets=A.SetItem in found or A.RemoveItem in found,
        deletes=A.Delete in found,
        schema=any(kind in found for kind in (A.CreateIndex, A.CreateConstraint, A.DropSchema))
        or any(command.keyword.startswith(_CHANGING_COMMANDS) for command in commands),
        procedures=frozenset(call.name.lower() for call in found.get(A.CallProcedure, ())),
        merged_types=frozenset(rel.types.name for merge in merges for rel in merge.path.walk()
                               if isinstance(rel, A.RelPattern) and isinstance(rel.types, A.LabelName)))


#: The only expressions that hold clauses.
_SUBQUERIES = (A.ExistsSubquery, A.CountSubquery, A.CollectSubquery)


def _clauses_and_patterns(tree: A.Query):
    """Every node of `tree` but the insides of expressions, which hold no clause unless they
    are subqueries (a third of the nodes of a typical query, and the walk is 3x faster)."""
    stack: list[A.Node] = [tree]
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, A.Expr) or isinstance(node, _SUBQUERIES):
            stack.extend(node.children())


_SCANNED = {name: re.compile(rf"(?<![\w.$])(?:{words})(?!\w)", re.I) for name, words in (
    ("creates", "CREATE|MERGE"), ("merges", "MERGE"), ("sets", "SET|REMOVE"), ("deletes", "DELETE"),
    ("schema", r"DROP|CREATE\s++(?:\w++\s++)?(?:INDEX|CONSTRAINT)"))}
_CALLED = re.compile(r"(?<![\w.$])CALL\s+([\w.]+)", re.I)


def scanned(text: str) -> Effects:
    """The fallback for text the parser refuses: each keyword outside strings, quoted names and
    comments counts (`MERGE` is a write even where it is a variable's name). The relationship
    types of a MERGE are not known (empty)."""
    code = code_only(text)
    flags = {name: bool(pattern.search(code)) for name, pattern in _SCANNED.items()}
    procedures = frozenset(name.lower() for name in _CALLED.findall(code))
    return Effects(**flags, procedures=procedures, parsed=False)
