"""Plan one query: which extension calls to bind, the probes that fetch their arguments, and
the rewritten text that reads the computed values from parameters.

Everything here is static (depends on the query text and the backend's dialect only), so a plan is
built once per query and cached. For each clause (part of a clause) that calls extensions, in
dependency order, a probe is the query prefix up to that point, already rewritten and without
write clauses, followed by `RETURN DISTINCT <argument columns>`. Executing the plan is
`planner.py`'s job; binding forms are `bind.py`'s; FalkorDB bridges are `bridges/`'.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import pairwise
from typing import Any

from core.dialect import Capability, Dialect
from core.errors import argument_error

from . import bind, late, reduce
from ..bridges.rule import Refusal
from ..compat import apoc_maps, stored_vectors
from ..cypher import ast as A
from ..cypher.scope import NODE, RELATIONSHIP
from ..cypher.semantics import AGGREGATES
from ..cypher.render import name as quote_name
from ..cypher.splice import outermost, splice as splice_text
from ..cypher.tokens import IDENT, tokenize
from .calls import algorithm_value, check_not_optional, check_parameters, show_arguments, show_procedure
from .plan import AlgorithmStep, ArgPlan, ProbeStep, Site, VirtualStep, seek_param
from .scopes import imported, plannable, scope_after
from ..plan_builder import Render, call_tail, carried, yielded
from ..registry import ArgKind, Registry, VirtualProcedure
from .split import split_probe

Edit = tuple[int, int, str]

#: The rewrite that also plans Cypher 25's `MATCH ... SEARCH` (compat/vector.py).
VECTOR_QUERY = "db.index.vector.queryNodes"
#: Functions whose value differs between evaluations of one row.
_UNREPEATABLE = frozenset({"rand", "randomuuid"})


def splice(text: str, start: int, end: int, edits: list[Edit]) -> str:
    """`text[start:end]` with the edits inside it applied; of nested edits the outer one wins."""
    inside = [((e_start - start, e_end - start), new) for e_start, e_end, new in edits
              if start <= e_start and e_end <= end]
    return splice_text(text[start:end], outermost(inside))


def aggregates(projection: A._Projection, registry: Registry) -> bool:
    """Whether a WITH/RETURN aggregates (an extension named like an aggregate does not)."""
    return any(isinstance(n, A.CountStar) or (isinstance(n, A.FunctionCall) and n.lower_name in AGGREGATES
                                              and n.name not in registry)
               for item in projection.items for n in item.walk())


def _variables(node: A.Node) -> set[str]:
    return {v.name for v in node.find_all(A.Variable)}


# ------------------------------------------------------------------ the planner proper

class PartPlanner:
    """Plans one single query (a UNION part) of `text`; edits are shared with the other parts,
    steps accumulate here. Plugins see it as a `plan_builder.PlanBuilder`."""

    def __init__(self, text: str, part: A.SingleQuery, registry: Registry, dialect: Dialect,
                 edits: list[Edit], counter: Iterator[int], outer: tuple[list[str], dict] | None = None):
        """`outer`, for the body of a `CALL { }`: the probe lines that give its incoming rows
        (the enclosing query's clauses before it, and the import) and the variables they bind."""
        self.text, self.part, self.registry, self.dialect = text, part, registry, dialect
        self.edits = edits                       # shared, kept sorted
        self.counter = counter
        self.steps: list = []
        self.placeholders: dict[str, Any] = {}
        #: messages of the runtime refusals the part's rewrites may raise (`bridges.rule.Refusal`)
        self.refusals: list = []
        self.outer_lines, scope = outer if outer is not None else ([], {})
        self.nested = outer is not None
        self.clauses = part.clauses
        self.scopes = [scope]
        for clause in self.clauses:
            self.scopes.append(scope_after(clause, self.scopes[-1], text, registry))

    # -- what plugins may do (plan_builder.PlanBuilder)

    def scope(self, clause_index: int) -> dict[str, str]:
        return self.scopes[clause_index]

    def fresh(self) -> int:
        return next(self.counter)

    def add_late(self, probe: str, render: Render, follow=None, wanted=None) -> str:
        marker = f"\x00late{self.fresh()}\x00"
        self.steps.append(late.LateStep(probe, marker, render, follow, wanted))
        return marker

    def add_virtual(self, procedure: VirtualProcedure, arguments: tuple, placeholder: Any) -> str:
        param = f"__v{self.fresh()}"
        self.placeholders[param] = placeholder
        self.steps.append(VirtualStep(procedure, param, arguments))
        return param

    def may_refuse(self, message: str) -> None:
        if message not in self.refusals:
            self.refusals.append(Refusal(message))

    def render(self, node_or_span) -> str:
        start, end = node_or_span.span if isinstance(node_or_span, A.Node) else node_or_span
        return splice(self.text, start, end, self.edits)

    def add_edit(self, edit: Edit) -> None:
        self.edits.append(edit)
        self.edits.sort(key=lambda e: (e[0], e[1]))

    def where_keyword_start(self, clause: A.Clause) -> int:
        """Offset of the WHERE keyword before `clause.where`."""
        head = self.text[clause.span[0]:clause.where.span[0]]
        keyword = [t for t in tokenize(head) if t.kind == IDENT and t.upper == "WHERE"][-1]
        return clause.span[0] + keyword.start

    # -- entry point

    def plan(self, joins=None) -> None:
        """Plan every extension call of the part. `joins` (extensions/planner/joins.py) claims the calls
        it answers from an index and plans its steps, in dependency order with the probes."""
        calls = self.extension_calls()
        for call, clause_index, ancestors in calls:
            self.check_call(call, clause_index, ancestors)
        dynamic_labels, vectors, apoc = map(self.dialect.has, (Capability.DYNAMIC_LABELS, Capability.VECTORS,
                                                               Capability.APOC))
        for index, clause in enumerate(self.part.clauses):
            if isinstance(clause, A.CallProcedure) and self.registry.procedure(clause.name):
                self.plan_algorithm(index, clause)
            elif isinstance(clause, A.CallProcedure) and self.registry.virtual(clause.name, self.dialect):
                self.plan_virtual(index, clause)
            elif isinstance(clause, A.CallProcedure) and self.registry.rewrite(clause.name, self.dialect):
                self.registry.rewrite(clause.name, self.dialect).plan(self, index, clause)
            elif isinstance(clause, A.Match) and clause.search and self.registry.rewrite(VECTOR_QUERY, self.dialect):
                self.registry.rewrite(VECTOR_QUERY, self.dialect).plan(self, index, clause)      # Cypher 25 SEARCH
            elif isinstance(clause, A.Show) and show_procedure(self.registry, self.dialect, clause):
                self.plan_show(index, clause)
            elif not dynamic_labels and late.has_dynamic_labels(clause):
                late.plan_dynamic_labels(self, index, clause)
            elif not vectors and late.is_vector_property_call(clause):
                late.plan_vector_property(self, index, clause)
            if not apoc:
                apoc_maps.plan(self, index, clause)
            if not vectors:
                stored_vectors.plan(self, index, clause)
        subqueries = [index for index, clause in enumerate(self.part.clauses)
                      if plannable(clause) and self.subquery_calls(clause)]
        groups: dict[tuple, list] = {}
        for call, clause_index, ancestors in calls:
            if joins is not None and joins.claims(call):
                continue
            stage, scope = self.stage(call, clause_index, ancestors)
            _, scope = self.context(call, ancestors, scope)
            self.check_scope(call, scope, clause_index)
            branches = _context_key(call, ancestors)
            key = (clause_index, stage != "input", self.level(call), len(branches), stage, branches)
            groups.setdefault(key, []).append((call, ancestors, scope))
        # Dependency order: clause by clause; within a clause, the rows entering it before its
        # WHERE / ORDER BY; inner calls before the calls they feed; comprehension sources first.
        for key in sorted(groups, key=lambda k: k[:4]):
            if joins is not None:
                joins.plan_until(key[:2])
            while subqueries and subqueries[0] < key[0]:      # its values feed the clauses after it
                self.plan_subquery(subqueries.pop(0))
            self.plan_probe(key[0], key[4], groups[key])
        for index in subqueries:
            self.plan_subquery(index)
        if joins is not None:
            joins.plan_until(None)
        if not self.nested:
            self.alias_return_items()

    def extension_calls(self) -> list[tuple[A.FunctionCall, int, tuple]]:
        """The calls of this part's own clauses (those in a `CALL { }` body: `plan_subquery`)."""
        found = []
        for index, clause in enumerate(self.part.clauses):
            for node, ancestors in _walk(clause, ()):
                if isinstance(node, A.FunctionCall) and node.name in self.registry and "." not in node.name \
                        and not (plannable(clause) and any(isinstance(a, A.CallSubquery) for a in ancestors)):
                    found.append((node, index, ancestors))
        return found

    def subquery_calls(self, clause: A.CallSubquery) -> list[A.FunctionCall]:
        return [node for node in clause.query.walk()
                if isinstance(node, A.FunctionCall) and node.name in self.registry and "." not in node.name]

    def plan_subquery(self, clause_index: int) -> None:
        """Plan the extension calls in the body of the `CALL { }` at `clause_index` as those of a
        query of its own, whose probes start from the rows entering the CALL: this part's clauses
        before it and the import (`WITH p` in the body, `CALL (p)`; uncorrelated, one row
        holding none of the outer variables). The values are bound for every row the body sees:
        its ORDER BY / LIMIT run per incoming row, so no projection is cut to a top k."""
        clause = self.part.clauses[clause_index]
        calls = self.subquery_calls(clause)
        lines = self.prefix_lines(clause_index, calls, ", ".join(sorted({c.name + "()" for c in calls})))
        for body in clause.query.parts:                 # each branch of a UNION alike
            inner = PartPlanner(self.text, body, self.registry, self.dialect, self.edits, self.counter,
                                imported(clause, body, lines, self.scopes[clause_index]))
            inner.plan()
            self.steps += inner.steps
            self.placeholders.update(inner.placeholders)

    def check_call(self, call: A.FunctionCall, clause_index: int, ancestors: tuple) -> None:
        ext = self.registry.get(call.name)
        ext.check_arity(len(call.args))
        if any(isinstance(a, A.CallSubquery) for a in ancestors):
            raise argument_error(f"{call.name}() cannot be used inside CALL {{ }} IN TRANSACTIONS; "
                                 "compute it after the subquery, in a WITH or RETURN.")
        for arg in call.args:
            for inner in arg.walk():
                if isinstance(inner, A.CountStar) or (
                        isinstance(inner, A.FunctionCall) and inner.lower_name in AGGREGATES
                        and inner.name not in self.registry):
                    raise argument_error(
                        f"The arguments of {call.name}() cannot contain an aggregation "
                        f"({inner.text_in(self.text)}); compute it in a WITH first, e.g. "
                        f"WITH ..., {inner.text_in(self.text)} AS a ... {call.name}(..., a)")
        for i, (arg, kind) in enumerate(zip(call.args, ext.arg_kinds)):
            if kind is ArgKind.PROPERTY and not isinstance(arg, A.Property):
                raise argument_error(
                    f"Argument {i + 1} of {call.name}() must be a property of a node, like "
                    f"n.channel; got {arg.text_in(self.text)}. Usage: {ext.signature or ext.name}")

    def level(self, call: A.FunctionCall) -> int:
        inner = [self.level(n) for arg in call.args for n in arg.walk()
                 if isinstance(n, A.FunctionCall) and n.name in self.registry]
        return 1 + max(inner) if inner else 0

    def stage(self, call, clause_index: int, ancestors: tuple) -> tuple[str, dict]:
        """Where the call's arguments are evaluated: 'input' (rows entering the clause),
        'where' (after the clause's pattern/projection) or 'projection' (ORDER BY on aliases)."""
        clause = self.part.clauses[clause_index]
        before, after = self.scopes[clause_index], self.scopes[clause_index + 1]
        inside = set(map(id, ancestors)) | {id(call)}
        where = getattr(clause, "where", None)
        if where is not None and id(where) in inside:
            return "where", after
        if isinstance(clause, A._Projection) and not _arg_vars(call) <= set(before):
            ordering = [*clause.order_by, clause.skip, clause.limit]
            if any(o is not None and id(o) in inside for o in ordering):
                aliases = [i.name(self.text) for i in clause.items]
                return "projection", {n: after.get(n, "value") for n in aliases}
        return "input", before

    def context(self, call, ancestors: tuple, scope: dict) -> tuple[tuple[str, ...], dict]:
        """UNWIND / WHERE lines that reproduce the comprehension or CASE branch around a call."""
        lines: list[str] = []
        scope = dict(scope)
        chain = (*ancestors, call)
        for node, child in pairwise(chain):
            if isinstance(node, (A.ListComprehension, A.Quantifier)) and child is not node.source:
                lines.append(f"UNWIND {self.render(node.source)} AS {quote_name(node.var.name)}")
                scope[node.var.name] = "value"
                if node.where is not None and child is not node.where:
                    lines.append(f"WITH * WHERE {self.render(node.where)}")
            elif isinstance(node, A.Reduce) and child is node.expr:
                lines.append(f"UNWIND {self.render(node.source)} AS {quote_name(node.var.name)}")
                scope[node.var.name] = "value"
            elif isinstance(node, A.CaseExpr):
                for when, then in node.whens:
                    if child is then:
                        condition = (f"{self.render(node.subject)} = {self.render(when)}"
                                     if node.subject is not None else self.render(when))
                        lines.append(f"WITH * WHERE {condition}")
        return tuple(lines), scope

    def check_scope(self, call, scope: dict, clause_index: int) -> None:
        missing = sorted(_arg_vars(call) - set(scope))
        if missing:
            raise argument_error(
                f"The arguments of {call.name}() use {', '.join(missing)}, which is not known where "
                f"its values are computed (before the clause runs). Bind it in an earlier MATCH or WITH, "
                f"then call {call.name}() in the next clause.")

    # -- probes

    def prefix_lines(self, clause_index: int, calls: list, call_names: str) -> list[str]:
        """Rewritten clauses before `clause_index`, without write clauses (checked to be safe)."""
        lines: list[str] = list(self.outer_lines)
        created: dict[str, str] = {}
        written_keys: dict[str, str] = {}
        written_vars: dict[str, str] = {}
        for index, clause in enumerate(self.part.clauses[:clause_index]):
            keyword = self.text[clause.span[0]:clause.span[1]].split(None, 1)[0].upper()
            if isinstance(clause, A.UPDATING) or (isinstance(clause, A.CallSubquery) and _writes(clause)):
                for name in set(self.scopes[index + 1]) - set(self.scopes[index]):
                    created[name] = keyword
                for item in clause.walk():
                    if isinstance(item, A.SetItem) and item.kind == "property":
                        written_keys[item.target.key] = keyword
                    elif isinstance(item, (A.SetItem, A.RemoveItem)) and isinstance(item.target, A.Variable):
                        written_vars[item.target.name] = keyword
                    elif isinstance(item, A.RemoveItem) and item.kind == "property":
                        written_keys[item.target.key] = keyword
                continue
            _check_reads([clause], created, written_keys, written_vars, call_names)
            lines.append(self.render(clause))
        _check_reads(calls, created, written_keys, written_vars, call_names)
        return lines

    def stage_lines(self, clause: A.Clause, stage: str) -> list[str]:
        if stage == "where":
            return [splice(self.text, clause.span[0], self.where_keyword_start(clause), self.edits)]
        if stage == "projection":
            items = []
            for i, item in enumerate(clause.items):
                expr = self.render(item.expr)
                if item.alias is None and isinstance(item.expr, A.Variable):
                    items.append(expr)
                else:
                    items.append(f"{expr} AS {quote_name(item.name(self.text))}")
            star = ["*"] if clause.star else []
            return [("WITH DISTINCT " if clause.distinct else "WITH ") + ", ".join(star + items)]
        return []

    def plan_probe(self, clause_index: int, stage: str, calls: list) -> None:
        """One probe for calls sharing a clause, stage and context (rendered now, after the
        calls they depend on have been replaced)."""
        clause = self.part.clauses[clause_index]
        names = ", ".join(sorted({c.name + "()" for c, _, _ in calls}))
        lines = self.prefix_lines(clause_index, [c for c, _, _ in calls], names)
        first_call, ancestors, scope = calls[0]
        context, _ = self.context(first_call, ancestors, scope)
        lines += self.stage_lines(clause, stage) + list(context)
        columns: dict[str, int] = {}

        def column(expr: str) -> int:
            return columns.setdefault(expr, len(columns))

        sites = [self.plan_site(call, call_scope, column) for call, _, call_scope in calls]
        if stage == "input":
            for site, (call, ancestors, _) in zip(sites, calls):
                self.plan_cut(clause, call, ancestors, site)
        projection = ", ".join(f"{expr} AS __c{i}" for expr, i in columns.items())
        split = split_probe(lines, list(columns), sites, self.dialect, frozenset(scope))
        lines.append(f"RETURN DISTINCT {projection}")
        self.steps.append(ProbeStep("\n".join(lines), sites, split))

    def plan_site(self, call: A.FunctionCall, scope: dict, column) -> Site:
        ext = self.registry.get(call.name)
        param = f"__ext{next(self.counter)}"
        args: list[ArgPlan] = []
        index_arg, keys, key_cols = None, [], []
        for i, arg in enumerate(call.args):
            kind = ext.arg_kinds[i]
            if kind is ArgKind.PROPERTY or (kind is ArgKind.NODE_PROPERTY_OR_VALUE and _node_property(arg, scope)):
                plan = ArgPlan("property", self.render(arg.expr), key=arg.key)
            elif kind is ArgKind.NODE or (kind in (ArgKind.NODE_OR_VALUE, ArgKind.NODE_PROPERTY_OR_VALUE,
                                                   ArgKind.ENTITY_OR_VALUE)
                                          and isinstance(arg, A.Variable) and scope.get(arg.name) == NODE):
                plan = ArgPlan("node", self.render(arg))
            elif kind is ArgKind.ENTITY_OR_VALUE and isinstance(arg, A.Variable) and scope.get(arg.name) == RELATIONSHIP:
                plan = ArgPlan("relationship", self.render(arg))
            elif kind is ArgKind.ENTITY_OR_VALUE and len(call.args) == ext.max_args:    # `nodes(p)[0]`
                plan = ArgPlan("node", self.render(arg))
            else:
                plan = ArgPlan("value", self.render(arg))
            if plan.kind == "value":
                plan.value_col = column(plan.text)
                entity = _one_entity(arg, scope) if index_arg is None else None
                if entity is not None:      # indexed by that node's id, not keyed by its value
                    plan.entity = self.render(entity)
                    self.entity_columns(plan, plan.entity, False, column)
            else:
                self.entity_columns(plan, plan.text, plan.kind == "relationship", column)
                plan.prop_cols = tuple((p, column(f"{plan.text}.{quote_name(p)}")) for p in ext.node_properties)
            plan.uses = frozenset(_variables(arg))
            args.append(plan)
            if not _varies(arg):
                continue
            if (plan.kind != "value" or plan.entity) and index_arg is None:
                index_arg = i
            else:
                expr = bind.key_expr(self.dialect, plan.text, plan.kind != "value")
                keys.append(expr)
                plan.key_col = column(expr)
                key_cols.append(plan.key_col)
        index = None if index_arg is None else self.dialect.node_index(args[index_arg].indexed_by)
        lookup = bind.Lookup(self.dialect, param, index, tuple(keys))
        self.add_edit((*call.span, lookup.text))
        self.placeholders.update(lookup.placeholders())
        return Site(ext, lookup, args, index_arg, key_cols)

    def entity_columns(self, plan: ArgPlan, entity: str, relationship: bool, column) -> None:
        """The probe columns that identify the node or relationship `entity` for `plan`."""
        plan.id_col = column(f"id({entity})")
        if not self.dialect.integer_ids:
            plan.eid_col = column(f"elementId({entity})")
        plan.labels_col = column(f"{'type' if relationship else 'labels'}({entity})")

    def plan_cut(self, clause: A.Clause, call: A.FunctionCall, ancestors: tuple, site: Site) -> None:
        """Bind only the rows of the projection the query needs (`reduce.plan_projection`) when the
        call is one of its items and its value depends on one node only."""
        item = ancestors[-1] if ancestors else None
        if self.nested or not isinstance(clause, (A.With, A.Return)) or not isinstance(item, A.ReturnItem) \
                or item.expr is not call or item not in clause.items:
            return
        if site.lookup.index is None or site.lookup.keys or aggregates(clause, self.registry):
            return
        site.reduction = reduce.plan_projection(clause, item, self.text)
        if site.reduction is not None:
            site.marker = f"\x00cut{next(self.counter)}\x00"
            self.add_edit((clause.span[0], clause.span[0], site.marker))

    # -- algorithms

    def plan_algorithm(self, clause_index: int, clause: A.CallProcedure) -> None:
        procedure = self.registry.procedure(clause.name)
        check_not_optional(procedure.name, clause)
        args = clause.args or ()
        if len(args) > 1 or (args and not isinstance(args[0], (A.MapLiteral, A.Parameter))):
            raise argument_error(f"{procedure.name}() takes one map of parameters. Usage: "
                                 f"{procedure.signature or procedure.name + '({...})'}")
        if args and isinstance(args[0], A.MapLiteral):
            check_parameters(procedure, [k for k, _ in args[0].items])
        fields, names = yielded(procedure, clause)
        param = f"__alg{next(self.counter)}"
        row = f"__r{param[5:]}"
        # The scan binds the yielded node name directly: FalkorDB loses a node's identity for
        # pattern predicates once it is renamed in a WITH (`__a AS node`).
        node_yielded = procedure.yields[0] in fields
        node = quote_name(names.get(procedure.yields[0], procedure.yields[0])) if node_yielded else f"__a{param[5:]}"
        kept = carried(self, clause_index)
        keep = ", ".join(kept + [node])
        outputs = [node if f == procedure.yields[0]
                   else f"{algorithm_value(procedure, row, f)} AS {quote_name(names.get(f, f))}"
                   for f in fields]
        lookup = bind.Lookup(self.dialect, param, self.dialect.node_index(node), ())
        scan = f"MATCH ({node}) WITH {keep}, {lookup.text} AS {row} WHERE {row} IS NOT NULL"
        # FalkorDB seeks `id(n) = x` for a variable x, not for an expression such as `pair[0]`
        pair = ", ".join(kept + [f"{row}s[0] AS {row}i", f"{row}s[1] AS {row}"])
        seek = (f"UNWIND ${seek_param(param)} AS {row}s WITH {pair} MATCH ({node}) WHERE {lookup.index} = {row}i "
                f"WITH {keep}, {row}")
        text = f"{scan} WITH {', '.join(kept + outputs)}"
        self.add_edit((*clause.span, text + call_tail(self, clause, fields, names)))
        self.placeholders.update(lookup.placeholders())
        self.steps.append(AlgorithmStep(procedure, lookup, args[0] if args else None,
                                        self._reduction(clause_index, procedure, fields, names), scan, seek))

    def _reduction(self, clause_index: int, procedure, fields: list[str], names: dict[str, str]):
        """The rows of the CALL the query needs (`reduce.py`), when it yields one value per node."""
        value = procedure.yields[1] if len(procedure.yields) == 2 else None
        if value is None or value not in fields:
            return None
        clause = self.part.clauses[clause_index]
        following = self.part.clauses[clause_index + 1] if clause_index + 1 < len(self.part.clauses) else None
        aggregating = isinstance(following, A._Projection) and aggregates(following, self.registry)
        return reduce.plan(clause, following, names.get(value, value), self.text, aggregating)

    def plan_virtual(self, clause_index: int, clause: A.CallProcedure) -> None:
        """The CALL becomes an UNWIND of the rows the procedure will answer (`$__vN`)."""
        procedure = self.registry.virtual(clause.name, self.dialect)
        check_not_optional(procedure.name, clause)
        fields, names = yielded(procedure, clause)
        param = self.add_virtual(procedure, clause.args or (), [])
        row = f"__r{param[3:]}"
        outputs = [f"{row}[{procedure.yields.index(f)}] AS {quote_name(names.get(f, f))}" for f in fields]
        text = f"UNWIND ${param} AS {row} WITH {', '.join(carried(self, clause_index) + outputs) or '*'}"
        self.add_edit((*clause.span, text + call_tail(self, clause, fields, names)))

    def plan_show(self, clause_index: int, clause: A.Show) -> None:
        """SHOW X [YIELD ...] [WHERE ...] [RETURN ...] becomes the UNWIND a CALL would: the
        columns are bound, ordering, filtering and the RETURN run in the database."""
        procedure = show_procedure(self.registry, self.dialect, clause)
        fields, names = yielded(procedure, clause)
        param = self.add_virtual(procedure, show_arguments(clause), [])
        row = f"__r{param[3:]}"
        outputs = [f"{row}[{procedure.yields.index(f)}] AS {quote_name(names.get(f, f))}" for f in fields]
        text = f"UNWIND ${param} AS {row} WITH {', '.join(outputs)}"
        if clause.order_by or clause.skip is not None or clause.limit is not None:
            text += " WITH *" + "".join(
                [" ORDER BY " + ", ".join(self.render(o) for o in clause.order_by) if clause.order_by else "",
                 f" SKIP {self.render(clause.skip)}" if clause.skip is not None else "",
                 f" LIMIT {self.render(clause.limit)}" if clause.limit is not None else ""])
        if clause.where is not None:
            text += f" WITH * WHERE {self.render(clause.where)}"
        if clause is self.part.clauses[-1]:
            shown = fields if clause.yields is not None else list(procedure.shown)
            text += " RETURN " + ", ".join(quote_name(names.get(f, f)) for f in shown)
        self.add_edit((*clause.span, text))

    # -- column names

    def alias_return_items(self) -> None:
        """Keep the client's column names: an unaliased RETURN item that was rewritten gets
        its original text as alias."""
        last = self.part.clauses[-1] if self.part.clauses else None
        if not isinstance(last, A.Return):
            return
        for item in last.items:
            start, end = item.expr.span
            if item.alias is None and any(start <= s and e <= end and (s, e) != (end, end)
                                          for s, e, _ in self.edits):
                self.add_edit((end, end, f" AS {quote_name(item.expr.text_in(self.text))}"))


# ------------------------------------------------------------------ small analyses

def _walk(node: A.Node, ancestors: tuple) -> Iterator[tuple[A.Node, tuple]]:
    """Each node under `node` (pre-order) with its ancestors; a loop, not recursion, because
    left-deep chains (`:A:B:...`, `a + b + ...`) can be thousands of levels deep."""
    stack = [(node, ancestors)]
    while stack:
        node, ancestors = stack.pop()
        yield node, ancestors
        inner = (*ancestors, node)
        stack.extend((child, inner) for child in reversed(list(node.children())))


def _context_key(call: A.FunctionCall, ancestors: tuple) -> tuple:
    """Identifies the comprehension / CASE branches around a call (calls sharing it share a probe)."""
    chain = (*ancestors, call)
    return tuple((id(node), id(child)) for node, child in pairwise(chain)
                 if isinstance(node, (A.ListComprehension, A.Quantifier, A.Reduce, A.CaseExpr)))


def _arg_nodes(call: A.FunctionCall) -> set[str]:
    return set().union(*(_variables(a) for a in call.args)) if call.args else set()


def _arg_vars(call: A.FunctionCall) -> set[str]:
    """Free variables of the call's arguments (minus comprehension-local ones bound inside)."""
    names = _arg_nodes(call)
    for arg in call.args:
        for node in arg.walk():
            if isinstance(node, (A.ListComprehension, A.Quantifier, A.Reduce)):
                names.discard(node.var.name)
            if isinstance(node, A.Reduce):
                names.discard(node.acc.name)
    return names


def _node_property(arg: A.Expr, scope: dict) -> bool:
    """`n.key` on a node variable."""
    return isinstance(arg, A.Property) and isinstance(arg.expr, A.Variable) and scope.get(arg.expr.name) == NODE


def _one_entity(arg: A.Expr, scope: dict) -> A.Variable | None:
    """The node variable a value argument is computed from alone (`n.description + ' ' +
    n.name`), if it is: within one execution its value is then one per node, so the call's
    values can be bound by the node's id (a list on FalkorDB) instead of keyed by the value
    itself (a map of long texts, read linearly). None for anything else (a relationship
    variable may be a variable-length list), and for expressions that differ between
    evaluations (`rand()`) or read the graph."""
    variables = list(arg.find_all(A.Variable))
    if len({v.name for v in variables}) != 1 or scope.get(variables[0].name) != NODE:
        return None
    for node in arg.walk():
        if isinstance(node, (A.PatternExpr, A.PatternComprehension, A._Subquery)) or (
                isinstance(node, A.FunctionCall) and node.name.lower() in _UNREPEATABLE):
            return None
    return variables[0]


def _varies(arg: A.Expr) -> bool:
    """Whether an argument can differ between rows (it mentions a variable)."""
    return any(isinstance(n, (A.Variable, A.PatternExpr, A.PatternComprehension)) for n in arg.walk())


def _writes(node: A.Node) -> bool:
    return any(isinstance(n, A.UPDATING) for n in node.walk())


class _Reads:
    """Variables and property keys a set of nodes reads."""

    def __init__(self, nodes):
        self.variables: set[str] = set()
        self.keys: set[str] = set()
        for root in nodes:
            for n in root.walk():
                if isinstance(n, A.Variable):
                    self.variables.add(n.name)
                elif isinstance(n, A.Property):
                    self.keys.add(n.key)


def _check_reads(nodes, created, written_keys, written_vars, call_names) -> None:
    """Raise when a probe would read something the omitted write clauses create or change."""
    reads = _Reads(nodes)
    for name in reads.variables:
        if name in created:
            _write_dependency(call_names, name, created[name])
        if name in written_vars:
            _write_dependency(call_names, name, written_vars[name])
    for key in reads.keys:
        if key in written_keys:
            _write_dependency(call_names, f"property {key}", written_keys[key])


def _write_dependency(call_names: str, what: str, keyword: str):
    raise argument_error(
        f"{call_names} needs its argument values before the query runs, but they depend on "
        f"{what}, which this query writes ({keyword}). Extension arguments may only depend on data "
        f"that exists before the query starts. Split it into two queries: first the {keyword}, "
        f"then the query that calls {call_names}.")
