"""Which date-time kind each property key holds, so a stored `datetime()` reads back zoned.

Neo4j has two date-time types, DateTime (zoned) and LocalDateTime; FalkorDB has one. The proxy
stores `datetime()` as its UTC instant, so a value read from the graph cannot say which type it
was written as. Reading every stored date-time back zoned would make stored `localdatetime()`
values and naive Python datetimes wrong; reading them all back local makes stored `datetime()`
values wrong. Both are the silent wrong answer DESIGN.md forbids.

What the proxy can know exactly is what it wrote: every write goes through it, and the kind of
the written expression is known when the query runs (`datetime(...)`, a driver value in UTC:
zoned; `localdatetime(...)`, a naive driver value: local; another property: that key's kinds;
CREATE, MERGE, SET, FOREACH and the maps passed to procedures such as `apoc.merge.node`).
So it records, per database and property key, the kinds written (`KindStore`, a JSON file in
the data directory, like the schema names), and types a date-time it reads back by the key it
came from: a node's or relationship's property, a map of one entity's properties
(`properties(n)`, `n {.*}`), or a column whose expression names the key (`n.at`,
`max(n.at) AS last`, through WITH aliases). The rule is exact or refuses:

- a key written only zoned reads back zoned (in UTC), one written only local (or never seen
  written: data from before this record) reads back local, as before;
- a key written with both kinds, or with an expression whose kind the proxy cannot tell (a
  procedure's output, a variable it cannot follow), is refused when one of its date-times is
  read (`UnsupportedOperationError`, saying to keep one kind per key);
- a date-time the result cannot tie to a key (a column from a subquery, a map built from
  several keys) is refused the same way, but only in a database that holds a zoned key: until
  then every stored date-time is local and nothing changes.

A date-time parameter with a fraction of a second is stored as an integer of epoch
microseconds (`fraction.py`; FalkorDB keeps whole seconds): its key is recorded FINE beside its
kind, and such integers read from a FINE key (or a column that is such a value itself: `n.at`,
`max(n.at)`, `$now`) come back as the date-time.

`MATCH (n) DETACH DELETE n` (the whole graph) forgets the database's record. A write's text
is parsed once (cached); results are looked at only in a database that holds a zoned or FINE
key, or for a query that sends a fraction of a second.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any

from neo4j.time import DateTime

from core.backend import MappedRows, Result
from core.errors import CypherError
from core.values import Node, Path as GraphPath, Relationship

from ..cypher import ast as A
from ..cypher.effects import effects
from ..cypher.parser import parse
from . import fraction
from .values import from_bolt, text

ZONED, LOCAL, UNKNOWN = "zoned", "local", "unknown"
#: beside ZONED or LOCAL: the key holds date-times with a fraction of a second, which FalkorDB
#: cannot store; the proxy stores them as integers of epoch microseconds (`fraction.py`)
FINE = "fine"
#: a column whose maps hold one entity's properties (`properties(n)`), typed by their keys
BY_KEY = "by key"
#: a column of `toString()` of a stored fraction of a second, printed when read back
TEXT = "text"
UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"
_CLEAR_ALL = re.compile(r"\s*match\s*\(\s*(\w+)\s*\)\s*detach\s+delete\s+(\w+)\s*;?\s*\Z", re.IGNORECASE)


class KindStore:
    """The date-time kinds written per database and property key, in one JSON file."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            data = {}
        self._kinds = {db: {key: set(kinds) for key, kinds in keys.items()} for db, keys in data.items()}

    def of(self, database: str, key: str) -> frozenset:
        return frozenset(self._kinds.get(database, {}).get(key, ()))

    def holds_zoned(self, database: str) -> bool:
        return any(ZONED in kinds for kinds in self._kinds.get(database, {}).values())

    def fine_keys(self, database: str) -> frozenset:
        """The keys that hold date-times stored as epoch microseconds."""
        return frozenset(key for key, kinds in self._kinds.get(database, {}).items() if FINE in kinds)

    def record(self, database: str, written: Iterable[tuple[str, frozenset]]) -> None:
        keys = self._kinds.setdefault(database, {})
        changed = False
        for key, kinds in written:
            if not kinds <= keys.get(key, set()):
                keys.setdefault(key, set()).update(kinds)
                changed = True
        if changed:
            self._save()

    def discard(self, database: str, key: str, kind: str) -> None:
        if kind in self._kinds.get(database, {}).get(key, ()):
            self._kinds[database][key].discard(kind)
            self._save()

    def forget(self, database: str) -> None:
        if self._kinds.pop(database, None) is not None:
            self._save()

    def _save(self) -> None:
        with self._lock:
            data = {db: {key: sorted(kinds) for key, kinds in keys.items()} for db, keys in self._kinds.items()}
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".kinds-")
            with os.fdopen(fd, "w") as out:
                json.dump(data, out, indent=1, sort_keys=True)
            os.replace(tmp, self.path)


# -- the kind of an expression -------------------------------------------------------------------

def value_kinds(value: Any) -> frozenset:
    """The kinds of the date-times in a driver value (lists and maps looked into); FINE too for
    one the proxy stores as epoch microseconds (`fraction.micros`)."""
    if isinstance(value, (_dt.datetime, DateTime)):
        kind = LOCAL if value.tzinfo is None else ZONED
        return frozenset({kind, FINE}) if fraction.micros(value) is not None else frozenset({kind})
    if isinstance(value, dict):
        return frozenset().union(*map(value_kinds, value.values()))
    if isinstance(value, (list, tuple)):
        return frozenset().union(*map(value_kinds, value))
    return frozenset()


class Scope:
    """What the variables of one query part stand for (WITH aliases, UNWIND), to follow them."""

    def __init__(self, part: A.SingleQuery):
        self.bound: dict[str, A.Expr] = {}
        self.unwound: dict[str, A.Expr] = {}
        for clause in part.clauses:
            if isinstance(clause, A.Unwind):
                self.unwound[clause.var.name] = clause.expr
            elif isinstance(clause, A.Foreach):
                self.unwound[clause.var.name] = clause.source
            elif isinstance(clause, A.With):
                for item in clause.items:
                    name = item.alias or (item.expr.name if isinstance(item.expr, A.Variable) else None)
                    if name and not (isinstance(item.expr, A.Variable) and item.expr.name == name):
                        self.bound[name] = item.expr


#: The kind of date-time each constructor family gives (`datetime.fromepoch(...)` too).
_CONSTRUCTED = {"datetime": ZONED, "localdatetime": LOCAL}


def expr_kinds(expr: A.Expr, scope: Scope, params: dict, key_kinds: Callable[[str], frozenset],
               seen: frozenset = frozenset()) -> frozenset:
    """The kinds of date-time `expr` can give: a property access gives its key's kinds, a
    `datetime`/`localdatetime` call its own, a parameter those of its value, a variable those of
    what it stands for (UNKNOWN if the proxy cannot follow it), anything else its parts'. Walked
    with a work list, not recursion: a chain of a thousand ORs is a tree a thousand deep."""
    kinds: set[str] = set()
    work = [(expr, seen)]
    while work:
        expr, seen = work.pop()
        if isinstance(expr, A.Literal):
            continue
        if isinstance(expr, A.Parameter):
            kinds |= value_kinds(params.get(expr.name))
        elif isinstance(expr, A.FunctionCall) and (made := _CONSTRUCTED.get(expr.lower_name.split(".")[0])):
            kinds.add(made)
        elif isinstance(expr, A.Property):
            kinds |= _property_kinds(expr, scope, params, key_kinds)
        elif isinstance(expr, A.Index) and (elements := _element_kinds(expr, scope, params)) is not None:
            kinds |= elements
        elif isinstance(expr, A.Variable):
            target = None if expr.name in seen else scope.bound.get(expr.name, scope.unwound.get(expr.name))
            if target is None:
                kinds.add(UNKNOWN)
            else:
                work.append((target, seen | {expr.name}))
        else:
            work += [(child, seen) for child in expr.children() if isinstance(child, A.Expr)]
    return frozenset(kinds)


def resolve(expr: A.Expr, scope: Scope) -> A.Expr:
    """What `expr` stands for through WITH aliases (`WITH {at: ...} AS m`: the map)."""
    seen = set()
    while isinstance(expr, A.Variable) and expr.name in scope.bound and expr.name not in seen:
        seen.add(expr.name)
        expr = scope.bound[expr.name]
    return expr


def _maps(expr: A.Expr, scope: Scope, params: dict, kind: type = dict) -> list | None:
    """The maps (or lists, `kind`) a map expression holds when it comes from a parameter
    (directly, or a row of UNWIND over one); None when it does not."""
    source = resolve(expr, scope)
    if isinstance(source, A.Variable) and isinstance(scope.unwound.get(source.name), A.Parameter):
        return [row for row in params.get(scope.unwound[source.name].name) or () if isinstance(row, kind)]
    if isinstance(source, A.Parameter):
        return [params[source.name]] if isinstance(params.get(source.name), kind) else []
    return None


def _element_kinds(expr: A.Index, scope: Scope, params: dict) -> frozenset | None:
    """`row[1]` of lists from a parameter: the kinds of those elements (None for another index)."""
    position = expr.index.value if isinstance(expr.index, A.Literal) else None
    lists = _maps(expr.expr, scope, params, list) if type(position) is int else None
    if lists is None:
        return None
    return value_kinds([row[position] for row in lists if -len(row) <= position < len(row)])


def _property_kinds(expr: A.Property, scope: Scope, params: dict, key_kinds) -> frozenset:
    """`x.key`: of a node or relationship, the key's recorded kinds; of a map, its entry's."""
    source = resolve(expr.expr, scope)
    if (maps := _maps(source, scope, params)) is not None:
        return value_kinds([row.get(expr.key) for row in maps])
    if isinstance(source, A.MapLiteral):
        entry = source.get(expr.key)
        return frozenset() if entry is None else expr_kinds(entry, scope, params, key_kinds)
    if isinstance(source, A.Variable) and source.name in scope.unwound:
        return expr_kinds(scope.unwound[source.name], scope, params, key_kinds)
    if isinstance(source, A.Variable) or _properties_map(source):
        return key_kinds(expr.key)
    return expr_kinds(source, scope, params, key_kinds)


# -- what a query writes and returns -------------------------------------------------------------

@lru_cache(maxsize=512)
def _shape(text: str) -> tuple | None:
    """(writes, columns) of a query: writes are (scope, key or None, expression) per written
    property (None: a whole map written), columns (scope, expression) per returned column of
    a single final RETURN without `*`, or None where not known; None when it does not parse."""
    try:
        tree = parse(text)
    except CypherError:
        return None
    writes = []
    for part in tree.parts:
        scope = Scope(part)
        for node in part.walk():
            if isinstance(node, (A.Create, A.Merge)):
                for element in node.find_all((A.NodePattern, A.RelPattern)):
                    writes += _map_writes(scope, element.properties)
            elif isinstance(node, A.SetItem) and node.kind == "property":
                writes.append((scope, node.target.key, node.value))
            elif isinstance(node, A.SetItem) and node.kind == "variable":
                writes += _map_writes(scope, node.value)
            elif isinstance(node, A.CallProcedure):          # apoc.merge.node(labels, {at: ...})
                for arg in node.args or ():
                    if isinstance(arg, (A.MapLiteral, A.Parameter)):
                        writes += _map_writes(scope, arg)
    columns = None
    last = tree.parts[-1].clauses[-1] if len(tree.parts) == 1 and tree.parts[-1].clauses else None
    if isinstance(last, A.Return) and not last.star:
        scope = Scope(tree.parts[-1])
        columns = tuple((scope, item.expr) for item in last.items)
    return tuple(writes), columns


def _map_writes(scope: Scope, properties: A.Expr | None) -> list:
    if isinstance(properties, A.MapLiteral):
        return [(scope, key, value) for key, value in properties.items]
    return [] if properties is None else [(scope, None, properties)]


def _written(scope: Scope, key: str | None, expr: A.Expr, params: dict, key_kinds) -> list[tuple[str, frozenset]]:
    """(key, kinds) pairs one write records. A whole map, written out or from a parameter (or
    UNWIND over one), records each of its keys; the properties copied from a node or
    relationship (`SET a = b`, `SET a += properties(b)`) keep each key's name, hence its kinds,
    and record nothing."""
    if key is not None:
        return [(key, expr_kinds(expr, scope, params, key_kinds))]
    source = resolve(expr, scope)
    if isinstance(source, A.MapLiteral):
        return [(k, expr_kinds(v, scope, params, key_kinds)) for k, v in source.items]
    maps = _maps(source, scope, params)
    return [] if maps is None else [(k, value_kinds(v)) for row in maps for k, v in row.items()]


@lru_cache(maxsize=1024)
def _writes(text: str) -> tuple | str:
    """What a query text writes (`_shape`), "clear" for the whole graph deleted, () for none."""
    if (clear := _CLEAR_ALL.match(text)) and clear.group(1) == clear.group(2):
        return "clear"
    does = effects(text)
    if not (does.creates or does.sets or does.procedures) or (shape := _shape(text)) is None:
        return ()
    return shape[0]


def prepare(text: str) -> None:
    """Parse `text` ahead (cached): call it off the event loop for a long query."""
    _writes(text)
    _shape(text)


def record_writes(store: KindStore, database: str, text: str, params: dict) -> None:
    """Note the date-time kinds a write query is about to store (before it runs)."""
    writes = _writes(text)
    if writes == "clear":
        store.forget(database)
        return
    key_kinds = lambda key: store.of(database, key)     # noqa: E731
    store.record(database, [pair for scope, key, expr in writes
                            for pair in _written(scope, key, expr, params, key_kinds) if pair[1]])


# -- reading back --------------------------------------------------------------------------------

def _refusal(where: str) -> CypherError:
    return CypherError(UNSUPPORTED, (
        f"{where} is a date-time the proxy cannot type: the embedded FalkorDB has one date-time type, "
        "so the proxy remembers per property key whether datetime() (zoned) or localdatetime() "
        "(local) values were written, and this value's key holds both kinds, or values the proxy "
        "could not tell, or cannot be named from the query. Keep one kind per property key (e.g. "
        "datetime() in `createdAt`, localdatetime() in `localStart`), and return the property "
        "itself (n.createdAt). (A limit of the embedded FalkorDB; Neo4j accepts this query.)"))


def _zoned(value: DateTime) -> DateTime:
    return value.replace(tzinfo=_dt.timezone.utc)


def _typed(value: Any, kinds: frozenset, where: Callable[[], str]) -> Any:
    """`value` with its naive date-times typed by `kinds`, and its integers of epoch
    microseconds read as date-times where `kinds` holds FINE; refused when they do not decide."""
    fine, kinds = FINE in kinds, kinds - {FINE}
    if fine and type(value) is int:
        if kinds not in ({ZONED}, {LOCAL}):
            raise _refusal(where())
        return fraction.decoded(value, zoned=kinds == {ZONED})
    if isinstance(value, DateTime) and value.tzinfo is None:
        if kinds == {ZONED}:
            return _zoned(value)
        if ZONED in kinds or UNKNOWN in kinds:
            raise _refusal(where())
        return value
    if isinstance(value, list):
        return [_typed(item, kinds, where) for item in value]
    if isinstance(value, dict):
        return {k: _typed(v, kinds, where) for k, v in value.items()}
    return value


class TypedDateTimes(MappedRows):
    """`result` with the date-times it reads from the graph typed by the key they came from."""

    def __init__(self, result: Result, store: KindStore, database: str, text: str, params: dict,
                 lenient: bool = False):
        """`lenient`: a value the proxy cannot type is left as it is, not refused (an evaluator's
        read, such as describe()'s statistics: the refusal is for a client's query)."""
        super().__init__(result)
        self._store, self._database = store, database
        self._text, self._params = text, params
        self._columns: list[frozenset] | None = None
        self._lenient = lenient

    def map_row(self, row: list[Any]) -> None:
        for index, value in enumerate(row):
            try:
                row[index] = self._value(value, index)
            except CypherError:
                if not self._lenient:
                    raise

    def _key_kinds(self, key: str) -> frozenset:
        return self._store.of(self._database, key)

    def _column_kinds(self, index: int) -> frozenset | str:
        """The kinds of a column's date-times, or BY_KEY for a map of one entity's properties."""
        if self._columns is None:
            shape = _shape(self._text)
            columns = shape[1] if shape else None
            self._columns = [frozenset({UNKNOWN})] * len(self.keys) if columns is None else [
                BY_KEY if _of_properties(expr, scope) else self._expr_kinds(expr, scope) for scope, expr in columns]
        return self._columns[index]

    def _expr_kinds(self, expr: A.Expr, scope: Scope) -> frozenset | tuple:
        """A column's kinds; FINE only where the column is such a date-time itself (`n.at`,
        `max(n.at)`), not a number computed from one (`n.at.epochMillis`); (TEXT, kinds) for
        `toString()` of one, which the query returns as the value (`bridges/fractions.py`)."""
        found = expr_kinds(expr, scope, self._params, self._key_kinds)
        if FINE in found and isinstance(expr, A.FunctionCall) and expr.lower_name == "tostring" \
                and len(expr.args) == 1 and fine_value(expr.args[0], scope):
            return TEXT, found
        return found if FINE not in found or fine_value(expr, scope) else found - {FINE}

    def _value(self, value: Any, index: int) -> Any:
        if isinstance(value, (Node, Relationship)):
            self._entity(value)
        elif isinstance(value, GraphPath):
            for entity in (*value.nodes, *value.relationships):
                self._entity(entity)
        elif isinstance(value, list):
            return [self._value(item, index) for item in value]
        elif isinstance(value, dict) and self._column_kinds(index) == BY_KEY:
            return self._by_key(value)
        elif isinstance(kinds := self._column_kinds(index), tuple):          # (TEXT, kinds)
            value = _typed(value, kinds[1], lambda: f"column `{self.keys[index]}`")
            return None if value is None else text(from_bolt(value))
        elif isinstance(value, (DateTime, dict, int)) and type(value) is not bool:
            where = lambda: f"column `{self.keys[index]}`"       # noqa: E731
            if isinstance(value, dict) and any(type(v) is int and FINE in self._key_kinds(k) for k, v in value.items()):
                raise _refusal(where())     # epoch microseconds, or a number: not known which
            return _typed(value, self._column_kinds(index), where)
        return value

    def _entity(self, entity: Node | Relationship) -> None:
        entity.properties = self._by_key(entity.properties)

    def _by_key(self, properties: dict) -> dict:
        return {key: _typed(value, self._key_kinds(key), lambda key=key: f"property `{key}`")
                for key, value in properties.items()}


def _of_properties(expr: A.Expr, scope: Scope) -> bool:
    """A map of one entity's properties, or a list of such maps (`collect(n {.*})`, through
    WITH aliases)."""
    expr = resolve(expr, scope)
    while isinstance(expr, A.FunctionCall) and expr.lower_name in PASSING and len(expr.args) == 1 \
            or isinstance(expr, (A.Index, A.Slice)):
        expr = resolve(expr.expr if isinstance(expr, (A.Index, A.Slice)) else expr.args[0], scope)
    return _properties_map(expr)


def _properties_map(expr: A.Expr) -> bool:
    """`properties(n)`, or a projection `n {.a, .*}` of properties only."""
    if isinstance(expr, A.FunctionCall):
        return expr.lower_name == "properties"
    return isinstance(expr, A.MapProjection) and all(item.kind in ("property", "all") for item in expr.items)


def holds_typed(store: KindStore, database: str) -> bool:
    """Whether date-times read from `database` need typing: it holds a zoned key or one stored as
    epoch microseconds."""
    return store.holds_zoned(database) or bool(store.fine_keys(database))


#: functions whose value is one of their arguments' date-times (or a list of them)
PASSING = frozenset({"min", "max", "collect", "coalesce", "head", "last"})


def fine_value(expr: A.Expr, scope: Scope) -> bool:
    """Whether `expr` is itself a date-time that may be stored as epoch microseconds: a
    property, a parameter, a variable standing for one, or `max`, `collect`, `coalesce`, ... of
    them (not an expression computing something else from one)."""
    expr = resolve(expr, scope)
    if isinstance(expr, A.Variable):
        return expr.name in scope.unwound and fine_value(scope.unwound[expr.name], scope)
    if isinstance(expr, A.FunctionCall):
        return expr.lower_name in PASSING and all(fine_value(arg, scope) for arg in expr.args)
    if isinstance(expr, (A.Index, A.Slice)):          # `collect(n.at)[0]`
        return fine_value(expr.expr, scope)
    if isinstance(expr, A.Property):                  # of an entity or a map, not `n.at.epochMillis`
        source = resolve(expr.expr, scope)
        return isinstance(source, (A.Variable, A.Parameter, A.MapLiteral)) or _properties_map(source)
    return isinstance(expr, A.Parameter) or (isinstance(expr, A.Literal) and expr.value is None)


def typed(result: Result, store: KindStore, database: str, text: str, params: dict, sends: bool,
          lenient: bool = False) -> Result:
    """`result`, typed by key where the database holds a zoned key or date-times stored as
    epoch microseconds, or the query `sends` such a date-time (else unchanged)."""
    if not (holds_typed(store, database) or sends):
        return result
    return TypedDateTimes(result, store, database, text, params, lenient)
