"""Neo4j constructs FalkorDB spells differently, rewritten as bridge rules (one rule a construct).

Each rule keeps Neo4j's meaning exactly; anything else reaches FalkorDB unchanged and the client
gets the database's error. A rule stands in for Neo4j's Cypher unless it names another
capability the dialect may have (`core/dialect.py`: the vector rules `VECTORS`, the APOC
accessor `APOC`). What is rewritten (measured on FalkorDB 4.16, see
tests/unit/test_planner_dialect.py):

- `elementId(x)` -> the dialect's element id, `toString(id(x))` (the FalkorDB backend's element
  ids are `str(id)`, `Dialect.element_id`);
  `elementId(n) = e` -> `id(n) = toInteger(e)` so the lookup stays a seek;
  `elementId(n) IN e` -> `id(n) IN [x IN e | toInteger(x)]`.
- `datetime()` / `datetime(arg)` -> `localdatetime(...)`; `date(datetime())` -> `date()`.
- label expressions `:A|B`, `:!A`, `:A&B`, `:%`, `:$(expr)` in MATCH node patterns and in
  predicates -> a boolean predicate on the variable, `(n:A OR n:B)`, added to the MATCH's WHERE.
- `EXISTS { pattern }`, `exists(pattern)` in a WHERE -> the pattern predicate `(n)-[:R]->()`
  (variables named only inside the pattern are dropped: FalkorDB rejects them there);
  in a projection -> `size([pattern WHERE w | 1]) > 0`; `COUNT { pattern [WHERE w] }` in a
  projection -> `size([pattern WHERE w | 1])` (one path pattern only). FalkorDB cannot filter
  on a pattern comprehension, so an EXISTS with its own WHERE, or a COUNT, inside a WHERE is
  not rewritten (FalkorDB's own `exists(pattern)` is wrong: it is true for every row).
- `CALL (a, b) { ... }` -> `CALL { WITH a, b ... }`; `CALL { ... } IN TRANSACTIONS [OF n ROWS]`
  -> `CALL { ... }`: the embedded database runs the whole statement as one atomic write (it has
  no partial commits). Subqueries that write with MERGE or DELETE, which FalkorDB runs for the
  first row only, are bridged in `subqueries.py`.
- `CREATE (n:A $props)` -> `CREATE (n:A) SET n = $props` (nodes and relationships).
- `apoc.any.property(x, k)` -> `(x)[k]` (APOC's accessor, used on the maps virtual schema
  entities bind as; see compat/apoc_meta.py).
- `CALL db.create.setNodeVectorProperty(n, 'key', v)` -> `SET n.key = vecf32(v)` (and
  setRelationshipVectorProperty);
  `vector.similarity.cosine|euclidean(a, b)` -> Neo4j's similarity from `vec.*Distance`.
- `valueType(x)` -> Neo4j's type name from `typeOf(x)` (a list by its first element).
"""

from __future__ import annotations

from dataclasses import replace

from core.dialect import Capability

from ..cypher import ast as A
from ..cypher.render import name as quote_name
from ..cypher.render import render
from ..cypher.tokens import OP, tokenize
from .labels import label_predicate
from .rule import Context, Edit, Rule
from .uniqueness import unique_body

#: Neo4j's procedures that store a vector on a node or a relationship (lower case; those with a
#: key that is not a literal are probed late by `planner/late.py`).
SET_VECTOR_PROCEDURES = frozenset({"db.create.setnodevectorproperty", "db.create.setrelationshipvectorproperty"})


# ---------------------------------------------------------------- functions

def element_id(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    if call.lower_name == "elementid" and len(call.args) == 1:
        return [(*call.span, ctx.dialect.element_id(call.args[0].text_in(ctx.text)))]
    return []


def element_id_seek(op: A.BinaryOp, ctx: Context) -> list[Edit]:
    """`elementId(n) = e` -> `id(n) = toInteger(e)` (either side); `elementId(n) IN e` likewise."""
    if op.op not in ("=", "IN"):
        return []
    sides = [(op.left, op.right)] + ([(op.right, op.left)] if op.op == "=" else [])
    for call, other in sides:
        if (isinstance(call, A.FunctionCall) and call.lower_name == "elementid" and len(call.args) == 1
                and isinstance(call.args[0], A.Variable)):
            converted = "toInteger({})" if op.op == "=" else "[__x IN {} | toInteger(__x)]"
            head, tail = converted.split("{}")
            return [(*call.span, ctx.dialect.node_index(call.args[0].text_in(ctx.text))),
                    (other.span[0], other.span[0], head), (other.span[1], other.span[1], tail)]
    return []


def local_datetime(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    if call.lower_name == "datetime":
        return [(*call.name_span, "localdatetime")]
    if (call.lower_name == "date" and len(call.args) == 1 and isinstance(call.args[0], A.FunctionCall)
            and call.args[0].lower_name in ("datetime", "localdatetime") and not call.args[0].args):
        return [(*call.span, "date()")]
    return []


def any_property(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    """On maps (what virtual entities bind as)."""
    if call.lower_name == "apoc.any.property" and len(call.args) == 2:
        return [(*call.span, f"({call.args[0].text_in(ctx.text)})[{call.args[1].text_in(ctx.text)}]")]
    return []


def value_type_call(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    if call.lower_name == "valuetype" and len(call.args) == 1:
        return [(*call.span, value_type(call.args[0].text_in(ctx.text)))]
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


def similarity(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    if call.lower_name in SIMILARITY and len(call.args) == 2:
        a, b = (_vector(arg, ctx.text) for arg in call.args)
        return [(*call.span, SIMILARITY[call.lower_name].format(a=a, b=b))]
    return []


def _vector(arg: A.Expr, text: str) -> str:
    """A FalkorDB vector: lists (parameters, literals) are converted; a stored property (or a
    variable holding one) may be either (`set_vector` stores vecf32, a plain SET a list), and
    `vecf32` of a vector fails, so it is converted only when it is not one (in a comprehension:
    FalkorDB's CASE would run `vecf32` on both)."""
    if isinstance(arg, (A.Parameter, A.ListLiteral)):
        return f"vecf32({arg.text_in(text)})"
    value = arg.text_in(text)
    return (f"([__v IN [{value}] WHERE typeOf(__v) = 'Vectorf32' | __v]"
            f" + [__v IN [{value}] WHERE typeOf(__v) <> 'Vectorf32' | vecf32(__v)])[0]")


def set_vector(call: A.CallProcedure, ctx: Context) -> list[Edit]:
    """`CALL db.create.setNodeVectorProperty(n, 'key', v)` (setRelationshipVectorProperty alike)
    -> `SET n.key = vecf32(v)` (FalkorDB's vector index only indexes vecf32 values; the key must
    be a string literal)."""
    args = call.args or ()
    if call.name.lower() not in SET_VECTOR_PROCEDURES or len(args) != 3 or call.yields is not None \
            or not isinstance(args[1], A.Literal) or not isinstance(args[1].value, str):
        return []
    node, _, vector = args
    return [(*call.span, f"SET {node.text_in(ctx.text)}.{quote_name(args[1].value)} = vecf32({vector.text_in(ctx.text)})")]


# ---------------------------------------------------------------- labels

def label_test(node: A.LabelPredicate, ctx: Context) -> list[Edit]:
    if A.legacy_labels(node.labels):
        return []
    return [(*node.span, "(" + label_predicate(node.expr.text_in(ctx.text), node.labels) + ")")]


def match_labels(match: A.Match, ctx: Context) -> list[Edit]:
    """Move label expressions FalkorDB cannot parse out of MATCH node patterns into its WHERE."""
    edits: list[Edit] = []
    predicates: list[str] = []
    for node in match.pattern.find_all(A.NodePattern):
        if A.legacy_labels(node.labels):
            continue
        start = node.var.span[1] if node.var else node.span[0] + 1
        var = node.var.name if node.var else ctx.fresh("l")
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


# ---------------------------------------------------------------- CREATE, CALL

def create_parameters(create: A.Create, ctx: Context) -> list[Edit]:
    """Move `$props` out of CREATE patterns into a `SET var = $props` after the clause."""
    edits: list[Edit] = []
    assignments: list[str] = []
    for element in create.pattern.walk():
        if isinstance(element, (A.NodePattern, A.RelPattern)) and isinstance(element.properties, A.Parameter):
            var = element.var.name if element.var else ctx.fresh("l")
            if element.var is None:
                opening = ctx.text.index("(" if isinstance(element, A.NodePattern) else "[", *element.span) + 1
                edits.append((opening, opening, var))
            edits.append((*element.properties.span, ""))
            assignments.append(f"{quote_name(var)} = ${quote_name(element.properties.name)}")
    if assignments:
        edits.append((create.span[1], create.span[1], " SET " + ", ".join(assignments)))
    return edits


def call_scope(node: A.CallSubquery, ctx: Context) -> list[Edit]:
    """`CALL (a, b) {` -> `CALL { WITH a, b`; `CALL () {` -> `CALL {`; IN TRANSACTIONS dropped. A
    body that is a UNION imports the variables at the start of each of its parts (FalkorDB's
    importing WITH is per part, as in Neo4j's old form)."""
    edits = [(*node.in_transactions.span, "")] if node.in_transactions is not None else []
    if node.scope is None:
        return edits
    tokens = [t for t in tokenize(ctx.text[node.span[0]:node.query.span[0]]) if t.kind == OP]
    opening = next((t for t in tokens if t.value == "("), None)
    brace = next((t for t in reversed(tokens) if t.value == "{"), None)
    if opening is None or brace is None:
        return edits
    scope = "*" if node.scope == ("*",) else ", ".join(v.text_in(ctx.text) for v in node.scope)
    head = (node.span[0] + opening.start, node.span[0] + brace.end)
    if len(node.query.parts) == 1:
        return edits + [(*head, f"{{ WITH {scope} " if scope else "{ ")]
    return edits + [(*head, "{")] + [(part.span[0], part.span[0], f"WITH {scope} ")
                                     for part in node.query.parts if scope]


# ---------------------------------------------------------------- EXISTS, COUNT

def exists_function(node: A.FunctionCall, ctx: Context) -> list[Edit]:
    if node.lower_name == "exists" and len(node.args) == 1 and isinstance(node.args[0], A.PatternExpr):
        return _exists(node, node.args[0].path, None, ctx)
    return []


def subquery(node: A.ExistsSubquery | A.CountSubquery, ctx: Context) -> list[Edit]:
    pattern, where = node.pattern, node.where
    if node.query is not None:
        clauses = node.query.parts[0].clauses if len(node.query.parts) == 1 else ()
        if len(clauses) != 1 or not isinstance(clauses[0], A.Match) or clauses[0].optional:
            return []
        pattern, where = clauses[0].pattern, clauses[0].where
    if pattern is None or len(pattern.paths) != 1 or pattern.paths[0].var is not None:
        return []
    if isinstance(node, A.CountSubquery):
        return [] if _in_filter(node, ctx) else [(*node.span, f"size([{unique_body(pattern.paths[0], where, ctx)} | 1])")]
    return _exists(node, pattern.paths[0], where, ctx)


def _in_filter(node: A.Node, ctx: Context) -> bool:
    """Whether `node` is inside a MATCH's or WITH's WHERE (computed once per query)."""
    if "filters" not in ctx.memo:
        ctx.memo["filters"] = {id(n) for clause in ctx.query.walk() if isinstance(clause, (A.Match, A.With))
                               and clause.where for n in clause.where.walk()}
    return id(node) in ctx.memo["filters"]


def _exists(node: A.Node, path: A.PathPattern, where: A.Expr | None, ctx: Context) -> list[Edit]:
    """EXISTS as a pattern predicate (in a WHERE) or a pattern comprehension (elsewhere)."""
    if not _in_filter(node, ctx):
        return [(*node.span, f"(size([{unique_body(path, where, ctx)} | 1]) > 0)")]
    if where is not None:
        return []
    inside = {id(n) for n in node.walk()}
    outside = {n.name for n in ctx.query.walk() if isinstance(n, A.Variable) and id(n) not in inside}
    elements = tuple(replace(e, var=None) if getattr(e, "var", None) is not None and e.var.name not in outside
                     else e for e in path.elements)
    return [(*node.span, render(replace(path, elements=elements)))]


#: `(n:A $props)` / `[r:T $props]`: an opening bracket, a variable and labels, then a parameter.
#: Possessive quantifiers: an attempt never backtracks, so the whole scan is linear.
_PARAMETER_PROPERTIES = r"[(\[]\s*+(?:\w++|`[^`]*+`)?\s*+(?::\s*+(?:\w++|`[^`]*+`)\s*+)*+\$"
#: A label expression beyond `:A:B` (`:A|B`, `:!A`, `:A&B`, `:%`, `:$(...)`).
_LABEL_WORDS = ("|", "&", "!", "%", "$(", "$any(", "$all(")
_LABELS = r":\s*[!%(]|:\s*(?:\w+|`[^`]*`)\s*[|&]|\$(?:any|all)?\("

RULES = (
    Rule(A.FunctionCall, element_id, ("elementid",), r"elementid\s*\("),
    Rule(A.BinaryOp, element_id_seek, ("elementid",), r"elementid\s*\("),
    Rule(A.FunctionCall, local_datetime, ("datetime",), r"datetime\s*\("),
    Rule(A.FunctionCall, value_type_call, ("valuetype",), r"valuetype\s*\("),
    Rule(A.FunctionCall, similarity, ("vector.similarity.",), r"vector\.similarity\.\w+\s*\(", Capability.VECTORS),
    Rule(A.FunctionCall, any_property, ("apoc.any.property",), r"apoc\.any\.property\s*\(", Capability.APOC),
    Rule(A.FunctionCall, exists_function, ("exists",), r"exists\s*\("),
    Rule(A.ExistsSubquery, subquery, ("exists",), r"exists\s*\{"),
    Rule(A.CountSubquery, subquery, ("count",), r"count\s*\{"),
    Rule(A.LabelPredicate, label_test, _LABEL_WORDS, _LABELS),
    Rule(A.Match, match_labels, _LABEL_WORDS, _LABELS),
    Rule(A.CallSubquery, call_scope, ("call", "transactions"),
         r"call\s*\(|\bin\s+(?:\d+\s+concurrent\s+)?transactions\b"),
    Rule(A.Create, create_parameters, ("create",), _PARAMETER_PROPERTIES),
    Rule(A.CallProcedure, set_vector, ("setnodevectorproperty", "setrelationshipvectorproperty"),
         r"set(?:node|relationship)vectorproperty", Capability.VECTORS),
)
