"""The extension planner the session calls: pass-through, or probe -> compute -> bind.

`ExtensionPlanner.execute(query, params, runner)`:
- a query that mentions no extension and needs no dialect bridge goes to the backend as is
  (a substring + precompiled regex scan decides, before any parsing; the decision is cached
  by text like the plans);
- otherwise the query is parsed and planned once per text (`probe.py`):
  the probes run through the same runner (so they see the open transaction's writes), the
  evaluators compute the values (off the event loop for big batches), and the rewritten query
  runs with the values bound as parameters (`bind.py`); a probe whose calls' nodes and values
  vary independently runs as two smaller probes (`split.py`), and probe rows are reused while
  the graph is unchanged (`probe_cache.py`);
- a virtual procedure's CALL (describe(), compatibility shims) is answered in Python and its
  rows bound like extension values; a query that is only that CALL never reaches the database;
- `EXPLAIN` sends the rewritten query with placeholder parameters (nothing is computed);
  `PROFILE` runs the probes, then profiles the rewritten query.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Hashable, Mapping
from functools import lru_cache, partial
from itertools import count, repeat
from operator import itemgetter
from typing import Any

import numpy as np

from core.backend import ListResult, Result, Summary
from core.dialect import Capability, Dialect
from core.errors import CypherError, argument_error, database_error, syntax_error
from core.values import Node, Relationship

from .. import bridges, trimmed_index
from ..bridges import fractions
from ..compat import apoc_upstream
from ..dialect import alias_edits, triggered, triggers
from . import bind, existence
from .arguments import constant
from .cycles import CycleGuard
from .late import LateStep
from ..cypher import ast as A
from ..cypher import semantics
from ..cypher.parser import parse
from ..cypher.tokens import MalformedLiteral
from .joins import JoinPlanner, JoinStep, run_join
from .calls import check_parameters, local_call, scalar_values
from .plan import AlgorithmStep, LocalCall, Plan, ProbeStep, Site, VirtualStep, cut_param, seek_param
from .probe import PartPlanner, splice
from .probe_cache import ProbeCache, estimate_bytes, estimate_value_bytes
from ..registry import CallContext, GraphContext, NodeRef, PropertyRef, Registry, RelationshipRef, ValueColumn
from .split import SplitProbe, node_rows
from ..temporal import fraction, kinds
from ..temporal.kinds import KindStore
from ..temporal.query import compile_query
from ..temporal.values import NotComputed

_CACHE_SIZE = 2048
#: Longer queries are planned in a worker thread and not cached (parsing 600 KB takes ~3 s).
_PLAN_INLINE_CHARS = 65_536
#: A separated probe's product is evaluated when it has at most SMALL_PRODUCT tuples or at most
#: PRODUCT_RATIO times as many as its two sides have rows (one side small); else the combined probe runs.
SMALL_PRODUCT = 10_000
PRODUCT_RATIO = 100
#: An algorithm CALL whose query needs at most 1 / SEEK_RATIO of its rows seeks them by identity
#: rather than scanning every node for its bound value.
SEEK_RATIO = 4


class ExtensionPlanner:
    """Plans and runs client queries for one backend, by its dialect (`core/dialect.py`)."""

    def __init__(self, registry: Registry, *, dialect: Dialect, probe_cache: ProbeCache | None = None,
                 constraints=None, datetime_kinds: KindStore | None = None):
        self.registry = registry
        self.dialect = dialect
        exact_temporals = dialect.has(Capability.EXACT_TEMPORALS)
        #: behind a Neo4j without APOC: APOC functions rewritten into Neo4j's Cypher (compat/apoc_upstream.py)
        self.serve_apoc = dialect.has(Capability.NEO4J_CYPHER) and not dialect.has(Capability.APOC)
        #: the date-time kind written per property key (`temporal/kinds.py`), where the database loses it
        self.datetime_kinds = None if exact_temporals else datetime_kinds
        #: where the existence constraints the proxy checks live (`NameStore.existence`), where
        #: the database has no constraint commands of Neo4j's
        self.constraints = None if dialect.has(Capability.SCHEMA_COMMANDS) else constraints
        self.probe_cache = probe_cache
        #: the graph check of variable-length ranges (FalkorDB, cycles.py)
        self.cycles = CycleGuard()
        self._exact_plan = lru_cache(maxsize=256)(self._capped)
        self.plan = lru_cache(maxsize=_CACHE_SIZE)(self._decide)
        self._steps = {ProbeStep: self._run_probe, AlgorithmStep: self._run_algorithm,
                       VirtualStep: self._run_virtual, JoinStep: self._run_join}
        self._triggers = (triggers([e.name for e in registry], self._procedure_names(), self.dialect)
                          + bridges.triggers(self.dialect) + (() if exact_temporals else TEMPORAL_TRIGGERS))
        #: Neo4j analyses variables itself; the embedded database does not (cypher/semantics.py).
        self._analyse = not dialect.has(Capability.NEO4J_CYPHER)
        if self.serve_apoc:
            self._triggers += (apoc_upstream.TRIGGER,)

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
                    for marker, nothing in _edits(step, {}):
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
                runner = _Rewriting(runner, [(step.marker, step.render(found))])   # later probes read it too
            else:
                bound = await self._run_step(step, {**params, **values}, runner)
                values.update(bound)
                if edits := _edits(step, bound):
                    runner = _Rewriting(runner, edits)
        if isinstance(runner, _Rewriting):
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
        text, checks, refusals = trimmed_index.rewrite_for(text, params,
                                                           self.constraints.string_index_schema(runner.database))
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
        edits = alias_edits(tree, self.registry.__contains__)
        if self.serve_apoc:                   # the one stand-in a Neo4j dialect needs: APOC in its Cypher
            bridged = bridges.Bridged(edits=apoc_upstream.function_edits(tree, query, self.dialect))
        else:
            bridged = bridges.bridge(tree, query, self.dialect)
        edits += bridged.edits
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
            values = {}
            for site in step.sites:
                values.update(await self._bind(site, rows, runner, params))
        if key is not None:
            self.probe_cache.put(key, values, estimate_value_bytes(values))
        return values

    def _values_key(self, step: ProbeStep, params: dict[str, Any], runner) -> Hashable | None:
        """The probe cache key of a step's computed values: its probe's key (text, the parameters
        it reads, graph state), the step, and the versions of the data its extensions read."""
        cache = self.probe_cache
        probe = cache.key(step.text, params, runner) if cache is not None else None
        if probe is None:
            return None
        versions = dict.fromkeys(site.ext.data_version for site in step.sites if site.ext.data_version is not None)
        cuts = tuple(site.reduction.resolved(params) for site in step.sites if site.reduction is not None)
        return "values", step.token, probe, tuple(version() for version in versions), cuts

    async def _probe_rows(self, text: str, params: dict[str, Any], runner) -> list[list[Any]]:
        """A probe's rows: from the probe cache while the graph is unchanged, else from the database."""
        cache = self.probe_cache
        key = cache.key(text, params, runner) if cache is not None else None
        if key is not None and (rows := cache.get(key)) is not None:
            return rows
        result = await runner.run(text, params)
        rows = await result.fetch(-1)
        await result.consume()
        if key is not None:
            cache.put(key, rows)
        return rows

    async def _bind(self, site: Site, rows: list[list[Any]], runner, params: dict[str, Any]) -> dict[str, Any]:
        """The parameters of one call; a big batch is computed in a worker thread."""
        if len(rows) > site.ext.offload_above:
            distinct = await asyncio.to_thread(_distinct_arguments, site, rows, self.dialect)
        else:
            distinct = _distinct_arguments(site, rows, self.dialect)
        return await self._compute(site, distinct, runner, site.ext.offload(len(rows)), params)

    async def _compute(self, site: Site, distinct: dict[tuple, tuple], runner, offload: bool,
                       params: dict[str, Any]) -> dict[str, Any]:
        prepared = await self._prepared(site, lambda: list(distinct.values()), runner)
        if offload:
            return await asyncio.to_thread(_bind_distinct, site, distinct, prepared, params)
        return _bind_distinct(site, distinct, prepared, params)

    async def _prepared(self, site: Site, arguments, runner) -> tuple:
        """The extra arguments of the site's evaluate functions: what its `prepare` (if any)
        returns after seeing the `arguments()` tuples."""
        if site.ext.prepare is None:
            return ()
        tuples = arguments()
        if not tuples:
            return ()
        return (await site.ext.prepare(graph_context(runner), tuples),)

    # -- separated probes (split.py)

    async def _run_split(self, step: ProbeStep, params: dict[str, Any], runner) -> dict[str, Any] | None:
        """The step's parameters from the node probe x the value probe; None: run the combined probe
        (the product is too large for its sides, or an evaluator refused a combination)."""
        split: SplitProbe = step.split
        if (cut := await self._scored_cut(step, params, runner)) is not None:
            return cut
        node_sides = await self._node_sides(split, params, runner)
        values_rows = await self._value_rows(split, params, runner)
        n_nodes, n_values = max(map(len, node_sides), default=0), len(values_rows)
        if n_nodes * n_values > SMALL_PRODUCT and n_nodes * n_values > PRODUCT_RATIO * (n_nodes + n_values):
            return None
        values: dict[str, Any] = {}
        try:
            for site, plan, node_side in zip(step.sites, split.sites, node_sides):
                values.update(await self._compute_product(site, plan, node_side, values_rows, runner, params))
        except CypherError:
            return None
        return values

    async def _value_rows(self, split: SplitProbe, params: dict[str, Any], runner) -> list[list[Any]]:
        return await self._probe_rows(split.value_text, params, runner) if split.value_text else [[]]

    async def _scored_cut(self, step: ProbeStep, params: dict[str, Any], runner) -> dict[str, Any] | None:
        """The parameters of a step whose one call binds only the rows its projection needs and
        scores nodes in bulk (`Extension.score_nodes`): node ids as arrays, one score per node,
        the cut; None when that does not apply (then the nodes are bound one by one)."""
        site, split = step.sites[0], step.split
        if len(step.sites) != 1 or site.reduction is None or site.ext.score_nodes is None \
                or site.args[site.index_arg].kind != "node":
            return None
        groups = await self._node_ids(split, params, runner)
        value_side = _value_side(split.sites[0], await self._value_rows(split, params, runner), self.dialect)
        if len(value_side) != 1:
            return None
        scored = await site.ext.score_nodes(graph_context(runner), [(labels, ids) for labels, ids, _ in groups],
                                            *next(iter(value_side.values())))
        values = np.concatenate([np.zeros(0), *scored])
        keys = [key for _, ids, keys in groups for key in (ids.tolist() if keys is None else keys)]
        return _bind_cut(site, keys, values, params)

    async def _node_ids(self, split: SplitProbe, params: dict[str, Any], runner) -> list[tuple]:
        """The node probe's nodes as (labels, internal ids array, lookup keys) per label set;
        cached like probe rows. With integer ids the keys are the ids (None: 8 bytes a node in the cache)."""
        cache = self.probe_cache
        key = cache.key(split.node_text, params, runner) if cache is not None else None
        if key is not None and (groups := cache.get((key, "ids"))) is not None:
            return groups
        result = await runner.run(split.node_text, params)
        found = await result.fetch(-1)
        await result.consume()
        integer_ids = self.dialect.integer_ids
        id_at = -1 if integer_ids else -2                              # Neo4j: [..., id, element id]
        groups = [(labels, np.array([item[id_at] for item in items if item[-1] is not None], dtype=np.int64),
                   None if integer_ids else [item[-1] for item in items if item[-1] is not None])
                  for labels, items in found]
        if key is not None:
            cache.put((key, "ids"), groups, sum(ids.nbytes * (1 if keys is None else 10) for _, ids, keys in groups))
        return groups

    async def _node_sides(self, split: SplitProbe, params: dict[str, Any], runner) -> list[dict[Any, tuple]]:
        """Per call, {node index: node-side arguments}; cached like probe rows (with the NodeRefs)."""
        cache = self.probe_cache
        key = cache.key(split.node_text, params, runner) if cache is not None else None
        if key is not None:
            # Calls of other queries share the node probe's text, not the argument objects
            # (`n.temp` vs `n.power`: PropertyRefs of another key).
            key = (key, tuple((arg.kind, arg.key) for plan in split.sites for arg in plan.node_args))
            if (sides := cache.get(key)) is not None:
                return sides
        result = await runner.run(split.node_text, params)
        groups = await result.fetch(-1)
        await result.consume()
        nodes = node_rows(groups)
        sides = [_node_side(plan, nodes, self.dialect) for plan in split.sites]
        if key is not None:
            cache.put(key, sides, estimate_bytes(nodes) * (1 + len(sides)))
        return sides

    async def _compute_product(self, site: Site, plan, node_side: dict, values_rows, runner,
                               params: dict[str, Any]) -> dict[str, Any]:
        offload = site.ext.offload(len(node_side) * len(values_rows))
        value_side = _value_side(plan, values_rows, self.dialect)
        prepared = await self._prepared(
            site, lambda: [a + b for a in node_side.values() for b in value_side.values()], runner)
        if offload:
            return await asyncio.to_thread(_bind_product, site, node_side, value_side, prepared, params)
        return _bind_product(site, node_side, value_side, prepared, params)

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
            result = await runner.run(procedure.graph_query(arguments, node_id), params)
            rows = await result.fetch(-1)
            await result.consume()
            if len(rows) > procedure.offload_above:
                computed = await asyncio.to_thread(procedure.evaluate, arguments, rows)
            else:
                computed = procedure.evaluate(arguments, rows)
        if scalar_values(procedure):
            return _bind_values(step, computed, params)
        return step.lookup.bind((key, (), list(row)) for key, row in computed.items())


    async def _run_virtual(self, step: VirtualStep, params: dict[str, Any], runner) -> dict[str, Any]:
        arguments = [constant(arg, params) for arg in step.arguments]
        rows = await step.procedure.answer(self._call_context(runner), arguments)
        return {step.param: _bindable(rows)}

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


def graph_context(runner, typed: Callable[..., Result] | None = None) -> GraphContext:
    """What an evaluator may know of the graph `runner`'s queries see; `typed(result, text=,
    params=)` gives the stored date-times they read their kinds (`kinds.typed`, for describe())."""

    async def run(query: str, params: dict[str, Any]) -> Result:
        result = await runner.run(query, params)
        return result if typed is None else typed(result, text=query, params=params)

    async def read(query: str, params: dict[str, Any]) -> list[list[Any]]:
        result = await run(query, params)
        rows = await result.fetch(-1)
        await result.consume()
        return rows

    async def stream(query: str, params: dict[str, Any], batch: int = 10_000):
        result = await run(query, params)
        while rows := await result.fetch(batch):
            yield rows
        await result.consume()
    return GraphContext(runner.database, runner.graph_state(), read, stream, runner.backend.dialect)


def _bind_values(step: AlgorithmStep, computed: Mapping[Any, tuple], params: dict[str, Any]) -> dict[str, Any]:
    """One value per node -> the parameters of the rows the query needs (`reduce.py`): a few
    are bound as [identity, value] pairs the rewritten CALL seeks (`AlgorithmStep.edits`), many
    as the lookup its scan of every node reads."""
    if isinstance(computed, ValueColumn):
        ids, values = computed.ids, computed.values
    else:
        ids = np.array(list(computed), dtype=object)
        values = np.array([value for (value,) in computed.values()])
    keep = step.reduction.keep(values, params) if step.reduction is not None else None
    if keep is not None:
        ids, values = ids[keep], values[keep]
        if len(ids) * SEEK_RATIO <= len(keep):
            return {seek_param(step.lookup.param): [list(pair) for pair in zip(ids.tolist(), values.tolist())]}
    return step.lookup.bind(zip(ids.tolist(), repeat(()), values.tolist()))


def _bindable(value: Any) -> Any:
    """Rows as a database takes them as a parameter: neither FalkorDB's (literals) nor Neo4j's take
    a node, so the virtual nodes and relationships of schema procedures travel as their property maps."""
    if isinstance(value, list):
        return [_bindable(v) for v in value]
    if isinstance(value, (Node, Relationship)):
        return _bindable(value.properties)
    if isinstance(value, dict):
        return {k: _bindable(v) for k, v in value.items()}
    return value


def _distinct_arguments(site: Site, rows: list[list[Any]], dialect: Dialect) -> dict[tuple, tuple]:
    """Probe rows -> {key: argument tuple}, one entry per distinct argument tuple.

    Rows are deduplicated by the database-computed index and keys before any argument object
    is built, and each node's `NodeRef` is built once.
    """
    index_col = None
    if site.index_arg is not None:
        arg = site.args[site.index_arg]
        index_col = arg.id_col if dialect.integer_ids else arg.eid_col
    makers = [_argument_maker(arg, dialect) for arg in site.args]
    key_of = _key_getter(index_col, site.key_cols)
    distinct: dict[tuple, tuple] = {}
    for row in rows:
        key = key_of(row)
        if key in distinct or (index_col is not None and key[0] is None):
            continue
        args = tuple([make(row) for make in makers])
        if _MISSING not in args:
            distinct[key] = args
    return distinct


def _node_side(plan, nodes: list[list[Any]], dialect: Dialect) -> dict[Any, tuple]:
    """Node rows of a separated probe -> {node index: node-side arguments} (see `split.py`)."""
    makers = [_argument_maker(arg, dialect) for arg in plan.node_args]
    index = plan.node_args[plan.index]
    id_col = index.id_col if dialect.integer_ids else index.eid_col
    side: dict[Any, tuple] = {}
    for row in nodes:
        if row[id_col] not in side:
            side[row[id_col]] = tuple([make(row) for make in makers])
    return side


def _value_side(plan, values_rows: list[list[Any]], dialect: Dialect) -> dict[tuple, tuple]:
    """Value rows of a separated probe -> {value keys: value-side arguments}; each combination
    with a node side's entry is one distinct argument tuple."""
    makers = [_argument_maker(arg, dialect) for arg in plan.value_args]
    side: dict[tuple, tuple] = {}
    for row in values_rows:
        key = tuple([row[col] for col in plan.value_keys])
        if key not in side:
            side[key] = tuple([make(row) for make in makers])
    return side


def _bind_product(site: Site, node_side: dict, value_side: dict, prepared: tuple,
                  params: dict[str, Any]) -> dict[str, Any]:
    """The site's values for node side x value side -> its parameters (a grid: a row per node)."""
    nodes, values = list(node_side.values()), list(value_side.values())
    if not nodes or not values:              # no rows (or a write between the two probes)
        return site.lookup.bind([])
    width = len(values)
    ext = site.ext
    if ext.evaluate_product is not None:
        rows = ext.evaluate_product(nodes, values, *prepared)
        if len(rows) != len(nodes) or any(len(row) != width for row in rows):
            raise database_error(f"{ext.name}() returned a product of the wrong shape for "
                                 f"{len(nodes)} x {width} inputs")
    else:
        flat = ext.evaluate([a + b for a in nodes for b in values], *prepared)
        if len(flat) != len(nodes) * width:
            raise database_error(f"{ext.name}() returned {len(flat)} values for {len(nodes) * width} inputs")
        rows = [flat[i:i + width] for i in range(0, len(flat), width)]
    if site.reduction is not None and width == 1:
        return _bind_cut(site, list(node_side), [row[0] for row in rows], params)
    return site.lookup.bind_grid(list(node_side), list(value_side), rows)


def _bind_distinct(site: Site, distinct: dict[tuple, tuple], prepared: tuple,
                   params: dict[str, Any]) -> dict[str, Any]:
    """`evaluate` once over the distinct argument tuples -> the site's parameters."""
    values = site.ext.evaluate(list(distinct.values()), *prepared) if distinct else []
    if len(values) != len(distinct):
        raise database_error(f"{site.ext.name}() returned {len(values)} values for {len(distinct)} inputs")
    if site.reduction is not None:
        return _bind_cut(site, [key[0] for key in distinct], values, params)
    return site.lookup.bind((key[0], key[1:], value) for key, value in zip(distinct, values))


def _bind_cut(site: Site, nodes: list, values: list | np.ndarray, params: dict[str, Any]) -> dict[str, Any]:
    """One value per node (a list, or an array of numbers with NaN for null) -> the parameters of
    the nodes whose rows the query needs (`reduce.plan_projection`), flagged so that the text
    drops the others (`Site.edits`); the kept nodes whose value is null are bound apart
    (`Site.nulls`). All of them when a value is not a number."""
    if isinstance(values, np.ndarray):
        numbers, null = values, np.isnan(values)
        values = np.where(null, None, values).tolist() if null.any() else values.tolist()
    else:
        numbers, null = _numbers(values), np.array([v is None for v in values], dtype=bool)
    keep = site.reduction.keep(numbers, params) if numbers is not None and numbers.dtype.kind in "if" else None
    if keep is None:
        return site.lookup.bind_grid(nodes, [()], [[value] for value in values])
    kept = np.flatnonzero(keep & ~null).tolist()
    nulls = np.flatnonzero(keep & null).tolist()
    bound = site.lookup.bind_grid([nodes[i] for i in kept], [()], [[values[i]] for i in kept])
    bound.update(site.nulls.bind_grid([nodes[i] for i in nulls], [()], [[True]] * len(nulls)))
    return {**bound, cut_param(site.lookup.param): True}


def _numbers(values: list) -> np.ndarray | None:
    """The values as an array of numbers (NaN for null); None when one is neither, or an integer
    a float would round."""
    if any(isinstance(v, bool) or not isinstance(v, (int, float, type(None))) for v in values):
        return None
    if any(v is None for v in values):
        if any(isinstance(v, int) and abs(v) > 2**53 for v in values):
            return None
        return np.array([np.nan if v is None else v for v in values], dtype=float)
    return np.array(values)


def _edits(step, bound: dict[str, Any]) -> list[tuple[str, str]]:
    """(text, replacement) for the forms `bound` takes that the planned text does not read:
    grid calls bound sparse, calls bound for the rows the query needs, algorithm rows bound to
    be sought."""
    if isinstance(step, ProbeStep):
        return (bind.sparse_edits((site.lookup for site in step.sites), bound)
                + [edit for site in step.sites for edit in site.edits(bound)])
    if isinstance(step, AlgorithmStep):
        return step.edits(bound)
    return []


class _Rewriting:
    """A runner whose queries read values in the form they were bound in (`_edits`), and the
    late edits' texts where their markers are."""

    def __init__(self, runner, edits: list[tuple[str, str]]):
        if isinstance(runner, _Rewriting):
            runner, edits = runner._runner, runner._edits + edits
        self._runner, self._edits = runner, edits

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runner, name)

    def rewrite(self, text: str) -> str:
        for old, new in self._edits:
            text = text.replace(old, new)
        return text

    async def run(self, query: str, params: dict[str, Any]) -> Result:
        return await self._runner.run(self.rewrite(query), params)


_MISSING = object()
#: Queries that may be temporal work the planner answers in Python (temporal/query.py).
TEMPORAL_TRIGGERS = tuple((word, re.compile(r"(?:date|time|duration)(?:\.\w+)?\s*\("))
                          for word in ("date", "time", "duration"))
#: EXPLAIN before a statement the planner passes through as it is.
_EXPLAINED = re.compile(r"\s*EXPLAIN\b", re.I)


def _key_getter(index_col: int | None, key_cols: list[int]):
    """row -> (index or None, key1, key2, ...), the identity of a distinct argument tuple."""
    if index_col is None:
        if not key_cols:
            return lambda row: (None,)
        getter = itemgetter(*key_cols)
        return (lambda row: (None, getter(row))) if len(key_cols) == 1 else (lambda row: (None, *getter(row)))
    if not key_cols:
        return lambda row: (row[index_col],)
    return itemgetter(index_col, *key_cols)


def _argument_maker(arg, dialect: Dialect):
    """A function: probe row -> this argument as the evaluator gets it
    (NodeRef/PropertyRef/RelationshipRef/value)."""
    if arg.kind == "value":
        return itemgetter(arg.value_col)
    refs: dict[Any, Any] = {}

    def make(row):
        entity_id = row[arg.id_col]
        if entity_id is None:
            return _MISSING
        ref = refs.get(entity_id)
        if ref is None:
            element_id = str(entity_id) if dialect.integer_ids else row[arg.eid_col]
            refs[entity_id] = ref = _reference(arg, entity_id, element_id, row)
        return ref
    return make


def _reference(arg, entity_id: int, element_id: str, row) -> NodeRef | PropertyRef | RelationshipRef:
    if arg.kind == "relationship":
        return RelationshipRef(entity_id, element_id, row[arg.labels_col])
    node = NodeRef(entity_id, element_id, tuple(row[arg.labels_col] or ()),
                   {name: row[col] for name, col in arg.prop_cols})
    return PropertyRef(node, arg.key) if arg.kind == "property" else node
