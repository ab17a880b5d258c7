"""`size()` and slices of vectors stored as FalkorDB's `vecf32`, answered as Neo4j answers them
for the list the client wrote.

Neo4j keeps a vector as a LIST<FLOAT>. The embedded database keeps what
`db.create.setNodeVectorProperty` writes as FalkorDB's Vectorf32 (its vector index reads only
those), and FalkorDB's Cypher reads nothing of one: `size()`, subscripts, slices and list
comprehensions fail naming Vectorf32. llama-index's `vector_query` with filters sends
`size(e.embedding) = $dimension`, its enhanced schema `min(size(coalesce(n.embedding, [])))` and
`collect(n.embedding)[0][..3]`.

One thing reads a vector's length (measured on FalkorDB 4.16): comparison. Vectors of different
lengths compare by length alone, the shorter one smaller; vectors of one length compare by the
integer part of their first differing elements (so `vecf32([0.3]) = vecf32([0.5])` is true).
Against `top(d)`, d elements of +infinity (1e39 overflows float32), every difference is
-infinity, so `v <= top(d)` holds exactly when v has at most d elements. Hence:

- `size(x)`, x a property (or `coalesce()` of one): a probe (the query's reading clauses, then
  the vectors x takes) reads the shortest and the longest vector (`min()` and `max()` order
  vectors by length first), then, in rounds, the shortest and longest between two lengths found
  (`top(a) < v <= top(b - 1)`) until no gap is left. For a vector the call becomes `CASE WHEN
  x <= top(d1) AND x > top(d1 - 1) THEN d1 WHEN ... END`; a vector of a length no probe saw
  (more than MAX_LENGTHS lengths) fails the query while it runs, saying so. Anything else keeps
  `size()`.
- `v.key[i]` and `v.key[a..b]` with literal bounds, and `collect(v.key)[i][a..b]` (which is
  `collect(v.key[a..b])[i]`): a probe reads each entity's vector, the proxy takes the element
  or the slice, and the query reads it from a list literal indexed by `id(v)`. Text grows with
  the entities read, and the probe reads every vector the query could see (0.7 s for 1000 of
  1536 floats): meant for the samples schema tools take, not for bulk reads.

Probes see the graph as the statement starts: a vector written earlier in the same statement is
not sliced (FalkorDB's error stays), and its length, if new, is refused while the query runs.
They run only while the graph may hold a vector (vector_census.py): on a graph without any,
`size(n.name)` is sent as written.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.errors import CypherError, argument_error

from ..cypher import ast as A
from ..plan_builder import PlanBuilder, reading_prefix, writes_before
from .vector_census import may_hold_vector

VECTOR = "'Vectorf32'"
#: The most vector lengths one size() is written for (each adds two vectors to the query's text).
MAX_LENGTHS = 16
#: A float literal that becomes +infinity as a float32 element.
_INFINITE = "1e39"
REFUSAL = (
    "size() of a vector stored with db.create.setNodeVectorProperty reads its length by comparing it with "
    f"the lengths the proxy found among the query's vectors before it ran (at most {MAX_LENGTHS}); this row's "
    "vector has another length. Keep fewer lengths per property, or store the length in a property of its "
    "own. (A limit of the embedded FalkorDB; Neo4j accepts this query.)")
#: The most entries and elements the lookup of elements and slices is written with (its text grows
#: with them; the probe reads every vector the query could see, about 0.7 ms per 1536 floats).
MAX_LOOKUP = 100_000


def plan(planner: PlanBuilder, clause_index: int, clause: A.Clause) -> None:
    """Rewrite the `size()` calls and slices of stored vectors in `clause` (FalkorDB only)."""
    for node in list(clause.walk()):
        if isinstance(node, A.FunctionCall) and node.lower_name == "size" and len(node.args) == 1 \
                and _read_property(node.args[0]) is not None:
            _plan_size(planner, clause_index, clause, node)
        elif isinstance(node, (A.Index, A.Slice)) and _element_access(node) is not None:
            _plan_element(planner, clause_index, clause, node)


def _read_property(expr: A.Expr) -> A.Property | None:
    """The property `expr` reads, when it is one (`v.key`) or `coalesce(v.key, ...)`."""
    if isinstance(expr, A.FunctionCall) and expr.lower_name == "coalesce" and expr.args:
        expr = expr.args[0]
    return expr if isinstance(expr, A.Property) and isinstance(expr.expr, A.Variable) else None


def _probe_lines(planner: PlanBuilder, clause_index: int, clause: A.Clause, expr: A.Expr) -> list[str] | None:
    """The reading clauses that bind `expr`'s variables for a probe (the clause's own pattern when
    `expr` is in a MATCH), or None when they cannot be read back (a write before, a variable of
    a list comprehension)."""
    if writes_before(planner, clause_index):
        return None
    try:
        if isinstance(clause, A.Match) and not clause.optional:
            lines = reading_prefix(planner, clause_index, A.Literal(None))
            lines.append(f"MATCH {planner.render(clause.pattern)}")
            bound = set(planner.scope(clause_index + 1))
            return lines if {v.name for v in expr.find_all(A.Variable)} <= bound else None
        return reading_prefix(planner, clause_index, expr)
    except CypherError:
        return None


# ------------------------------------------------------------------ size()

def top(dimension: int) -> str:
    """A vector of `dimension` elements of +infinity: every vector of at most that length is <= it."""
    return f"vecf32([{', '.join([_INFINITE] * dimension)}])"


def has_length(vector: str, dimension: int) -> str:
    """Whether `vector` (a Vectorf32) has exactly `dimension` elements."""
    longer = f" AND {vector} > {top(dimension - 1)}" if dimension > 0 else ""
    return f"{vector} <= {top(dimension)}{longer}"


def vector_size(vector: str, lengths: list[int], fresh: str) -> str:
    """The length of `vector` among `lengths`, or a runtime refusal (`REFUSAL`)."""
    branches = " ".join(f"WHEN {has_length(vector, d)} THEN {d}" for d in lengths)
    return (f"[{fresh} IN [CASE {branches} END] | "
            f"[{fresh}, range(0, 0, CASE WHEN {fresh} IS NULL THEN 0 ELSE 1 END)][0]][0]")


def _either(value: str, name: str, vector: Callable[[str], str], other: Callable[[str], str]) -> str:
    """`vector(v)` when `value` is a Vectorf32, else `other(v)` (v: a variable holding `value`),
    each evaluated only when taken: FalkorDB evaluates every branch of a CASE, but not the body
    of a comprehension for the elements its WHERE drops."""
    return (f"[{name} IN [{value}] | ([{name}o IN [{name}] WHERE typeOf({name}o) <> {VECTOR} | {other(name + 'o')}]"
            f" + [{name}v IN [{name}] WHERE typeOf({name}v) = {VECTOR} | {vector(name + 'v')}])[0]][0]")


def _plan_size(planner: PlanBuilder, clause_index: int, clause: A.Clause, call: A.FunctionCall) -> None:
    arg = call.args[0]
    lines = _probe_lines(planner, clause_index, clause, arg)
    if lines is None:
        return
    value = planner.render(arg)
    vectors = "\n".join(lines + [f"WITH {value} AS __v WHERE typeOf(__v) = {VECTOR}"])
    name, original = f"__vec{planner.fresh()}", planner.render(call)
    planner.may_refuse(REFUSAL)

    def render(found: list[Any]) -> str:
        lengths = _lengths(found)
        if not lengths:
            return original
        return _either(value, name, lambda v: vector_size(v, lengths, f"{v}d"), lambda v: f"size({v})")

    marker = planner.add_late(f"{vectors} RETURN [min(__v), max(__v)]", render, lambda found: _next_gap(vectors, found),
                              may_hold_vector)
    planner.add_edit((*call.span, marker))


def _lengths(found: list[Any]) -> list[int]:
    """The lengths of the vectors the rounds found ([shortest, longest, gap...] rows)."""
    return sorted({len(v) for row in found for v in row[:2] if v is not None})


def _next_gap(vectors: str, found: list[Any]) -> str | None:
    """The probe of the shortest and longest vectors between two lengths found so far (their
    lengths a gap no round has looked into), or None when every gap is known."""
    lengths = _lengths(found)
    known = set()
    for row in found[1:]:
        shortest, longest, below, above = row
        ends = [len(shortest), len(longest)] if shortest is not None else [above, below]
        known |= {(below, ends[0]), (ends[1], above)}
    gaps = [(a, b) for a, b in zip(lengths, lengths[1:]) if b - a > 1 and (a, b) not in known]
    if not gaps or len(lengths) > MAX_LENGTHS:
        return None
    below, above = gaps[0]
    return (f"{vectors} AND __v > {top(below)} AND __v <= {top(above - 1)} "
            f"RETURN [min(__v), max(__v), {below}, {above}]")


# ------------------------------------------------------------------ elements and slices

def _bound(expr: A.Expr | None) -> int | None | bool:
    """A slice or index bound given as an integer literal (None: absent; False: not a literal)."""
    if expr is None:
        return None
    if isinstance(expr, A.UnaryOp) and expr.op == "-" and isinstance(expr.operand, A.Literal):
        inner = _bound(expr.operand)
        return -inner if isinstance(inner, int) and not isinstance(inner, bool) else False
    if isinstance(expr, A.Literal) and isinstance(expr.value, int) and not isinstance(expr.value, bool):
        return expr.value
    return False


def _access(node: A.Index | A.Slice) -> Callable[[list], Any] | None:
    """The Python of the subscript or slice, when its bounds are integer literals."""
    if isinstance(node, A.Slice):
        start, end = _bound(node.start), _bound(node.end)
        if start is False or end is False:
            return None
        return lambda v: v[start:end]
    index = _bound(node.index)
    if index is None or index is False:
        return None
    return lambda v: v[index] if -len(v) <= index < len(v) else None


def _element_access(node: A.Index | A.Slice) -> tuple[A.Property, str] | None:
    """(the vector property, the form) of `v.key[...]` ('direct') or `collect(v.key)[i][a..b]`
    ('collected'), with literal bounds."""
    if _access(node) is None:
        return None
    if isinstance(node.expr, A.Property) and isinstance(node.expr.expr, A.Variable):
        return node.expr, "direct"
    inner = node.expr
    if (isinstance(node, A.Slice) and isinstance(inner, A.Index) and isinstance(inner.expr, A.FunctionCall)
            and inner.expr.lower_name == "collect" and not inner.expr.distinct and len(inner.expr.args) == 1
            and isinstance(inner.expr.args[0], A.Property) and isinstance(inner.expr.args[0].expr, A.Variable)):
        return inner.expr.args[0], "collected"
    return None


def _plan_element(planner: PlanBuilder, clause_index: int, clause: A.Clause, node: A.Index | A.Slice) -> None:
    prop, form = _element_access(node)
    lines = _probe_lines(planner, clause_index, clause, prop)
    if lines is None:
        return
    owner, value = planner.render(prop.expr), planner.render(prop)
    lines.append(f"WITH {owner} WHERE typeOf({value}) = {VECTOR} RETURN [id({owner}), {value}]")
    access, name = _access(node), f"__vec{planner.fresh()}"
    suffix = planner.text[prop.span[1]:node.span[1]] if form == "direct" else _slice_text(planner, node)
    original = planner.render(node)

    def render(found: list[Any]) -> str:
        if not found:
            return original
        base = min(identity for identity, _ in found)
        table: list[Any] = [None] * (max(identity for identity, _ in found) - base + 1)
        for identity, vector in found:
            table[identity - base] = access(vector)
        if len(table) + sum(len(v) for v in table if isinstance(v, list)) > MAX_LOOKUP:
            raise argument_error(
                f"{original}: the embedded database reads nothing of a vector stored with "
                "db.create.setNodeVectorProperty, so the proxy writes the elements asked for into the query; "
                f"here {len(found)} vectors' elements, too many for that. Return the whole vectors and take "
                "their elements in the application. (A limit of the embedded FalkorDB; Neo4j accepts this "
                "query.)")
        lookup = f"{_literal(table)}[id({owner}) - {base}]"
        element = _either(value, name, lambda v: lookup, lambda v: f"{v}{suffix}")
        if form == "direct":
            return element
        collect = node.expr.expr
        return f"{planner.text[collect.span[0]:collect.args[0].span[0]]}{element})" \
               f"{planner.text[collect.span[1]:node.expr.span[1]]}"

    planner.add_edit((*node.span, planner.add_late("\n".join(lines), render, wanted=may_hold_vector)))


def _slice_text(planner: PlanBuilder, node: A.Slice) -> str:
    """`[a..b]` of `collect(v.key)[i][a..b]`."""
    return planner.text[node.expr.span[1]:node.span[1]]


def _literal(value: Any) -> str:
    """Lists of floats (and nulls) as Cypher literals; floats by repr, exact for float32 values."""
    if value is None:
        return "null"
    if isinstance(value, list):
        return f"[{', '.join(_literal(v) for v in value)}]"
    return repr(float(value))


#: (words, regex) that make the planner parse a query `plan` may rewrite (`planner/triggers.py`):
#: `size(`, a slice, a literal subscript of a property.
TRIGGERS = ((("size",), r"size\s*\("), (("..",), r"\[\s*-?\d*\s*\.\."), (("[",), r"[\w`]\s*\[\s*-?\d+\s*\]"))
