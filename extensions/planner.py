"""The extension planner the session calls: pass-through, or probe -> compute -> bind.

`ExtensionPlanner.execute(query, params, runner)`:
- a query that mentions no extension and needs no dialect bridge goes to the backend as is
  (one precompiled regex scan decides, before any parsing);
- otherwise the query is parsed once and planned once per (backend kind, text) (`probe.py`):
  the probes run through the same runner (so they see the open transaction's writes), the
  evaluators compute the values (off the event loop for big batches), and the rewritten query
  runs with the values bound as parameters (`bind.py`);
- `EXPLAIN` sends the rewritten query with placeholder parameters (nothing is computed);
  `PROFILE` runs the probes, then profiles the rewritten query.
"""

from __future__ import annotations

import asyncio
from functools import lru_cache
from itertools import count
from typing import Any

from proxy.backends.base import Result
from proxy.errors import CypherError, database_error

from . import bind, dialect
from .cypher import ast as A
from .cypher.parser import parse
from .probe import AlgorithmStep, PartPlanner, Plan, ProbeStep, Site, check_parameters, splice
from .registry import NodeRef, PropertyRef, Registry

_CACHE_SIZE = 2048


class ExtensionPlanner:
    """Plans and runs client queries for one backend kind ("falkordb" or "neo4j")."""

    def __init__(self, registry: Registry, *, backend_kind: str):
        self.registry = registry
        self.backend_kind = backend_kind
        self._plan = lru_cache(maxsize=_CACHE_SIZE)(self._build)
        self._triggers = {kind: dialect.trigger_pattern(self._names(), kind == "falkordb")
                          for kind in ("falkordb", "neo4j")}

    def _names(self) -> list[str]:
        return [e.name for e in self.registry] + [p.name for p in self.registry.procedures()]

    def plan(self, query: str, kind: str | None = None) -> Plan | None:
        """The cached plan of `query`, or None when it goes to the backend unchanged."""
        kind = kind or self.backend_kind
        if not self._triggers[kind].search(query):
            return None
        return self._plan(kind, query)

    async def execute(self, query: str, params: dict[str, Any], runner) -> Result:
        kind = getattr(getattr(runner, "backend", None), "kind", None) or self.backend_kind
        plan = self.plan(query, kind)
        if plan is None:
            return await runner.run(query, params)
        if plan.prefix == "EXPLAIN":
            return await runner.run(plan.text, {**params, **plan.placeholders})
        values: dict[str, Any] = {}
        for step in plan.steps:
            values.update(await self._run_step(step, {**params, **values}, runner, kind))
        return await runner.run(plan.text, {**params, **values})

    # -- planning

    def _build(self, kind: str, query: str) -> Plan | None:
        try:
            tree = parse(query)
        except CypherError:
            if any(name.lower() in query.lower() for name in self._names()):
                raise
            return None            # a bridge-only trigger we cannot parse: let the database answer
        edits = dialect.alias_edits(tree, self.registry.__contains__)
        if kind == "falkordb":
            edits += dialect.falkordb_edits(tree, query)
        edits.sort(key=lambda e: (e[0], e[1]))
        steps: list = []
        placeholders: dict[str, Any] = {}
        counter = count()
        for part in tree.parts:
            planner = PartPlanner(query, part, self.registry, kind, edits, counter)
            planner.plan()
            steps += planner.steps
            placeholders.update(planner.placeholders)
        if not edits:
            return None
        body = splice(query, tree.parts[0].span[0], len(query), edits)
        return Plan(body=body, prefix=tree.prefix, steps=steps, placeholders=placeholders)

    # -- execution

    async def _run_step(self, step, params: dict[str, Any], runner, kind: str) -> dict[str, Any]:
        if isinstance(step, AlgorithmStep):
            return {step.param: await self._run_algorithm(step, params, runner, kind)}
        result = await runner.run(step.text, params)
        rows = await result.fetch(-1)
        await result.consume()
        return {site.param: await self._bind(site, rows, kind) for site in step.sites}

    async def _bind(self, site: Site, rows: list[list[Any]], kind: str) -> Any:
        """Distinct argument tuples of one call -> evaluate once -> the parameter value."""
        distinct: dict[tuple, tuple] = {}
        for row in rows:
            args = _arguments(site, row, kind)
            if args is None:
                continue
            index = None
            if site.index_arg is not None:
                ref = args[site.index_arg]
                node = ref.node if isinstance(ref, PropertyRef) else ref
                index = node.id if kind == "falkordb" else node.element_id
            distinct.setdefault((index, tuple(row[c] for c in site.key_cols)), args)
        values = await _offload(site.ext.evaluate, list(distinct.values()),
                                len(distinct) > site.ext.offload_above)
        if len(values) != len(distinct):
            raise database_error(f"{site.ext.name}() returned {len(values)} values for {len(distinct)} inputs")
        entries = ((index, keys, value) for (index, keys), value in zip(distinct, values))
        return bind.build(kind, site.index_arg is not None, entries)

    async def _run_algorithm(self, step: AlgorithmStep, params: dict[str, Any], runner, kind: str) -> Any:
        procedure = step.procedure
        arguments = dict(procedure.parameters)
        if step.arguments is not None:
            given = _constant(step.arguments, params)
            if not isinstance(given, dict):
                raise CypherError("Neo.ClientError.Statement.ArgumentError",
                                  f"{procedure.name}() takes a map of parameters, got {given!r}")
            check_parameters(procedure, given)
            arguments.update(given)
        node_id = "id({})" if kind == "falkordb" else "elementId({})"
        result = await runner.run(procedure.graph_query(arguments, node_id), params)
        rows = await result.fetch(-1)
        await result.consume()
        computed = await _offload(lambda r: procedure.evaluate(arguments, r), rows,
                                  len(rows) > procedure.offload_above)
        return bind.build(kind, True, ((key, (), list(row)) for key, row in computed.items()))


def _arguments(site: Site, row: list[Any], kind: str) -> tuple | None:
    """One probe row -> the call's argument tuple (None when a node argument is null)."""
    args = []
    for arg in site.args:
        if arg.kind == "value":
            args.append(row[arg.value_col])
            continue
        node_id = row[arg.id_col]
        if node_id is None:
            return None
        element_id = str(node_id) if kind == "falkordb" else row[arg.eid_col]
        ref = NodeRef(node_id, element_id, tuple(row[arg.labels_col] or ()),
                      {name: row[col] for name, col in arg.prop_cols})
        args.append(PropertyRef(ref, arg.key) if arg.kind == "property" else ref)
    return tuple(args)


async def _offload(function, rows, offload: bool):
    """Run an evaluator inline for small batches, in a worker thread for big ones."""
    if offload:
        return await asyncio.to_thread(function, rows)
    return function(rows)


def _constant(expr: A.Expr, params: dict[str, Any]) -> Any:
    """The value of a constant algorithm argument (literals, parameters, lists and maps of them)."""
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
                      "Algorithm parameters must be literals or query parameters")
