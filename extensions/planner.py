"""The extension planner the session calls: pass-through, or probe -> compute -> bind.

`ExtensionPlanner.execute(query, params, runner)`:
- a query that mentions no extension and needs no dialect bridge goes to the backend as is
  (a substring + precompiled regex scan decides, before any parsing; the decision is cached
  by text like the plans);
- otherwise the query is parsed and planned once per text (`probe.py`):
  the probes run through the same runner (so they see the open transaction's writes), the
  evaluators compute the values (off the event loop for big batches), and the rewritten query
  runs with the values bound as parameters (`bind.py`);
- a virtual procedure's CALL (describe(), compatibility shims) is answered in Python and its
  rows bound like extension values; a query that is only that CALL never reaches the database;
- `EXPLAIN` sends the rewritten query with placeholder parameters (nothing is computed);
  `PROFILE` runs the probes, then profiles the rewritten query.
"""

from __future__ import annotations

import asyncio
from functools import lru_cache
from itertools import count
from operator import itemgetter
from typing import Any

from proxy.backends.base import ListResult, Result, Summary
from proxy.errors import CypherError, argument_error, database_error

from . import bind, bridges, dialect
from .cypher import ast as A
from .cypher.parser import parse
from .probe import (AlgorithmStep, LocalCall, PartPlanner, Plan, ProbeStep, Site, VirtualStep,
                    check_parameters, local_call, splice)
from .registry import CallContext, GraphContext, NodeRef, PropertyRef, Registry

_CACHE_SIZE = 2048


class ExtensionPlanner:
    """Plans and runs client queries for one backend kind ("falkordb" or "neo4j")."""

    def __init__(self, registry: Registry, *, backend_kind: str):
        self.registry = registry
        self.backend_kind = backend_kind
        self.plan = lru_cache(maxsize=_CACHE_SIZE)(self._decide)
        self._steps = {ProbeStep: self._run_probe, AlgorithmStep: self._run_algorithm,
                       VirtualStep: self._run_virtual}
        self._triggers = dialect.triggers([e.name for e in registry], self._procedure_names(),
                                          backend_kind == "falkordb")
        if backend_kind == "falkordb":
            self._triggers += bridges.triggers()

    def _procedure_names(self) -> list[str]:
        return ([p.name for p in self.registry.procedures()]
                + [v.name for v in self.registry.virtual_procedures(self.backend_kind)])

    def _names(self) -> list[str]:
        return [e.name for e in self.registry] + self._procedure_names()

    async def execute(self, query: str, params: dict[str, Any], runner) -> Result:
        plan = self.plan(query)
        if plan is None:
            return await runner.run(query, params)
        if plan.local is not None:
            return await self._answer_locally(plan.local, plan.prefix, params, runner)
        if plan.derived:
            params = {**params, **bridges.derive(plan.derived, params, explain=plan.prefix == "EXPLAIN")}
        if plan.prefix == "EXPLAIN":
            result = await runner.run(plan.text, {**params, **plan.placeholders})
            if plan.cartesian:
                summary = await result.consume()
                if bridges.shows_cartesian_product(summary.plan):
                    summary.notifications.extend(plan.cartesian)
            return result
        values: dict[str, Any] = {}
        for step in plan.steps:
            values.update(await self._run_step(step, {**params, **values}, runner))
        return await runner.run(plan.text, {**params, **values})

    # -- planning

    def _decide(self, query: str) -> Plan | None:
        """The plan of `query`, or None when it goes to the backend unchanged (cached as `plan`).

        Cheap text scan first: most queries need no parse at all."""
        return self._build(query) if dialect.triggered(query, self._triggers) else None

    def _build(self, query: str) -> Plan | None:
        kind = self.backend_kind
        try:
            tree = parse(query)
        except CypherError:
            if any(name.lower() in query.lower() for name in self._names()):
                raise
            return None            # a bridge-only trigger we cannot parse: let the database answer
        edits = dialect.alias_edits(tree, self.registry.__contains__)
        derived, cartesian = {}, []
        if kind == "falkordb":
            edits += dialect.falkordb_edits(tree, query)
            bridged = bridges.bridge(tree, query)
            edits += bridged.edits
            derived, cartesian = bridged.derived, bridged.cartesian
        edits.sort(key=lambda e: (e[0], e[1]))
        steps: list = []
        placeholders: dict[str, Any] = {}
        counter = count()
        for part in tree.parts:
            planner = PartPlanner(query, part, self.registry, kind, edits, counter)
            planner.plan()
            steps += planner.steps
            placeholders.update(planner.placeholders)
        if not edits and not cartesian:
            return None
        body = splice(query, tree.parts[0].span[0], len(query), edits)
        return Plan(body=body, prefix=tree.prefix, steps=steps, placeholders=placeholders,
                    local=local_call(self.registry, kind, tree), derived=derived, cartesian=cartesian)

    # -- execution

    async def _run_step(self, step, params: dict[str, Any], runner) -> dict[str, Any]:
        return await self._steps[type(step)](step, params, runner)

    async def _run_probe(self, step: ProbeStep, params: dict[str, Any], runner) -> dict[str, Any]:
        result = await runner.run(step.text, params)
        rows = await result.fetch(-1)
        await result.consume()
        values: dict[str, Any] = {}
        for site in step.sites:
            values.update(await self._bind(site, rows, runner))
        return values

    async def _bind(self, site: Site, rows: list[list[Any]], runner) -> dict[str, Any]:
        """The parameters of one call; a big batch is computed in a worker thread."""
        offload = len(rows) > site.ext.offload_above
        if offload:
            distinct = await asyncio.to_thread(_distinct_arguments, site, rows, self.backend_kind)
        else:
            distinct = _distinct_arguments(site, rows, self.backend_kind)
        evaluate = site.ext.evaluate
        if site.ext.prepare is not None and distinct:
            prepared = await site.ext.prepare(graph_context(runner), list(distinct.values()))
            evaluate = lambda tuples: site.ext.evaluate(tuples, prepared)      # noqa: E731
        if offload:
            return await asyncio.to_thread(_bind_distinct, site, distinct, evaluate, self.backend_kind)
        return _bind_distinct(site, distinct, evaluate, self.backend_kind)

    async def _run_algorithm(self, step: AlgorithmStep, params: dict[str, Any], runner) -> dict[str, Any]:
        procedure = step.procedure
        arguments = dict(procedure.parameters)
        if step.arguments is not None:
            given = _constant(step.arguments, params)
            if not isinstance(given, dict):
                raise argument_error(f"{procedure.name}() takes a map of parameters, got {given!r}")
            check_parameters(procedure, given)
            arguments.update(given)
        node_id = bind.node_index_expr(self.backend_kind, "{}")        # a template for the procedure
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
        return bind.build(self.backend_kind, step.param, True,
                          ((key, (), list(row)) for key, row in computed.items()))


    async def _run_virtual(self, step: VirtualStep, params: dict[str, Any], runner) -> dict[str, Any]:
        arguments = [_constant(arg, params) for arg in step.arguments]
        return {step.param: await step.procedure.answer(self._call_context(runner), arguments)}

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
        arguments = [_constant(arg, params) for arg in call.arguments]
        rows = await call.procedure.answer(self._call_context(runner), arguments)
        positions = [call.procedure.yields.index(f) for f in call.fields]
        records = [[row[i] for i in positions] for row in rows]
        if prefix == "PROFILE":
            summary.profile = {**operator, "rows": len(records), "dbHits": 0}
        return ListResult(call.columns, records, summary)

    def _call_context(self, runner) -> CallContext:
        return CallContext(graph_context(runner), self.registry, self.backend_kind,
                           runner.user, dict(runner.metadata or {}))


#: Neo4j's query type for a procedure by its mode.
_QUERY_TYPES = {"READ": "r", "WRITE": "rw", "SCHEMA": "s", "DBMS": "r"}


def graph_context(runner) -> GraphContext:
    """What an evaluator may know of the graph `runner`'s queries see."""

    async def read(query: str, params: dict[str, Any]) -> list[list[Any]]:
        result = await runner.run(query, params)
        rows = await result.fetch(-1)
        await result.consume()
        return rows

    async def stream(query: str, params: dict[str, Any], batch: int = 10_000):
        result = await runner.run(query, params)
        while rows := await result.fetch(batch):
            yield rows
        await result.consume()
    return GraphContext(runner.database, runner.graph_state(), read, stream)


def _distinct_arguments(site: Site, rows: list[list[Any]], kind: str) -> dict[tuple, tuple]:
    """Probe rows -> {key: argument tuple}, one entry per distinct argument tuple.

    Rows are deduplicated by the database-computed index and keys before any argument object
    is built, and each node's `NodeRef` is built once.
    """
    index_col = None
    if site.index_arg is not None:
        arg = site.args[site.index_arg]
        index_col = arg.id_col if kind == "falkordb" else arg.eid_col
    makers = [_argument_maker(arg, kind) for arg in site.args]
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


def _bind_distinct(site: Site, distinct: dict[tuple, tuple], evaluate, kind: str) -> dict[str, Any]:
    """`evaluate` once over the distinct argument tuples -> the parameter value."""
    values = evaluate(list(distinct.values())) if distinct else []
    if len(values) != len(distinct):
        raise database_error(f"{site.ext.name}() returned {len(values)} values for {len(distinct)} inputs")
    entries = ((key[0], key[1:], value) for key, value in zip(distinct, values))
    return bind.build(kind, site.param, site.index_arg is not None, entries)


_MISSING = object()


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


def _argument_maker(arg, kind: str):
    """A function: probe row -> this argument as the evaluator gets it (NodeRef/PropertyRef/value)."""
    if arg.kind == "value":
        return itemgetter(arg.value_col)
    refs: dict[Any, Any] = {}

    def make(row):
        node_id = row[arg.id_col]
        if node_id is None:
            return _MISSING
        ref = refs.get(node_id)
        if ref is None:
            element_id = str(node_id) if kind == "falkordb" else row[arg.eid_col]
            ref = NodeRef(node_id, element_id, tuple(row[arg.labels_col] or ()),
                          {name: row[col] for name, col in arg.prop_cols})
            refs[node_id] = ref = PropertyRef(ref, arg.key) if arg.kind == "property" else ref
        return ref
    return make


def _constant(expr: A.Expr, params: dict[str, Any]) -> Any:
    """The value of a constant procedure argument (literals, parameters, lists and maps of them)."""
    if isinstance(expr, A.Literal):
        return expr.value
    if isinstance(expr, A.Parameter):
        if expr.name not in params:
            raise CypherError("Neo.ClientError.Statement.ParameterMissing", f"Expected parameter(s): {expr.name}")
        return params[expr.name]
    if isinstance(expr, A.ListLiteral):
        return [_constant(item, params) for item in expr.items]
    if isinstance(expr, A.MapLiteral):
        return {key: _constant(value, params) for key, value in expr.items}
    if isinstance(expr, A.UnaryOp) and expr.op == "-":
        return -_constant(expr.operand, params)
    raise CypherError("Neo.ClientError.Statement.ArgumentError",
                      "The arguments of this procedure must be literals or query parameters "
                      "(lists and maps of them), not values computed per row")
