"""Index-planned joins: a MATCH that pairs two sets of nodes through an extension function runs
as one index query and a seek per matching pair, not as a filter over the cartesian product.

    MATCH (w:WellBore), (f:Field) WHERE contains(f.geometry, w.location) RETURN f.title, count(w)

Probe-compute-bind would probe all 7,545 x 142 (w, f) pairs. A join is planned instead when a
non-optional MATCH (with no write before it) pairs two of its node variables `a`, `b`, each
written as `v` or `v.key`, from unconnected parts of its pattern, through a function with an
`IndexJoin` (registry.py), in one of these shapes:
- predicate: a WHERE conjunct `f(a, b)`;
- within: a WHERE conjunct `f(a, b) < r` (or <=, or `r > f(a, b)`, r a literal or parameter);
- nearest: the next clause is a WITH/RETURN without aggregation or DISTINCT ordered first by
  `f(a, b)` (or its alias) ascending, with a LIMIT; `b`'s part of the pattern is the node
  pattern alone and every WHERE condition on `b` alone can run in its probe, so the right
  nodes dropped are exactly those that cannot reach the LIMIT.
The JoinStep gets each side's candidate nodes (a probe `MATCH <its part> WHERE <its own
conditions> RETURN DISTINCT id, labels`, or no probe at all for a bare `(v:Label)`, which the
extension's index covers), asks the extension for the matching pairs, and binds them as
`$__joinN`. The MATCH then reads

    UNWIND $__join0 AS __j0 WITH <variables in scope>, __j0[0] AS __j0a, __j0[1] AS __j0b
    MATCH (w:WellBore), (f:Field) WHERE id(w) = __j0a AND id(f) = __j0b
    WITH <variables after the MATCH> WHERE true <and the rest of the original WHERE>

so the database seeks each pair (FalkorDB seeks only on `id(n) = <variable>`: `id(n) = __j0[0]`
scans every node) and keeps the pattern, the other conditions and everything after. A
predicate or within conjunct is answered exactly by the pairs and becomes `true`; nearest keeps
its ORDER BY, whose function the ordinary probe computes for the few pairs left.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import argument_error

from ..cypher import ast as A
from ..cypher.render import name as quote_name
from ..bridges.uniqueness import fresh_names
from .probe import PartPlanner, _variables, _writes, aggregates, splice
from ..registry import Extension, GraphContext, JoinSide, NodeRef, PropertyRef


@dataclass(frozen=True)
class _Arg:
    """A join argument: node variable `var`, read whole (key None) or as `var.key`."""

    var: str
    key: str | None


@dataclass
class _Join:
    """A join found in the query text (planned later, in dependency order)."""

    clause_index: int
    call: A.FunctionCall
    mode: str
    left: _Arg                       # nearest: the side kept whole
    right: _Arg                      # nearest: the side pruned to the k nearest
    replace: A.Expr | None = None    # the conjunct the pairs answer (becomes `true`)
    bound: tuple = ()                # within: (r,); nearest: (limit, skip or None)
    inclusive: bool = False          # within: <= rather than <


@dataclass
class SidePlan:
    """How a JoinStep gets one side's nodes: every node of `label`, or the rows of `probe`."""

    key: str | None
    label: str | None = None
    probe: str | None = None


@dataclass
class JoinStep:
    ext: Extension
    mode: str
    param: str
    left: SidePlan
    right: SidePlan
    bound: tuple                     # constant expressions, resolved at run time
    inclusive: bool


class JoinPlanner:
    """The index joins of one query part; `PartPlanner.plan` drives it (see its `joins`)."""

    def __init__(self, part: PartPlanner):
        self.part = part
        self.pending = [join for i in range(len(part.part.clauses)) if (join := self._find(i)) is not None]
        self._claimed = {id(j.call) for j in self.pending if j.replace is not None}

    def claims(self, call: A.FunctionCall) -> bool:
        """Whether the join answers this call, so it needs no probe of its own."""
        return id(call) in self._claimed

    def plan_until(self, position: tuple | None) -> None:
        """Plan the joins whose MATCH comes before `position` ((clause index, past its input
        stage), as the probe groups are ordered; None: all that are left)."""
        while self.pending and (position is None or (self.pending[0].clause_index, True) <= position):
            self._plan(self.pending.pop(0))

    # -- finding joins in the text

    def _find(self, index: int) -> _Join | None:
        clauses = self.part.part.clauses
        clause = clauses[index]
        if not isinstance(clause, A.Match) or clause.optional or any(_writes(c) for c in clauses[:index]):
            return None
        for conjunct in self._conjuncts(clause):
            join = self._predicate_join(index, conjunct)
            if join is not None:
                return join
        return self._nearest_join(index)

    def _predicate_join(self, index: int, conjunct: A.Expr) -> _Join | None:
        call, bound, inclusive, mode = conjunct, (), False, "predicate"
        if isinstance(conjunct, A.BinaryOp) and conjunct.op in ("<", "<=", ">", ">="):
            call, limit = ((conjunct.left, conjunct.right) if conjunct.op in ("<", "<=")
                           else (conjunct.right, conjunct.left))
            if not _constant(limit):
                return None
            bound, inclusive, mode = (limit,), conjunct.op.endswith("="), "within"
        sides = self._sides(index, call, mode)
        if sides is None:
            return None
        return _Join(index, call, mode, *sides, replace=conjunct, bound=bound, inclusive=inclusive)

    def _nearest_join(self, index: int) -> _Join | None:
        clauses = self.part.part.clauses
        projection = clauses[index + 1] if index + 1 < len(clauses) else None
        if (not isinstance(projection, A._Projection) or projection.distinct or not projection.order_by
                or projection.limit is None or getattr(projection, "where", None) is not None
                or projection.order_by[0].descending or aggregates(projection, self.part.registry)
                or not all(_constant(e) for e in (projection.limit, projection.skip) if e is not None)):
            return None
        call = projection.order_by[0].expr
        if isinstance(call, A.Variable):
            call = next((item.expr for item in projection.items if item.alias == call.name), call)
        sides = self._sides(index, call, "nearest")
        if sides is None or any(item.alias in (sides[0].var, sides[1].var) for item in projection.items):
            return None
        # Prune the side more likely to be big: a bare `(v:Label)` first, else the second argument.
        orders = sorted([sides, sides[::-1]], key=lambda o: _bare_label(self._components(index)[o[1].var],
                                                                         o[1].var) is None)
        for kept, pruned in orders:
            if self._prunable(index, pruned.var):
                return _Join(index, call, "nearest", kept, pruned, bound=(projection.limit, projection.skip))
        return None

    def _sides(self, index: int, call: A.Expr, mode: str) -> tuple[_Arg, _Arg] | None:
        """The two join arguments of `call` in MATCH `index`, if it is a join in `mode`."""
        ext = self.part.registry.get(call.name) if isinstance(call, A.FunctionCall) else None
        if ext is None or ext.index_join is None or mode not in ext.index_join.modes or len(call.args) != 2:
            return None
        new = {v for v, kind in self.part.scopes[index + 1].items()
               if kind == "node" and v not in self.part.scopes[index]}
        args = [_join_arg(arg, new) for arg in call.args]
        if None in args or args[0].var == args[1].var:
            return None
        component = self._components(index)
        if component[args[0].var] is component[args[1].var]:
            return None                # the pattern itself connects them: the database joins
        return args[0], args[1]

    def _components(self, index: int) -> dict[str, list]:
        """Variable -> the paths of its connected part of MATCH `index`'s pattern (one shared
        list object per part); variables bound before the MATCH do not connect."""
        before = self.part.scopes[index]
        groups: list[tuple[set, list]] = []
        for path in self.part.part.clauses[index].pattern.paths:
            names = _path_vars(path) - set(before)
            joined = [g for g in groups if g[0] & names]
            merged = (names.union(*(g[0] for g in joined)), [p for g in joined for p in g[1]] + [path])
            groups = [g for g in groups if not any(g is j for j in joined)] + [merged]
        return {name: paths for names, paths in groups for name in names}

    def _prunable(self, index: int, var: str) -> bool:
        """Nearest may drop right nodes only when the probe decides exactly which exist: `var`'s
        part is its node pattern alone and its own conditions run in the probe unchanged."""
        paths = self._components(index)[var]
        if len(paths) != 1 or paths[0].var is not None or len(paths[0].elements) != 1:
            return False
        if self._edited(paths[0]):
            return False
        for conjunct in self._conjuncts(self.part.part.clauses[index]):
            names = _variables(conjunct)
            if var in names and (names != {var} or self._calls(conjunct) or self._edited(conjunct)):
                return False
        return True

    # -- planning

    def _plan(self, join: _Join) -> None:
        part, index = self.part, join.clause_index
        clause = part.part.clauses[index]
        n = next(part.counter)
        param, row = f"__join{n}", f"__j{n}"
        before, after = part.scopes[index], part.scopes[index + 1]
        carried = [quote_name(v) for v in before] + [f"{row}[0] AS {row}a", f"{row}[1] AS {row}b"]
        part.add_edit((clause.span[0], clause.span[0], f"UNWIND ${param} AS {row} WITH {', '.join(carried)} "))
        kept = [quote_name(v) for v in after] + fresh_names(part.render(clause.pattern))
        seek = f"id({quote_name(join.left.var)}) = {row}a AND id({quote_name(join.right.var)}) = {row}b " \
               f"WITH {', '.join(kept)}"
        if clause.where is None:
            appended = any(s == e == clause.span[1] for s, e, _ in part.edits)     # a bridge's WHERE
            part.add_edit((clause.span[1], clause.span[1], (" AND " if appended else " WHERE ") + seek))
        else:
            at = part.where_keyword_start(clause)
            part.add_edit((at, at, "WHERE " + seek + " "))
        if join.replace is not None:
            part.add_edit((*join.replace.span, "true"))
        left = self._side_plan(join, join.left, whole_label=join.mode != "nearest")
        right = self._side_plan(join, join.right, whole_label=True)
        part.placeholders[param] = []
        part.steps.append(JoinStep(part.registry.get(join.call.name), join.mode, param, left, right,
                                   join.bound, join.inclusive))

    def _side_plan(self, join: _Join, arg: _Arg, whole_label: bool) -> SidePlan:
        part, index = self.part, join.clause_index
        paths = self._components(index)[arg.var]
        names = set().union(*(_path_vars(p) for p in paths))
        before = set(part.scopes[index])
        own = [c for c in self._conjuncts(part.part.clauses[index]) if c is not join.replace and _variables(c) & names]
        pushed = [c for c in own if _variables(c) <= names | before and not self._calls(c)]
        label = _bare_label(paths, arg.var)
        if whole_label and label is not None and not pushed:
            return SidePlan(arg.key, label=label)
        outer = any(_variables(x) & before for x in [*paths, *pushed])
        lines = part.prefix_lines(index, [], join.call.name + "()") if outer else []
        match = "MATCH " + ", ".join(part.render(p) for p in paths)
        if pushed:
            where = part.part.clauses[index].where
            match += " WHERE " + " AND ".join(f"({self._conjunct_text(c, where)})" for c in pushed)
        var = quote_name(arg.var)
        lines += [match, f"RETURN DISTINCT id({var}) AS __c0, labels({var}) AS __c1, "
                         f"{part.dialect.element_id(var)} AS __c2"]
        return SidePlan(arg.key, probe="\n".join(lines))

    # -- small analyses

    def _conjunct_text(self, conjunct: A.Expr, where: A.Expr) -> str:
        """A conjunct as rewritten, without what bridges wrap the whole WHERE in (a side probe
        only narrows candidates; the predicates they add may name the other side's variables)."""
        edits = [e for e in self.part.edits if not (e[0] == e[1] and e[0] in where.span)]
        return splice(self.part.text, *conjunct.span, edits)

    def _conjuncts(self, clause: A.Match) -> list[A.Expr]:
        return _split_and(clause.where) if clause.where is not None else []

    def _calls(self, node: A.Node) -> bool:
        """Whether `node` calls an extension (its value needs a probe of its own)."""
        return any(isinstance(n, A.FunctionCall) and n.name in self.part.registry for n in node.walk())

    def _edited(self, node: A.Node) -> bool:
        """Whether a rewrite changes `node` (text inserted next to it, such as a WHERE a bridge
        appends or wraps around it, does not)."""
        start, end = node.span
        return any(start <= s and e <= end and not (s == e and s in (start, end)) for s, e, _ in self.part.edits)


# ------------------------------------------------------------------ run time

async def run_join(step: JoinStep, bound: list, params: dict[str, Any], graph: GraphContext) -> dict[str, Any]:
    """The pairs parameter of one join: side candidates, then the extension's index query.
    `bound` holds the values of `step.bound` (resolved by the planner; None where absent)."""
    value = _bound(step, bound)
    left = await _join_side(step.left, params, graph)
    right = await _join_side(step.right, params, graph)
    pairs = await step.ext.index_join.pairs(graph, step.mode, left, right, value)
    return {step.param: [[a, b] for a, b in pairs]}


def _bound(step: JoinStep, values: list) -> Any:
    """`IndexJoin.pairs`'s bound: (r, inclusive) for within, LIMIT + SKIP for nearest."""
    if step.mode == "within":
        return values[0], step.inclusive
    if step.mode != "nearest":
        return None
    limit, skip = values[0], values[1] if values[1] is not None else 0
    if not all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in (limit, skip)):
        raise argument_error(f"LIMIT and SKIP take non-negative integers, got LIMIT {limit!r}, SKIP {skip!r}")
    return limit + skip


async def _join_side(plan: SidePlan, params: dict[str, Any], graph: GraphContext) -> JoinSide:
    if plan.probe is None:
        return JoinSide(plan.label, plan.key)
    rows = await graph.read(plan.probe, params)
    refs: list = [NodeRef(node_id, element_id, tuple(labels or ())) for node_id, labels, element_id in rows]
    if plan.key is not None:
        refs = [PropertyRef(ref, plan.key) for ref in refs]
    return JoinSide(None, plan.key, refs)


# ------------------------------------------------------------------ helpers

def _join_arg(arg: A.Expr, nodes: set[str]) -> _Arg | None:
    if isinstance(arg, A.Variable) and arg.name in nodes:
        return _Arg(arg.name, None)
    if isinstance(arg, A.Property) and isinstance(arg.expr, A.Variable) and arg.expr.name in nodes:
        return _Arg(arg.expr.name, arg.key)
    return None


def _split_and(expr: A.Expr) -> list[A.Expr]:
    if isinstance(expr, A.BinaryOp) and expr.op == "AND":
        return _split_and(expr.left) + _split_and(expr.right)
    return [expr]


def _constant(expr: A.Expr) -> bool:
    """A literal or a parameter (possibly negated): known before the query runs."""
    if isinstance(expr, A.UnaryOp) and expr.op == "-":
        return _constant(expr.operand)
    return isinstance(expr, (A.Literal, A.Parameter))


def _path_vars(path: A.PathPattern) -> set[str]:
    names = {n.var.name for n in path.walk() if isinstance(n, (A.NodePattern, A.RelPattern)) and n.var}
    return names | ({path.var.name} if path.var else set())


def _bare_label(paths: list, var: str) -> str | None:
    """The label L when the part is just `(var:L)`: the index of L holds all its candidates."""
    if len(paths) != 1 or paths[0].var is not None or len(paths[0].elements) != 1:
        return None
    node = paths[0].elements[0]
    if node.var is None or node.var.name != var or node.properties is not None or node.where is not None:
        return None
    return node.labels.name if isinstance(node.labels, A.LabelName) else None
