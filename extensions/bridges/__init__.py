"""FalkorDB bridges: every rewrite the embedded database needs, as rules keyed by AST class, one walk.

Each rule (`rule.Rule`: the AST node it applies to, the rewrite, the words and regex that tell
whether a query can need it, from which `triggers()` is derived, and the capability it stands in
for: it applies on a backend whose dialect lacks that, `core/dialect.py`) edits the original text and
keeps Neo4j's meaning exactly, or refuses the query with an error that says what cannot be run
faithfully and what to do instead:

- Neo4j's spelling of constructs FalkorDB spells otherwise: `elementId`, `datetime()`, label
  expressions, EXISTS / COUNT subqueries, `CALL (x) { }`, `CREATE (n $props)`, vector
  similarity, `valueType` (`spelling.py`);

- `a =~ 'pattern'` -> `string.matchRegEx` on the pattern translated from Java's regular
  expressions to FalkorDB's Oniguruma (`regex.py`, `java_regex.py`);
- `CREATE p = (...)` -> the path rebuilt from the created elements (`writes.py`);
- `WITH v WHERE ...` after a write or an OPTIONAL MATCH -> `WITH v AS v WHERE ...`, which keeps
  FalkorDB from moving the filter below the write (a lost SET) or into the OPTIONAL MATCH (a
  null row) (`writes.py`);
- zoned `datetime()` literals and parameters are refused rather than stored with the zone
  dropped (`temporal.py`);
- writes in `CALL { }` subqueries that FalkorDB runs for the first row only -> FOREACH or the
  flat form, else refused (`subqueries.py`);
- CASE evaluating only the branch it takes (`lazy_case.py`, rewritten after the other edits);
- `point.distance(a, b)` -> Neo4j's haversine formula in metres (`points.py`);
- SKIP/LIMIT: writes kept under `LIMIT 0`, counts past 32 bits clamped, expressions without
  variables computed as derived parameters (`limits.py`, `constants.py`);
- APOC functions -> the FalkorDB expression with APOC's result (`apoc_functions.py`);
- `std(x)` -> `stDev(x)`, an alias every backend gets (`aliases.py`);
- relationship uniqueness and multiplicity in MATCH: relationships named, `r1 <> r2` /
  `r IS NOT NULL` added to the MATCH's WHERE (`uniqueness.py`);
- EXPLAIN gets the CartesianProduct notification Neo4j derives from the plan (`notifications.py`);
- operators FalkorDB groups differently (`2^3^2`, `[1]+2 IN [3]+4`) get explicit parentheses
  (`precedence.py`);
- `sum()` of integers stays an exact integer (`aggregates.py`);
- dates and date-times far apart are compared, ordered, and reduced by `min`/`max` by year first,
  as FalkorDB's comparison wraps past 68 years (`temporal_order.py`);
- a returned `datetime(...)` is zoned in UTC, not a local date-time (`zoned.py`);
- durations are computed as Neo4j does, or refused where FalkorDB would keep or add them
  differently (`durations.py`);
- `.epochSeconds`, `.epochMillis`, `duration.inDays(a, b).days` computed from the calendar
  parts FalkorDB has (`epoch.py`);
- pattern comprehensions keep the rows whose projection is null, and a pattern reading a list
  comprehension's variable is refused (`comprehensions.py`);
- a fixed-length variable-length relationship (`*3`) -> three hops, rewritten before the rules
  run, as FalkorDB's traversal stops at its start node (`fixed_lengths.py`);
- a variable-length relationship with its upper bound below its lower one matches nothing
  (`empty_lengths.py`);
- a variable-length range (`*1..3`, `*`) FalkorDB may answer wrongly is checked against the
  graph before it runs (`ranges.py`); on a graph with a cycle that could make it wrong, a MATCH or
  OPTIONAL MATCH runs it as one fixed length per branch of a `CALL { ... UNION ALL ... }`
  (`range_unions.py`), else it is refused;
- NaN sorted as Neo4j sorts it, after every number (`nan_order.py`);
- unicode escapes, octal and point-first float literals as FalkorDB reads them (`literals.py`);
- `toString()` of a float as Java writes it, or the query refused while it runs (`formatting.py`,
  `Context.refuse_when`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from itertools import count
from typing import Any

from core.dialect import Capability, Dialect
from core.errors import CypherError

from ..cypher import ast as A
from . import (aggregates, aliases, apoc_functions, comprehensions, durations, empty_lengths, epoch, fixed_lengths, formatting,
               lazy_case, limits, literals, nan_order, notifications, points, precedence, range_unions, ranges, regex, spelling,
               subqueries, temporal, temporal_order, uniqueness, writes, zoned)
from .rule import RUNTIME_REFUSAL, Context, Derived, Edit, Rule

RULES: tuple[Rule, ...] = (*spelling.RULES, *regex.RULES, *writes.RULES, *temporal.RULES, *uniqueness.RULES,
                           *limits.RULES, *subqueries.RULES, *lazy_case.RULES, *points.RULES, *precedence.RULES,
                           *aggregates.RULES, *nan_order.RULES, *temporal_order.RULES, *literals.RULES,
                           *comprehensions.RULES, *empty_lengths.RULES, *zoned.RULES, *durations.RULES, *epoch.RULES, *formatting.RULES,
                           *apoc_functions.RULES, *aliases.RULES)


@cache
def _rules(dialect: Dialect) -> tuple[Rule, ...]:
    """The rules `dialect` needs: those standing in for what it lacks."""
    return tuple(rule for rule in RULES if rule.needed_by(dialect))


@cache
def _by_node(dialect: Dialect) -> dict[type, list[Rule]]:
    by_node: dict[type, list[Rule]] = {}
    for rule in _rules(dialect):
        by_node.setdefault(rule.node, []).append(rule)
    return by_node


@dataclass
class Bridged:
    edits: list[Edit] = field(default_factory=list)
    #: parameters to compute from the client's before the query runs (name -> function)
    derived: dict[str, Derived] = field(default_factory=dict)
    #: notifications an EXPLAIN gets if its plan shows a cartesian product
    cartesian: list[dict[str, Any]] = field(default_factory=list)
    #: names of the rewrites of the edited text (`after_edits`)
    after: set[str] = field(default_factory=set)
    #: edits that apply only when the named parameter holds a date (see `variant_edits`)
    conditional: dict[str, list[Edit]] = field(default_factory=dict)
    #: returned columns that are zoned date-times (see `zoned.utc_columns`)
    zoned: dict[int, str | None] = field(default_factory=dict)
    #: messages for a query refused while it runs (`Context.refuse_when`)
    refusals: list[str] = field(default_factory=list)
    #: variable-length ranges to check against the graph before the query runs (`ranges.py`)
    ranges: list[ranges.RangeCheck] = field(default_factory=list)


def bridge(query: A.Query, text: str, dialect: Dialect) -> Bridged:
    """Every bridge edit `dialect` needs for `query` (parsed from `text`); raises `CypherError`
    for a query that cannot run faithfully on that backend."""
    by_node = _by_node(dialect)
    if not by_node:
        return Bridged()
    ctx = Context(text, query, (str(i) for i in count()), dialect)
    ranked: list[tuple[int, Edit]] = []
    for depth, node in enumerate(query.walk()):
        for rule in by_node.get(type(node), ()):
            ranked += [(_nesting(edit, node, depth), edit) for edit in rule.apply(node, ctx)]
    edits = [edit for _, edit in sorted(ranked, key=lambda r: (r[1][0], r[1][1], r[0]))]
    explained = query.prefix == "EXPLAIN" and not dialect.has(Capability.NEO4J_CYPHER)
    cartesian = notifications.cartesian_products(query, text) if explained else []
    checks = [] if dialect.has(Capability.NEO4J_CYPHER) else ranges.checks(query, text)
    return Bridged(edits, ctx.derived, cartesian, ctx.after, ctx.conditional, ctx.zoned, ctx.refusals, checks)


_AFTER_EDITS = {"lazy_case": lazy_case.rewrite}


def after_edits(text: str, after: set[str]) -> str:
    """`text` (the query with every edit applied) through the rewrites that need the final text."""
    for name in sorted(after):
        text = _AFTER_EDITS[name](text)
    return text


def variant_edits(conditional: dict[str, list[Edit]], params: dict[str, Any]) -> list[Edit]:
    """The conditional edits this run's parameters call for (none when no parameter holds a date)."""
    chosen = [edit for name, edits in conditional.items() if temporal_order.holds_date(params.get(name))
              for edit in edits]
    return list(dict.fromkeys(chosen))


def _nesting(edit: Edit, node, order: int) -> int:
    """Of insertions at one position, an outer node's opening text comes first and its closing
    text last: `((a <= b))` around nested rewrites (`order` is the node's pre-order index)."""
    start, end, _ = edit
    return -order if start == end == node.span[1] else order


def derive(derived: dict[str, Derived], params: dict[str, Any], *, explain: bool = False) -> dict[str, Any]:
    """The derived parameters' values for one run. EXPLAIN plans without the client's
    parameters (tools send it bare), so there a value that cannot be computed is left out: the
    backend fills it as it fills the client's own missing ones (null, 0 as a SKIP/LIMIT count)."""
    values = {}
    for name, compute in derived.items():
        try:
            values[name] = compute(params)
        except CypherError:
            if not explain:
                raise
    return values


def triggers(dialect: Dialect) -> tuple:
    """(substring, regex) pairs of the rules `dialect` needs (`planner/triggers.py` adds the planner's own)."""
    pairs = [(rule.words, rule.regex) for rule in _rules(dialect)]
    if not dialect.has(Capability.NEO4J_CYPHER):
        pairs += [*notifications.TRIGGERS, *ranges.TRIGGERS]
    unique = dict.fromkeys((word, regex) for words, regex in pairs for word in words)
    return tuple((word, re.compile(regex)) for word, regex in unique)
