"""Queries over date-times with a fraction of a second, which the proxy stores as epoch microseconds.

A date-time parameter with a fraction (`datetime.now(timezone.utc)`) is sent as an integer of
epoch microseconds (`temporal/fraction.py`) and its property key recorded FINE (`kinds.py`).
Such a key may hold both: integers for the values with a fraction, FalkorDB's own date-times
for whole seconds (older values, `datetime()`). So every use of a FINE value (a property of a
FINE key, a parameter with a fraction, a variable standing for one) is checked here against the
uses the proxy answers exactly, and rewritten where the integers need it:

- returned or projected (`RETURN n.at`, `WITH n.at AS t`, `collect`, `head`, `coalesce`,
  `IS NULL`, `count`, `size`): unchanged; the proxy reads the integers back as the date-times
  (`kinds.py`); `RETURN toString(n.at)` returns the value, printed when read back;
- written (`SET n.at = $now`, `{at: $now}` in CREATE / MERGE / a pattern, `SET n += $map`,
  `UNWIND $rows`): unchanged; a value that is not a date-time written to a FINE key is refused,
  since it would read back as one;
- compared (`=`, `<>`, `<`, `>`, `<=`, `>=`) with a date-time of the same kind, ordered
  (`ORDER BY`), `min` / `max`: each side as epoch microseconds, `coalesce(<micros of a
  FalkorDB date-time>, x)` (an integer stays itself);
- `.epochMillis`, `.epochSeconds` (of a zoned one), `duration.inDays(a, b).days`,
  `duration.inSeconds(a, b).seconds`: integer arithmetic on the microseconds (floored where
  Neo4j floors, toward zero where it truncates).

Anything else (`toString(n.at) + 'x'`, `n.at.hour`, `n.at + duration(...)`, `date(n.at)`,
`duration.between(...)`) is refused with `UnsupportedOperationError`, naming the forms that
work: computed on the integers it would be wrong without an error.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from core.errors import CypherError

from ..cypher import ast as A
from ..cypher.parser import parse
from ..cypher.render import name as quote_name
from ..cypher.splice import outermost, splice
from ..temporal import fraction
from ..temporal.kinds import FINE, LOCAL, UNKNOWN, ZONED, Scope, expr_kinds, fine_value, value_kinds
from ..temporal.query import constant_nanos
from ..temporal.values import NotComputed
from .temporal import UNSUPPORTED

KeyKinds = Callable[[str], frozenset]
CLOCKS = frozenset({"date", "datetime", "localdatetime"})
COMPARISONS = frozenset({"=", "<>", "<", ">", "<=", ">="})
#: `duration.inX(a, b).unit`: the unit and how many microseconds it has; days count toward zero
#: (FalkorDB's integer division), seconds are floored (Neo4j's duration keeps nanoseconds >= 0)
BETWEEN = {"duration.indays": ("days", 86_400_000_000, False), "duration.inseconds": ("seconds", 1_000_000, True)}
EPOCH = frozenset({"epochmillis", "epochseconds"})
#: where a value is written (or matched, in a pattern's map) as it is
_WRITES = (A.Unwind, A.NodePattern, A.RelPattern, A.CallProcedure)
#: functions whose value is one of their arguments; `min` / `max` compare them (encoded first)
_PASSING = frozenset({"collect", "coalesce", "head", "last"})
_ORDERING = frozenset({"min", "max"})
USES = ("return it (or toString() of it), write it, count it, compare it with a date-time of the same kind, ORDER BY it, min/max/collect "
        "it, and ask .epochMillis, .epochSeconds, duration.inDays(a, b).days or duration.inSeconds(a, b).seconds")


def rewrite(text: str, params: dict, key_kinds: KeyKinds, fine_keys: frozenset, sends: bool) -> tuple[str, dict]:
    """`text` with its uses of FINE values rewritten, and `params` with date-times with a fraction
    as epoch microseconds (`sends`: some parameter holds one); unchanged when the query has none."""
    sent = {name for name, value in params.items() if fraction.has_fraction(value)} if sends else set()
    if fine_keys:
        _check_maps(params, key_kinds)
    if not sent and not any(key in text for key in fine_keys):
        return text, params
    try:
        tree = parse(text)
    except CypherError:
        return text, params                 # the planner reports it
    rewriter = _Rewriter(text, params, key_kinds)
    for part in _parts(tree):
        rewriter.part(part, typed=len(tree.parts) == 1 and part is tree.parts[0])
    text = splice(text, outermost(rewriter.edits.items())) if rewriter.edits else text
    return text, {**{name: fraction.encoded(value) if name in sent else value for name, value in params.items()},
                  **rewriter.clocked}


def _parts(tree: A.Query):
    """Every single query, those of CALL { } subqueries included."""
    for part in tree.parts:
        yield part
        for node in part.walk():
            if isinstance(node, A.CallSubquery) or (isinstance(node, A._Subquery) and node.query is not None):
                yield from _parts(node.query)


async def check_new_keys(read, keys: frozenset, store, database: str) -> None:
    """A key that becomes FINE must hold no integers yet (epoch milliseconds an application
    stored before, say): they would read back as date-times. Else the write is refused and the
    key stays as it was."""
    for key in sorted(keys):
        name = quote_name(key)
        found = await read(f"MATCH (n) WHERE typeOf(n.{name}) = 'Integer' RETURN 1 LIMIT 1 UNION "
                           f"MATCH ()-[r]->() WHERE typeOf(r.{name}) = 'Integer' RETURN 1 LIMIT 1", {})
        if found:
            store.discard(database, key, FINE)
            raise _refusal(f"`{key}`", f"this key holds integers, and a date-time with a fraction of a "
                           "second would be stored as one (epoch microseconds: the embedded FalkorDB "
                           "keeps date-times to the whole second), so the two could not be told apart. "
                           "Store the date-time under another key, or the integers under another key first")


def _check_maps(params: dict, key_kinds: KeyKinds) -> None:
    """A map parameter may not write a number (or any other non-date-time) to a FINE key."""
    def check(value):
        if isinstance(value, dict):
            for key, item in value.items():
                if FINE in key_kinds(key) and item is not None and not value_kinds(item):
                    raise _refusal(f"the parameter map's `{key}`: {type(item).__name__}",
                                   f"`{key}` holds date-times; a value of another type there would read "
                                   f"back as a date-time. Keep `{key}` for date-times and store this value "
                                   "under another key")
                check(item)
        elif isinstance(value, (list, tuple)):
            for item in value:
                check(item)
    check(params)


class _Rewriter:
    def __init__(self, text: str, params: dict, key_kinds: KeyKinds):
        self.text, self.params, self.key_kinds = text, params, key_kinds
        self.edits: dict[tuple[int, int], str] = {}
        self.scope: Scope | None = None
        self.typed = True
        #: the statement clock, to the microsecond, and the values computed from it (`clock`)
        self.clock_ns = time.time_ns() // 1000 * 1000
        self.clocked: dict[str, int] = {}
        self.clock_names: dict[tuple[int, int], str] = {}
        self.aliases: dict[str, A.Expr] = {}

    def part(self, part: A.SingleQuery, typed: bool) -> None:
        """Check and rewrite one single query; `typed`: its RETURN is the result's, whose columns
        `kinds.py` reads back (not a subquery's or a UNION's)."""
        self.scope, self.typed = Scope(part), typed
        self._visit(part, ())

    # -- what is FINE

    def kinds(self, expr: A.Expr) -> frozenset:
        return expr_kinds(expr, self.scope, self.params, self.key_kinds)

    def fine(self, node: A.Node) -> frozenset | None:
        """The kinds of a FINE value itself (a property, parameter, list element or variable
        standing for one), else None."""
        if not isinstance(node, (A.Parameter, A.Variable, A.Property, A.Index)):
            return None
        value = self.aliases.get(node.name, node) if isinstance(node, A.Variable) else node
        if not fine_value(value, self.scope):
            return None
        found = self.kinds(value)
        return found if FINE in found else None

    def container(self, node: A.Expr) -> bool:
        """Whether a FINE value is a list or map holding such date-times (a parameter, or a
        variable standing for one: `UNWIND $rows AS row`), not one date-time."""
        seen = set()
        while isinstance(node, A.Variable) and node.name not in seen:
            seen.add(node.name)
            if node.name in self.scope.unwound:
                source = self.scope.unwound[node.name]
                items = self.params.get(source.name) if isinstance(source, A.Parameter) else None
                return isinstance(items, (list, tuple)) and any(isinstance(i, (dict, list, tuple)) for i in items)
            node = self.aliases.get(node.name) or self.scope.bound.get(node.name)
        return isinstance(node, A.Parameter) and isinstance(self.params.get(node.name), (dict, list, tuple))

    # -- the walk

    def _visit(self, node: A.Node, parents: tuple) -> None:
        if isinstance(node, A._Projection):
            self.aliases = {item.alias: item.expr for item in node.items if item.alias}
        if isinstance(node, (A.CallSubquery, A._Subquery)) and parents:
            return                                    # its own part (`_parts`)
        if isinstance(node, A.MapLiteral) and parents and isinstance(parents[-1], (*_WRITES, A.SetItem)):
            for key, value in node.items:
                self._check_written(key, value, node)
        if isinstance(node, A.Expr) and (kinds := self.fine(node)) is not None:
            self._use(node, parents, kinds)
            return
        for child in node.children():
            self._visit(child, (*parents, node))

    def _use(self, value: A.Expr, parents: tuple, kinds: frozenset) -> None:
        """Check (and rewrite) one use of a FINE value; raise for a use the proxy cannot answer."""
        parent = parents[-1] if parents else None
        if self.container(value):
            if isinstance(parent, (*_WRITES, A.SetItem)) or (isinstance(parent, (A.Property, A.Index))
                                                              and parent.expr is value):
                return                  # an entry read, `row.at` / `row[1]`, is checked on its own
            raise _refusal(_shown(self.text, parent or value), "a list or map holding a date-time with "
                           "a fraction of a second is sent to the embedded FalkorDB with it as epoch "
                           "microseconds, so it can only be written (SET, CREATE, MERGE, UNWIND) or have "
                           "its entries read (x.at)")
        while isinstance(parent, (A.Index, A.Slice)) and parent.expr is value or \
                isinstance(parent, A.FunctionCall) and parent.lower_name in _PASSING | _ORDERING:
            if isinstance(parent, (A.Index, A.Slice)):                 # `collect(n.at)[0]`
                value, parents = parent, parents[:-1]
                parent = parents[-1] if parents else None
                continue
            if parent.lower_name in _ORDERING:
                self.encode(value)
            for other in parent.args:           # `coalesce(n.at, 0)` would read 0 back as a date-time
                if not (_null(other) or self.kinds(other) & {ZONED, LOCAL}):
                    raise _refusal(_shown(self.text, parent), "a date-time with a fraction of a second "
                                   f"({value.text_in(self.text)}) is stored as epoch microseconds, which "
                                   f"{parent.name}() can pass on only with other date-times or null")
            value, parents = parent, parents[:-1]
            parent = parents[-1] if parents else None
        if isinstance(parent, A.MapLiteral) and len(parents) > 1 and isinstance(parents[-2], _WRITES):
            return
        if isinstance(parent, A.FunctionCall) and parent.lower_name in ("count", "size"):
            return                                  # how many: `count(n.at)`, `size(collect(n.at))`
        if self._shown_as_text(parent, parents):
            return
        if isinstance(parent, A.ReturnItem) and isinstance(parents[-2], A.Return) and not self.typed:
            raise _refusal(_shown(self.text, parent), "a date-time with a fraction of a second is stored as "
                           "epoch microseconds, which the proxy reads back only from the columns of a "
                           "query's final RETURN; return it from the outer query (not a CALL { } or a "
                           "UNION)")
        if isinstance(parent, (A.ReturnItem, A.IsNull, A.RemoveItem, *_WRITES)) or self._written(value, parent):
            return
        if isinstance(parent, A.SortItem):
            return self.order(value, parents[-2])
        if isinstance(parent, A.BinaryOp) and parent.op in COMPARISONS:
            return self.compare(value, kinds, [parent.left, parent.right])
        if isinstance(parent, A.ComparisonChain):
            return self.compare(value, kinds, list(parent.operands), parent)
        if isinstance(parent, A.Property) and parent.key.lower() in EPOCH and kinds - {FINE} == {ZONED}:
            return self.epoch(parent, value)
        if isinstance(parent, A.FunctionCall) and parent.lower_name in BETWEEN and len(parents) > 1 \
                and isinstance(parents[-2], A.Property) and parents[-2].key.lower() == BETWEEN[parent.lower_name][0]:
            return self.between(parents[-2], parent)
        raise _refusal(_shown(self.text, parent or value), f"the embedded FalkorDB keeps date-times to the "
                       f"whole second, so the proxy stores those with a fraction of a second "
                       f"({value.text_in(self.text)}) as epoch microseconds, and can {USES}")

    def _shown_as_text(self, call, parents: tuple) -> bool:
        """`RETURN toString(n.at)`: the value is returned and printed as Neo4j prints it when read
        back (`kinds.py`); the column keeps its name."""
        if not (isinstance(call, A.FunctionCall) and call.lower_name == "tostring" and len(parents) > 2
                and isinstance(parents[-2], A.ReturnItem) and isinstance(parents[-3], A.Return) and self.typed):
            return False
        item = parents[-2]
        self.edits[call.span] = call.args[0].text_in(self.text)
        if item.alias is None:
            self.edits[(item.span[1], item.span[1])] = f" AS {quote_name(call.text_in(self.text))}"
        return True

    def _written(self, value: A.Expr, parent) -> bool:
        """A SET of a FINE value, or to a FINE key (whose value must then be a date-time)."""
        if not isinstance(parent, A.SetItem):
            return False
        if parent.target is value and parent.value is not None:
            self._check_written(value.key, parent.value, parent)
        return True

    def _check_written(self, key: str, value: A.Expr, where: A.Node) -> None:
        """A value written to a FINE key must be a date-time (or null, or one the proxy cannot follow,
        which `kinds.py` refuses when read); one read from the clock (`SET n.at = datetime()`)
        is read to the microsecond, as Neo4j's is, not FalkorDB's whole second."""
        if FINE not in self.key_kinds(key):
            return
        if not (self.kinds(value) & {ZONED, LOCAL, UNKNOWN} or _null(value) or self._unbound(value)):
            raise _refusal(_shown(self.text, where), f"`{key}` holds date-times; a value of another type "
                           "there would read back as a date-time. Keep the key for date-times and store "
                           "this value under another key")
        self.clock(value)

    def _unbound(self, expr: A.Expr) -> bool:
        """A parameter without a value (EXPLAIN plans a query without them)."""
        return isinstance(expr, A.Parameter) and expr.name not in self.params

    # -- rewrites

    def encode(self, expr: A.Expr) -> None:
        self.edits[expr.span] = micros(expr.text_in(self.text))

    def order(self, key: A.Expr, projection: A._Projection) -> None:
        """`ORDER BY n.at` as epoch microseconds; when `n.at` is also a column, through the
        column's name (given one if it has none, its own text as Neo4j names it): after DISTINCT
        or an aggregation only the columns may be read."""
        text = key.text_in(self.text)
        item = next((item for item in projection.items if item.expr.text_in(self.text) == text), None)
        if item is None:
            return self.encode(key)
        if item.alias is None:
            self.edits[(item.span[1], item.span[1])] = f" AS {quote_name(text)}"
        self.edits[key.span] = micros(quote_name(item.alias or text))

    def compare(self, value: A.Expr, kinds: frozenset, operands: list, chain: A.ComparisonChain | None = None) -> None:
        """Each side as epoch microseconds; a chain `a < b < c` written out pair by pair (the
        chain bridge cannot copy the encoded sides)."""
        kind = kinds & {ZONED, LOCAL}
        for other in operands:
            other_kinds = self.kinds(other) - {FINE}
            if not (_null(other) or self._unbound(other)) and (len(kind) != 1 or other_kinds != kind):
                raise _refusal(_shown(self.text, other), "a date-time with a fraction of a second "
                               f"({value.text_in(self.text)}, {'/'.join(sorted(kind)) or 'of both kinds'}) "
                               "compares exactly only with a date-time of the same kind (datetime() "
                               "with a zoned one, localdatetime() with a local one)")
        encoded = [self.clock(other) or micros(other.text_in(self.text)) for other in operands]
        if chain is None:
            self.edits.update({other.span: text for other, text in zip(operands, encoded)})
        else:
            pairs = zip(encoded, chain.ops, encoded[1:])
            self.edits[chain.span] = "(" + " AND ".join(f"{a} {op} {b}" for a, op, b in pairs) + ")"

    def clock(self, expr: A.Expr) -> str | None:
        """A parameter holding the epoch microseconds of `expr` when it reads the clock and
        nothing of the graph (`datetime()`, `datetime() - duration('P7D')`), computed here with
        the statement clock to the microsecond, as Neo4j's is: FalkorDB's clock reads whole
        seconds, so a value written 0.3 s ago would be in its future. None otherwise."""
        if expr.span in self.clock_names:
            return self.clock_names[expr.span]
        if not any(isinstance(n, A.FunctionCall) and _reads_clock(n) for n in expr.walk()) \
                or any(isinstance(n, (A.Variable, A.PatternExpr, A._Subquery)) for n in expr.walk()):
            return None
        try:
            nanos = constant_nanos(expr, self.params, self.clock_ns)
        except NotComputed:
            return None                 # the database computes it, as before
        name = f"__clock{len(self.clocked)}"
        self.clocked[name] = None if nanos is None else nanos // 1000
        self.edits[expr.span] = self.clock_names[expr.span] = f"${name}"
        return f"${name}"

    def epoch(self, accessor: A.Property, value: A.Expr) -> None:
        x = micros(value.text_in(self.text))
        if accessor.key.lower() == "epochseconds":
            self.edits[accessor.span] = _bound(x, _floor_div("__x", 1_000_000))
        else:
            self.edits[accessor.span] = _bound(x, f"{_floor_div('__x', 1_000_000)} * 1000 + "
                                                  f"{_modulo('__x', 1_000_000)} / 1000")

    def between(self, count: A.Property, call: A.FunctionCall) -> None:
        if len(call.args) != 2:
            return
        _, size, floored = BETWEEN[call.lower_name]
        a, b = (self.clock(arg) or micros(arg.text_in(self.text), dates=True) for arg in call.args)
        counted = _floor_div("__x", size) if floored else f"(__x - __x % {size}) / {size}"
        self.edits[count.span] = _bound(f"{b} - {a}", counted)


def micros(x: str, dates: bool = False) -> str:
    """`x` as epoch microseconds when it is a FalkorDB date-time (or a date, with `dates`),
    else `x` itself (an integer of epoch microseconds already, or null). FalkorDB evaluates
    every CASE branch, so the parts are read from a value nulled unless it is a date-time;
    `x` is written twice and the nesting kept shallow (FalkorDB's parser is capped at 15)."""
    y = "(__d.year - 1)"
    days = f"(365 * {y} + {y} / 4 - {y} / 100 + {y} / 400 + __d.ordinalDay - 719163)"
    clock = "__t.hour * 3600 + __t.minute * 60 + __t.second"
    if not dates:
        clock = clock.replace("__t.", "__d.")
        return (f"coalesce([__d IN [CASE WHEN typeOf({x}) = 'Datetime' THEN {x} END] | "
                f"({days} * 86400 + {clock}) * 1000000][0], {x})")
    clock = f"coalesce([__t IN [CASE WHEN typeOf(__d) = 'Datetime' THEN __d END] | {clock}][0], 0)"
    return (f"coalesce([__d IN [CASE WHEN typeOf({x}) IN ['Date', 'Datetime'] THEN {x} END] | "
            f"({days} * 86400 + {clock}) * 1000000][0], {x})")


def _bound(value: str, expression: str) -> str:
    """`expression` of `__x` with `value` written once."""
    return f"[__x IN [{value}] | {expression}][0]"


def _modulo(x: str, size: int) -> str:
    return f"(({x} % {size}) + {size}) % {size}"


def _floor_div(x: str, size: int) -> str:
    """FalkorDB divides integers through a double (72076089600105000 / 1000 is 72076089600104),
    so only an exact multiple is divided: exact while the quotient times the divisor's factors of
    5 stays under 2^53 (microseconds to seconds or days: any date-time of the years 1-9999)."""
    return f"({x} - {_modulo(x, size)}) / {size}"


def _reads_clock(call: A.FunctionCall) -> bool:
    """`datetime()`, `date()`, `localdatetime()` and their `.statement()` / `.realtime()` forms
    (`.transaction()` must be one instant across a transaction: the database's, as before)."""
    kind, _, clock = call.lower_name.partition(".")
    return kind in CLOCKS and (clock in ("statement", "realtime") or (not clock and not call.args))


def _null(expr: A.Expr) -> bool:
    return isinstance(expr, A.Literal) and expr.value is None


def _shown(text: str, node: A.Node) -> str:
    shown = node.text_in(text)
    return shown if len(shown) <= 120 else shown[:117] + "..."


def _refusal(what: str, why: str) -> CypherError:
    return CypherError(UNSUPPORTED, f"{what}: {why}. (A limit of the embedded FalkorDB; Neo4j accepts "
                       "this query.)")
