"""The evaluator registry: what extension functions exist and how to compute them in bulk.

The planner finds extension calls in a query, runs a probe that returns the distinct
argument tuples, and hands them to the matching `Extension.evaluate` in one call.
Evaluators know their own stores; they never see the wire or a concrete backend.
"""

from __future__ import annotations

import asyncio

from dataclasses import dataclass, field
from enum import Enum
from collections.abc import AsyncIterator, Awaitable, Hashable, Mapping
from typing import Any, Callable, Iterable, Sequence

from core.dialect import Capability, Dialect
from core.errors import argument_error


class ArgKind(Enum):
    """How the planner must pass one argument to an evaluator."""

    #: `n.channel`: a property access on a node variable, passed as `PropertyRef`.
    #: The property need not exist in the database (a timeseries channel does not).
    PROPERTY = "property"
    #: A node variable, passed as `NodeRef`.
    NODE = "node"
    #: Any expression; the database evaluates it and the value is passed as is.
    VALUE = "value"
    #: A node (passed as `NodeRef`) or any other value (passed as is).
    NODE_OR_VALUE = "node_or_value"
    #: A node (`NodeRef`), a node's property `n.key` (`PropertyRef`, for evaluators that read
    #: the property from their own store), or any other value (passed as is).
    NODE_PROPERTY_OR_VALUE = "node_property_or_value"
    #: A node (`NodeRef`), a relationship (`RelationshipRef`) or any other value (passed as is);
    #: when the call gives every argument, an expression that is not a variable is a node.
    ENTITY_OR_VALUE = "entity_or_value"


@dataclass(frozen=True, slots=True)
class NodeRef:
    """A node as an evaluator sees it: ids, labels and the properties it asked for."""

    id: int
    element_id: str
    labels: tuple[str, ...]
    properties: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass(frozen=True, slots=True)
class RelationshipRef:
    """A relationship as an evaluator sees it: ids and its type."""

    id: int
    element_id: str
    type: str


@dataclass(frozen=True, slots=True)
class PropertyRef:
    """`node.key` written as an extension argument."""

    node: NodeRef
    key: str


@dataclass(frozen=True, slots=True)
class GraphContext:
    """The graph one query runs on, as an evaluator may see it (never the wire or a backend).

    `state` keys caches of data derived from the graph (geometry indexes, embeddings,
    projections): equal states mean no write passed through the proxy in between (on an
    upstream Neo4j it also changes on a TTL). None means the query sees uncommitted writes
    of its own transaction: use nothing cached and cache nothing.
    `read(query, params)` runs a read-only query where the client's query runs (in its
    transaction, if any) and returns every row; `stream(query, params)` is the same as an async
    iterator of row batches, for results too big to hold twice. `dialect` is the backend's
    (`core/dialect.py`), for evaluators that read by its binding forms.
    """

    database: str
    state: Hashable | None
    read: Callable[[str, dict[str, Any]], Awaitable[list[list[Any]]]]
    stream: Callable[[str, dict[str, Any]], AsyncIterator[list[list[Any]]]] | None = None
    dialect: Dialect | None = None

    @property
    def integer_ids(self) -> bool:
        """Whether nodes are found by integer ids (`Dialect.integer_ids`; false when unknown)."""
        return self.dialect is not None and self.dialect.integer_ids

    async def read_all(self, query: str, params: dict[str, Any]) -> list[list[Any]]:
        """Every row, like `read`, but streamed in batches with the event loop free between them
        (decoding a million rows takes seconds)."""
        if self.stream is None:
            return await self.read(query, params)
        rows: list[list[Any]] = []
        async for batch in self.stream(query, params):
            rows += batch
            await asyncio.sleep(0)
        return rows


@dataclass(frozen=True, slots=True)
class JoinSide:
    """One side of an index join at run time (planned by extensions/planner/joins.py).

    `refs` are its candidate nodes (`NodeRef`, or `PropertyRef` when the argument is `n.key`),
    or None when the side is every node of `label`, which the evaluator reads from its own index.
    """

    label: str | None
    key: str | None                # the property the argument reads; None: the node itself
    refs: list | None = None


@dataclass(frozen=True)
class IndexJoin:
    """How an extension answers a join from an index instead of pair by pair.

    `modes` it answers: "predicate" (`f(a, b)` is true; bound None), "within" (`f(a, b) < r`;
    bound `(r, inclusive)`), "nearest" (`ORDER BY f(a, b) LIMIT k`; bound k: for each left node
    its k right nodes with the smallest value, ties kept, and every right node where values are
    missing). `pairs(graph, mode, left, right, bound)` returns the (left id, right id) pairs,
    deciding exactly as `evaluate` would.
    """

    modes: frozenset[str]
    pairs: Callable[[GraphContext, str, JoinSide, JoinSide, Any], Awaitable[list[tuple[int, int]]]]


@dataclass(frozen=True)
class Extension:
    """One extension function.

    `evaluate(rows)` gets every distinct argument tuple a query needs (one tuple per
    row, already converted per `arg_kinds`) and returns one value per tuple, in order.
    It raises `CypherError` (usually ArgumentError) with a message that teaches.
    """

    name: str
    arg_kinds: tuple[ArgKind, ...]
    min_args: int
    evaluate: Callable[[Sequence[tuple]], Sequence[Any]]
    #: Node properties the probe must fetch for NODE / PROPERTY / NODE_OR_VALUE args.
    node_properties: tuple[str, ...] = ()
    #: One-line signature shown by describe() and in arity errors.
    signature: str = ""
    #: Cost hint: rows above which the planner runs `evaluate` off the event loop.
    offload_above: int = 2_000
    #: For families whose store loads from disk on first use: `cold(arguments)` is True when
    #: evaluating those argument tuples (or their node sides, the first argument at least) may load
    #: it (seconds for a big store), so the planner runs it off the event loop whatever the row count.
    cold: Callable[[Iterable[tuple]], bool] | None = None
    #: For families whose store is built from the graph itself: awaited on the event loop as
    #: `prepare(graph, rows)` before `evaluate`, which then gets its result as a second
    #: argument, `evaluate(rows, prepared)`.
    prepare: Callable[[GraphContext, Sequence[tuple]], Awaitable[Any]] | None = None
    #: Two-argument functions whose joins an index can answer (see `IndexJoin`).
    index_join: IndexJoin | None = None
    #: Optional, for a separated probe (the call's node and its other arguments vary apart):
    #: `evaluate_product(nodes, values)` (with `prepared` last when there is `prepare`) gets the
    #: distinct node-side and value-side argument tuples and returns one row per node tuple, its
    #: values with each value tuple in order: `evaluate` of every `node + value` tuple, without
    #: building them.
    evaluate_product: Callable[..., Sequence[Sequence[Any]]] | None = None
    #: For families whose values depend on data besides the arguments and the graph (files):
    #: a token that changes with that data. Computed values are kept with the probe rows (the
    #: probe cache) while the graph and this token are unchanged, and, for a family without
    #: `prepare`, by the content of the probe rows while this token is unchanged: its `evaluate`
    #: must be a function of its arguments and this data alone.
    data_version: Callable[[], Hashable] | None = None
    #: Optional, for calls that bind only the top rows of a projection (`reduce.plan_projection`):
    #: `score_nodes(graph, groups, *values)` awaits the values of many nodes at once, per
    #: (labels, node ids array) group one float array (NaN for null), with the constant
    #: arguments `values`; no NodeRef is built per node.
    score_nodes: Callable[..., Awaitable[list]] | None = None

    @property
    def max_args(self) -> int:
        return len(self.arg_kinds)

    def offload(self, rows: int, arguments: Iterable[tuple]) -> bool:
        """Whether `evaluate` over this many argument rows (`arguments`, see `cold`) should run off
        the event loop."""
        return rows > self.offload_above or (self.cold is not None and self.cold(arguments))

    def check_arity(self, n: int) -> None:
        if not self.min_args <= n <= self.max_args:
            expected = (str(self.min_args) if self.min_args == self.max_args
                        else f"{self.min_args} to {self.max_args}")
            raise argument_error(
                f"{self.name}() takes {expected} arguments, got {n}. Usage: {self.signature or self.name}")


@dataclass(frozen=True, slots=True)
class CallContext:
    """What a virtual procedure may know while it answers one CALL."""

    graph: GraphContext
    registry: "Registry"
    #: The dialect of the backend the query runs on.
    dialect: Dialect
    #: The logged-in user (None for the embedded database's anonymous uses).
    user: str | None
    #: The transaction metadata the client sent with BEGIN (or with RUN, auto-commit).
    metadata: dict[str, Any]
    #: The databases the user may select, and the default one (SHOW DATABASES, dbms.*).
    databases: Callable[[], Awaitable[list[str]]] | None = None
    home_database: str = "neo4j"


@dataclass(frozen=True)
class VirtualProcedure:
    """A procedure the proxy answers itself: `describe()` and the compatibility shims
    (`dbms.components`, `apoc.meta.*`, ...) for backends that lack them.

    `answer(ctx, args)` gets the CALL's arguments (constants: literals and parameters) and
    returns the rows, one list per row in `yields` order. The planner binds the rows into the
    query (`UNWIND $__v0 AS r WITH r[0] AS name ...`), so YIELD, WHERE and the clauses after the
    CALL run in the database on either backend, inside transactions too; a query that is only
    the CALL is answered without the database (so it also works on the `system` database).
    """

    name: str
    yields: tuple[str, ...]
    answer: Callable[[CallContext, list[Any]], Awaitable[list[list[Any]]]]
    signature: str = ""
    description: str = ""
    #: As SHOW PROCEDURES reports it: READ, WRITE, SCHEMA or DBMS.
    mode: str = "READ"
    #: The native capability it stands in for: the proxy answers it on backends whose dialect
    #: lacks that, elsewhere the backend's own runs (None: answered everywhere).
    stands_in_for: Capability | None = None
    #: For a SHOW command (named "SHOW <WHAT>", never callable by CALL): the columns it
    #: returns without YIELD.
    shown: tuple[str, ...] = ()

    @property
    def callable(self) -> bool:
        """Whether CALL reaches it (SHOW commands are virtual procedures too, but not CALLable)."""
        return not self.name.startswith("SHOW ")


@dataclass(frozen=True)
class Procedure:
    """An algorithm extension: `CALL name({params}) YIELD node, score ...`.

    The planner checks the parameter names, runs `graph_query(params, node_id)` (read-only
    Cypher; `node_id` is a template such as 'id({})' the query must use for node identities),
    hands its rows to `evaluate(params, rows)`, which returns `{node identity: (other yield
    values, in `yields` order)}`, and rewrites the CALL into a scan of the nodes that got a row.
    A procedure with `run` instead gets the whole step: `await run(graph, params, node_id)`
    returns that mapping (families that cache what they read and compute off the event loop),
    for one value per node best as a `ValueColumn`.
    """

    name: str
    #: Accepted parameter names and their defaults.
    parameters: dict[str, Any]
    #: Output columns; the first one is the node.
    yields: tuple[str, ...]
    graph_query: Callable[[dict[str, Any], str], str] | None = None
    evaluate: Callable[[dict[str, Any], Sequence[Sequence[Any]]], dict[Any, tuple]] | None = None
    signature: str = ""
    offload_above: int = 2_000
    run: Callable[[GraphContext, dict[str, Any], str], Awaitable[dict[Any, tuple]]] | None = None


class ValueColumn(Mapping):
    """A one-value procedure's rows as two columns, identities and values (numpy arrays), read as
    the mapping `{identity: (value,)}` `run` returns: a million rows are never a million tuples
    unless someone iterates them, and the planner picks the rows a query needs from the arrays."""

    def __init__(self, ids, values):
        self.ids, self.values = ids, values
        self._index: dict | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def __iter__(self):
        return iter(self.ids.tolist())

    def __getitem__(self, identity):
        if self._index is None:
            self._index = {key: i for i, key in enumerate(self.ids.tolist())}
        return (self.values[self._index[identity]].item(),)

    def items(self):
        return zip(self.ids.tolist(), ((value,) for value in self.values.tolist()))


@dataclass(frozen=True)
class CommandHandler:
    """A schema command (CREATE/DROP INDEX or CONSTRAINT: the parser's typed node class `node`)
    the proxy runs itself on backends that lack it: `run(command, params, ctx, runner)` returns
    the `Result` the client gets."""

    node: type
    run: Callable[[Any, dict[str, Any], CallContext, Any], Awaitable[Any]]
    stands_in_for: Capability = Capability.SCHEMA_COMMANDS


@dataclass(frozen=True)
class ProcedureRewrite:
    """A procedure CALL the proxy rewrites into the backend's own (Neo4j's vector and fulltext
    procedures onto FalkorDB's): `plan(planner, clause_index, clause)` adds the edit and the
    steps through the `plan_builder.PlanBuilder` it is given, like the planner's own `plan_virtual`. `yields` as the Neo4j procedure has them."""

    name: str
    yields: tuple[str, ...]
    plan: Callable[[Any, int, Any], None]
    signature: str = ""
    description: str = ""
    #: The native capability it stands in for (rewritten on backends whose dialect lacks it).
    stands_in_for: Capability = Capability.PROCEDURES


@dataclass(frozen=True)
class Describer:
    """An extension family's part in describe() (`extensions/describe/`), so a new family shows
    up there without describe() being edited: the heading its extensions are listed under, notes
    under them, flags on the node types it serves, and lines in such a type's detail.
    """

    family: str
    #: Names of the family's extensions and procedures, listed under `family`.
    extensions: tuple[str, ...]
    #: Lines under the signatures (e.g. the accepted date formats).
    notes: tuple[str, ...] = ()
    #: What each flag means, stated once (e.g. {"ts": "timeseries"}).
    legend: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: `flags(label, sampled property maps)` -> the flags of that node type (e.g. ["ts"]).
    flags: Callable[[str, Sequence[dict[str, Any]]], Iterable[str]] = lambda label, sample: ()
    #: Awaited as `detail(graph, label, sampled property maps)` -> lines of that type's detail
    #: (channels, units ...).
    detail: Callable[[GraphContext, str, Sequence[dict[str, Any]]], Awaitable[list[str]]] | None = None


Entry = Extension | Procedure | VirtualProcedure | ProcedureRewrite | CommandHandler | Describer


class Registry:
    """Everything the planner and describe() can look up: extension functions, algorithm
    procedures, virtual procedures and procedure rewrites by lower-case name, schema command
    handlers by the parser's node class, and the families' describers."""

    def __init__(self, extensions: Iterable[Entry] = ()):
        self._by_name: dict[str, Extension] = {}
        self._procedures: dict[str, Procedure] = {}
        self._virtual: dict[str, VirtualProcedure] = {}
        self._rewrites: dict[str, ProcedureRewrite] = {}
        self._commands: dict[type, CommandHandler] = {}
        self._describers: list[Describer] = []
        for ext in extensions:
            self.add(ext)

    def add(self, ext: Entry) -> None:
        if isinstance(ext, Describer):
            self._describers.append(ext)
        elif isinstance(ext, CommandHandler):
            self._commands[ext.node] = ext
        else:
            index = {Procedure: self._procedures, VirtualProcedure: self._virtual,
                     ProcedureRewrite: self._rewrites, Extension: self._by_name}[type(ext)]
            index[ext.name.lower()] = ext

    def derived(self, change: Callable[[Entry], Entry | None]) -> "Registry":
        """A registry of every entry passed through `change` (None leaves it out)."""
        entries = [*self._by_name.values(), *self._procedures.values(), *self._virtual.values(),
                   *self._rewrites.values(), *self._commands.values(), *self._describers]
        return Registry(changed for entry in entries if (changed := change(entry)) is not None)

    def rewrite(self, name: str, dialect: Dialect) -> ProcedureRewrite | None:
        """The rewrite of procedure `name` in `dialect`, if the proxy rewrites it there."""
        return _served(self._rewrites.get(name.lower()), dialect)

    def rewrites(self, dialect: Dialect) -> list[ProcedureRewrite]:
        return [r for r in self._rewrites.values() if _served(r, dialect)]

    def command(self, node: type, dialect: Dialect) -> CommandHandler | None:
        """The handler of schema command nodes of class `node` in `dialect`, if the proxy runs them."""
        return _served(self._commands.get(node), dialect)

    def procedure(self, name: str) -> Procedure | None:
        return self._procedures.get(name.lower())

    def procedures(self) -> list[Procedure]:
        return list(self._procedures.values())

    def virtual(self, name: str, dialect: Dialect) -> VirtualProcedure | None:
        """The virtual procedure `name` if the proxy answers it in `dialect`."""
        return _served(self._virtual.get(name.lower()), dialect)

    def virtual_procedures(self, dialect: Dialect) -> list[VirtualProcedure]:
        """The virtual procedures answered in `dialect`."""
        return [v for v in self._virtual.values() if _served(v, dialect)]

    def describers(self) -> list[Describer]:
        return list(self._describers)

    def get(self, name: str) -> Extension | None:
        return self._by_name.get(name.lower())

    def __contains__(self, name: str) -> bool:
        return name.lower() in self._by_name

    def __iter__(self):
        return iter(self._by_name.values())


def _served(entry, dialect: Dialect):
    """`entry` if the proxy serves it in `dialect` (the dialect lacks what it stands in for), else None."""
    if entry is None or entry.stands_in_for is not None and dialect.has(entry.stands_in_for):
        return None
    return entry
