"""Exact string answers on properties FalkorDB 4.16 indexes: its range index trims strings.

Measured on bare FalkorDB 4.16.3 (tests/integration/test_trimmed_index.py sends each shape through
the proxy): a string property under a range index (`CREATE INDEX`, and every uniqueness
constraint, which rests on one; single-field or composite; node or relationship) is indexed with
its leading and trailing ASCII whitespace (space, tab, newline, CR, VT, FF) removed, and an empty
or all-whitespace string is not indexed at all; a lookup value is not trimmed. So, where FalkorDB
uses the index (a MATCH's property map, `=`, `IN`, `<` `<=` `>` `>=` in its WHERE; a MERGE):

| query | Neo4j | FalkorDB |
|---|---|---|
| `MATCH (n:L {k: ''})`, `n.k = ' a'`, `n.k IN ['a ']` | the node | nothing |
| `MATCH (n:L {k: 'a'})` with `' a'` and `'a\\t'` stored | `'a'` | all three |
| `n.k < 'b'` | `''`, `' '`, `' a'` ... | not `''` nor `' '`; non-ASCII ordered as signed bytes (`'é' < 'a'`) |
| `MERGE (n:L {k: ''})` with one stored | matches it | creates a second |
| `MERGE (n:L {k: 'a'})` with only `' a'` stored | creates `'a'` | matches `' a'` |
| `CREATE (:L {k: ''})`, `SET n.k = 'a '` under a uniqueness constraint | written | the server dies (`EnforceUniqueEntity` finds no index entry for the node it checks: FalkorDB issue #1340), with or without another node |

STARTS WITH, ENDS WITH, CONTAINS and `<>` do not use the index and are exact; so is any
comparison FalkorDB cannot plan on the index, e.g. `[n.k][0] = $v`. A load from files (a start, a
replica's sync) changes nothing here. So the proxy, which knows the indexed properties from its
schema catalog (`compat.schema_catalog.NameStore.string_index_schema`), rewrites each statement
that reads or writes one, choosing by the values of this run's parameters:

- MATCH equality and IN: an ordinary value keeps the index and gets the exact comparison beside
  it (`(n.k = $v AND [n.k][0] = $v)`: an index scan, then a filter); a value that is empty or has
  edge whitespace (`untrimmed`) is compared exactly only (`[n.k][0] = $v`, a label scan), and
  leaves the pattern's property map; a value known only while the query runs (`row.k`) likewise.
- MATCH ranges on a string (literal, string parameter, or any expression) are compared exactly:
  the index's answer depends on what is stored, not on the value compared, so no value check can
  save it. Numeric ranges keep the index.
- MERGE keeps FalkorDB's MERGE (one writer at a time, so its match-or-create is atomic) and
  refuses, while the statement runs and before it writes, a value that is untrimmed (it would
  create a duplicate, or crash a constrained server), or a match whose stored value differs from
  the merged one (a trimmed twin). Both undo the whole statement.
- A write of an untrimmed string to a uniquely constrained property (CREATE, MERGE, SET of a
  property or a map) is refused before it is written: FalkorDB cannot hold it under the
  constraint without crashing. Keep such values out of constrained properties, or drop the
  constraint.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import count
from collections.abc import Iterator
from typing import Any

from core.errors import CypherError

from .bridges.rule import copyable
from .cypher import ast as A
from .cypher.parser import parse
from .cypher.render import name as quote
from .cypher.splice import splice

#: What FalkorDB's index trims (C's isspace).
WHITESPACE = " \t\n\r\x0b\x0c"
#: The parameter the refusal conditions read the whitespace characters from (FalkorDB's string
#: literals cannot write a vertical tab or a form feed).
WHITESPACE_PARAM = "__ix_ws"
#: The parameter listing the uniquely constrained property keys (`SET n += map` checks them).
KEYS_PARAM = "__ix_keys"
#: FalkorDB's error for a refusal raised inside the query (`_fail_when`): its own, not the
#: `range()` step error that the bridges' and the NOT NULL checks' refusals raise.
REFUSED = "Failed to parse date"
UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"
#: Items of a parameter looked at for untrimmed strings; past it, the value counts as untrimmed.
MAX_CHECKED_ITEMS = 100_000
_RANGES = frozenset({"<", "<=", ">", ">="})
_COMPARED = _RANGES | {"=", "IN"}

Edit = tuple[int, int, str]


@dataclass(frozen=True)
class Schema:
    """Range-indexed properties `(entity, label, property)` and uniquely constrained ones; and
    the indexed ones the graph holds no untrimmed string under (`trimmed_keys.py`), whose
    equality and IN keep the index."""

    ranged: frozenset = frozenset()
    unique: frozenset = frozenset()
    clean: frozenset = frozenset()

    def __bool__(self) -> bool:
        return bool(self.ranged)


def untrimmed(value: Any) -> bool:
    """A string FalkorDB's index cannot find: empty, or with whitespace at either end."""
    return isinstance(value, str) and (value == "" or value[0] in WHITESPACE or value[-1] in WHITESPACE)


def holds_untrimmed(value: Any, budget: list[int] | None = None) -> bool:
    """Whether `value` is, or holds in a list or map, an untrimmed string (True past the budget)."""
    budget = budget if budget is not None else [MAX_CHECKED_ITEMS]
    budget[0] -= 1
    if budget[0] < 0:
        return True
    if isinstance(value, (list, tuple)):
        return any(holds_untrimmed(v, budget) for v in value)
    if isinstance(value, dict):
        return any(holds_untrimmed(v, budget) for v in value.values())
    return untrimmed(value)


@dataclass
class _Choice:
    """Edits chosen per run: `unsafe` when a value is untrimmed. `static` decides when the values
    are known now (a literal) or only while the query runs (True); else the named parameters
    decide, per run."""

    safe: list[Edit]
    unsafe: list[Edit]
    params: tuple[str, ...] = ()
    static: bool | None = None

    def pick(self, params: dict[str, Any]) -> list[Edit]:
        bad = self.static if self.static is not None else \
            any(holds_untrimmed(params.get(name)) for name in self.params)
        return self.unsafe if bad else self.safe


@dataclass
class Rewrite:
    """What one statement needs: fixed edits, edits chosen per run, written parameters to check
    (`(parameter, keys)`: an untrimmed value, or one under those keys of a map, is refused before
    the query runs)."""

    edits: list[Edit] = field(default_factory=list)
    choices: list[_Choice] = field(default_factory=list)
    checked_maps: list[tuple[str, frozenset | None]] = field(default_factory=list)
    #: parameters of a MERGE's indexed values, and the refusal when one holds an untrimmed string
    checked_values: list[tuple[tuple[str, ...], str]] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    #: insertions after every other edit at their position (a MERGE's ON MATCH check)
    tail: list[Edit] = field(default_factory=list)

    def text(self, text: str, params: dict[str, Any]) -> str:
        for name, keys in self.checked_maps:
            value = params.get(name)
            if untrimmed(value) if keys is None else \
                    isinstance(value, dict) and any(untrimmed(value.get(k)) for k in keys):
                raise CypherError(UNSUPPORTED, _CONSTRAINED)
        for names, message in self.checked_values:
            if any(holds_untrimmed(params.get(name)) for name in names):
                raise CypherError(UNSUPPORTED, message)
        # at one position: a comparison's own closing text before its WHERE's, the MERGE check last
        edits = [e for choice in self.choices for e in choice.pick(params)] + self.edits + self.tail
        return splice(text, [((a, b), new) for a, b, new in edits])


_CONSTRAINED = ("The embedded FalkorDB cannot hold an empty string, or one with leading or trailing "
                "whitespace, in a property with a uniqueness constraint: its index trims strings and "
                "the constraint check then crashes the server (FalkorDB issue #1340). Nothing was "
                "written. Trim the value, use another one (e.g. '-' for empty), or drop the constraint "
                "(then MATCH ... WHERE [n.k][0] = $v finds such values exactly).")
_MERGE_UNTRIMMED = ("MERGE on an empty string, or one with leading or trailing whitespace, cannot be "
                    "answered on an indexed property of the embedded FalkorDB: its index trims strings, "
                    "so MERGE would not find the stored node and would create a second one. Nothing was "
                    "written. Use MATCH (n:L) WHERE [n.k][0] = $v, then CREATE if nothing matched.")
_MERGE_TWIN = ("MERGE matched a node whose indexed property differs from the merged value only by "
               "leading or trailing whitespace (the embedded FalkorDB's index trims strings). Nothing "
               "was written. Use MATCH (n:L) WHERE [n.k][0] = $v, then CREATE if nothing matched.")


def rewrite_for(text: str, params: dict[str, Any], schema: Schema) -> tuple[str, dict[str, Any], list[str]]:
    """`text` as FalkorDB must run it for exact answers on `schema`'s indexed strings, the
    parameters its checks read, and the messages of the refusals it may raise while running
    (none: unchanged)."""
    if not schema or not _mentions(text, schema):
        return text, {}, []
    plan = analyse(text, schema)
    if plan is None:
        return text, {}, []
    if not plan.refusals:
        return plan.text(text, params), {}, []
    checks = {WHITESPACE_PARAM: list(WHITESPACE), KEYS_PARAM: sorted({p for _, _, p in schema.unique})}
    return plan.text(text, params), checks, plan.refusals


def _mentions(text: str, schema: Schema) -> bool:
    """Whether `text` may name an indexed property, or a constrained label (`CREATE (n:L $map)`)."""
    return any(prop in text for _, _, prop in schema.ranged) or any(label in text for _, label, _ in schema.unique)


def mentioned(text: str, schema: Schema) -> set[tuple[str, str, str]]:
    """The indexed properties whose label and name both appear in `text`."""
    return {key for key in schema.ranged if key[1] in text and key[2] in text}


@lru_cache(maxsize=512)
def analyse(text: str, schema: Schema) -> Rewrite | None:
    """The rewrite of `text` (None: nothing to do, or the proxy cannot read it)."""
    try:
        tree = parse(text)
    except CypherError:
        return None
    work = _Analysis(text, replace(schema, clean=_unwritten(schema.clean, tree)))
    for node in tree.walk():                     # pre-order: an inner FOREACH comes later, and wins
        if isinstance(node, A.Foreach):
            work.foreach_of.update({id(m): node for m in node.walk() if isinstance(m, A.Merge)})
        elif isinstance(node, A.SingleQuery) and node.clauses:
            work.first_clauses.add(id(node.clauses[0]))
        elif isinstance(node, A.RelPattern) and node.var is not None:
            work.relationships.add(node.var.name)
    for node in tree.walk():
        if isinstance(node, A.Match):
            work.match(node)
        elif isinstance(node, A.Merge):
            work.merge(node)
        elif isinstance(node, A.Create):
            for element in _elements(node.pattern.paths):
                work.guard_written(element)
        elif isinstance(node, A.SetItem):
            work.set_item(node)
    work.check_foreach_sources()
    rewrite = work.result
    if not (rewrite.edits or rewrite.choices or rewrite.checked_maps or rewrite.checked_values or rewrite.tail):
        return None
    return rewrite


def _unwritten(clean: frozenset, tree: A.Query) -> frozenset:
    """The `clean` properties the statement cannot write: none once it writes a map of unknown
    keys (`SET n = $m`, `CREATE (n $m)`)."""
    written: set[str] = set()
    for node in tree.walk():
        if isinstance(node, A.SetItem) and node.kind == "property":
            written.add(node.target.key)
        elif isinstance(node, A.SetItem) and node.kind == "variable":
            return frozenset()
        elif isinstance(node, (A.Create, A.Merge)):
            for element in _elements(node.pattern.paths if isinstance(node, A.Create) else [node.path]):
                if element.properties is None:
                    continue
                if not isinstance(element.properties, A.MapLiteral):
                    return frozenset()
                written.update(k for k, _ in element.properties.items)
    return frozenset(key for key in clean if key[2] not in written)


def _elements(paths) -> list:
    return [e for p in paths for e in p.elements if isinstance(e, (A.NodePattern, A.RelPattern))]


def _names(element) -> tuple[str, tuple[str, ...]]:
    """(entity, labels or types) of a pattern element, as the schema names them."""
    if isinstance(element, A.NodePattern):
        return "NODE", tuple(element.labels.names()) if element.labels is not None else ()
    return "RELATIONSHIP", tuple(element.types.names()) if element.types is not None else ()


class _Analysis:
    def __init__(self, text: str, schema: Schema):
        self.text, self.schema = text, schema
        self.result = Rewrite()
        self._fresh = count()
        #: relationship variables (uniqueness constraints here are on nodes; `r:L` fails on one)
        self.relationships: set[str] = set()
        #: clauses (by id) that begin a query, where `WITH *` cannot stand
        self.first_clauses: set[int] = set()
        #: the innermost FOREACH around each MERGE (by id), and the checks its list gets
        self.foreach_of: dict[int, A.Foreach] = {}
        self._foreach_checks: dict[int, tuple[A.Foreach, str, list[str]]] = {}

    def fresh(self, stem: str) -> str:
        return f"__{stem}{next(self._fresh)}"

    def src(self, node) -> str:
        return node.text_in(self.text)

    def _ranged(self, element, key: str, *, equality: bool = False) -> bool:
        """Whether `key` of `element` is under a range index; for an `equality` read, one whose
        index may mis-find a value (a clean property's index finds exactly)."""
        entity, labels = _names(element)
        keys = [(entity, label, key) for label in labels]
        return any(k in self.schema.ranged for k in keys) and not (equality and any(k in self.schema.clean for k in keys))

    def _indexed_entries(self, paths, *, equality: bool = False) -> Iterator[tuple[Any, A.MapLiteral, list]]:
        """(element, its property map, the map's entries on an indexed property) of each pattern
        element that has any (`equality`: as `_ranged`)."""
        for element in _elements(paths):
            props = element.properties
            if not isinstance(props, A.MapLiteral):
                continue
            entries = [(k, v) for k, v in props.items if self._ranged(element, k, equality=equality)]
            if entries:
                yield element, props, entries

    def _unique(self, element, key: str) -> bool:
        entity, labels = _names(element)
        return any((entity, label, key) in self.schema.unique for label in labels)

    def _var(self, element) -> str:
        """The element's variable, naming an anonymous one (`(` / `[` are its first character
        once it has a property map)."""
        if element.var is not None:
            return quote(element.var.name)
        name = self.fresh("ix")
        at = element.span[0] + (self.src(element).index("[") + 1 if isinstance(element, A.RelPattern) else 1)
        self.result.edits.append((at, at, name))
        return name

    # -- MATCH

    def match(self, clause: A.Match) -> None:
        """Comparisons in the WHERE, and the pattern's property maps (compared exactly too, in
        the WHERE; the map keeps an entry only while its value is one the index finds)."""
        bound: dict[str, Any] = {}
        exact: list[str] = []
        for element in _elements(clause.pattern.paths):
            if element.var is not None:
                bound.setdefault(element.var.name, element)
        for element, props, entries in self._indexed_entries(clause.pattern.paths, equality=True):
            var = self._var(element)
            exact += [f"[{var}.{quote(k)}][0] = {self.src(v)}" for k, v in entries]
            kept = [(k, v) for k, v in props.items if (k, v) not in entries]
            smaller = "{" + ", ".join(f"{quote(k)}: {self.src(v)}" for k, v in kept) + "}"
            self.result.choices.append(self._value_choice([v for _, v in entries], safe=[],
                                                          unsafe=[(*props.span, smaller)]))
        if clause.where is not None:
            self.result.choices += [c for c in (self._comparison(node, bound) for node in clause.where.walk())
                                    if c is not None]
        if not exact:
            return
        if clause.where is None:
            at = clause.pattern.span[1]
            self.result.edits.append((at, at, " WHERE " + " AND ".join(exact)))
        else:
            start, end = clause.where.span
            self.result.edits += [(start, start, "("), (end, end, ") AND " + " AND ".join(exact))]

    def _value_choice(self, values: list, *, safe, unsafe) -> _Choice:
        """Untrimmed when a literal is (known now), a parameter is (per run), or any other value
        could be (always)."""
        params, static = [], False
        for value in values:
            literals = [n for n in value.walk() if isinstance(n, A.Literal)]
            if any(untrimmed(n.value) for n in literals):
                static = True
            params += [n.name for n in value.walk() if isinstance(n, A.Parameter)]
            if not _constant(value):
                static = True
        return _Choice(safe, unsafe, tuple(params), True if static else (None if params else False))

    def _chain(self, node: A.ComparisonChain, bound: dict[str, Any]) -> _Choice | None:
        """`'a' <= n.k < 'b'`: its indexed properties compared exactly, unless every other
        operand is a number."""
        props = [o for o in node.operands if self._indexed(o, bound)]
        if not props or all(isinstance(o, A.Literal) and not isinstance(o.value, str)
                            for o in node.operands if o not in props):
            return None
        exact = [(*p.span, f"[{self.src(p)}][0]") for p in props]
        return _Choice(exact, exact, static=True)

    def _indexed(self, expr, bound: dict[str, Any], *, equality: bool = False) -> bool:
        return isinstance(expr, A.Property) and isinstance(expr.expr, A.Variable) \
            and expr.expr.name in bound and self._ranged(bound[expr.expr.name], expr.key, equality=equality)

    def _comparison(self, node, bound: dict[str, Any]) -> _Choice | None:
        """The edits of one comparison of an indexed property in a MATCH's WHERE."""
        if isinstance(node, A.ComparisonChain):
            return self._chain(node, bound)
        if not isinstance(node, A.BinaryOp) or node.op not in _COMPARED:
            return None
        sides = [(node.left, node.right), (node.right, node.left)] if node.op != "IN" else [(node.left, node.right)]
        for prop, value in sides:
            if self._indexed(prop, bound, equality=node.op not in _RANGES):
                break
        else:
            return None
        exact = (*prop.span, f"[{self.src(prop)}][0]")
        if node.op in _RANGES:
            if isinstance(value, A.Literal) and not isinstance(value.value, str):
                return None
            params = tuple(n.name for n in value.walk() if isinstance(n, A.Parameter))
            if isinstance(value, A.Parameter):          # a string per run: exact; a number: the index
                return _StringChoice([], [exact], params)
            return _Choice([exact], [exact], static=True)
        if isinstance(value, A.Literal) and not isinstance(value.value, str):
            return None
        start, end = node.span
        both = [(start, start, "("), (end, end, f" AND [{self.src(prop)}][0] {node.op} {self.src(value)})")]
        return self._value_choice([value], safe=both, unsafe=[exact])

    # -- writes

    def merge(self, clause: A.Merge) -> None:
        """FalkorDB's MERGE, refused for an untrimmed value before it writes (a literal now, a
        parameter per run, any other value by a filter before the MERGE: a value of FalkorDB's
        MERGE map must stay plain, as `{k: [x IN [v] | x][0]}` crashes the server), and for a
        match whose stored value differs from the merged one."""
        for element, _, entries in self._indexed_entries([clause.path]):
            if not all(copyable(v) for _, v in entries):
                raise CypherError(UNSUPPORTED, "MERGE on an indexed property of the embedded FalkorDB takes "
                                  "a literal, a parameter or a variable's property as its value (its index "
                                  "trims strings, so the proxy checks the match again): pass the value as a "
                                  "parameter.")
            var = self._var(element)
            values = [v for _, v in entries]
            message = _CONSTRAINED if any(self._unique(element, k) for k, _ in entries) else _MERGE_UNTRIMMED
            if any(untrimmed(n.value) for v in values for n in v.walk() if isinstance(n, A.Literal)):
                raise CypherError(UNSUPPORTED, message)
            params = tuple(n.name for v in values for n in v.walk() if isinstance(n, A.Parameter))
            if params:
                self.result.checked_values.append((params, message))
            computed = [v for v in values if not _constant(v)]
            if computed:
                self._refusal(message)
                condition = " OR ".join(untrimmed_condition(self.src(v)) for v in computed)
                if id(clause) in self.foreach_of:
                    self._check_in_foreach(self.foreach_of[id(clause)], computed)
                else:
                    keep = "" if id(clause) in self.first_clauses else "*, "
                    self.result.edits.append((clause.span[0], clause.span[0],
                                              f"WITH {keep}{_fail_when(condition)} AS {self.fresh('ck')} "))
            self._refusal(_MERGE_TWIN)
            twins = " OR ".join(f"[{var}.{quote(k)}][0] <> {self.src(v)}" for k, v in entries)
            self.result.tail.append((clause.span[1], clause.span[1],
                                     f" ON MATCH SET {var} += [{{}}, {_fail_when(twins)}][0]"))

    def _check_in_foreach(self, loop: A.Foreach, values: list) -> None:
        """A FOREACH body takes no WITH: its list is checked instead (a filter keeping every
        element), each element bound to a variable of its own that the values read in place of
        the loop's."""
        body = {n.var.name for c in loop.clauses for n in c.walk()
                if isinstance(n, (A.NodePattern, A.RelPattern)) and n.var is not None}
        if any(isinstance(n, A.Variable) and n.name in body for v in values for n in v.walk()):
            raise CypherError(UNSUPPORTED, "MERGE inside FOREACH on an indexed property of the embedded "
                              "FalkorDB takes a value from the FOREACH's own list, a parameter or a literal "
                              "(its index trims strings, so the proxy checks the values first): UNWIND the "
                              "list and MERGE after it.")
        element = self._foreach_checks[id(loop)][1] if id(loop) in self._foreach_checks else self.fresh("fe")
        for value in values:
            start = value.span[0]
            renamed = splice(self.src(value), [((n.span[0] - start, n.span[1] - start), element) for n in value.walk()
                                               if isinstance(n, A.Variable) and n.name == loop.var.name])
            self._foreach_checks.setdefault(id(loop), (loop, element, []))[2].append(untrimmed_condition(renamed))

    def check_foreach_sources(self) -> None:
        for loop, element, conditions in self._foreach_checks.values():
            start, end = loop.source.span
            self.result.edits += [(start, start, f"[{element} IN ("),
                                  (end, end, f") WHERE {_fail_when(' OR '.join(conditions))} IS NOT NULL]")]

    def guard_written(self, element) -> None:
        """A created element's uniquely constrained values, refused when untrimmed."""
        props = element.properties
        if isinstance(props, A.MapLiteral):
            for key, value in props.items:
                if not self._unique(element, key):
                    continue
                if isinstance(value, A.Literal) and untrimmed(value.value):
                    raise CypherError(UNSUPPORTED, _CONSTRAINED)
                if isinstance(value, A.Parameter):          # checked before the query runs
                    self.result.checked_maps.append((value.name, None))
                else:
                    self._wrap(value, untrimmed_condition, _CONSTRAINED)
        elif isinstance(props, A.Parameter):
            keys = frozenset(k for k in self._constrained_keys(element))
            if keys:
                self.result.checked_maps.append((props.name, keys))

    def _constrained_keys(self, element) -> list[str]:
        entity, labels = _names(element)
        return [p for e, label, p in self.schema.unique if e == entity and label in labels]

    def set_item(self, item: A.SetItem) -> None:
        unique_keys = sorted({p for _, _, p in self.schema.unique})
        if item.kind == "labels" and isinstance(item.target, A.Variable) and item.labels is not None:
            self._label_item(item)
        if not unique_keys or item.value is None or not isinstance(item.target, (A.Variable, A.Property)):
            return
        target = item.target.expr if isinstance(item.target, A.Property) else item.target
        if isinstance(target, A.Variable) and target.name in self.relationships:
            return
        if item.kind == "property":
            if item.target.key not in unique_keys or not isinstance(item.target.expr, A.Variable):
                return
            labels = sorted({label for _, label, p in self.schema.unique if p == item.target.key})
            on = self._on_labels(item.target.expr.name, labels)
            self._wrap(item.value, lambda g: f"{on} AND {untrimmed_condition(g)}", _CONSTRAINED)
        elif item.kind == "variable":
            keys = f"${KEYS_PARAM}"
            labels = sorted({label for _, label, _ in self.schema.unique})
            on = self._on_labels(item.target.name, labels)
            self._wrap(item.value, lambda g: (f"{on} AND any(__k IN keys({g}) WHERE __k IN {keys} "
                                               f"AND {untrimmed_condition(f'{g}[__k]')})"), _CONSTRAINED)

    def _label_item(self, item: A.SetItem) -> None:
        """`SET n:L` where L has a uniqueness constraint: the node's value is checked before the
        label is added (a no-op `n += {}` item in front of it)."""
        labels = set(item.labels.names())
        keys = sorted({p for e, label, p in self.schema.unique if e == "NODE" and label in labels})
        if not keys:
            return
        var = quote(item.target.name)
        condition = " OR ".join(untrimmed_condition(f"{var}.{quote(k)}") for k in keys)
        self._refusal(_CONSTRAINED)
        self.result.edits.append((item.span[0], item.span[0], f"{var} += [{{}}, {_fail_when(condition)}][0], "))

    @staticmethod
    def _on_labels(var: str, labels: list[str]) -> str:
        return "(" + " OR ".join(f"{quote(var)}:{quote(label)}" for label in labels) + ")"

    def _wrap(self, value, condition, message: str) -> None:
        """`value`, failing the statement when `condition(it)` holds: `[v, failing][0]` for a
        value that may be read again, else bound once by a list filter (in a projection,
        `[x IN l | [x, failing][0]]`, FalkorDB gave null instead of failing inside a FOREACH
        list: measured)."""
        self._refusal(message)
        start, end = value.span
        if copyable(value) and not isinstance(value, (A.MapLiteral, A.ListLiteral)):
            self.result.edits.append((end, end, f", {_fail_when(condition(self.src(value)))}][0]"))
            self.result.edits.append((start, start, "["))
            return
        name = self.fresh("g")
        self.result.edits += [(start, start, f"[{name} IN ["),
                              (end, end, f"] WHERE {_fail_when(condition(name))} IS NOT NULL][0]")]

    def _refusal(self, message: str) -> None:
        if message not in self.result.refusals:
            self.result.refusals.append(message)


class _StringChoice(_Choice):
    """Exact when the parameter holds a string (a range on a string); the index for numbers."""

    def pick(self, params: dict[str, Any]) -> list[Edit]:
        return self.unsafe if any(isinstance(params.get(n), str) for n in self.params) else self.safe


def _constant(expr) -> bool:
    """A value known before the query runs: literals and parameters only."""
    return all(isinstance(n, (A.Literal, A.Parameter, A.ListLiteral, A.MapLiteral)) for n in expr.walk())


def _fail_when(condition: str) -> str:
    """An expression that fails the statement when `condition` holds (FalkorDB evaluates every
    CASE branch, so the failing one is a value that depends on the condition)."""
    return f"date(CASE WHEN {condition} THEN 'refused' ELSE '2000-01-01' END)"


def untrimmed_condition(value: str) -> str:
    """Cypher that holds when `value` (evaluated three times: a variable or a property) is an
    untrimmed string; null for a list, false for a number or a boolean (`toStringOrNull` never
    fails, so FalkorDB evaluating both sides of OR is safe). Two levels deep: the nesting guard
    (falkordb.guards.MAX_NESTING) counts what the proxy adds."""
    text = f"toStringOrNull({value})"
    return f"({text} = '' OR left({text}, 1) IN ${WHITESPACE_PARAM} OR right({text}, 1) IN ${WHITESPACE_PARAM})"


def refusal(messages: list[str]) -> CypherError:
    """The error for a refusal raised inside the query (Neo4j would accept the query: not a
    constraint violation)."""
    return CypherError(UNSUPPORTED, " / ".join(messages))
