"""APOC functions as FalkorDB expressions, so they work anywhere an expression goes.

FalkorDB has no APOC. The functions stock tools call (llama-index's `apoc.coll.flatten(
apoc.coll.toSet(collect(...)))`, neomodel's type names, ...) become the expression the database
evaluates with APOC's result: `apoc.coll.toSet(x)` -> `list.dedup(x)`, `apoc.coll.flatten(x)`
-> a `reduce` over `x`. The edits go only into the text around the arguments (each template
names each argument once, in order), so whatever else is rewritten inside an argument - another
APOC call, `elementId(n)` - is kept. A template that needs an argument twice binds it first:
`[__apoc0 IN [x] | ... __apoc0 ... __apoc0 ...][0]`.

FalkorDB refuses an aggregation inside a list iteration (`reduce(a = [], x IN collect(y) | ...)`),
which Neo4j evaluates once per group; a WITH or RETURN whose iterating APOC call, or list
comprehension, quantifier or reduce (`[x IN collect(n) | x.name]`; not under ORDER BY or WHERE),
reads an aggregate is split in two: a WITH that groups and aggregates first, then the projection over
the aggregated values (`split_aggregates`).

Functions whose result is a map with keys from the data (`apoc.map.clean`,
`apoc.meta.cypher.types`) cannot be one expression in FalkorDB's Cypher: `compat/apoc_maps.py`
serves them. Other APOC functions are not served; FalkorDB's "Unknown function" error names them.

Behind a Neo4j without APOC (`compat/apoc_upstream.py`) the same functions are served in Neo4j's Cypher:
`NEO4J_FORMS` holds the templates that differ (Neo4j has no `list.dedup`, `string.join` or
`typeOf`); `apoc.coll.sort` is not served there (Neo4j 5 has no list sort without APOC).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.dialect import Capability
from core.errors import argument_error

from ..cypher import ast as A
from .rule import Context, Edit, Rule

#: As probe.AGGREGATES (not imported: probe imports this package).
AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "std",
                        "percentilecont", "percentiledisc"})
_PLACEHOLDER = re.compile(r"@(\d|v)")


@dataclass(frozen=True)
class ApocFunction:
    """One APOC function: its signature and description as APOC lists them, and per arity a
    template: `@0`, `@1` ... the arguments (each once, in order), `@v` a fresh variable name."""

    name: str
    signature: str
    description: str
    forms: dict[int, str]

    @property
    def iterates(self) -> bool:
        """Whether an argument is read inside a list iteration (see `split_aggregates`)."""
        return any(" IN " in form for form in self.forms.values())


#: FalkorDB `typeOf()` -> APOC's `apoc.meta.cypher.type` names (date-times are stored without a
#: zone, see bridges/temporal.py).
_TYPE_NAMES = {"Null": "NULL", "String": "STRING", "Integer": "INTEGER", "Float": "FLOAT",
               "Boolean": "BOOLEAN", "Map": "MAP", "Node": "NODE", "Edge": "RELATIONSHIP", "Path": "PATH",
               "Point": "POINT", "Date": "DATE", "Datetime": "LOCAL_DATE_TIME", "Time": "LOCAL_TIME",
               "Duration": "DURATION", "Vectorf32": "LIST OF FLOAT"}


def _names_case(subject: str, names: dict[str, str], otherwise: str = "") -> str:
    """`CASE subject WHEN 'a' THEN 'A' ... END`: one type name to another."""
    whens = " ".join(f"WHEN '{t}' THEN '{n}'" for t, n in names.items())
    return f"CASE {subject} {whens}{otherwise} END"


def _type_name(value: str) -> str:
    return _names_case(f"typeOf({value})", _TYPE_NAMES)


def cypher_type(value: str, fresh: str, *, neo4j: bool = False) -> str:
    """`apoc.meta.cypher.type(value)` as text (`fresh`: a variable name prefix), in FalkorDB's
    Cypher or (`neo4j`) Neo4j's."""
    template = _neo4j_cypher_type() if neo4j else _cypher_type()
    return template.replace("@v", fresh + "_").replace("@0", value)


def _cypher_type() -> str:
    """APOC's type name: a list is `LIST OF <type>` when its elements share one, else `LIST OF ANY`."""
    items = "(CASE typeOf(@vv) WHEN 'List' THEN @vv ELSE [] END)"
    same = f"size({items}) > 0 AND all(@ve IN {items} WHERE typeOf(@ve) = typeOf(head({items})))"
    element = f"CASE WHEN {same} THEN {_type_name(f'head({items})')} ELSE 'ANY' END"
    return (f"[@vv IN [@0] | CASE typeOf(@vv) WHEN 'List' THEN 'LIST OF ' + {element} "
            f"ELSE {_type_name('@vv')} END][0]")


_FLATTEN = "reduce(@va = [], @vx IN coalesce(@0, []) | @va + CASE WHEN typeOf(@vx) = 'List' THEN @vx ELSE [@vx] END)"

FUNCTIONS = {f.name.lower(): f for f in (
    ApocFunction("apoc.coll.toSet", "apoc.coll.toSet(coll :: LIST<ANY>) :: LIST<ANY>",
                 "Returns a unique `LIST<ANY>` from the given `LIST<ANY>`.", {1: "list.dedup(@0)"}),
    ApocFunction("apoc.coll.flatten", "apoc.coll.flatten(coll :: LIST<ANY>, recursive = false :: BOOLEAN) :: LIST<ANY>",
                 "Flattens the given `LIST<LIST<ANY>>` (to the given depth if `recursive` is true).",
                 {1: _FLATTEN, 2: _FLATTEN}),
    ApocFunction("apoc.coll.sum", "apoc.coll.sum(coll :: LIST<INTEGER | FLOAT>) :: FLOAT",
                 "Returns the sum of all the `INTEGER | FLOAT` in the `LIST<INTEGER | FLOAT>`.",
                 {1: "reduce(@vs = 0.0, @vx IN @0 | @vs + @vx)"}),
    ApocFunction("apoc.coll.avg", "apoc.coll.avg(coll :: LIST<INTEGER | FLOAT>) :: FLOAT",
                 "Returns the average of the numbers in the `LIST<INTEGER | FLOAT>`.",
                 {1: "[@vl IN [@0] | CASE size(@vl) WHEN 0 THEN null "
                     "ELSE reduce(@vs = 0.0, @vx IN @vl | @vs + @vx) / size(@vl) END][0]"}),
    ApocFunction("apoc.coll.max", "apoc.coll.max(values :: LIST<ANY>) :: ANY",
                 "Returns the maximum of all values in the given `LIST<ANY>`.",
                 {1: "reduce(@vm = null, @vx IN @0 | CASE WHEN @vm IS NULL OR @vx > @vm THEN @vx ELSE @vm END)"}),
    ApocFunction("apoc.coll.min", "apoc.coll.min(values :: LIST<ANY>) :: ANY",
                 "Returns the minimum of all values in the given `LIST<ANY>`.",
                 {1: "reduce(@vm = null, @vx IN @0 | CASE WHEN @vm IS NULL OR @vx < @vm THEN @vx ELSE @vm END)"}),
    ApocFunction("apoc.coll.contains", "apoc.coll.contains(coll :: LIST<ANY>, value :: ANY) :: BOOLEAN",
                 "Returns whether or not the given value exists in the given collection.",
                 {2: "coalesce(any(@vx IN @0 WHERE @vx = @1), false)"}),
    ApocFunction("apoc.coll.union", "apoc.coll.union(list1 :: LIST<ANY>, list2 :: LIST<ANY>) :: LIST<ANY>",
                 "Returns the distinct union of the two given `LIST<ANY>` values.", {2: "list.dedup(@0 + @1)"}),
    ApocFunction("apoc.coll.intersection",
                 "apoc.coll.intersection(list1 :: LIST<ANY>, list2 :: LIST<ANY>) :: LIST<ANY>",
                 "Returns the distinct intersection of two `LIST<ANY>` values.",
                 {2: "list.dedup([@vx IN @0 WHERE @vx IN @1])"}),
    ApocFunction("apoc.coll.subtract", "apoc.coll.subtract(list1 :: LIST<ANY>, list2 :: LIST<ANY>) :: LIST<ANY>",
                 "Returns the first `LIST<ANY>` as a set with all the elements of the second `LIST<ANY>` removed.",
                 {2: "list.dedup([@vx IN @0 WHERE NOT @vx IN @1])"}),
    ApocFunction("apoc.coll.sort", "apoc.coll.sort(coll :: LIST<ANY>) :: LIST<ANY>",
                 "Sorts the given `LIST<ANY>` into ascending order.", {1: "list.sort(@0)"}),
    ApocFunction("apoc.coll.indexOf", "apoc.coll.indexOf(coll :: LIST<ANY>, value :: ANY) :: INTEGER",
                 "Returns the index for the first occurrence of the specified value in the `LIST<ANY>`.",
                 {2: "[@vl IN [@0] | coalesce(head([@vi IN range(0, size(@vl) - 1) WHERE @vl[@vi] = @1]), -1)][0]"}),
    ApocFunction("apoc.text.join", "apoc.text.join(stringList :: LIST<STRING>, delimiter :: STRING) :: STRING",
                 "Joins the given `STRING` values using the given delimiter.", {2: "string.join(@0, @1)"}),
    ApocFunction("apoc.text.capitalize", "apoc.text.capitalize(text :: STRING) :: STRING",
                 "Capitalizes the first letter of the given `STRING`.",
                 {1: "[@vt IN [@0] | toUpper(left(@vt, 1)) + substring(@vt, 1)][0]"}),
    ApocFunction("apoc.meta.cypher.type", "apoc.meta.cypher.type(value :: ANY) :: STRING",
                 "Returns the type name of the given value.", {1: _cypher_type()}),
)}


#: Neo4j `valueType()` (without NOT NULL) -> APOC's `apoc.meta.cypher.type` names.
_NEO4J_TYPE_NAMES = {"NULL": "NULL", "STRING": "STRING", "INTEGER": "INTEGER", "FLOAT": "FLOAT",
                     "BOOLEAN": "BOOLEAN", "MAP": "MAP", "NODE": "NODE", "RELATIONSHIP": "RELATIONSHIP",
                     "PATH": "PATH", "POINT": "POINT", "DATE": "DATE", "ZONED DATETIME": "DATE_TIME",
                     "LOCAL DATETIME": "LOCAL_DATE_TIME", "LOCAL TIME": "LOCAL_TIME", "ZONED TIME": "TIME",
                     "DURATION": "DURATION"}


def _neo4j_type_name(name: str) -> str:
    """APOC's name for a `valueType()` name without NOT NULL (ANY for a union or NOTHING)."""
    return _names_case(name, _NEO4J_TYPE_NAMES, " ELSE 'ANY'")


def _neo4j_cypher_type() -> str:
    """From `valueType()`, read once: `LIST<T>` is `LIST OF T` (a union of types: `LIST OF ANY`)."""
    element = f"[@ve IN [substring(@vt, 5, size(@vt) - 6)] | {_neo4j_type_name('@ve')}][0]"
    return (f"[@vt IN [replace(valueType(@0), ' NOT NULL', '')] | CASE WHEN @vt STARTS WITH 'LIST<' "
            f"THEN 'LIST OF ' + {element} ELSE {_neo4j_type_name('@vt')} END][0]")


def _neo4j_dedup(items: str) -> str:
    """`items` without repeats, in order (APOC's sets keep the first occurrence)."""
    return (f"reduce(@va = [], @vx IN {items} | CASE WHEN any(@vy IN @va WHERE @vy = @vx OR @vy IS NULL "
            f"AND @vx IS NULL) THEN @va ELSE @va + [@vx] END)")


#: In Neo4j `list + list` concatenates and `list + value` appends: one level flattened (null appended
#: as an element, as APOC does).
_NEO4J_FLATTEN = "reduce(@va = [], @vx IN coalesce(@0, []) | @va + CASE WHEN @vx IS NULL THEN [null] ELSE @vx END)"
#: The templates that differ in Neo4j's Cypher (the others are the same text on both).
NEO4J_FORMS = {
    "apoc.coll.toset": {1: _neo4j_dedup("@0")},
    "apoc.coll.flatten": {1: _NEO4J_FLATTEN, 2: _NEO4J_FLATTEN},
    "apoc.coll.union": {2: _neo4j_dedup("@0 + @1")},
    "apoc.coll.intersection": {2: _neo4j_dedup("[@vz IN @0 WHERE @vz IN @1]")},
    "apoc.coll.subtract": {2: _neo4j_dedup("[@vz IN @0 WHERE NOT @vz IN @1]")},
    "apoc.coll.sort": {},
    "apoc.text.join": {2: "[@vl IN [@0] | reduce(@vs = '', @vi IN range(0, size(@vl) - 1) | "
                          "@vs + CASE WHEN @vi = 0 THEN '' ELSE @1 END + @vl[@vi])][0]"},
    "apoc.meta.cypher.type": {1: _neo4j_cypher_type()},
}


def apoc_call(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    """The edits that turn one APOC call into its FalkorDB expression."""
    return _call(call, ctx, FUNCTIONS.get(call.lower_name) and FUNCTIONS[call.lower_name].forms)


def neo4j_call(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    """The edits that turn one APOC call into Neo4j's Cypher (behind a Neo4j without APOC)."""
    if call.lower_name == "apoc.any.property" and len(call.args) == 2:
        return _fill("(@0)[@1]", call, call.args, ctx)
    function = FUNCTIONS.get(call.lower_name)
    return _call(call, ctx, function and NEO4J_FORMS.get(call.lower_name, function.forms))


def _call(call: A.FunctionCall, ctx: Context, forms: dict[int, str] | None) -> list[Edit]:
    function = FUNCTIONS.get(call.lower_name)
    if function is None:
        return []
    if not forms:
        raise argument_error(f"{function.name}() is not served behind a Neo4j without APOC; install APOC "
                             "on the Neo4j server, or compute it in the application.")
    args = call.args
    if call.lower_name == "apoc.coll.flatten" and len(args) == 2:
        if not (isinstance(args[1], A.Literal) and args[1].value is False):
            raise argument_error("apoc.coll.flatten(coll, true) (flattening to any depth) is not available where "
                                 "the proxy serves APOC (the embedded database, a Neo4j without APOC); flatten one "
                                 "level at a time with apoc.coll.flatten(coll).")
        return _fill(forms[1], call, args[:1], ctx)      # the last edit drops `, false`
    form = forms.get(len(args))
    if form is None:
        raise argument_error(f"{function.name}() takes {' or '.join(map(str, forms))} arguments, "
                             f"got {len(args)}. Usage: {function.signature}")
    return _fill(form, call, args, ctx)


def _fill(form: str, call: A.FunctionCall, args: tuple, ctx: Context) -> list[Edit]:
    """Edits around the arguments: the template's text between placeholders replaces the call's
    text between (and around) the arguments."""
    fresh = ctx.fresh("apoc")
    pieces = _PLACEHOLDER.split(form.replace("@v", fresh + "_"))
    texts, order = pieces[0::2], [int(p) for p in pieces[1::2]]
    assert order == list(range(len(args))), form
    if not args:
        return [(*call.span, texts[0])]
    edits = [(call.span[0], args[0].span[0], texts[0])]
    edits += [(a.span[1], b.span[0], texts[i + 1]) for i, (a, b) in enumerate(zip(args, args[1:]))]
    edits.append((args[-1].span[1], call.span[1], texts[-1]))
    return edits


# ------------------------------------------------------------------ aggregates read by an iteration

def _is_aggregate(node: A.Node) -> bool:
    return isinstance(node, A.CountStar) or (isinstance(node, A.FunctionCall) and node.lower_name in AGGREGATES)


def _aggregates(expr: A.Node) -> list[A.Node]:
    """The outermost aggregations in `expr`."""
    found = [n for n in expr.walk() if _is_aggregate(n)]
    inner = {id(m) for n in found for m in n.walk() if m is not n}
    return [n for n in found if id(n) not in inner]


#: Cypher's own list iterations (a comprehension, a quantifier, reduce), refused over an aggregate too.
_ITERATIONS = (A.ListComprehension, A.Quantifier, A.Reduce)


def _needs_split(clause: A._Projection) -> bool:
    sorted_or_filtered = clause.order_by or getattr(clause, "where", None) is not None
    for item in clause.items:
        for node in item.expr.walk():
            function = FUNCTIONS.get(node.lower_name) if isinstance(node, A.FunctionCall) else None
            if function is not None and function.iterates and any(_aggregates(arg) for arg in node.args):
                return True
            if isinstance(node, _ITERATIONS) and not sorted_or_filtered and _over_aggregate(node):
                return True
    return False


def _over_aggregate(iteration: A.Expr) -> bool:
    """An iteration over an aggregate (`x IN collect(n)`) with none in its body (Neo4j refuses
    `[x IN list | count(*)]`, and so does FalkorDB)."""
    over = _aggregates(iteration.source)
    return bool(over) and len(_aggregates(iteration)) == len(over)


def _iteration_names(expr: A.Expr) -> set[str]:
    """The variables the list iterations in `expr` bind for themselves."""
    return {n.var.name for n in expr.walk() if isinstance(n, _ITERATIONS)} | \
        {n.acc.name for n in expr.walk() if isinstance(n, A.Reduce)}


def split_aggregates(clause: A._Projection, ctx: Context) -> list[Edit]:
    """`WITH k, apoc.coll.flatten(collect(x)) AS f` -> `WITH k, collect(x) AS __g WITH k,
    apoc.coll.flatten(__g) AS f`: the grouping first, the iteration over its results after."""
    if clause.star or not _needs_split(clause):
        return []
    hoisted: list[str] = []
    edits: list[Edit] = []
    for item in clause.items:
        aggregates = _aggregates(item.expr)
        if not aggregates:
            if isinstance(item.expr, A.Variable):
                hoisted.append(item.expr.text_in(ctx.text))
                continue
            key = ctx.fresh("apocKey")
            hoisted.append(f"{item.expr.text_in(ctx.text)} AS {key}")
            edits.append((*item.expr.span, key))      # RETURN keeps its column name (probe.alias_return_items)
            continue
        inside = {id(n) for agg in aggregates for n in agg.walk()}
        own = _iteration_names(item.expr)
        if any(isinstance(n, A.Variable) and id(n) not in inside and n.name not in own for n in item.expr.walk()):
            return []          # a grouping key mixed with an aggregate: left to the database
        for aggregate in aggregates:
            name = ctx.fresh("apocAgg")
            hoisted.append(f"{aggregate.text_in(ctx.text)} AS {name}")
            edits.append((*aggregate.span, name))
    return [(clause.span[0], clause.span[0], f"WITH {', '.join(hoisted)} "), *edits]


def listed() -> list[ApocFunction]:
    """The served functions, for SHOW FUNCTIONS and the README."""
    return sorted(FUNCTIONS.values(), key=lambda f: f.name.lower())


#: The Neo4j rule (`apoc_upstream.function_edits`): every APOC function call, `apoc.any.property` too.
NEO4J_RULES = ((A.FunctionCall, neo4j_call),)


_WORDS, _CALL = ("apoc.",), r"apoc\.[\w.]+\s*\("
#: ... or a list iteration over an aggregate (`[x IN collect(n) | x.name]`)
_SPLIT_WORDS = (*_WORDS, " in ")
_SPLIT = _CALL + r"|\sin\s++(?:collect|count|sum|avg|min|max)\s*+\("
RULES = (Rule(A.FunctionCall, apoc_call, _WORDS, _CALL, Capability.APOC),
         Rule(A.With, split_aggregates, _SPLIT_WORDS, _SPLIT, Capability.APOC),
         Rule(A.Return, split_aggregates, _SPLIT_WORDS, _SPLIT, Capability.APOC))
