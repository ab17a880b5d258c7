"""Neo4j 5 schema commands on the embedded FalkorDB: named CREATE/DROP INDEX and CONSTRAINT.

A command is translated into FalkorDB's own index statements (`CREATE [VECTOR|FULLTEXT] INDEX
FOR ... ON ...`) and constraint commands (`GRAPH.CONSTRAINT`, through the backend), and its
name is kept in the `NameStore` so SHOW INDEXES / SHOW CONSTRAINTS list it and DROP finds it.
Uniqueness is enforced by FalkorDB, existence (NOT NULL) by the proxy when each write statement
ends (`extensions/planner/existence.py`: FalkorDB's own check runs at every operation, before an
`ON CREATE SET` could add the property); a constraint the existing data violates is refused, as
Neo4j refuses it, and nothing of it is left behind.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any

from extensions.cypher import ast as A
from extensions.cypher.render import name as quote
from extensions.cypher.constants import constant
from extensions.registry import CommandHandler
from core.backend import ListResult, Summary
from core.errors import CypherError, argument_error

from .schema_catalog import (CONSTRAINTS, Catalog, Definition, Entry, NameStore, await_indexes,
                             pending_vector_index, read_catalog)

#: Neo4j's similarity function names -> FalkorDB's.
SIMILARITY = {"cosine": "cosine", "euclidean": "euclidean"}


def _schema_error(code: str, message: str) -> CypherError:
    return CypherError(f"Neo.ClientError.Schema.{code}", message)


def _name(value: Any, params: dict[str, Any]) -> str | None:
    if isinstance(value, A.Parameter):
        if value.name not in params:
            raise CypherError("Neo.ClientError.Statement.ParameterMissing", f"Expected parameter(s): {value.name}")
        value = params[value.name]
    if value is not None and not isinstance(value, str):
        raise argument_error(f"An index or constraint name must be a string, got {value!r}.")
    return value


def _pattern(d: Definition, label: str) -> str:
    return f"(n:{quote(label)})" if d.entity == "NODE" else f"()-[n:{quote(label)}]-()"


class SchemaCommands:
    """Runs CREATE/DROP INDEX and CONSTRAINT commands through a runner, naming them in `names`."""

    def __init__(self, names: NameStore):
        self.names = names

    def handlers(self) -> list[CommandHandler]:
        return [CommandHandler(A.CreateIndex, self.create_index),
                CommandHandler(A.CreateConstraint, self.create_constraint),
                CommandHandler(A.DropSchema, self.drop)]

    async def _catalog(self, ctx) -> Catalog:
        return await read_catalog(ctx.graph, self.names)

    # -- CREATE

    async def create_index(self, command: A.CreateIndex, params: dict[str, Any], ctx, runner):
        target = command.target
        options = _options(command.options, params)
        d = Definition("INDEX", command.kind, target.entity.upper(), target.labels, target.properties,
                       _vector_options(options) if command.kind == "VECTOR" else {})
        if command.kind != "FULLTEXT" and len(d.labels) != 1:
            raise argument_error(f"A {command.kind} index is on one label or relationship type.")
        name = _name(command.name, params) or d.generated_name()
        catalog = await self._catalog(ctx)
        if d.kind == "VECTOR" and d.options["dimension"] is None:
            d = await _dimensions_from_data(ctx, d)
        pending = catalog.find(name)
        if pending is not None and pending.definition == d and pending_vector_index(pending.definition) \
                and not pending_vector_index(d):                  # its dimensions are known now
            catalog = replace(catalog, indexes=[e for e in catalog.indexes if e is not pending])
        elif await self._exists(catalog, name, d, command.if_not_exists, "index"):
            return command_result(runner, {})
        statements = self._index_statements(d, catalog)
        for statement in statements:
            await _run(runner, statement)
        self.names.put(runner.database, name, d)
        return command_result(runner, {"indexes-added": 1})

    def _index_statements(self, d: Definition, catalog: Catalog) -> list[str]:
        have = {f for e in catalog.indexes for f in e.definition.fields()}
        statements = []
        for label in d.labels:
            missing = [p for p in d.properties if (_field_kind(d), d.entity, label, p) not in have]
            if not missing:
                continue
            on = ", ".join(f"n.{quote(p)}" for p in missing)
            if pending_vector_index(d):
                continue
            if d.kind == "VECTOR":
                statements.append(_vector_index(d, label, on))
            elif d.kind == "FULLTEXT":
                statements.append(f"CREATE FULLTEXT INDEX FOR {_pattern(d, label)} ON ({on})")
            else:
                statements.append(f"CREATE INDEX FOR {_pattern(d, label)} ON ({on})")
        return statements

    async def create_constraint(self, command: A.CreateConstraint, params: dict[str, Any], ctx, runner):
        target = command.target
        if command.kind == "TYPE":
            raise CypherError("Neo.ClientError.Statement.UnsupportedOperation",
                              "Property type constraints (IS :: TYPE) are not supported by the embedded "
                              "database; use UNIQUE, KEY or NOT NULL constraints.")
        d = Definition("CONSTRAINT", command.kind, target.entity.upper(), target.labels, target.properties)
        name = _name(command.name, params) or d.generated_name()
        catalog = await self._catalog(ctx)
        if await self._exists(catalog, name, d, command.if_not_exists, "constraint"):
            return command_result(runner, {})
        await self._check_existence(ctx, name, d)
        index = Definition("INDEX", "RANGE", d.entity, d.labels, d.properties)
        for statement in self._index_statements(index, catalog) if d.fields() else ():
            await _run(runner, statement)
        created = []
        try:
            for kind, entity, label, properties in sorted(d.constraints()):
                await runner.backend.constraint(runner.database, "CREATE", kind, entity, label, properties)
                created.append((kind, entity, label, properties))
            await self._wait_until_built(ctx, name, d, created)
        except CypherError:
            await _drop_constraints(ctx, runner, created)
            raise
        self.names.put(runner.database, name, d)
        return command_result(runner, {"constraints-added": 1})

    async def _check_existence(self, ctx, name: str, d: Definition) -> None:
        """A NOT NULL (or KEY) constraint the existing data violates is refused, as in Neo4j
        (the proxy enforces existence itself, see `Definition.constraints`)."""
        for entity, label, prop in sorted(d.existence()):
            rows = await ctx.graph.read(f"MATCH {_pattern(d, label)} WHERE n.{quote(prop)} IS NULL "
                                        "RETURN id(n) LIMIT 1", {})
            if rows:
                what = "Node" if entity == "NODE" else "Relationship"
                raise _schema_error("ConstraintCreationFailed",
                                    f"Unable to create Constraint( name='{name}', type='{d.kind}', schema="
                                    f"{_pattern(d, label)} {{{', '.join(d.properties)}}} ): {what}({rows[0][0]}) "
                                    f"with {'label' if entity == 'NODE' else 'type'} `{label}` must have the "
                                    f"property `{prop}`. Set it on the existing data first.")

    async def _wait_until_built(self, ctx, name: str, d: Definition, created: list) -> None:
        """FalkorDB builds a constraint in the background: wait for it, refuse it if data violates it."""
        for _ in range(200):
            rows = await ctx.graph.read("CALL db.constraints() YIELD type, label, properties, entitytype, status "
                                        "RETURN type, entitytype, label, properties, status", {})
            states = {(r[0], r[1], r[2], tuple(sorted(r[3]))): r[4] for r in rows}
            mine = [states.get(c) for c in created]
            if "FAILED" in mine:
                raise _schema_error("ConstraintCreationFailed",
                                    f"Unable to create Constraint( name='{name}', type='{d.kind}', schema="
                                    f"{_pattern(d, d.labels[0])} {{{', '.join(d.properties)}}} ): existing data "
                                    "violates it. Remove the duplicate or missing values first.")
            if all(state == "OPERATIONAL" for state in mine):
                return
            await asyncio.sleep(0.01)

    async def _exists(self, catalog: Catalog, name: str, d: Definition, if_not_exists: bool, what: str) -> bool:
        """True when the command has nothing to do (IF NOT EXISTS); raises when the name or an
        equivalent definition is taken."""
        by_name = catalog.find(name, d.what)
        same = catalog.equivalent(d)
        if by_name is None and same is None:
            return False
        if if_not_exists:
            return True
        if by_name is not None and by_name.definition != d:
            raise _schema_error("IndexWithNameAlreadyExists" if what == "index" else "ConstraintWithNameAlreadyExists",
                                f"There already exists {'an index' if what == 'index' else 'a constraint'} "
                                f"called '{name}'.")
        raise _schema_error("EquivalentSchemaRuleAlreadyExists",
                            f"An equivalent {what} already exists, '{_describe(by_name or same)}'.")

    # -- DROP

    async def drop(self, command: A.DropSchema, params: dict[str, Any], ctx, runner):
        name = _name(command.name, params)
        catalog = await self._catalog(ctx)
        entries = catalog.indexes if command.what == "INDEX" else catalog.constraints
        entry = next((e for e in entries if e.name == name), None)
        if entry is None:
            if command.if_exists:
                return command_result(runner, {})
            if command.what == "INDEX":
                raise _schema_error("IndexDropFailed", f"Unable to drop index called `{name}`. "
                                                       "There is no such index.")
            raise _schema_error("ConstraintDropFailed", f"Unable to drop constraint `{name}`: "
                                                        f"No such constraint {name}.")
        if command.what == "INDEX" and entry.owner:
            raise _schema_error("IndexDropFailed",
                                f"Unable to drop index: Index belongs to constraint: `{entry.owner}`. "
                                f"Drop the constraint instead: DROP CONSTRAINT `{entry.owner}`.")
        d = entry.definition
        others = [e for e in catalog.indexes + catalog.constraints if e.name != name]
        kept = set().union(*(e.definition.fields() for e in others)) if others else set()
        await _drop_constraints(ctx, runner, sorted(d.constraints()))
        for kind, entity, label, prop in sorted(d.fields() - kept if not pending_vector_index(d) else ()):
            word = {"RANGE": "", "VECTOR": "VECTOR ", "FULLTEXT": "FULLTEXT "}[kind]
            await _run(runner, f"DROP {word}INDEX FOR {_pattern(d, label)} ON (n.{quote(prop)})")
        self.names.put(runner.database, name, None)
        return command_result(runner, {"indexes-removed" if command.what == "INDEX" else "constraints-removed": 1})


async def _drop_constraints(ctx, runner, constraints) -> None:
    """Drop FalkorDB constraints given as (type, entity, label, sorted properties): FalkorDB drops a
    composite one only with its properties in its own order, which `db.constraints()` shows."""
    rows = await ctx.graph.read(CONSTRAINTS, {})
    order = {(r[0], r[3], r[1], tuple(sorted(r[2]))): tuple(r[2]) for r in rows}
    for kind, entity, label, properties in constraints:
        await runner.backend.constraint(runner.database, "DROP", kind, entity, label,
                                        order.get((kind, entity, label, properties), properties))


def _field_kind(d: Definition) -> str:
    return next(iter(d.fields()))[0] if d.fields() else "RANGE"


def _describe(entry: Entry) -> str:
    d = entry.definition
    return (f"{d.what.title()}( name='{entry.name}', type='{d.kind}', schema="
            f"{':'.join(d.labels)} {{{', '.join(d.properties)}}} )")


def _options(expr, params: dict[str, Any]) -> dict[str, Any]:
    value = constant(expr, params) if expr is not None else {}
    if not isinstance(value, dict):
        raise argument_error(f"OPTIONS must be a map, got {value!r}.")
    return value


def _vector_options(options: dict[str, Any]) -> dict[str, Any]:
    """Neo4j's `{indexConfig: {vector.dimensions, vector.similarity_function}}` -> FalkorDB's."""
    config = options.get("indexConfig") or {}
    dimensions = config.get("vector.dimensions")
    similarity = str(config.get("vector.similarity_function", "cosine")).lower()
    if dimensions is not None and (not isinstance(dimensions, int) or isinstance(dimensions, bool)
                                   or dimensions < 1):
        raise argument_error(f"`vector.dimensions` must be a positive integer, got {dimensions!r}.")
    if similarity not in SIMILARITY:
        raise argument_error(f"Unknown vector.similarity_function '{similarity}': use 'cosine' or 'euclidean'.")
    return {"dimension": dimensions, "similarityFunction": SIMILARITY[similarity]}


def _vector_index(d: Definition, label: str, on: str) -> str:
    config = d.options
    return (f"CREATE VECTOR INDEX FOR {_pattern(d, label)} ON ({on}) OPTIONS {{dimension: {config['dimension']}, "
            f"similarityFunction: '{config['similarityFunction']}'}}")


async def build_pending(ctx, names: NameStore, name: str, d: Definition) -> bool:
    """Build the pending vector index `name` if vectors are stored now (Neo4j takes the dimensions
    from the first vector written; the index is queried, so it must exist). Runs where the query
    runs; False when there are no vectors yet or the index cannot be built there (a read-only
    transaction)."""
    built = await _dimensions_from_data(ctx, d)
    if pending_vector_index(built):
        return False
    try:
        await ctx.graph.read(_vector_index(built, built.labels[0], f"n.{quote(built.properties[0])}"), {})
        await await_indexes(ctx.graph, 30.0)
    except CypherError:
        return False
    names.put(ctx.graph.database, name, built)
    return True


async def _dimensions_from_data(ctx, d: Definition) -> Definition:
    """Neo4j (>= 5.23) takes a vector index's dimensions from the vectors written; FalkorDB needs
    them to build the index. The dimensions of a vector already stored are used; with none yet,
    the index stays pending until `CREATE VECTOR INDEX` runs again (llama-index runs it on
    every start) with vectors in the graph."""
    label, key = quote(d.labels[0]), quote(d.properties[0])
    pattern = f"(n:{label})" if d.entity == "NODE" else f"()-[n:{label}]->()"
    found = await ctx.graph.read(f"MATCH {pattern} WHERE n.{key} IS NOT NULL RETURN n.{key} LIMIT 1", {})
    if not found or not isinstance(found[0][0], list) or not found[0][0]:
        return d
    return replace(d, options={**d.options, "dimension": len(found[0][0])})


def command_result(runner, stats: dict[str, int]) -> ListResult:
    """What a schema command returns: no rows, query type "s", its counters."""
    return ListResult([], [], Summary(database=runner.database, query_type="s", stats=stats))


async def _run(runner, statement: str) -> None:
    result = await runner.run(statement, {})
    await result.consume()
