"""Text edits that let Neo4j Cypher run on FalkorDB, plus the `std()` alias for both backends.

Each function walks a parsed query and returns edits `(start, end, replacement)` on the
original text (zero-width edits insert). Edits are either disjoint or nested; when nested, the
outer one wins (`probe.splice` applies them), so an edit inside an expression always replaces
that expression's whole span. Only rewrites that keep Neo4j's meaning exactly
are made; anything else reaches FalkorDB unchanged and the client gets the database's error.
What is bridged (all measured on FalkorDB 4.16, see tests/unit/test_planner_dialect.py):

- `elementId(x)` -> `toString(id(x))` (the FalkorDB backend's element ids are `str(id)`);
  `elementId(n) = e` -> `id(n) = toInteger(e)` so the lookup stays a seek;
  `elementId(n) IN e` -> `id(n) IN [x IN e | toInteger(x)]`.
- `datetime()` / `datetime(arg)` -> `localdatetime(...)`; `date(datetime())` -> `date()`.
- label expressions `:A|B`, `:!A`, `:A&B`, `:%` in MATCH node patterns and in predicates
  -> a boolean predicate on the variable, `(n:A OR n:B)`, added to the MATCH's WHERE.
- `EXISTS { pattern }`, `exists(pattern)` in a WHERE -> the pattern predicate `(n)-[:R]->()`
  (variables named only inside the pattern are dropped: FalkorDB rejects them there);
  in a projection -> `size([pattern WHERE w | 1]) > 0`; `COUNT { pattern [WHERE w] }` in a
  projection -> `size([pattern WHERE w | 1])` (one path pattern only). FalkorDB cannot filter
  on a pattern comprehension, so an EXISTS with its own WHERE, or a COUNT, inside a WHERE is
  not bridged (FalkorDB's own `exists(pattern)` is wrong: it is true for every row).
- `CALL (a, b) { ... }` -> `CALL { WITH a, b ... }` (in each part of a UNION).
- `CREATE (n:A $props)` -> `CREATE (n:A) SET n = $props` (nodes and relationships).
- `apoc.any.property(x, k)` -> `(x)[k]` (APOC's accessor, used on the maps virtual schema
  entities bind as; see compat/apoc_meta.py).
- `CALL db.create.setNodeVectorProperty(n, 'key', v)` -> `SET n.key = vecf32(v)` (and
  setRelationshipVectorProperty);
  `vector.similarity.cosine|euclidean(a, b)` -> Neo4j's similarity from `vec.*Distance`.
- `valueType(x)` -> Neo4j's type name from `typeOf(x)` (a list by its first element).
- `CALL { ... } IN TRANSACTIONS [OF n ROWS]` -> `CALL { ... }`: the embedded database runs the
  whole statement as one atomic write (it has no partial commits). Subqueries that write with
  MERGE or DELETE, which FalkorDB runs for the first row only, are bridged in
  `bridges/subqueries.py`.
"""

from __future__ import annotations

import re
from dataclasses import replace
from itertools import count

from .bridges.labels import label_predicate
from .bridges.uniqueness import unique_body
from .cypher import ast as A
from .cypher.render import name as quote_name
from .cypher.render import render
from .cypher.tokens import OP, tokenize

Edit = tuple[int, int, str]

#: `(n:A $props)` / `[r:T $props]`: an opening bracket, a variable and labels, then a parameter.
#: Possessive quantifiers: an attempt never backtracks, so the whole scan is linear.
_PARAMETER_PROPERTIES = r"[(\[]\s*+(?:\w++|`[^`]*+`)?\s*+(?::\s*+(?:\w++|`[^`]*+`)\s*+)*+\$"

#: (substrings, regex) pairs: a query may need a FalkorDB bridge only if, for some pair, the
#: lower-cased text contains one of the substrings and the regex matches it. Regexes start with a
#: literal so `re` scans fast; false positives only cost a (cached) parse.
FALKORDB_TRIGGERS = tuple((word, re.compile(rx)) for word, rx in (
    (("create",), _PARAMETER_PROPERTIES), (("elementid",), r"elementid\s*\("), (("datetime",), r"datetime\s*\("), (("exists",), r"exists\s*[{(]"),
    (("count",), r"count\s*\{"), (("call",), r"call\s*\("),
    (("cypher",), r"^\s*cypher\b"), (("show",), r"^\s*(?:(?:cypher|explain|profile)\b[^;]*?)?show\s"),
    # atomic: the first CREATE/DROP decides (trying each later one made this quadratic)
    (("index", "constraint"), r"^\s*+(?>(?:(?:cypher|explain|profile)\b[^;]*?)?(?:create|drop)\b)[^;]*?\b(?:index|constraint)\b"),
    (("$(", "$any(", "$all("), r"\$(?:any|all)?\("), (("apoc.any.property",), r"apoc\.any\.property\s*\("),
    (("vector.similarity.",), r"vector\.similarity\.\w+\s*\("), (("valuetype",), r"valuetype\s*\("), (("setnodevectorproperty", "setrelationshipvectorproperty"), r"set(?:node|relationship)vectorproperty"),
    (("transactions",), r"\bin\s+(?:\d+\s+concurrent\s+)?transactions\b"),
    (("|", "&", "!", "%"), r":\s*[!%(]|:\s*(?:\w+|`[^`]*`)\s*[|&]")))
ALIAS_TRIGGERS = ((("std",), re.compile(r"std\s*\(")),)


def alias_edits(query: A.Query, is_extension) -> list[Edit]:
    """`std(x)` -> `stDev(x)` unless an extension called `std` is registered."""
    return [(call.name_span[0], call.name_span[1], "stDev")
            for call in query.find_all(A.FunctionCall)
            if call.lower_name == "std" and not is_extension("std")]


def falkordb_edits(query: A.Query, text: str) -> list[Edit]:
    """Every FalkorDB bridge edit for `query` (parsed from `text`)."""
    edits: list[Edit] = []
    fresh = (f"__l{i}" for i in count())
    filters = {id(n) for clause in query.walk() if isinstance(clause, (A.Match, A.With)) and clause.where
               for n in clause.where.walk()}
    for node in query.walk():
        if isinstance(node, A.FunctionCall) and node.lower_name == "exists" and len(node.args) == 1 \
                and isinstance(node.args[0], A.PatternExpr):
            edits += _exists(node, node.args[0].path, None, query, text, id(node) in filters)
        elif isinstance(node, A.FunctionCall):
            edits += _function(node, text)
        elif isinstance(node, A.BinaryOp) and node.op in ("=", "IN"):
            edits += _element_id_seek(node, text)
        elif isinstance(node, A.LabelPredicate) and not A.legacy_labels(node.labels):
            edits.append((*node.span, "(" + label_predicate(node.expr.text_in(text), node.labels) + ")"))
        elif isinstance(node, A.Match):
            edits += _match_labels(node, text, fresh)
        elif isinstance(node, (A.ExistsSubquery, A.CountSubquery)):
            edits += _subquery(node, query, text, id(node) in filters)
        elif isinstance(node, A.CallSubquery):
            edits += _call_scope(node, text) if node.scope is not None else []
            if node.in_transactions is not None:
                edits.append((*node.in_transactions.span, ""))
        elif isinstance(node, A.Create):
            edits += _create_parameters(node, text, fresh)
        elif isinstance(node, A.CallProcedure) and node.name.lower() in SET_VECTOR_PROCEDURES:
            edits += _set_vector(node, text)
    return edits


def _function(call: A.FunctionCall, text: str) -> list[Edit]:
    name = call.lower_name
    if name == "elementid" and len(call.args) == 1:
        return [(*call.span, f"toString(id({call.args[0].text_in(text)}))")]
    if name == "datetime":
        return [(*call.name_span, "localdatetime")]
    if name == "valuetype" and len(call.args) == 1:
        return [(*call.span, value_type(call.args[0].text_in(text)))]
    if name in SIMILARITY and len(call.args) == 2:
        a, b = (_vector(arg, text) for arg in call.args)
        return [(*call.span, SIMILARITY[name].format(a=a, b=b))]
    if name == "apoc.any.property" and len(call.args) == 2:     # on maps (what virtual entities bind as)
        return [(*call.span, f"({call.args[0].text_in(text)})[{call.args[1].text_in(text)}]")]
    if (name == "date" and len(call.args) == 1 and isinstance(call.args[0], A.FunctionCall)
            and call.args[0].lower_name in ("datetime", "localdatetime") and not call.args[0].args):
        return [(*call.span, "date()")]
    return []


#: FalkorDB `typeOf()` -> Neo4j `valueType()` names (without NOT NULL).
VALUE_TYPES = {"String": "STRING", "Integer": "INTEGER", "Float": "FLOAT", "Boolean": "BOOLEAN",
               "Date": "DATE", "Datetime": "LOCAL DATETIME", "Time": "LOCAL TIME", "Duration": "DURATION",
               "Point": "POINT", "Map": "MAP", "Node": "NODE", "Edge": "RELATIONSHIP", "Path": "PATH",
               "Vectorf32": "LIST<FLOAT NOT NULL>", "List": "LIST<ANY NOT NULL>"}


def value_type(x: str) -> str:
    """Neo4j's `valueType(x)` from FalkorDB's `typeOf`; a list is typed by its first element (FalkorDB
    type-checks every CASE branch, so the list is reached through `CASE ... ELSE [] END`)."""
    def names(expr: str) -> str:
        whens = " ".join(f"WHEN '{t}' THEN '{n}'" for t, n in VALUE_TYPES.items())
        return f"CASE typeOf({expr}) {whens} END"
    items = f"(CASE typeOf({x}) WHEN 'List' THEN {x} ELSE [] END)"
    element = f"CASE size({items}) WHEN 0 THEN 'NOTHING' ELSE {names(f'head({items})')} + ' NOT NULL' END"
    return (f"(CASE typeOf({x}) WHEN 'Null' THEN 'NULL' WHEN 'List' THEN 'LIST<' + {element} + '> NOT NULL' "
            f"ELSE {names(x)} + ' NOT NULL' END)")


#: Neo4j's similarities in [0, 1] from FalkorDB's distances (see compat/vector.py).
SIMILARITY = {"vector.similarity.cosine": "(1.0 - vec.cosineDistance({a}, {b}) / 2.0)",
              "vector.similarity.euclidean": "(1.0 / (1.0 + vec.euclideanDistance({a}, {b})^2))"}


def _vector(arg: A.Expr, text: str) -> str:
    """A FalkorDB vector: lists (parameters, literals) are converted; a stored property (or a
    variable holding one) may be either (`_set_vector` stores vecf32, a plain SET a list), and
    `vecf32` of a vector fails, so it is converted only when it is not one (in a comprehension:
    FalkorDB's CASE would run `vecf32` on both)."""
    if isinstance(arg, (A.Parameter, A.ListLiteral)):
        return f"vecf32({arg.text_in(text)})"
    value = arg.text_in(text)
    return (f"([__v IN [{value}] WHERE typeOf(__v) = 'Vectorf32' | __v]"
            f" + [__v IN [{value}] WHERE typeOf(__v) <> 'Vectorf32' | vecf32(__v)])[0]")


#: Neo4j's procedures that store a vector on a node or a relationship (lower case).
SET_VECTOR_PROCEDURES = frozenset({"db.create.setnodevectorproperty", "db.create.setrelationshipvectorproperty"})


def _set_vector(call: A.CallProcedure, text: str) -> list[Edit]:
    """`CALL db.create.setNodeVectorProperty(n, 'key', v)` (setRelationshipVectorProperty alike)
    -> `SET n.key = vecf32(v)` (FalkorDB's
    vector index only indexes vecf32 values; the key must be a string literal)."""
    args = call.args or ()
    if len(args) != 3 or not isinstance(args[1], A.Literal) or not isinstance(args[1].value, str) \
            or call.yields is not None:
        return []
    node, _, vector = args
    return [(*call.span, f"SET {node.text_in(text)}.{quote_name(args[1].value)} = vecf32({vector.text_in(text)})")]


def _element_id_seek(op: A.BinaryOp, text: str) -> list[Edit]:
    """`elementId(n) = e` -> `id(n) = toInteger(e)` (either side); `elementId(n) IN e` likewise."""
    sides = [(op.left, op.right)] + ([(op.right, op.left)] if op.op == "=" else [])
    for call, other in sides:
        if (isinstance(call, A.FunctionCall) and call.lower_name == "elementid" and len(call.args) == 1
                and isinstance(call.args[0], A.Variable)):
            converted = "toInteger({})" if op.op == "=" else "[__x IN {} | toInteger(__x)]"
            head, tail = converted.split("{}")
            return [(*call.span, f"id({call.args[0].text_in(text)})"),
                    (other.span[0], other.span[0], head), (other.span[1], other.span[1], tail)]
    return []


def _match_labels(match: A.Match, text: str, fresh) -> list[Edit]:
    """Move label expressions FalkorDB cannot parse out of MATCH node patterns into its WHERE."""
    edits: list[Edit] = []
    predicates: list[str] = []
    for node in match.pattern.find_all(A.NodePattern):
        if A.legacy_labels(node.labels):
            continue
        start = node.var.span[1] if node.var else node.span[0] + 1
        var = node.var.name if node.var else next(fresh)
        edits.append((start, node.labels.span[1], "" if node.var else var))
        predicates.append(label_predicate(quote_name(var), node.labels))
    if not predicates:
        return edits
    condition = " AND ".join(predicates)
    if match.where is None:
        edits.append((match.span[1], match.span[1], f" WHERE {condition}"))
    else:
        edits += [(match.where.span[0], match.where.span[0], f"{condition} AND ("),
                  (match.where.span[1], match.where.span[1], ")")]
    return edits


def _create_parameters(create: A.Create, text: str, fresh) -> list[Edit]:
    """Move `$props` out of CREATE patterns into a `SET var = $props` after the clause."""
    edits: list[Edit] = []
    assignments: list[str] = []
    for element in create.pattern.walk():
        if isinstance(element, (A.NodePattern, A.RelPattern)) and isinstance(element.properties, A.Parameter):
            var = element.var.name if element.var else next(fresh)
            if element.var is None:
                opening = text.index("(" if isinstance(element, A.NodePattern) else "[", *element.span) + 1
                edits.append((opening, opening, var))
            edits.append((*element.properties.span, ""))
            assignments.append(f"{quote_name(var)} = ${quote_name(element.properties.name)}")
    if assignments:
        edits.append((create.span[1], create.span[1], " SET " + ", ".join(assignments)))
    return edits


def _subquery(node: A.ExistsSubquery | A.CountSubquery, query: A.Query, text: str, in_filter: bool) -> list[Edit]:
    pattern, where = node.pattern, node.where
    if node.query is not None:
        clauses = node.query.parts[0].clauses if len(node.query.parts) == 1 else ()
        if len(clauses) != 1 or not isinstance(clauses[0], A.Match) or clauses[0].optional:
            return []
        pattern, where = clauses[0].pattern, clauses[0].where
    if pattern is None or len(pattern.paths) != 1 or pattern.paths[0].var is not None:
        return []
    if isinstance(node, A.CountSubquery):
        return [] if in_filter else [(*node.span, f"size([{_comprehension_body(pattern.paths[0], where, text)} | 1])")]
    return _exists(node, pattern.paths[0], where, query, text, in_filter)


def _comprehension_body(path: A.PathPattern, where: A.Expr | None, text: str) -> str:
    """`path [WHERE where]`, with Neo4j's relationship uniqueness (see bridges/uniqueness.py)."""
    return unique_body(path, where, text)


def _exists(node: A.Node, path: A.PathPattern, where: A.Expr | None, query: A.Query, text: str,
            in_filter: bool) -> list[Edit]:
    """EXISTS as a pattern predicate (in a WHERE) or a pattern comprehension (elsewhere)."""
    if not in_filter:
        return [(*node.span, f"(size([{_comprehension_body(path, where, text)} | 1]) > 0)")]
    if where is not None:
        return []
    inside = {id(n) for n in node.walk()}
    outside = {n.name for n in query.walk() if isinstance(n, A.Variable) and id(n) not in inside}
    elements = tuple(replace(e, var=None) if getattr(e, "var", None) is not None and e.var.name not in outside
                     else e for e in path.elements)
    return [(*node.span, render(replace(path, elements=elements)))]


def _call_scope(node: A.CallSubquery, text: str) -> list[Edit]:
    """`CALL (a, b) {` -> `CALL { WITH a, b`; `CALL () {` -> `CALL {`. A body that is a UNION
    imports the variables at the start of each of its parts (FalkorDB's importing WITH is
    per part, as in Neo4j's old form)."""
    tokens = [t for t in tokenize(text[node.span[0]:node.query.span[0]]) if t.kind == OP]
    opening = next((t for t in tokens if t.value == "("), None)
    brace = next((t for t in reversed(tokens) if t.value == "{"), None)
    if opening is None or brace is None:
        return []
    scope = "*" if node.scope == ("*",) else ", ".join(v.text_in(text) for v in node.scope)
    head = (node.span[0] + opening.start, node.span[0] + brace.end)
    if len(node.query.parts) == 1:
        return [(*head, f"{{ WITH {scope} " if scope else "{ ")]
    return [(*head, "{")] + [(part.span[0], part.span[0], f"WITH {scope} ") for part in node.query.parts if scope]


def triggers(functions, procedures, falkordb: bool) -> tuple:
    """(substring, regex) pairs for calls of the extension `functions` and `procedures` (a CALL
    may omit the parentheses), the alias and (FalkorDB) the bridges."""
    calls = tuple(((n.lower(),), re.compile(rf"{re.escape(n.lower())}\s*\(")) for n in functions)
    calls += tuple(((n.lower(),), re.compile(rf"call\s+`?{re.escape(n.lower())}(?![\w.])"))
                   for n in procedures)
    grouped = calls + ALIAS_TRIGGERS + (FALKORDB_TRIGGERS if falkordb else ())
    return tuple((word, regex) for words, regex in grouped for word in words)


def triggered(query: str, pairs: tuple) -> bool:
    """Whether the planner must look at `query` at all (see FALKORDB_TRIGGERS)."""
    lowered = query.lower()
    return any(word in lowered and regex.search(lowered) for word, regex in pairs)
