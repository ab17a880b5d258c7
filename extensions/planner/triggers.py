"""What makes the planner look at a query at all: most queries need no parse, and a substring
test plus a precompiled regex per trigger decides that before any parsing (the decision is
cached by text like the plans).

The planner parses a query when its text may need it: it calls an extension or a procedure the
proxy serves (`calls`), it is a command the proxy runs where the backend's dialect lacks it
(`SHOW ...`, index and constraint commands, a `CYPHER` prefix: `COMMANDS`), one of compat's
planner-side rewrites may apply (`PLUGINS`), a bridge rule may rewrite it (`bridges.triggers`,
derived from the rules the dialect needs), or it may be temporal work answered in Python
(`TEMPORAL`). Regexes start with a literal so `re` scans fast; a false positive only costs a
(cached) parse.
"""

from __future__ import annotations

import re

from core.dialect import Capability, Dialect

from .. import bridges
from ..compat import apoc_upstream, stored_vectors, vector

Pairs = tuple[tuple[str, re.Pattern], ...]

#: (words, regex) per capability, for the commands the proxy runs where the dialect lacks it: the
#: lower-cased text contains one of the words and the regex matches it.
COMMANDS = {capability: (words, re.compile(rx)) for capability, words, rx in (
    (Capability.NEO4J_CYPHER, ("cypher",), r"^\s*cypher\b"),
    (Capability.PROCEDURES, ("show",), r"^\s*(?:(?:cypher|explain|profile)\b[^;]*?)?show\s"),
    # atomic: the first CREATE/DROP decides (trying each later one made this quadratic)
    (Capability.SCHEMA_COMMANDS, ("index", "constraint"),
     r"^\s*+(?>(?:(?:cypher|explain|profile)\b[^;]*?)?(?:create|drop)\b)[^;]*?\b(?:index|constraint)\b"))}
#: (words, regex) per capability, for what compat's rewrites plan where the dialect lacks it:
#: Cypher 25's SEARCH (`compat/vector.py`), size() and slices of stored vectors (`compat/stored_vectors.py`).
PLUGINS = {Capability.PROCEDURES: vector.TRIGGERS, Capability.VECTORS: stored_vectors.TRIGGERS}
#: Queries that may be temporal work the planner answers in Python (temporal/query.py), where the
#: dialect lacks exact temporals.
TEMPORAL = tuple((word, re.compile(r"(?:date|time|duration)(?:\.\w+)?\s*\(")) for word in ("date", "time", "duration"))


def triggers(functions, procedures, dialect: Dialect) -> Pairs:
    """(word, regex) pairs of everything the planner may do to a query in `dialect`, for the
    extension `functions` and the `procedures` it serves (a CALL may omit the parentheses)."""
    calls = tuple(((n.lower(),), re.compile(rf"{re.escape(n.lower())}\s*\(")) for n in functions)
    calls += tuple(((n.lower(),), re.compile(rf"call\s+`?{re.escape(n.lower())}(?![\w.])")) for n in procedures)
    commands = tuple(pair for capability, pair in COMMANDS.items() if not dialect.has(capability))
    plugins = tuple((words, re.compile(regex)) for capability, pairs in PLUGINS.items() if not dialect.has(capability)
                    for words, regex in pairs)
    # `any()` stops at the first that matches: compat's plugins last, as every relationship pattern
    # holds their '[' and their regex then scans the whole text (bench_planner's text scan: 1.6x)
    pairs = tuple((word, regex) for words, regex in calls + commands for word in words) + bridges.triggers(dialect)
    pairs += tuple((word, regex) for words, regex in plugins for word in words)
    pairs += () if dialect.has(Capability.EXACT_TEMPORALS) else TEMPORAL
    return pairs + ((apoc_upstream.TRIGGER,) if serves_apoc(dialect) else ())


def serves_apoc(dialect: Dialect) -> bool:
    """Behind a Neo4j without APOC: APOC functions rewritten into Neo4j's Cypher (compat/apoc_upstream.py)."""
    return dialect.has(Capability.NEO4J_CYPHER) and not dialect.has(Capability.APOC)


def triggered(query: str, pairs: Pairs) -> bool:
    """Whether the planner must look at `query` at all (see `triggers`)."""
    lowered = query.lower()
    return any(word in lowered and regex.search(lowered) for word, regex in pairs)
