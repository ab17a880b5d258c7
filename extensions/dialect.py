"""What makes the planner look at a query at all, plus the `std()` alias for both backends.

The planner parses a query only when its text may need it: it calls an extension or a
procedure the proxy serves, it is a command the proxy runs where the backend's dialect lacks it
(`SHOW ...`, index and constraint commands, a `CYPHER` prefix: `COMMANDS`), or a bridge rule may
rewrite it (`bridges.triggers(dialect)`, derived from the rules in `bridges/` the dialect needs:
FalkorDB's spelling of Neo4j's constructs is `bridges/spelling.py`). `triggers` gives the (substring, regex) pairs, `triggered` tests them.
"""

from __future__ import annotations

import re

from core.dialect import Capability, Dialect

from .cypher import ast as A

Edit = tuple[int, int, str]

#: (substrings, regex) pairs for the commands the proxy runs where the dialect lacks the capability
#: they are keyed by: the lower-cased text contains one of the substrings and the regex matches
#: it. Regexes start with a literal so `re` scans fast; false positives only cost a (cached) parse.
COMMANDS = {capability: (words, re.compile(rx)) for capability, words, rx in (
    (Capability.NEO4J_CYPHER, ("cypher",), r"^\s*cypher\b"),
    (Capability.PROCEDURES, ("show",), r"^\s*(?:(?:cypher|explain|profile)\b[^;]*?)?show\s"),
    # atomic: the first CREATE/DROP decides (trying each later one made this quadratic)
    (Capability.SCHEMA_COMMANDS, ("index", "constraint"),
     r"^\s*+(?>(?:(?:cypher|explain|profile)\b[^;]*?)?(?:create|drop)\b)[^;]*?\b(?:index|constraint)\b"))}
ALIAS_TRIGGERS = ((("std",), re.compile(r"std\s*\(")),)

#: Neo4j's procedures that store a vector on a node or a relationship (lower case; rewritten by
#: `bridges/spelling.py`, probed late by `late.py` when the key is not a literal).
SET_VECTOR_PROCEDURES = frozenset({"db.create.setnodevectorproperty", "db.create.setrelationshipvectorproperty"})


def alias_edits(query: A.Query, is_extension) -> list[Edit]:
    """`std(x)` -> `stDev(x)` unless an extension called `std` is registered."""
    return [(call.name_span[0], call.name_span[1], "stDev")
            for call in query.find_all(A.FunctionCall)
            if call.lower_name == "std" and not is_extension("std")]


def triggers(functions, procedures, dialect: Dialect) -> tuple:
    """(substring, regex) pairs for calls of the extension `functions` and `procedures` (a CALL
    may omit the parentheses), the alias and the commands the proxy runs in `dialect`."""
    calls = tuple(((n.lower(),), re.compile(rf"{re.escape(n.lower())}\s*\(")) for n in functions)
    calls += tuple(((n.lower(),), re.compile(rf"call\s+`?{re.escape(n.lower())}(?![\w.])"))
                   for n in procedures)
    commands = tuple(pair for capability, pair in COMMANDS.items() if not dialect.has(capability))
    grouped = calls + ALIAS_TRIGGERS + commands
    return tuple((word, regex) for words, regex in grouped for word in words)


def triggered(query: str, pairs: tuple) -> bool:
    """Whether the planner must look at `query` at all (see `triggers`)."""
    lowered = query.lower()
    return any(word in lowered and regex.search(lowered) for word, regex in pairs)
