"""Variable-length ranges (`*1..3`, `*2..`, `*`): run as written where FalkorDB's traversal is exact,
else one length at a time (`range_unions.py`) or refused.

Neo4j matches every trail: a walk that uses each relationship at most once, through any node
any number of times. FalkorDB 4.16's traversal (measured on bare FalkorDB, random multigraphs
against walks enumerated in Python; tests/integration/test_ranges.py) finds exactly the walks
that use each relationship once and never go on from a node they have already visited (ending on
one is allowed), and an undirected pattern finds a self-loop twice. So over a->b->a->c,
`(:A)-[*1..3]->(x)` misses a->b->a->c; over two loops on one node `*1..2` finds 2 trails of 4;
over s->x->y->x->z, `(:S)-[*1..4]->(z)` misses z: any node passed twice, not only the start.

A trail it misses passes a node twice before its last relationship, so it holds a closed trail,
and so a cycle, of at most `max - 1` relationships of the pattern's types (directed ones for a
directed pattern, whichever end the traversal starts from). A graph without one, and without a
self-loop for an undirected pattern, gets Neo4j's rows. Each range that could be wrong becomes a
`RangeCheck` the planner runs before the query (`planner/cycles.py`: the pattern's relationships
read once per graph state); on a graph that fails it the planner runs the query's exact form,
one length per branch of a `CALL { ... UNION ALL ... }` (`range_unions.py`), or refuses it where
that form does not reach.

No check where only which rows exist is seen, not how often nor along which trail: a range
from 0 or 1 whose relationships and path are not read, in a pattern predicate, an `EXISTS { }`,
or a MATCH whose rows reach a DISTINCT projection (or only DISTINCT, `min` or `max` aggregates)
through reading clauses alone. Every trail holds a simple path between its ends through its own
relationships (a closed one a simple cycle), which FalkorDB finds, so the set of rows is Neo4j's.
A shortest path is simple: never checked.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..cypher import ast as A
from .rule import AGGREGATES, aggregates

#: Trigger pairs (words, regex): a relationship with a length.
TRIGGERS = ((("*",), r"\[[^\]]*\*"),)
#: Aggregates whose value does not depend on how often a row comes.
_SET_AGGREGATES = frozenset({"min", "max"})
#: Clauses that map each row to rows on their own (no counting, ordering or writing).
_PER_ROW = (A.Match, A.Unwind)


@dataclass(frozen=True)
class RangeCheck:
    """One range the graph must allow: no closed trail of at most `longest` relationships of
    `types` (None: any type), directed ones if `directed`, else none at all counting a self-loop."""

    pattern: str                    # the relationship as written, for the refusal
    types: tuple[str, ...] | None
    directed: bool
    longest: int


def checks(query: A.Query, text: str) -> list[RangeCheck]:
    """A check for each variable-length relationship of `query` whose rows FalkorDB may get wrong."""
    if not any(isinstance(n, A.RelPattern) and n.length is not None for n in query.walk()):
        return []
    exempt = _set_only(query)
    found: list[RangeCheck] = []
    for path in query.find_all(A.PathPattern):
        if path.shortest is not None:
            continue
        for rel in path.elements:
            if isinstance(rel, A.RelPattern) and rel.length is not None and id(rel) not in exempt:
                check = _check(rel, text)
                if check is not None:
                    found.append(check)
    return list(dict.fromkeys(found))


def _check(rel: A.RelPattern, text: str) -> RangeCheck | None:
    low, high = rel.length
    low = 1 if low is None else low
    if high is not None and high < low:
        return None                           # matches nothing (empty_lengths.py)
    if high == 0:
        return None                           # no relationship: the start node alone
    directed = rel.direction in ("left", "right")
    longest = 1 << 30 if high is None else high - 1
    if not directed:
        longest = max(longest, 1)             # an undirected self-loop comes twice at any length
    if longest < 1:
        return None
    return RangeCheck(rel.text_in(text), relationship_types(rel), directed, longest)


def relationship_types(rel: A.RelPattern) -> tuple[str, ...] | None:
    """The types `rel` may have, sorted; None: any (or an expression beyond `:A|B`)."""
    labels = rel.types
    if labels is None or not all(isinstance(n, (A.LabelName, A.LabelOr)) for n in labels.walk()):
        return None
    return tuple(sorted(set(labels.names())))


# -- where only the set of rows is seen

def _set_only(query: A.Query) -> set[int]:
    """ids of the ranges whose trails' number and shape nobody reads."""
    exempt: set[int] = set()
    nodes = list(query.walk())
    exists_bodies = {id(part) for n in nodes if isinstance(n, A.ExistsSubquery) and n.query is not None
                     for part in n.query.parts}
    predicates = _predicates(nodes)
    for node in nodes:
        if isinstance(node, A.PatternExpr) and id(node) in predicates:
            exempt |= _unread_ranges([node.path], query)
        elif isinstance(node, A.ExistsSubquery) and node.pattern is not None:
            exempt |= _unread_ranges(node.pattern.paths, query)
        elif isinstance(node, A.SingleQuery):
            for at, clause in enumerate(node.clauses):
                if isinstance(clause, A.Match) and _rows_as_set(node.clauses[at + 1:], id(node) in exists_bodies):
                    exempt |= _unread_ranges(clause.pattern.paths, query)
    return exempt


def _predicates(nodes: list[A.Node]) -> set[int]:
    """ids of the pattern expressions read as true or false: a WHERE, an operand of AND, OR,
    XOR or NOT, the argument of `exists()` (not `size()`, which counts)."""
    found: set[int] = set()
    for node in nodes:
        if isinstance(node, (A.Match, A.With)) and node.where is not None:
            found.add(id(node.where))
        elif isinstance(node, A.BinaryOp) and node.op in ("AND", "OR", "XOR"):
            found |= {id(node.left), id(node.right)}
        elif isinstance(node, A.UnaryOp) and node.op == "NOT":
            found.add(id(node.operand))
        elif isinstance(node, A.FunctionCall) and node.lower_name == "exists":
            found |= {id(arg) for arg in node.args}
    return found


def _rows_as_set(after: tuple, in_exists: bool) -> bool:
    """Whether the clauses after a MATCH see its rows only as a set: reading clauses, then a
    DISTINCT projection or one whose aggregates ignore repeats (or an EXISTS's RETURN or end)."""
    for clause in after:
        if isinstance(clause, _PER_ROW):
            continue
        if isinstance(clause, A._Projection):
            if in_exists and isinstance(clause, A.Return):
                return True
            items = [item.expr for item in clause.items]
            if clause.distinct:
                return not any(aggregates(e) for e in items)
            return any(aggregates(e) for e in items) and all(_set_aggregate(e) for e in items)
        return False
    return in_exists


def _set_aggregate(expr: A.Expr) -> bool:
    """No aggregate in `expr` counts repeats (`count(DISTINCT x)`, `min(x)`)."""
    return not any(isinstance(n, A.CountStar) or isinstance(n, A.FunctionCall) and n.lower_name in AGGREGATES
                   and not (n.distinct or n.lower_name in _SET_AGGREGATES) for n in expr.walk())


def _unread_ranges(paths, query: A.Query) -> set[int]:
    """ids of the ranges from 0 or 1 in `paths` whose relationship list and path go unread."""
    exempt: set[int] = set()
    for path in paths:
        if path.var is not None and _read(path.var, query):
            continue
        for rel in path.elements:
            if (isinstance(rel, A.RelPattern) and rel.length is not None and (rel.length[0] or 1) <= 1
                    and (rel.var is None or not _read(rel.var, query))):
                exempt.add(id(rel))
    return exempt


def _read(var: A.Variable, query: A.Query) -> bool:
    """Named again anywhere in the query, or projected by a `*`."""
    return any(isinstance(n, A.Variable) and n.name == var.name and n is not var
               or isinstance(n, A._Projection) and n.star for n in query.walk())
