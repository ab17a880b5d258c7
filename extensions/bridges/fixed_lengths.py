"""A fixed-length variable-length relationship (`*3`, `*3..3`) written as that many hops.

FalkorDB 4.16's variable-length traversal never continues from a node it has already passed
(measured: over a->b->a->c, `(:A)-[*3]->(x)` finds nothing; Neo4j, matching trails that
use each relationship once, finds c; so does TCK Match6[14]). Explicit hops have no such gap, and
`uniqueness.py` then keeps them, like any named relationships, pairwise distinct and distinct
from the MATCH's other relationships. So before the bridges run, in each MATCH and OPTIONAL
MATCH, `-[r:T*3 {k: 1}]->` becomes `-[__h0:T {k: 1}]->()-[__h1:T {k: 1}]->()-[__h2:T {k: 1}]->`
(types, direction and properties on every hop, as Neo4j applies them); a named path is the same
path. When `r` is read elsewhere it is the list of the hops: inside the MATCH's WHERE the list
itself, after the MATCH bound by `WITH <the variables in scope>, [__h0, __h1, __h2] AS r` (null
when an OPTIONAL MATCH found nothing).

Not rewritten here: a range (`*1..3`, `*2..`, `*`), checked against the graph's cycles before it
runs and, where one could make it wrong, written one length per branch (`ranges.py`, which checks
the fixed lengths left here too, and `range_unions.py`, which writes its branches with `expand`). Also left as they are: a length above `MAX_HOPS`, a relationship bound earlier, one with an inline
WHERE, and variable-length relationships in MERGE, subqueries (`CALL { }`, `EXISTS { }`,
`COUNT { }`), pattern predicates and comprehensions.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count

from ..cypher import ast as A
from ..cypher.scope import bindings
from ..cypher.render import name as quote_name
from ..cypher.splice import splice
from .rule import copyable

#: The longest fixed length written out as hops (a pattern grows by one hop per step).
MAX_HOPS = 6
#: The stem of the hop variables (`uniqueness.py` keeps them out of `RETURN *`).
HOP = "__h"

_ARROWS = {"right": ("-", "->"), "left": ("<-", "-"), "none": ("-", "-"), "both": ("<-", "->")}

Edit = tuple[int, int, str]


def expand(query: A.Query, text: str, stem: str = HOP) -> str | None:
    """`text` with every fixed-length variable-length relationship of a MATCH written as hops
    (named `stem` and a number), or None when there is none. Only the query's own MATCH clauses:
    in a subquery, `EXISTS { }` or `COUNT { }` the hops would need uniqueness predicates
    `uniqueness.py` cannot always add."""
    names = (f"{stem}{i}" for i in count())
    edits: list[Edit] = []
    for part in query.parts:
        edits += _part_edits(part, text, names)
    if not edits:
        return None
    return splice(text, [((start, end), new) for start, end, new in sorted(edits)])


def _part_edits(part: A.SingleQuery, text: str, names: Iterator[str]) -> list[Edit]:
    edits: list[Edit] = []
    scope: dict[str, str] = {}
    for clause in part.clauses:
        if isinstance(clause, A.Match):
            edits += _match_edits(clause, scope, part, text, names)
        scope = bindings(clause, scope)
    return edits


def _fixed(rel: A.RelPattern, scope: dict[str, str]) -> bool:
    low, high = rel.length or (None, None)
    return low is not None and low == high and writable(rel, scope, high)


def writable(rel: A.RelPattern, scope: dict[str, str], hops: int) -> bool:
    """Whether `rel` can be written as `hops` hops (1 to MAX_HOPS)."""
    return (1 <= hops <= MAX_HOPS and rel.where is None and (rel.var is None or rel.var.name not in scope)
            and (rel.properties is None or copyable(rel.properties)))


def _match_edits(match: A.Match, scope: dict[str, str], part: A.SingleQuery, text: str,
                 names: Iterator[str]) -> list[Edit]:
    edits: list[Edit] = []
    lists: dict[str, list[str]] = {}
    for path in match.pattern.paths:
        if path.shortest is not None or any(isinstance(e, A.QuantifiedPath) for e in path.elements):
            continue
        for rel in path.elements:
            if isinstance(rel, A.RelPattern) and _fixed(rel, scope):
                hops = [next(names) for _ in range(rel.length[0])]
                edits.append((*rel.span, _hops(rel, hops, text)))
                if rel.var is not None and _read_elsewhere(rel.var, part):
                    lists[rel.var.name] = hops
    if lists:
        edits += _bind_lists(match, lists, scope)
    return edits


def _hops(rel: A.RelPattern, hops: list[str], text: str) -> str:
    """`-[__h0:T {k: 1}]->()-[__h1:T {k: 1}]->` for `-[:T*2 {k: 1}]->`."""
    left, right = _ARROWS[rel.direction]
    types = f":{rel.types.text_in(text)}" if rel.types is not None else ""
    properties = f" {rel.properties.text_in(text)}" if rel.properties is not None else ""
    return "()".join(f"{left}[{hop}{types}{properties}]{right}" for hop in hops)


def _read_elsewhere(var: A.Variable, part: A.SingleQuery) -> bool:
    """Named again in the query, or projected by a `*`."""
    return any(isinstance(n, A.Variable) and n.name == var.name and n is not var
               or isinstance(n, A._Projection) and n.star for n in part.walk())


def _bind_lists(match: A.Match, lists: dict[str, list[str]], scope: dict[str, str]) -> list[Edit]:
    """The MATCH's WHERE reads each list as the list of its hops; the clauses after it read it
    as a variable bound by a WITH after the MATCH."""
    edits: list[Edit] = []
    if match.where is not None:
        edits += [(*n.span, _list(lists[n.name])) for n in match.where.walk()
                  if isinstance(n, A.Variable) and n.name in lists]
    columns = {v: quote_name(v) for v in bindings(match, scope)}
    for name, hops in lists.items():
        columns[name] = f"{_nullable(hops) if match.optional else _list(hops)} AS {quote_name(name)}"
    edits.append((match.span[1], match.span[1], " WITH " + ", ".join(columns[v] for v in sorted(columns))))
    return edits


def _list(hops: list[str]) -> str:
    return f"[{', '.join(hops)}]"


def _nullable(hops: list[str]) -> str:
    return f"CASE WHEN {hops[0]} IS NULL THEN null ELSE {_list(hops)} END"
