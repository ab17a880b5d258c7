"""A variable-length range in a MATCH or OPTIONAL MATCH written as one fixed length per branch of
a `CALL { ... UNION ALL ... }`: the exact form the planner runs when the graph check refuses the
range as written (`ranges.py`, `planner/cycles.py`).

Each length of `(s)-[r:T*1..3]->(x)` is its own copy of the whole MATCH (its other paths and its
WHERE), with `*1`, `*2`, `*3` written as hops (`fixed_lengths.py`), so the uniqueness bridge keeps
every hop distinct from the others and from the MATCH's other relationships, a named path is the
path of hops and `r` their list. The branches import every variable in scope (`WITH a, b`) and
return the ones the MATCH binds, so the rows after the CALL are the MATCH's rows, one per trail,
as Neo4j's; only their order differs, which Neo4j leaves open without ORDER BY. An OPTIONAL
MATCH's branches sit in a CALL of their own whose rows are collected per incoming row and
unwound, or one row of nulls when there are none. A range without an upper bound, or with one
above the number of relationships of its types (`caps`: a trail uses each once), is written up
to that number. Measured on FalkorDB 4.16.3: a CALL body's UNION ALL and a CALL nested in it run
once per incoming row with the imported variables (aggregates in the body too), and a body may
not bind a name the outer scope has (hence the import of all of it).

A MATCH binding no new variable returns one `1` per row, dropped by a WITH of the variables in
scope after the CALL. Length 0 stays `*0`, which FalkorDB matches right (the start node alone).
Left to the check: a range longer than `fixed_lengths.MAX_HOPS`, more than MAX_BRANCHES lengths
in all, one `fixed_lengths` cannot write as hops (an inline WHERE, a relationship bound earlier),
hints, vector search, and ranges in EXISTS, COUNT and COLLECT subqueries or in expressions.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import count, product

from ..cypher import ast as A
from ..cypher.scope import VALUE, bindings
from ..cypher.parser import parse
from ..cypher.render import name as quote_name
from ..cypher.splice import splice
from . import fixed_lengths

#: The most branches (combinations of lengths) one MATCH is written as.
MAX_BRANCHES = 12
_LENGTH = re.compile(r"\*\s*\d*\s*(?:\.\.\s*\d*)?")
#: The rows an OPTIONAL MATCH's branches found, per incoming row (fresh names: `RETURN *` never
#: sees them, they stay inside the CALL).
_ROWS, _ROW = f"{fixed_lengths.HOP}rows", f"{fixed_lengths.HOP}row"
#: The column of a MATCH that binds no new variable (one per row).
_ONE = f"{fixed_lengths.HOP}one"
#: The most relationships a range's trails can use, by the range (None: its own upper bound).
Caps = Callable[[A.RelPattern], int | None]


def rewrite(query: A.Query, text: str, caps: Caps = lambda rel: None) -> str | None:
    """`text` with every rewritable range MATCH (of the query or a `CALL { }` in it) as a CALL of
    one branch per length, or None."""
    stems = (f"{fixed_lengths.HOP}{i}_" for i in count())
    edits = [edit for part in query.parts for edit in _part_edits(part, {}, text, stems, caps)]
    return splice(text, edits) if edits else None


def _part_edits(part: A.SingleQuery, scope: dict[str, str], text: str, stems: Iterator[str],
                caps: Caps) -> list[tuple[tuple[int, int], str]]:
    edits = []
    for clause in part.clauses:
        if isinstance(clause, A.Match) and (union := _union(clause, scope, text, stems, caps)) is not None:
            edits.append((clause.span, union))
        elif isinstance(clause, A.CallSubquery):
            inner = scope if clause.scope == ("*",) else {v.name: scope.get(v.name, VALUE)
                                                           for v in clause.scope or ()}
            edits += [edit for body in clause.query.parts for edit in _part_edits(body, inner, text, stems, caps)]
        scope = bindings(clause, scope)
    return edits


def _union(match: A.Match, scope: dict[str, str], text: str, stems: Iterator[str], caps: Caps) -> str | None:
    lengths = _lengths(match, scope, caps)
    if lengths is None:
        return None
    rels = [rel for rel, _ in lengths]
    combinations = list(product(*(choices for _, choices in lengths)))
    if len(combinations) > MAX_BRANCHES:
        return None
    imported = ", ".join(quote_name(v) for v in sorted(scope))
    head = f"WITH {imported} " if scope else ""
    new = [quote_name(name) for name in bindings(match, scope) if name not in scope]
    # a MATCH binding nothing new returns a count of its rows, dropped after the CALL
    columns = ", ".join(new) if new else f"1 AS {_ONE}"
    dropped = "" if new or not scope else f" WITH {imported}"
    branches = []
    for chosen in combinations:
        branch = f"{head}{_with_lengths(match, rels, chosen, text)} RETURN {columns}"
        branches.append(fixed_lengths.expand(parse(branch), branch, next(stems)) or branch)
    union = " UNION ALL ".join(branches)
    if not match.optional:
        return f"CALL {{ {union} }}{dropped}"
    names = new or [_ONE]
    nulls = ", ".join("null" for _ in names)
    unwound = ", ".join(f"{_ROW}[{i}] AS {v}" for i, v in enumerate(names))
    return (f"CALL {{ {head}CALL {{ {union} }} WITH collect([{', '.join(names)}]) AS {_ROWS} "
            f"UNWIND CASE WHEN size({_ROWS}) = 0 THEN [[{nulls}]] ELSE {_ROWS} END AS {_ROW} "
            f"RETURN {unwound} }}{dropped}")


def _lengths(match: A.Match, scope: dict[str, str], caps: Caps) -> list[tuple[A.RelPattern, range]] | None:
    """Each range of `match` with its lengths, when every one can be written as hops."""
    if match.hints or match.search is not None:
        return None
    found: list[tuple[A.RelPattern, range]] = []
    for path in match.pattern.paths:
        if path.shortest is not None or any(isinstance(e, A.QuantifiedPath) for e in path.elements):
            return None
        for rel in path.elements:
            if not isinstance(rel, A.RelPattern) or rel.length is None or _fixed(rel):
                continue
            low = 1 if rel.length[0] is None else rel.length[0]
            bounds = [h for h in (rel.length[1], caps(rel)) if h is not None]
            if not bounds:
                return None
            high = max(min(bounds), low)       # fewer relationships than `low`: `*low` matches nothing
            if not fixed_lengths.writable(rel, scope, high):
                return None
            found.append((rel, range(low, high + 1)))
    return found or None


def _fixed(rel: A.RelPattern) -> bool:
    """`*3`, `*3..3` (left to `fixed_lengths.py`, or to the check above MAX_HOPS)."""
    return rel.length[0] is not None and rel.length[0] == rel.length[1]


def _with_lengths(match: A.Match, rels: list[A.RelPattern], lengths: tuple[int, ...], text: str) -> str:
    """The MATCH's text (without OPTIONAL) with each range's `*a..b` written `*n`."""
    start = match.pattern.span[0]
    edits = []
    for rel, length in zip(rels, lengths):
        found = _LENGTH.search(text, rel.span[0], rel.span[1])
        edits.append(((found.start() - start, found.end() - start), f"*{length}"))
    return "MATCH " + splice(text[start:match.span[1]], edits)
