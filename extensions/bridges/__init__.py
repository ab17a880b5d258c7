"""FalkorDB bridges for Neo4j semantics beyond renaming: rules keyed by AST class, one walk.

Like `dialect.py`, each bridge edits the original text and keeps Neo4j's meaning exactly, or
refuses the query with an error that says what cannot be run faithfully and what to do instead:

- `a =~ 'pattern'` -> `string.matchRegEx` on the pattern translated from Java's regular
  expressions to FalkorDB's Oniguruma (`regex.py`, `java_regex.py`);
- `CREATE p = (...)` -> the path rebuilt from the created elements (`writes.py`);
- `WITH v WHERE ...` after a write or an OPTIONAL MATCH -> `WITH v AS v WHERE ...`, which keeps
  FalkorDB from moving the filter below the write (a lost SET) or into the OPTIONAL MATCH (a
  null row) (`writes.py`);
- zoned `datetime()` literals and parameters are refused rather than stored with the zone
  dropped (`temporal.py`);
- relationship uniqueness and multiplicity in MATCH: relationships named, `r1 <> r2` /
  `r IS NOT NULL` added to the MATCH's WHERE (`uniqueness.py`);
- EXPLAIN gets the CartesianProduct notification Neo4j derives from the plan (`notifications.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import count
from typing import Any

from proxy.errors import CypherError

from ..cypher import ast as A
from . import notifications, regex, temporal, uniqueness, writes
from .rule import Context, Derived, Edit, Rule

RULES: tuple[Rule, ...] = (*regex.RULES, *writes.RULES, *temporal.RULES, *uniqueness.RULES)
_BY_NODE: dict[type, list[Rule]] = {}
for _rule in RULES:
    _BY_NODE.setdefault(_rule.node, []).append(_rule)


@dataclass
class Bridged:
    edits: list[Edit] = field(default_factory=list)
    #: parameters to compute from the client's before the query runs (name -> function)
    derived: dict[str, Derived] = field(default_factory=dict)
    #: notifications an EXPLAIN gets if its plan shows a cartesian product
    cartesian: list[dict[str, Any]] = field(default_factory=list)


def bridge(query: A.Query, text: str) -> Bridged:
    """Every bridge edit for `query` (parsed from `text`); raises `CypherError` for a query that
    cannot run faithfully on FalkorDB."""
    ctx = Context(text, query, (str(i) for i in count()))
    edits: list[Edit] = []
    for node in query.walk():
        for rule in _BY_NODE.get(type(node), ()):
            edits += rule.apply(node, ctx)
    cartesian = notifications.cartesian_products(query, text) if query.prefix == "EXPLAIN" else []
    return Bridged(edits, ctx.derived, cartesian)


def derive(derived: dict[str, Derived], params: dict[str, Any], *, explain: bool = False) -> dict[str, Any]:
    """The derived parameters' values for one run. EXPLAIN plans without the client's
    parameters (tools send it bare), so there a value that cannot be computed is null."""
    values = {}
    for name, compute in derived.items():
        try:
            values[name] = compute(params)
        except CypherError:
            if not explain:
                raise
            values[name] = None
    return values


def triggers() -> tuple:
    """(substring, regex) pairs in the shape `dialect.triggers` returns."""
    pairs = [(rule.words, rule.regex) for rule in RULES] + list(notifications.TRIGGERS)
    return tuple((word, re.compile(regex)) for words, regex in pairs for word in words)
