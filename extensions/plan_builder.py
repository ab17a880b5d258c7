"""What a plugin may do to the plan of the query part being planned: the narrow protocol
between the planner (`extensions/planner/probe.py`'s `PartPlanner` implements it) and the
rewrites that plan a construct of their own (`compat/`'s procedure rewrites and APOC maps,
stored vectors, `planner/late.py`'s data-dependent labels).

A plugin reads the part (the query's text, its clauses, the variables each clause sees, the
backend's dialect), renders a node with the edits made so far, edits the text, takes fresh
numbers for the names it writes, and adds the two steps it may need: a late step (a probe whose
distinct values render text at a marker, run before the query) or a virtual step (rows answered
in Python, bound to a parameter); it may also say why the query can be refused while it runs.
It never sees the planner's internals, so the planner may change how it keeps them.

The functions below are built on the protocol alone: the reading clauses a late probe repeats,
a late step over an expression's values, the YIELD's tail, and small Cypher texts they share.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from core.dialect import Dialect
from core.errors import argument_error, syntax_error

from .cypher import ast as A
from .cypher.render import name as quote
from .registry import Procedure, ProcedureRewrite, VirtualProcedure

Edit = tuple[int, int, str]
#: render(values) -> the text at a late step's marker, from the distinct values its probe found
Render = Callable[[list[Any]], str]



class PlanBuilder(Protocol):
    """The plan of one query part (a UNION branch, a `CALL { }` body) as it is being built."""

    @property
    def text(self) -> str:
        """The whole query's text (spans index it)."""

    @property
    def clauses(self) -> Sequence[A.Clause]:
        """The part's clauses."""

    @property
    def dialect(self) -> Dialect:
        """The backend's dialect the plan is for."""

    def scope(self, clause_index: int) -> Mapping[str, str]:
        """The variables the clause at `clause_index` sees (name -> a kind of `cypher/ast.py`:
        'node', 'relationship', 'path', 'value', ...); `len(clauses)`: those after the last clause."""

    def render(self, node_or_span: A.Node | tuple[int, int]) -> str:
        """The text of a node (or span) with the edits made so far inside it."""

    def add_edit(self, edit: Edit) -> None:
        """Replace `text[start:end]` by the new text in the planned query."""

    def fresh(self) -> int:
        """A number no other name of this query's plan uses (`__v3`, markers)."""

    def add_late(self, probe: str, render: Render, follow: Callable[[list[Any]], str | None] | None = None,
                 wanted: Callable[[Any], Awaitable[bool]] | None = None) -> str:
        """A late step: `probe` runs before the query (its first column: the values), then
        `render(values)` replaces the marker returned (to be put in the text by an edit). With
        `follow`, values are found in rounds: `follow(values so far)` is the next probe, or None.
        With `wanted`, `await wanted(runner)` first says whether to probe at all (False: no values)."""

    def add_virtual(self, procedure: VirtualProcedure, arguments: tuple, placeholder: Any) -> str:
        """A virtual step: `procedure` answers with `arguments` (constant expressions) before the
        query runs; returns the parameter its rows are bound to (`placeholder` where nothing is
        computed: EXPLAIN)."""

    def may_refuse(self, message: str) -> None:
        """The text this plugin writes may fail the query while it runs (FalkorDB's error
        `bridges.rule.RUNTIME_REFUSAL`, raised on purpose): the client gets `message` instead."""


def reading_prefix(plan: PlanBuilder, clause_index: int, expr: A.Expr) -> list[str]:
    """The clauses before `clause_index` that bind what `expr` reads, writes left out; projections
    keep only what is still known. Rows may be more than the query's (a superset of values)."""
    known: set[str] = set()
    lines: list[str] = []
    for index, clause in enumerate(plan.clauses[:clause_index]):
        added = set(plan.scope(index + 1)) - set(plan.scope(index))
        reads = {v.name for v in clause.find_all(A.Variable)}
        if isinstance(clause, A.UPDATING) or isinstance(clause, (A.CallProcedure, A.CallSubquery)):
            continue
        if isinstance(clause, A.With) and not clause.star:
            items = [i for i in clause.items
                     if {v.name for v in i.expr.find_all(A.Variable)} <= known]
            if not items:
                known = set()
                continue
            lines.append("WITH " + ", ".join(plan.render(i) for i in items))
            known = {i.name(plan.text) for i in items}
            continue
        if isinstance(clause, (A.Unwind, A.Match)) and (reads - added) <= known:
            lines.append(plan.render(clause))
            known |= added
    needed = {v.name for v in expr.find_all(A.Variable)}
    if not needed <= known:
        raise argument_error(
            f"A label or type computed from {', '.join(sorted(needed - known))} needs values written "
            "earlier in the same query; on the embedded database compute it from the query's input "
            "(parameters, UNWIND, MATCH) instead.")
    return lines


def writes_before(plan: PlanBuilder, clause_index: int) -> bool:
    """Whether a clause up to and including `clause_index` writes (its probe would not see it)."""
    return any(isinstance(c, A.UPDATING) for c in plan.clauses[:clause_index + 1])


def values_step(plan: PlanBuilder, clause_index: int, expr: A.Expr, render: Render, *, each: bool) -> str:
    """Add a late step for the distinct values of `expr` before clause `clause_index`; returns the
    marker to put in the rewritten text. `each`: the elements of the value (a label list), not
    the values themselves."""
    lines = reading_prefix(plan, clause_index, expr) if any(expr.find_all(A.Variable)) else []
    text = plan.render(expr)
    lines.append(f"UNWIND {as_list(text)} AS __value RETURN DISTINCT __value" if each
                 else f"RETURN DISTINCT {text} AS __value")
    return plan.add_late("\n".join(lines), render)


def yielded(procedure: Procedure | VirtualProcedure | ProcedureRewrite,
            clause: A.CallProcedure | A.Show) -> tuple[list[str], dict[str, str]]:
    """The fields a CALL yields (all of them without YIELD or with YIELD *) and their aliases."""
    fields = [y.field for y in clause.yields] if clause.yields else list(procedure.yields)
    unknown = [f for f in fields if f not in procedure.yields]
    if unknown:
        raise syntax_error(f"Unknown procedure output: `{unknown[0]}`. {procedure.name}() yields "
                           f"{', '.join(procedure.yields) or 'nothing'}.")
    return fields, {y.field: y.name for y in clause.yields or ()}


def call_tail(plan: PlanBuilder, clause: A.CallProcedure, fields: list[str], names: dict[str, str]) -> str:
    """The YIELD's WHERE, and the RETURN a query ending in the CALL implies."""
    text = f" WHERE {plan.render(clause.where)}" if clause.where is not None else ""
    if clause is plan.clauses[-1] and fields:
        text += " RETURN " + ", ".join(quote(names.get(f, f)) for f in fields)
    return text


def carried(plan: PlanBuilder, clause_index: int) -> list[str]:
    """The variables the clause at `clause_index` sees, as a WITH carries them on."""
    return [quote(n) for n in plan.scope(clause_index)]


def as_list(expr: str) -> str:
    """A label expression as a list of labels (`$(x)` takes a string or a list of strings)."""
    return f"(CASE typeOf({expr}) WHEN 'List' THEN {expr} ELSE [{expr}] END)"


def when(condition: str, body: str) -> str:
    """`body` (updating clauses) for the rows where `condition` holds."""
    return f"FOREACH (__x IN CASE WHEN {condition} THEN [1] ELSE [] END | {body})"


def string(value: str) -> str:
    """A Cypher string literal."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
