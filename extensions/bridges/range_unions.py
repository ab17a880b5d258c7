"""A bounded variable-length range in a MATCH, written as one fixed length per branch of a
`CALL { ... UNION ALL ... }`: the exact form the planner runs when the graph check refuses the
range as written (`ranges.py`, `planner/cycles.py`).

Each length of `(s)-[r:T*1..3]->(x)` is its own copy of the whole MATCH (its other paths and its
WHERE), with `*1`, `*2`, `*3` written as hops (`fixed_lengths.py`), so the uniqueness bridge keeps
every hop distinct from the others and from the MATCH's other relationships, a named path is the
path of hops and `r` their list. The branches import every variable in scope (`WITH a, b`) and
return the ones the MATCH binds, so the rows after the CALL are the MATCH's rows, one per trail,
as Neo4j's; only their order differs, which Neo4j leaves open without ORDER BY. Measured on
FalkorDB 4.16.3: a CALL body's UNION ALL runs once per incoming row with the imported variables,
and a body may not bind a name the outer scope has (hence the import of all of it).

Left to the check: an OPTIONAL MATCH (a CALL has no null row), a MATCH binding no new variable
(its CALL would return nothing to join), a range from 0 or without an upper bound, above
`fixed_lengths.MAX_HOPS` or with more than MAX_BRANCHES lengths in all, one that `fixed_lengths`
cannot write as hops (an inline WHERE, a relationship bound earlier), hints, vector search, and
ranges in subqueries or expressions.
"""

from __future__ import annotations

import re
from itertools import count, product

from ..cypher import ast as A
from ..cypher.parser import parse
from ..cypher.render import name as quote_name
from ..cypher.splice import splice
from . import fixed_lengths

#: The most branches (combinations of lengths) one MATCH is written as.
MAX_BRANCHES = 12
_LENGTH = re.compile(r"\*\s*\d*\s*(?:\.\.\s*\d*)?")


def rewrite(query: A.Query, text: str) -> str | None:
    """`text` with every rewritable range MATCH as a CALL of one branch per length, or None."""
    stems = (f"{fixed_lengths.HOP}{i}_" for i in count())
    edits: list[tuple[tuple[int, int], str]] = []
    for part in query.parts:
        scope: dict[str, str] = {}
        for clause in part.clauses:
            if isinstance(clause, A.Match) and (union := _union(clause, scope, text, stems)) is not None:
                edits.append((clause.span, union))
            scope = A.bindings(clause, scope)
    return splice(text, edits) if edits else None


def _ranges(match: A.Match) -> list[A.RelPattern]:
    return [rel for path in match.pattern.paths if path.shortest is None
            for rel in path.elements if isinstance(rel, A.RelPattern) and rel.length is not None
            and rel.length[0] != rel.length[1]]


def _union(match: A.Match, scope: dict[str, str], text: str, stems) -> str | None:
    if match.optional or match.hints or match.search is not None:
        return None
    if any(isinstance(e, A.QuantifiedPath) for path in match.pattern.paths for e in path.elements):
        return None
    rels = _ranges(match)
    if not rels or not all(_low(rel) >= 1 and fixed_lengths.writable(rel, scope) for rel in rels):
        return None
    combinations = list(product(*(range(_low(rel), rel.length[1] + 1) for rel in rels)))
    new = [name for name in A.bindings(match, scope) if name not in scope]
    if not new or len(combinations) > MAX_BRANCHES:
        return None
    head = f"WITH {', '.join(quote_name(v) for v in sorted(scope))} " if scope else ""
    tail = f" RETURN {', '.join(quote_name(v) for v in new)}"
    branches = []
    for lengths in combinations:
        branch = head + _with_lengths(match, rels, lengths, text) + tail
        branches.append(fixed_lengths.expand(parse(branch), branch, next(stems)) or branch)
    return "CALL { " + " UNION ALL ".join(branches) + " }"


def _low(rel: A.RelPattern) -> int:
    return 1 if rel.length[0] is None else rel.length[0]


def _with_lengths(match: A.Match, rels: list[A.RelPattern], lengths: tuple[int, ...], text: str) -> str:
    """The MATCH's text with each range's `*a..b` written `*n`."""
    start = match.span[0]
    edits = []
    for rel, length in zip(rels, lengths):
        found = _LENGTH.search(text, rel.span[0], rel.span[1])
        edits.append(((found.start() - start, found.end() - start), f"*{length}"))
    return splice(match.text_in(text), edits)
