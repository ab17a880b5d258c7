"""The extension planner the session calls: pass-through, or probe -> compute -> bind.

`ExtensionPlanner.execute(query, params, runner)`:
- a query that mentions no extension and needs no dialect bridge goes to the backend as is
  (a substring + precompiled regex scan decides, before any parsing; the decision is cached
  by text like the plans);
- otherwise the query is parsed and planned once per text (`probe.py`):
  the probes run through the same runner (so they see the open transaction's writes), the
  evaluators compute the values (off the event loop for big batches), and the rewritten query
  runs with the values bound as parameters (`bind.py`'s forms, `kernels.py`'s batch work, and
  `runners.py`'s rewriting of later queries); a probe whose calls' nodes and values vary
  independently runs as two smaller probes (`split.py`), sent to the database together
  (`separated.py`, `runners.read_together`), and probe rows are reused while the graph is
  unchanged (`probe_cache.py`); where they are not (behind a Neo4j), values computed from probe
  rows equal to earlier ones are (`computed.py`);
- a virtual procedure's CALL (describe(), compatibility shims) is answered in Python and its
  rows bound like extension values; a query that is only that CALL never reaches the database;
- `EXPLAIN` sends the rewritten query with placeholder parameters (nothing is computed);
  `PROFILE` runs the probes, then profiles the rewritten query.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Hashable
from functools import lru_cache, partial
from itertools import count
from typing import Any

from core.backend import ListResult, Result, Summary, read_rows
from core.dialect import Capability, Dialect
from core.errors import CypherError, argument_error, syntax_error

from .. import bridges, trimmed_index, trimmed_keys
from ..bridges import fractions
from ..compat import apoc_upstream
from . import existence, kernels
from ..cypher.constants import constant
from .cycles import CycleGuard
from .late import LateStep
from ..cypher import ast as A
from ..cypher import semantics
from ..cypher.effects import effects
from ..cypher.parser import parse
from ..cypher.tokens import MalformedLiteral
from .joins import JoinPlanner, JoinStep, run_join
from .calls import check_parameters, local_call, scalar_values
from .plan import AlgorithmStep, LocalCall, Plan, ProbeStep, Site, VirtualStep
from .probe import PartPlanner, splice
from .computed import ComputedValues, data_key
from .probe_cache import ProbeCache, estimate_value_bytes
from .runners import Rewriting, bound_edits, consistently, graph_context
from ..registry import CallContext, Registry
from .separated import SeparatedProbes
from .triggers import serves_apoc, triggered, triggers
from ..temporal import fraction, kinds
from ..temporal.kinds import KindStore
from ..temporal.query import compile_query
from ..temporal.values import NotComputed

_CACHE_SIZE = 2048
#: Longer queries are planned in a worker thread and not cached (parsing 600 KB takes ~3 s).
_PLAN_INLINE_CHARS = 65_536


class ExtensionPlanner(SeparatedProbes):
    """Plans and runs client queries for one backend, by its dialect (`core/dialect.py`)."""

    def __init__(self, registry: Registry, *, dialect: Dialect, probe_cache: ProbeCache | None = None,
                 constraints=None, datetime_kinds: KindStore | None = None):
        self.registry = registry
        self.dialect = dialect
        #: behind a Neo4j without APOC: APOC functions rewritten into Neo4j's Cypher (compat/apoc_upstream.py),
        #: the other bridge rules as on a Neo4j with APOC
        self.serve_apoc = serves_apoc(dialect)
        self._bridged_dialect = apoc_upstream.with_apoc(dialect) if self.serve_apoc else dialect
        #: the date-time kind written per property key (`temporal/kinds.py`), where the database loses it
        self.datetime_kinds = None if dialect.has(Capability.EXACT_TEMPORALS) else datetime_kinds
        #: where the existence constraints the proxy checks live (`NameStore.existence`), where
        #: the database has no constraint commands of Neo4j's
        self.constraints = None if dialect.has(Capability.SCHEMA_COMMANDS) else constraints
        self.probe_cache = probe_cache
        #: values by the content of the probe rows they were computed from
        self.computed = ComputedValues()
        #: the graph check of variable-length ranges (FalkorDB, cycles.py)
        self.cycles = CycleGuard()
        self._exact_plan = lru_cache(maxsize=256)(self._capped)
        self.plan = lru_cache(maxsize=_CACHE_SIZE)(self._decide)
        self._steps = {ProbeStep: self._run_probe, AlgorithmStep: self._run_algorithm,
                       VirtualStep: self._run_virtual, JoinStep: self._run_join}
        self._triggers = triggers([e.name for e in registry], self._procedure_names(), self.dialect)
        #: Neo4j analyses variables itself; the embedded database does not (cypher/semantics.py).
        self._analyse = not dialect.has(Capability.NEO4J_CYPHER)

    def _procedure_names(self) -> list[str]:
        return ([p.name for p in self.registry.procedures()]
                + [v.name for v in self.registry.virtual_procedures(self.dialect) if v.callable]
                + [r.name for r in self.registry.rewrites(self.dialect)])

    def _names(self) -> list[str]:
        return [e.name for e in self.registry] + self._procedure_names()

    async def execute(self, query: str, params: dict[str, Any], runner) -> Result:
        """The result of `query`; on FalkorDB, the date-time kinds it writes are recorded first
        and the date-times it reads typed by them (`temporal/kinds.py`)."""
        if self.datetime_kinds is None:
            return await self._execute(query, params, runner)
        database = runner.database or ""
        if len(query) > _PLAN_INLINE_CHARS:
            await asyncio.to_thread(kinds.prepare, query)
        before = self.datetime_kinds.fine_keys(database)
        if not _EXPLAINED.match(query):
            kinds.record_writes(self.datetime_kinds, database, query, params)
        fine = self.datetime_kinds.fine_keys(database)
        if became_fine := fine - before:
            await fractions.check_new_keys(graph_context(runner).read, became_fine, self.datetime_kinds, database)
        sends = fraction.has_fraction(params)
        sent, sent_params = fractions.rewrite(query, params, lambda key: self.datetime_kinds.of(database, key),
                                              fine, sends)
        result = await self._execute(sent, sent_params, runner)
        return kinds.typed(result, self.datetime_kinds, database, query, params, sends)

    async def _execute(self, query: str, params: dict[str, Any], runner) -> Result:
        if len(query) <= _PLAN_INLINE_CHARS:
            plan = self.plan(query)
        else:
            plan = await asyncio.to_thread(self._decide, query)
        if plan is not None and plan.constant is not None:
            answer, plan = plan.constant
            try:
                return ListResult(answer.columns, answer.run(params), Summary(database=runner.database))
            except NotComputed:                 # the database path, as without the Python answer
                if isinstance(plan, CypherError):
                    raise plan from None
        if plan is None:
            return await self._run_statement(query, params, runner, bool(_EXPLAINED.match(query)))
        if plan.prefix == "EXPLAIN" or not (plan.steps or plan.ranges):
            return await self._run_plan(plan, params, runner)
        return await consistently(runner, partial(self._run_plan, plan, params), writes=_may_write(plan))

    async def _run_plan(self, plan: Plan, params: dict[str, Any], runner) -> Result:
        """The planned query's steps, then its statement."""
        if plan.ranges and plan.prefix != "EXPLAIN":
            plan = await self._exact(plan, runner)
        if plan.local is not None:
            return await self._answer_locally(plan.local, plan.prefix, params, runner)
        if plan.command is not None:
            return await self._run_command(plan, params, runner)
        if plan.derived:
            params = {**params, **bridges.derive(plan.derived, params, explain=plan.prefix == "EXPLAIN")}
        text = plan.text if plan.variants is None else self._variant(plan, params)
        if plan.prefix == "EXPLAIN":
            for step in plan.steps:
                if isinstance(step, LateStep):
                    text = text.replace(step.marker, step.render([]))
                elif isinstance(step, ProbeStep):                  # nothing bound: no cut
                    for marker, nothing in bound_edits(step, {}):
                        text = text.replace(marker, nothing)
            result = await runner.run(text, {**params, **plan.placeholders})
            if plan.cartesian:
                summary = await result.consume()
                if bridges.notifications.shows_cartesian_product(summary.plan):
                    summary.notifications.extend(plan.cartesian)
            return result
        values: dict[str, Any] = {}
        for step in plan.steps:
            if isinstance(step, LateStep):
                found = await self._late_values(step, {**params, **values}, runner)
                runner = Rewriting(runner, [(step.marker, step.render(found))])   # later probes read it too
            else:
                bound = await self._run_step(step, {**params, **values}, runner)
                values.update(bound)
                if edits := bound_edits(step, bound):
                    runner = Rewriting(runner, edits)
        if isinstance(runner, Rewriting):
            text = runner.rewrite(text)
        result = await self._refusing(plan, self._run_statement(text, {**params, **values}, runner,
                                                                plan.prefix == "EXPLAIN"))
        if plan.zoned and (columns := bridges.zoned.utc_columns(plan.zoned, params)):
            return bridges.zoned.ZonedColumns(result, columns)
        return result

    async def _late_values(self, step: LateStep, params: dict[str, Any], runner) -> list[Any]:
        """The values a late step's probes find (its rounds, with `follow`); `runner` writes the
        earlier late edits' texts into a probe that reads them."""
        found: list[Any] = []
        if step.wanted is not None and not await step.wanted(runner):
            return found
        probe: str | None = step.probe
        while probe is not None:
            found += [row[0] for row in await self._probe_rows(probe, params, runner)]
            probe = step.follow(found) if step.follow is not None else None
        return found

    async def _run_statement(self, text: str, params: dict[str, Any], runner, explain: bool) -> Result:
        """The statement itself, with exact comparisons of indexed strings (trimmed_index.py); a
        write checked against the existence constraints the proxy keeps (PROFILE runs the writes,
        so it is checked too; EXPLAIN runs nothing)."""
        if self.constraints is None:
            return await runner.run(text, params)
        schema = self.constraints.string_index_schema(runner.database)
        if schema and runner.graph_state() is not None:
            schema = await trimmed_keys.with_clean_keys(schema, text, lambda q, p: self._probe_rows(q, p, runner))
        text, checks, refusals = trimmed_index.rewrite_for(text, params, schema)
        if checks:
            params = {**params, **checks}
        try:
            if explain or not existence.may_violate(text) or not (found := self.constraints.existence(runner.database)):
                return await runner.run(text, params)
            return await existence.run_checked(runner, text, params, found)
        except CypherError as exc:
            if refusals and trimmed_index.REFUSED in exc.message:
                raise trimmed_index.refusal(refusals) from None
            raise

    # -- planning

    def _decide(self, query: str) -> Plan | None:
        """The plan of `query`, or None when it goes to the backend unchanged (cached as `plan`).

        Cheap text scan first: most queries need no parse at all."""
        if not triggered(query, self._triggers) and not (self._analyse and semantics.suspect(query)):
            return None
        try:
            return self._build(query)
        except RecursionError:          # the tree's walks and rendering recurse on left-deep chains
            raise syntax_error("The query chains too many labels or operators (`:A:B:...`, "
                               "`a + b + ...`) for the proxy to plan its extension calls in it. "
                               "Split the chain, or pass long lists as parameters.") from None

    def _build(self, query: str) -> Plan | None:
        neo4j_cypher = self.dialect.has(Capability.NEO4J_CYPHER)
        try:
            tree = parse(query)
        except MalformedLiteral:
            raise
        except CypherError:
            if any(name.lower() in query.lower() for name in self._names()):
                raise
            return None            # a bridge-only trigger we cannot parse: let the database answer
        if self._analyse:
            semantics.check(tree)
        if not neo4j_cypher and (expanded := bridges.fixed_lengths.expand(tree, query)) is not None:
            query, tree = expanded, parse(expanded)          # `[*3]` as three hops (bridges.fixed_lengths)
        answer = None if self.dialect.has(Capability.EXACT_TEMPORALS) else compile_query(tree, query)
        if answer is None:
            return self._plan_tree(tree, query)
        try:
            fallback = self._plan_tree(tree, query)
        except CypherError as exc:
            fallback = exc
        return Plan(body=query, prefix=None, steps=[], placeholders={}, constant=(answer, fallback))

    def _plan_tree(self, tree: A.Query, query: str) -> Plan | None:
        neo4j_cypher = self.dialect.has(Capability.NEO4J_CYPHER)
        command = self._command(tree)
        if command is not None:
            return Plan(body=query, prefix=tree.prefix, steps=[], placeholders={}, command=command)
        bridged = bridges.bridge(tree, query, self._bridged_dialect)
        edits = bridged.edits
        if self.serve_apoc:                   # the one stand-in a Neo4j dialect needs: APOC in its Cypher
            edits += apoc_upstream.function_edits(tree, query, self.dialect)
        derived, cartesian, after = bridged.derived, bridged.cartesian, bridged.after
        conditional, zoned, refusals, ranges = bridged.conditional, bridged.zoned, bridged.refusals, bridged.ranges
        edits.sort(key=lambda e: (e[0], e[1]))
        steps: list = []
        placeholders: dict[str, Any] = {}
        counter = count()
        for part in tree.parts:
            planner = PartPlanner(query, part, self.registry, self.dialect, edits, counter)
            planner.plan(JoinPlanner(planner))
            steps += planner.steps
            placeholders.update(planner.placeholders)
            refusals = [*refusals, *planner.refusals]
        if not (edits or cartesian or after or conditional or zoned or ranges or tree.options and not neo4j_cypher):
            return None
        body = bridges.after_edits(splice(query, tree.parts[0].span[0], len(query), edits), after)
        variants = (query, tree.parts[0].span[0], edits, conditional, after) if conditional else None
        return Plan(body=body, prefix=tree.prefix, steps=steps, placeholders=placeholders,
                    local=local_call(self.registry, self.dialect, tree),
                    options=tree.options if neo4j_cypher else None,
                    derived=derived, cartesian=cartesian, variants=variants, zoned=zoned,
                    refusals=refusals, ranges=ranges,
                    source=query if ranges else None)

    async def _exact(self, plan: Plan, runner) -> Plan:
        """`plan` when the graph allows its variable-length ranges (cycles.py), else the plan of
        its exact form (one length per UNION ALL branch, up to the number of relationships of the
        range's types: bridges.range_unions), checked the same way; the graph's refusal when the
        ranges cannot be written so. In a transaction that wrote, where no check is kept, an exact
        form of the bounded ranges that leaves none to check runs without reading the graph."""
        graph = graph_context(runner)
        if graph.state is None and (exact := self._exact_plan(plan.source, ())) is not None and not exact.ranges:
            return exact
        try:
            await self.cycles.check(plan.ranges, graph)
        except CypherError:
            exact = self._exact_plan(plan.source, await self.cycles.relationship_counts(plan.ranges, graph))
            if exact is None:
                raise
            return await self._exact(exact, runner) if exact.ranges else exact
        return plan

    def _capped(self, source: str, counts: tuple) -> Plan | None:
        """The plan of `source` with its ranges one length per UNION ALL branch, each at most the
        number of relationships of its types (`counts`: (types, number) pairs); None if none can be."""
        most = dict(counts)
        text = bridges.range_unions.rewrite(parse(source), source,
                                            lambda rel: most.get(bridges.ranges.relationship_types(rel)))
        if text is None:
            return None
        tree = parse(text)
        return self._plan_tree(tree, text) or Plan(body=text[tree.parts[0].span[0]:], prefix=tree.prefix,
                                                   steps=[], placeholders={})

    @staticmethod
    async def _refusing(plan: Plan, running) -> Result:
        """The result of `running`; FalkorDB's error for a runtime refusal (bridges) becomes the
        refusal's own message."""
        try:
            return await running
        except CypherError as exc:
            if plan.refusals and bridges.RUNTIME_REFUSAL in exc.message:
                raise CypherError(plan.refusals[0].code, " / ".join(plan.refusals)) from None
            raise

    @staticmethod
    def _variant(plan: Plan, params: dict[str, Any]) -> str:
        """`plan.text` with the bridge edits this run's parameter types call for."""
        query, start, edits, conditional, after = plan.variants
        extra = bridges.variant_edits(conditional, params)
        if not extra:
            return plan.text
        body = bridges.after_edits(splice(query, start, len(query), sorted(edits + extra, key=lambda e: (e[0], e[1]))),
                                   after)
        return " ".join(part for part in (plan.options, plan.prefix, body) if part)

    def _command(self, tree: A.Query) -> tuple | None:
        """(handler, node) when `tree` is a schema command the proxy runs on this backend."""
        clauses = tree.parts[0].clauses
        if len(tree.parts) != 1 or len(clauses) != 1:
            return None
        handler = self.registry.command(type(clauses[0]), self.dialect)
        return (handler, clauses[0]) if handler is not None else None

    # -- execution

    async def _run_command(self, plan: Plan, params: dict[str, Any], runner) -> Result:
        handler, node = plan.command
        if plan.prefix == "EXPLAIN":
            summary = Summary(database=runner.database, query_type="s")
            summary.plan = {"operatorType": type(node).__name__, "identifiers": [], "arguments": {},
                            "children": []}
            return ListResult([], [], summary)
        return await handler.run(node, params, self._call_context(runner), runner)

    async def _run_step(self, step, params: dict[str, Any], runner) -> dict[str, Any]:
        return await self._steps[type(step)](step, params, runner)

    async def _run_probe(self, step: ProbeStep, params: dict[str, Any], runner) -> dict[str, Any]:
        """The step's parameters: kept in the probe cache with the probe rows they came from
        (a warm repeat computes nothing), else computed from the separated probes or the
        combined one."""
        key = self._values_key(step, params, runner)
        if key is not None and (values := self.probe_cache.get(key)) is not None:
            return values
        values = await self._run_split(step, params, runner) if step.split is not None else None
        if values is None:
            rows = await self._probe_rows(step.text, params, runner)
            values = await self.computed.get(step, params, (rows,), partial(self._bind_all, step, rows, runner, params))
        if key is not None:
            self.probe_cache.put(key, values, estimate_value_bytes(values))
        return values

    async def _bind_all(self, step: ProbeStep, rows: list[list[Any]], runner, params: dict[str, Any]) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for site in step.sites:
            values.update(await self._bind(site, rows, runner, params))
        return values

    def _values_key(self, step: ProbeStep, params: dict[str, Any], runner) -> Hashable | None:
        """The probe cache key of a step's computed values: its probe's key (text, the parameters
        it reads, graph state), the step, and the versions of the data its extensions read."""
        cache = self.probe_cache
        probe = cache.key(step.text, params, runner) if cache is not None else None
        if probe is None:
            return None
        return "values", step.token, probe, *data_key(step, params)

    async def _probe_rows(self, text: str, params: dict[str, Any], runner) -> list[list[Any]]:
        """A probe's rows: from the probe cache while the graph is unchanged, else from the database."""
        cache = self.probe_cache
        key = cache.key(text, params, runner) if cache is not None else None
        if key is not None and (rows := cache.get(key)) is not None:
            return rows
        rows = await read_rows(await runner.run(text, params))
        if key is not None:
            cache.put(key, rows)
        return rows

    async def _bind(self, site: Site, rows: list[list[Any]], runner, params: dict[str, Any]) -> dict[str, Any]:
        """The parameters of one call; a big batch is computed in a worker thread."""
        if len(rows) > site.ext.offload_above:
            distinct = await asyncio.to_thread(kernels.distinct_arguments, site, rows, self.dialect)
        else:
            distinct = kernels.distinct_arguments(site, rows, self.dialect)
        return await self._compute(site, distinct, runner, site.ext.offload(len(rows), distinct.values()), params)

    async def _compute(self, site: Site, distinct: dict[tuple, tuple], runner, offload: bool,
                       params: dict[str, Any]) -> dict[str, Any]:
        prepared = await self._prepared(site, lambda: list(distinct.values()), runner)
        if offload:
            return await asyncio.to_thread(kernels.bind_distinct, site, distinct, prepared, params)
        return kernels.bind_distinct(site, distinct, prepared, params)

    async def _prepared(self, site: Site, arguments, runner) -> tuple:
        """The extra arguments of the site's evaluate functions: what its `prepare` (if any)
        returns after seeing the `arguments()` tuples."""
        if site.ext.prepare is None:
            return ()
        tuples = arguments()
        if not tuples:
            return ()
        return (await site.ext.prepare(graph_context(runner), tuples),)

    async def _run_join(self, step: JoinStep, params: dict[str, Any], runner) -> dict[str, Any]:
        bound = [None if expr is None else constant(expr, params) for expr in step.bound]
        return await run_join(step, bound, params, graph_context(runner))

    async def _run_algorithm(self, step: AlgorithmStep, params: dict[str, Any], runner) -> dict[str, Any]:
        procedure = step.procedure
        arguments = dict(procedure.parameters)
        if step.arguments is not None:
            given = constant(step.arguments, params)
            if not isinstance(given, dict):
                raise argument_error(f"{procedure.name}() takes a map of parameters, got {given!r}")
            check_parameters(procedure, given)
            arguments.update(given)
        node_id = self.dialect.node_index("{}")        # a template for the procedure
        if procedure.run is not None:
            computed = await procedure.run(graph_context(runner), arguments, node_id)
        else:
            rows = await read_rows(await runner.run(procedure.graph_query(arguments, node_id), params))
            if len(rows) > procedure.offload_above:
                computed = await asyncio.to_thread(procedure.evaluate, arguments, rows)
            else:
                computed = procedure.evaluate(arguments, rows)
        if scalar_values(procedure):
            return kernels.bind_values(step, computed, params)
        return step.lookup.bind((key, (), list(row)) for key, row in computed.items())


    async def _run_virtual(self, step: VirtualStep, params: dict[str, Any], runner) -> dict[str, Any]:
        arguments = [constant(arg, params) for arg in step.arguments]
        rows = await step.procedure.answer(self._call_context(runner), arguments)
        return {step.param: kernels.bindable(rows)}

    async def _answer_locally(self, call: LocalCall, prefix: str | None, params: dict[str, Any],
                              runner) -> Result:
        """A lone virtual CALL: the rows come from Python; EXPLAIN shows a one-operator plan."""
        summary = Summary(database=runner.database, query_type=_QUERY_TYPES.get(call.procedure.mode, "r"))
        operator = {"operatorType": "ProcedureCall", "identifiers": call.columns,
                    "arguments": {"Details": call.procedure.signature or call.procedure.name},
                    "children": []}
        if prefix == "EXPLAIN":
            summary.plan = operator
            return ListResult([], [], summary)
        arguments = [constant(arg, params) for arg in call.arguments]
        rows = await call.procedure.answer(self._call_context(runner), arguments)
        positions = [call.procedure.yields.index(f) for f in call.fields]
        records = [[row[i] for i in positions] for row in rows]
        if prefix == "PROFILE":
            summary.profile = {**operator, "rows": len(records), "dbHits": 0}
        return ListResult(call.columns, records, summary)

    def _call_context(self, runner) -> CallContext:
        backend = runner.backend
        typed = None
        if self.datetime_kinds is not None:
            typed = partial(kinds.typed, store=self.datetime_kinds, database=runner.database or "", sends=False,
                            lenient=True)
        return CallContext(graph_context(runner, typed), self.registry, self.dialect,
                           runner.user, dict(runner.metadata or {}),
                           lambda: backend.databases(runner.credentials), backend.default_database)


#: Neo4j's query type for a procedure by its mode.
_QUERY_TYPES = {"READ": "r", "WRITE": "rw", "SCHEMA": "s", "DBMS": "r"}


#: EXPLAIN before a statement the planner passes through as it is.
_EXPLAINED = re.compile(r"\s*EXPLAIN\b", re.I)


def _may_write(plan: Plan) -> bool:
    """Whether the plan's statement is known to write (its clauses, or PROFILE, which runs it as
    a write); the backend stops one that writes otherwise (`runners.consistently`)."""
    return plan.prefix == "PROFILE" or effects(plan.body).writes
