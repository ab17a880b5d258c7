"""Semantic analysis of variables, as Neo4j's compiler does it, for a database that does less.

FalkorDB accepts queries Neo4j refuses and answers them wrongly, silently: `WITH true AS n
MATCH (n) RETURN n` returns `true`; `CREATE (n:Foo)-[:T1]->(), (n:Bar)-[:T2]->()` drops `:Bar`;
`MATCH (n) DELETE n RETURN n.num` reads a deleted node. `check(query)` refuses them with Neo4j's
errors (`Neo.ClientError.Statement.SyntaxError`, "Variable `n` already declared", "Type mismatch:
expected Node but was Boolean"), knowing nothing but the tree:

- a variable declared again: a path variable that is bound already, or used inside its own
  path; in CREATE or MERGE a bound node with labels or properties, a bound node alone, a
  bound relationship;
- a variable used as another kind than it is bound as (node, relationship, path, a literal
  value), across clauses and across the paths of one pattern;
- a function or a property read whose argument's kind is known and wrong (`type(n)` of a node,
  `length(r)`, `size(p)`, `p.name` of a path, `WHERE n` of a node), a pattern expression used as
  a value (`RETURN size((a)-->())`: Neo4j 5 allows patterns only as predicates);
- properties or labels of an entity deleted earlier in the query (Neo4j fails at run time; the
  database here would answer with the values it had);
- after `RETURN DISTINCT` / `WITH DISTINCT`, an ORDER BY on a variable that is not projected;
- an aggregating expression that reads a variable or property outside its aggregate which is not
  a grouping key (`RETURN me.age + count(you)`: Neo4j refuses what FalkorDB groups silently), or
  an aggregate of `rand()`;
- a pattern predicate that introduces variables (`WHERE (n)-[r]->(a)` with `a` new), a parameter
  as the properties of a MATCH or MERGE pattern (`MATCH (n $param)`), a SKIP or LIMIT that reads
  variables or is a negative or fractional literal, a DELETE of a label or of a literal value;
- operands whose type the text tells and Neo4j refuses while compiling (`NOT 0`, `1 IN true`,
  `static_types.py`).

`suspect(text)` is the cheap test the planner runs before parsing: a query it clears cannot fail
any of these checks.
"""

from __future__ import annotations

import re
from typing import Iterator, Optional

from core.errors import CypherError, syntax_error

from . import ast as A
from .scope import NODE, NODE_LIST, PATH, RELATIONSHIP, RELATIONSHIP_LIST, VALUE, bindings
from . import static_types
from .tokens import after_first
from .render import render

#: Neo4j's name of a kind of variable, or of a literal's type.
_SHOWN = {NODE: "Node", RELATIONSHIP: "Relationship", PATH: "Path",
          RELATIONSHIP_LIST: "List<Relationship>", NODE_LIST: "List<Node>"}
_ENTITIES = (NODE, RELATIONSHIP, PATH)


def _literal_kind(expr: A.Expr) -> str:
    """The type name of a literal projected by WITH (what a conflict message shows), else VALUE."""
    if isinstance(expr, A.Literal) and expr.value is not None:
        return {bool: "Boolean", int: "Integer", float: "Float", str: "String"}[type(expr.value)]
    if isinstance(expr, A.ListLiteral):
        return "List"
    if isinstance(expr, A.MapLiteral):
        return "Map"
    return VALUE


def _shown(kind: str) -> str:
    return _SHOWN.get(kind, kind)


def _declared(name: str) -> CypherError:
    return syntax_error(f"Variable `{name}` already declared")


def _mismatch(expected: str, kind: str) -> CypherError:
    return syntax_error(f"Type mismatch: expected {expected} but was {_shown(kind)}")


# ---------------------------------------------------------------- scope

def _after(clause: A.Clause, scope: dict[str, str]) -> dict[str, str]:
    """`ast.bindings`, with the type of a literal a WITH projects kept for the messages."""
    out = bindings(clause, scope)
    if isinstance(clause, A._Projection):
        for item in clause.items:
            if item.alias is not None and out.get(item.alias) == VALUE:
                out[item.alias] = _literal_kind(item.expr)
    return out


# ---------------------------------------------------------------- patterns

def _element_kind(element) -> str:
    if isinstance(element, A.NodePattern):
        return NODE
    return RELATIONSHIP if element.length is None else RELATIONSHIP_LIST


def _fits(bound: str, wanted: str) -> bool:
    """Whether a variable bound as `bound` can stand where a `wanted` pattern element is."""
    if bound == wanted or bound == VALUE:
        return True
    return wanted == RELATIONSHIP_LIST and bound == "List"


def _check_pattern(paths, scope: dict[str, str], creating: bool, clause: str = "CREATE") -> None:
    """One MATCH/CREATE/MERGE pattern against the variables bound before it."""
    own: dict[str, str] = {}               # declared by this pattern, in order
    for path in paths:
        if clause != "CREATE" and any(isinstance(e.properties, A.Parameter) for e in _elements(path.elements)
                                      if not isinstance(e, A.PathPattern)):
            raise syntax_error(f"Parameter maps cannot be used in `{clause}` patterns (use a literal map "
                               "instead, e.g. `{id: $param.id}`)")
        if path.var is not None:
            if path.var.name in scope or path.var.name in own:
                raise _declared(path.var.name)
            own[path.var.name] = PATH
        elements = [e for e in _elements(path.elements)]
        for element in elements:
            if element.var is None:
                continue
            name, kind = element.var.name, _element_kind(element)
            if path.var is not None and name == path.var.name:
                raise _declared(name)
            known = own.get(name, scope.get(name))
            if known is not None and not _fits(known, kind):
                raise _mismatch(_shown(kind), known)
            if creating and known is not None:
                alone = len(elements) == 1
                if kind != NODE or alone or element.labels is not None or element.properties is not None:
                    raise _declared(name)
            own.setdefault(name, kind)


def _elements(elements) -> Iterator:
    for element in elements:
        if isinstance(element, A.QuantifiedPath):
            yield from _elements(element.elements)
        else:
            yield element


# ---------------------------------------------------------------- expressions

#: function -> (what Neo4j expects, the kinds of variable it refuses)
_ARGUMENTS = {"type": ("Relationship", (NODE, PATH)), "length": ("Path", (NODE, RELATIONSHIP)),
              "size": ("String or List", _ENTITIES), "labels": ("Node", (RELATIONSHIP, PATH))}
_READS = ("labels", "keys", "properties")     # type(r) of a deleted relationship is allowed
#: Where a pattern expression is a predicate (Neo4j 5 allows it nowhere else).
_PREDICATE_PARENTS = (A.UnaryOp, A.BinaryOp, A.CaseExpr, A.ListComprehension, A.Quantifier)


def _check_expressions(clause: A.Clause, scope: dict[str, str], deleted: set[str], bound: dict[str, str]) -> None:
    """`bound`: the names bound before the clause or by it."""
    for node, parent in _with_parents(clause):
        static_types.check(node)
        if isinstance(node, A.FunctionCall) and len(node.args) == 1 and isinstance(node.args[0], A.Variable):
            name = node.args[0].name
            expected, refused = _ARGUMENTS.get(node.lower_name, ("", ()))
            if scope.get(name) in refused:
                raise _mismatch(expected, scope[name])
            if node.lower_name in _READS and name in deleted:
                raise _deleted(name)
        elif isinstance(node, A.Property) and isinstance(node.expr, A.Variable):
            name = node.expr.name
            if scope.get(name) == PATH:
                raise _mismatch("Map, Node, Relationship, Point, Duration, Date, Time, LocalTime, "
                                "LocalDateTime or DateTime", PATH)
            if name in deleted:
                raise _deleted(name)
        elif isinstance(node, A.PatternExpr) and not _predicate_position(node, parent, clause):
            raise syntax_error("A pattern expression should only be used in order to test the existence "
                               "of a pattern. It can no longer be used inside the function size(), an "
                               "alternative is to replace size() with COUNT {}.")
        elif isinstance(node, A.PatternExpr) and not (isinstance(parent, A.FunctionCall) and parent.lower_name == "exists"):
            new = [e.var.name for e in _elements(node.path.elements) if e.var is not None and e.var.name not in bound]
            if new and (new := [name for name in new if name not in _inner_names(clause)]):
                raise syntax_error(f"PatternExpressions are not allowed to introduce new variables: '{new[0]}'. "
                                   "Use EXISTS { } to match a pattern with variables of its own.")
    where = getattr(clause, "where", None)
    if isinstance(where, A.Variable) and scope.get(where.name) in _ENTITIES:
        raise _mismatch("Boolean", scope[where.name])


def _inner_names(clause: A.Clause) -> set[str]:
    """Names the clause's comprehensions, quantifiers and reduces bind for their own bodies."""
    names: set[str] = set()
    for node in clause.walk():
        if isinstance(node, (A.ListComprehension, A.Quantifier, A.Reduce)):
            names.add(node.var.name)
        if isinstance(node, A.Reduce):
            names.add(node.acc.name)
        elif isinstance(node, A.PatternComprehension):
            names |= {e.var.name for e in _elements(node.path.elements) if e.var is not None}
    return names


def _predicate_position(node: A.PatternExpr, parent: Optional[A.Node], clause: A.Clause) -> bool:
    if parent is None or parent is clause or isinstance(parent, _PREDICATE_PARENTS):
        return not isinstance(parent, A.BinaryOp) or parent.op in ("AND", "OR", "XOR")
    return isinstance(parent, A.FunctionCall) and parent.lower_name in ("exists", "not")


def _with_parents(clause: A.Clause) -> Iterator[tuple[A.Node, Optional[A.Node]]]:
    """Every expression node of one clause (subqueries and nested clauses excluded) with its parent."""
    stack: list[tuple[A.Node, Optional[A.Node]]] = [(child, clause) for child in clause.children()]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, (A.Query, A.SingleQuery, A.Clause, A._Subquery, A.PatternComprehension)):
            continue
        yield node, parent
        stack.extend((child, node) for child in node.children())


def _deleted(name: str) -> CypherError:
    return CypherError("Neo.ClientError.Statement.EntityNotFound",
                       f"`{name}` is deleted earlier in this query: its properties and labels cannot be "
                       f"read after the DELETE. Read them before it (`WITH {name}, {name}.prop AS prop "
                       f"DELETE {name} RETURN prop`).")


# ---------------------------------------------------------------- aggregation

#: Aggregating functions (lower-case; `std` is the proxy's alias of stDev).
AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp", "std",
                        "percentilecont", "percentiledisc"})
#: Expressions with variables of their own: not looked into.
_SCOPING = (A.ListComprehension, A.Quantifier, A.Reduce, A.PatternComprehension, A._Subquery, A.MapProjection)


def _is_aggregate(node: A.Node) -> bool:
    return isinstance(node, A.CountStar) or (isinstance(node, A.FunctionCall) and node.lower_name in AGGREGATES)


def _aggregating(expr: A.Expr) -> bool:
    return any(_is_aggregate(n) for n in expr.walk())


def _check_aggregation(clause: A._Projection) -> None:
    """Outside its aggregates, an aggregating expression reads only grouping keys: variables
    projected as such, or properties projected (or of such a variable), constants, parameters."""
    for call in (n for item in clause.items for n in item.expr.walk() if _is_aggregate(n)):
        if any(isinstance(n, A.FunctionCall) and n.lower_name == "rand" for n in call.walk()):
            raise syntax_error("Can't use non-deterministic (random) functions inside of aggregate functions.")
    keys = [item for item in clause.items if not _aggregating(item.expr)]
    if len(keys) == len(clause.items) and not any(_aggregating(s.expr) for s in clause.order_by):
        return
    names = {item.expr.name for item in keys if isinstance(item.expr, A.Variable)}
    names |= {item.alias for item in keys if item.alias is not None}
    grouped = {item.expr for item in keys}
    for expr in [item.expr for item in clause.items] + [s.expr for s in clause.order_by]:
        if _aggregating(expr):
            _check_grouped(expr, names, grouped)


def _check_grouped(expr: A.Expr, names: set[str], grouped: set) -> None:
    stack = [expr]
    while stack:
        node = stack.pop()
        if _is_aggregate(node) or isinstance(node, _SCOPING) or (isinstance(node, A.Property) and node in grouped):
            continue
        if isinstance(node, A.Property) and isinstance(node.expr, A.Variable) and node.expr.name in names:
            continue
        if isinstance(node, A.Variable) and node.name not in names:
            raise syntax_error(f"Aggregation column contains implicit grouping expressions: `{node.name}` is read "
                               "outside the aggregation but is not a grouping key. Project it (or the property "
                               "read) as a column of its own, then combine it with the aggregate in a later WITH.")
        stack.extend(node.children())


# ---------------------------------------------------------------- clauses

def _check_counts(clause: A._Projection) -> None:
    """SKIP and LIMIT are constants: no variable, no negative or fractional literal."""
    for keyword, count in (("SKIP", clause.skip), ("LIMIT", clause.limit)):
        if count is None:
            continue
        if any(True for _ in count.find_all(A.Variable)):
            raise syntax_error(f"It is not allowed to refer to variables in {keyword}, so that the value "
                               f"for {keyword} can be statically calculated.")
        if _negative_or_fraction(count):
            raise syntax_error(f"Invalid input. '{render(count)}' is not a valid value. Must be a "
                               "non-negative integer.")


def _negative_or_fraction(count: A.Expr) -> bool:
    """A number literal (signed or not) that is negative or has a fraction."""
    literal = count.operand if isinstance(count, A.UnaryOp) else count
    if static_types.static_type(literal, {}) not in (static_types.FLOAT, static_types.INTEGER) \
            or not isinstance(literal, A.Literal):
        return False
    sign = -1 if isinstance(count, A.UnaryOp) and count.op == "-" else 1
    return isinstance(literal.value, float) or sign * literal.value < 0


def _check_deleted_values(clause: A.Delete) -> None:
    """DELETE takes nodes, relationships and paths: not a label test, not a literal value."""
    for expr in clause.exprs:
        if isinstance(expr, A.LabelPredicate):
            raise syntax_error("Invalid input: DELETE removes nodes, relationships and paths, not labels or "
                               f"types; remove a label with `REMOVE {render(expr)}`.")
        found = static_types.static_type(expr, {})
        if found not in (None, static_types.NULL, static_types.LIST):
            raise syntax_error(f"Type mismatch: expected Node, Path or Relationship but was {found}")

def _check_order_after_distinct(clause: A._Projection, scope: dict[str, str]) -> None:
    if not clause.distinct or clause.star or not clause.order_by:
        return
    columns = {item.alias if item.alias is not None else getattr(item.expr, "name", None) for item in clause.items}
    projected = {item.expr for item in clause.items}
    for sort in clause.order_by:
        if sort.expr in projected:
            continue
        for var in sort.expr.find_all(A.Variable):
            if var.name not in columns and var.name in scope:
                raise syntax_error(f"Variable `{var.name}` not defined: in a projection with DISTINCT, "
                                   "ORDER BY can only refer to the projected columns.")


def _check_part(part: A.SingleQuery, scope: dict[str, str]) -> None:
    deleted: set[str] = set()
    for clause in part.clauses:
        if isinstance(clause, A.Match):
            _check_pattern(clause.pattern.paths, scope, creating=False, clause="MATCH")
        elif isinstance(clause, A.Create):
            _check_pattern(clause.pattern.paths, scope, creating=True)
        elif isinstance(clause, A.Merge):
            _check_pattern((clause.path,), scope, creating=True, clause="MERGE")
        elif isinstance(clause, A.CallSubquery):
            _check_subquery(clause, scope)
        elif isinstance(clause, A.Foreach):
            _check_part(A.SingleQuery(clause.clauses), {**scope, clause.var.name: VALUE})
        after = _after(clause, scope)
        _check_expressions(clause, after if isinstance(clause, A.Match) else scope, deleted, {**scope, **after})
        if isinstance(clause, A._Projection):
            _check_counts(clause)
            _check_order_after_distinct(clause, scope)
            _check_aggregation(clause)
            kept = set(deleted) if clause.star else set()
            deleted = kept | {item.alias or item.expr.name for item in clause.items
                              if isinstance(item.expr, A.Variable) and item.expr.name in deleted}
        elif isinstance(clause, A.Delete):
            _check_deleted_values(clause)
            deleted |= {e.name for e in clause.exprs if isinstance(e, A.Variable)}
        scope = after


def _check_subquery(call: A.CallSubquery, scope: dict[str, str]) -> None:
    """A CALL { } body sees what it imports: its leading WITH's items, or the scope clause's."""
    if call.scope is None:
        inner = scope                       # a leading `WITH a` projects from here; else nothing is read
        first = call.query.parts[0].clauses[0] if call.query.parts[0].clauses else None
        if not isinstance(first, A.With):
            inner = {}
    elif call.scope == ("*",):
        inner = scope
    else:
        inner = {v.name: scope.get(v.name, VALUE) for v in call.scope}
    for part in call.query.parts:
        _check_part(part, inner)


def check(query: A.Query) -> None:
    """Raise Neo4j's error if `query` uses a variable as Neo4j's semantic analysis refuses."""
    for part in query.parts:
        _check_part(part, {})


# ---------------------------------------------------------------- the cheap test

#: Names a query declares: variables opening a pattern element (`(n`, `[r`; any bracket not
#: right after a word, so not a function call), aliases, path variables (the word before `= (`).
#: A query declares no name twice unless one of these repeats. Every regex starts with a literal
#: or a character set, which `re` scans for fast (a leading `\b` or `\w` costs ~100 us a query).
_OPENED = re.compile(r"[(\[]\s*+(\w++)")
_ALIAS = re.compile(r"as\s++(\w++)")
_WORD = re.compile(r"\w").match
_PATH = re.compile(r"=\s*+(?:shortestpath|allshortestpaths)?\s*+\(")
_PATH_NAME = re.compile(r"(\w+)\s*$")
#: (word, regex): a relationship anywhere (a pattern expression may be used as a value; such
#: queries are parsed for the uniqueness bridge anyway), a read after DELETE, a typed function of
#: a variable, ORDER BY after DISTINCT, `WHERE n`.
_OTHER = tuple((word, re.compile(rx)) for word, rx in (
    (")", r"\)\s*+<?-"), ("delete", after_first(r"delete\b", r"\b(?:return|with|set)\b")),
    ("type", r"type\s*+\(\s*+\w++\s*+\)"), ("length", r"length\s*+\(\s*+\w++\s*+\)"),
    ("size", r"size\s*+\(\s*+\w++\s*+\)"), ("labels", r"labels\s*+\(\s*+\w++\s*+\)"),
    ("distinct", after_first(r"distinct\b", r"\border\s++by\b")), ("where", r"where\s++\(?\w++\)?\s*+(?:return|with)\b"),
    # operands of known type (static_types.py): a literal beside a boolean operator or IN, a
    # comprehension over a list literal, a literal argument of properties() or range()
    *((word, r"(?:and|or|xor|not)\s++(?:[\d'\"\[{.]|-\s*+\d)") for word in ("and", "or", "not")),
    *((word, r"[\d'\"\]}]\s++(?:and|or|xor|in)\b") for word in ("and", "or", " in")),
    (" in", r"(?:all|any|none|single|\[)\s*+\(?\s*+\w++\s++in\s*+\["),
    ("properties", r"properties\s*+\(\s*+[\d'\"\[{.-]"),
    ("range", after_first(r"range\s*+\(", r"(?:true|false|'|\"|\[|\{|\d\.|\.\d)", within=")")),
    # a SKIP or LIMIT not a plain integer or parameter, a DELETE of a label or a value, a
    # parameter as a pattern's properties
    *((word, r"(?:skip|limit)\s++(?:-|\d*+\.\d|[^\W\d])") for word in ("skip", "limit")),
    ("delete", r"delete\s++(?:\w++\s*+:|[\d(-])"),
    ("$", r"[(\[]\s*+\w*+\s*+(?::\s*+\w++\s*+)*+\$"), ("rand", r"rand\s*+\(")))


#: An aggregate call; with arithmetic or an ORDER BY in the query it may read a non-grouping key.
_AGGREGATE_CALL = re.compile(r"(?:count|sum|avg|min|max|collect|stdevp?|std|percentile(?:cont|disc))\s*+\(")


def suspect(text: str) -> bool:
    """False when `check` cannot refuse the query (linear scans of the lower-cased text)."""
    lowered = text.lower()
    if any(word in lowered and regex.search(lowered) for word, regex in _OTHER):
        return True
    if any(c in lowered for c in "+-/%^") or " *" in lowered or "* " in lowered or "order" in lowered:
        if "(" in lowered and _AGGREGATE_CALL.search(lowered):
            return True
    names = [m.group(1) for regex in (_OPENED, _ALIAS) for m in regex.finditer(lowered)
             if m.start() == 0 or not _WORD(lowered[m.start() - 1])]
    for found in _PATH.finditer(lowered):
        before = _PATH_NAME.search(lowered, max(0, found.start() - 200), found.start())
        names += [before.group(1)] if before else []
    return len(set(names)) < len(names)
