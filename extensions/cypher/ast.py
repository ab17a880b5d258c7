"""Cypher AST: small immutable node classes, in the style of sqlglot's expression classes.

Every node carries `span=(start, end)`, character offsets into the parsed text, so that
`text[start:end]` is the node's source and a rewriter can splice replacements into the original
query. Spans are excluded from equality: two ASTs are equal when they mean the same query,
wherever their text sits. `walk()` yields a node and all its descendants (pre-order).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Iterator, Optional, Union

Span = tuple[int, int]
NO_SPAN: Span = (0, 0)


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False, kw_only=True)


#: The names of each node class's fields that may hold children (every field but `span`),
#: computed once per class: `dataclasses.fields` is too slow to call per node on every walk.
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(cls)
    if names is None:
        names = _CHILD_FIELDS[cls] = tuple(f.name for f in fields(cls) if f.name != "span")
    return names


def _collect_children(value, into: list["Node"]) -> None:
    if isinstance(value, Node):
        into.append(value)
    elif isinstance(value, tuple):
        for item in value:
            _collect_children(item, into)


@dataclass(frozen=True, slots=True)
class Node:
    """Base class of every AST node."""

    span: Span = _span()

    def children(self) -> list["Node"]:
        """Direct child nodes, in source order (nodes nested in tuples included)."""
        found: list[Node] = []
        for name in _child_fields(type(self)):
            _collect_children(getattr(self, name), found)
        return found

    def walk(self) -> Iterator["Node"]:
        """This node and all its descendants, pre-order."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children()))

    def find_all(self, cls) -> Iterator["Node"]:
        """Every descendant (self included) that is an instance of `cls`."""
        return (n for n in self.walk() if isinstance(n, cls))

    def text_in(self, text: str) -> str:
        """The text this node was parsed from."""
        return text[self.span[0]:self.span[1]]


# ---------------------------------------------------------------- expressions

class Expr(Node):
    """Marker base for expressions."""

    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Literal(Expr):
    """A string, integer, float, boolean or null (None) literal."""

    value: Union[str, int, float, bool, None]


@dataclass(frozen=True, slots=True)
class Variable(Expr):
    name: str


@dataclass(frozen=True, slots=True)
class Parameter(Expr):
    """`$name` or `$0`; name has no '$'."""

    name: str


@dataclass(frozen=True, slots=True)
class ListLiteral(Expr):
    items: tuple


@dataclass(frozen=True, slots=True)
class MapLiteral(Expr):
    """`{k: v, ...}`; items is a tuple of (key, expr) pairs in source order."""

    items: tuple

    def get(self, key: str):
        return next((v for k, v in self.items if k == key), None)


@dataclass(frozen=True, slots=True)
class Property(Expr):
    """`expr.key`."""

    expr: Expr
    key: str


@dataclass(frozen=True, slots=True)
class Index(Expr):
    """`expr[index]`."""

    expr: Expr
    index: Expr


@dataclass(frozen=True, slots=True)
class Slice(Expr):
    """`expr[start..end]`; either bound may be None."""

    expr: Expr
    start: Optional[Expr]
    end: Optional[Expr]


@dataclass(frozen=True, slots=True)
class BinaryOp(Expr):
    """Binary operator; op is upper-case canonical: 'OR' 'XOR' 'AND' '=' '<>' '<' '>' '<=' '>='
    '=~' 'IN' 'STARTS WITH' 'ENDS WITH' 'CONTAINS' '+' '-' '||' '*' '/' '%' '^'."""

    op: str
    left: Expr
    right: Expr


@dataclass(frozen=True, slots=True)
class ComparisonChain(Expr):
    """`a < b <= c` (two or more comparisons): means `a < b AND b <= c`."""

    ops: tuple
    operands: tuple


@dataclass(frozen=True, slots=True)
class UnaryOp(Expr):
    """op is 'NOT', '-' or '+'."""

    op: str
    operand: Expr


@dataclass(frozen=True, slots=True)
class IsNull(Expr):
    expr: Expr
    negated: bool = False


@dataclass(frozen=True, slots=True)
class IsType(Expr):
    """`expr IS [NOT] :: TYPE`; the type is kept as normalised text."""

    expr: Expr
    type_name: str
    negated: bool = False


@dataclass(frozen=True, slots=True)
class LabelPredicate(Expr):
    """`n:A:B` or `n:A|B` used as an expression."""

    expr: Expr
    labels: "LabelExpr"


@dataclass(frozen=True, slots=True)
class FunctionCall(Expr):
    """`name(args)`; name keeps its namespace ('apoc.meta.data') and source spelling."""

    name: str
    args: tuple
    distinct: bool = False
    name_span: Span = _span()

    @property
    def lower_name(self) -> str:
        return self.name.lower()


@dataclass(frozen=True, slots=True)
class CountStar(Expr):
    """`count(*)`."""


@dataclass(frozen=True, slots=True)
class CaseExpr(Expr):
    """`CASE [subject] WHEN a THEN b ... [ELSE d] END`; whens is a tuple of (when, then)."""

    subject: Optional[Expr]
    whens: tuple
    default: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class ListComprehension(Expr):
    """`[var IN source WHERE where | projection]`."""

    var: "Variable"
    source: Expr
    where: Optional[Expr] = None
    projection: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class PatternComprehension(Expr):
    """`[p = (a)-->(b) WHERE where | projection]`."""

    path: "PathPattern"
    where: Optional[Expr]
    projection: Expr


@dataclass(frozen=True, slots=True)
class Quantifier(Expr):
    """`all|any|none|single(var IN source WHERE where)`; kind is lower-case."""

    kind: str
    var: "Variable"
    source: Expr
    where: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class Reduce(Expr):
    """`reduce(acc = init, var IN source | expr)`."""

    acc: "Variable"
    init: Expr
    var: "Variable"
    source: Expr
    expr: Expr


@dataclass(frozen=True, slots=True)
class MapProjectionItem(Node):
    """One map projection element. kind: 'property' (`.key`), 'all' (`.*`),
    'variable' (`var`, key=var name), 'literal' (`key: expr`)."""

    kind: str
    key: Optional[str] = None
    expr: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class MapProjection(Expr):
    """`var {.a, .*, b: expr, c}`."""

    var: "Variable"
    items: tuple


@dataclass(frozen=True, slots=True)
class PatternExpr(Expr):
    """A relationship pattern used as a predicate or list: `(a)-[:R]->(b)`."""

    path: "PathPattern"


@dataclass(frozen=True, slots=True)
class _Subquery(Expr):
    """Body is either a full `query` or a `pattern` with an optional `where`."""

    query: Optional["Query"] = None
    pattern: Optional["Pattern"] = None
    where: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class ExistsSubquery(_Subquery):
    """`EXISTS { ... }`."""


@dataclass(frozen=True, slots=True)
class CountSubquery(_Subquery):
    """`COUNT { ... }`."""


@dataclass(frozen=True, slots=True)
class CollectSubquery(_Subquery):
    """`COLLECT { ... }`."""


# ---------------------------------------------------------------- label expressions

class LabelExpr(Node):
    __slots__ = ()

    def names(self) -> list[str]:
        """Every label/type name mentioned, in order."""
        return [n.name for n in self.walk() if isinstance(n, LabelName)]


@dataclass(frozen=True, slots=True)
class LabelName(LabelExpr):
    name: str


@dataclass(frozen=True, slots=True)
class DynamicLabel(LabelExpr):
    """`$(expr)`, `$any(expr)` or `$all(expr)` (Neo4j 5.26): labels or types computed per row;
    expr is a string or a list of strings. mode is 'all' or 'any'."""

    expr: Expr
    mode: str = "all"


@dataclass(frozen=True, slots=True)
class LabelWildcard(LabelExpr):
    """`%`: any label."""


@dataclass(frozen=True, slots=True)
class LabelNot(LabelExpr):
    operand: LabelExpr


@dataclass(frozen=True, slots=True)
class LabelAnd(LabelExpr):
    """`A&B` (op '&') or legacy `:A:B` (op ':')."""

    left: LabelExpr
    right: LabelExpr
    op: str = "&"


@dataclass(frozen=True, slots=True)
class LabelOr(LabelExpr):
    left: LabelExpr
    right: LabelExpr


def legacy_labels(labels: Optional[LabelExpr]) -> bool:
    """No labels, `:A` or `:A:B`: the label syntax older Cypher dialects (FalkorDB's) understand."""
    if labels is None or isinstance(labels, LabelName):
        return True
    return (isinstance(labels, LabelAnd) and labels.op == ":" and legacy_labels(labels.left)
            and legacy_labels(labels.right))


# ---------------------------------------------------------------- patterns

@dataclass(frozen=True, slots=True)
class NodePattern(Node):
    var: Optional[Variable] = None
    labels: Optional[LabelExpr] = None
    properties: Optional[Expr] = None     # MapLiteral or Parameter
    where: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class RelPattern(Node):
    """direction: 'right' (-->), 'left' (<--), 'both' (<-->) or 'none' (--).
    length: None (exactly one hop) or (min, max) with None for an open bound (`*` = (None, None))."""

    var: Optional[Variable] = None
    types: Optional[LabelExpr] = None
    direction: str = "none"
    length: Optional[tuple] = None
    properties: Optional[Expr] = None
    where: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class QuantifiedPath(Node):
    """A quantified path pattern `((a)-->(b) WHERE ...){1,3}` or quantified relationship
    `-[r]->+`; quantifier is (min, max) with None for open."""

    elements: tuple
    quantifier: tuple
    where: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class PathPattern(Node):
    """`[var =] [shortest(] elements [)]`; elements alternate nodes and relationships (or
    QuantifiedPath). shortest is None or the function/keyword as written, lower-cased
    ('shortestpath', 'allshortestpaths', or a GQL form like 'any shortest')."""

    elements: tuple
    var: Optional[Variable] = None
    shortest: Optional[str] = None


@dataclass(frozen=True, slots=True)
class Pattern(Node):
    """Comma-separated path patterns."""

    paths: tuple


# ---------------------------------------------------------------- clauses

class Clause(Node):
    __slots__ = ()


@dataclass(frozen=True, slots=True)
class Match(Clause):
    pattern: Pattern
    optional: bool = False
    where: Optional[Expr] = None
    hints: tuple = ()             # raw text of USING ... hints
    search: Optional["VectorSearch"] = None


@dataclass(frozen=True, slots=True)
class VectorSearch(Node):
    """Cypher 25's `SEARCH var IN (VECTOR INDEX index FOR query [WHERE where] LIMIT limit)
    [SCORE AS score]`, a part of the MATCH before it."""

    var: "Variable"
    index: str
    query: Expr
    limit: Expr
    where: Optional[Expr] = None
    score: Optional["Variable"] = None


@dataclass(frozen=True, slots=True)
class Unwind(Clause):
    expr: Expr
    var: Variable


@dataclass(frozen=True, slots=True)
class ReturnItem(Node):
    """`expr [AS alias]`; alias_span covers the alias name when present."""

    expr: Expr
    alias: Optional[str] = None
    alias_span: Optional[Span] = field(default=None, compare=False, repr=False, kw_only=True)

    def name(self, text: str) -> str:
        """The column name: the alias, else the expression's text (as Neo4j names columns)."""
        return self.alias if self.alias is not None else self.expr.text_in(text)


@dataclass(frozen=True, slots=True)
class SortItem(Node):
    expr: Expr
    descending: bool = False


@dataclass(frozen=True, slots=True)
class _Projection(Clause):
    items: tuple
    star: bool = False            # `RETURN *` / `WITH *, x`
    distinct: bool = False
    order_by: tuple = ()
    skip: Optional[Expr] = None
    limit: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class With(_Projection):
    where: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class Return(_Projection):
    pass


@dataclass(frozen=True, slots=True)
class YieldItem(Node):
    """`field [AS alias]` in CALL ... YIELD."""

    field: str
    alias: Optional[str] = None

    @property
    def name(self) -> str:
        return self.alias or self.field


@dataclass(frozen=True, slots=True)
class CallProcedure(Clause):
    """`CALL name(args) YIELD items WHERE ...`; args is None for `CALL name` without parens."""

    name: str
    args: Optional[tuple] = None
    yields: Optional[tuple] = None      # None: no YIELD; () with yield_star for YIELD *
    yield_star: bool = False
    where: Optional[Expr] = None
    optional: bool = False
    name_span: Span = _span()


@dataclass(frozen=True, slots=True)
class InTransactions(Node):
    """`IN [n CONCURRENT] TRANSACTIONS [OF batch ROWS] [ON ERROR x] [REPORT STATUS AS var]`."""

    batch: Optional[Expr] = None
    concurrency: Optional[Expr] = None
    concurrent: bool = False
    on_error: Optional[str] = None
    report: Optional[Variable] = None


@dataclass(frozen=True, slots=True)
class CallSubquery(Clause):
    """`[OPTIONAL] CALL [(scope)] { query } [IN TRANSACTIONS ...]`.
    scope None: no scope clause; a tuple of Variables, or ('*',) for `CALL (*)`."""

    query: "Query"
    scope: Optional[tuple] = None
    in_transactions: Optional[InTransactions] = None
    optional: bool = False


@dataclass(frozen=True, slots=True)
class Create(Clause):
    pattern: Pattern


@dataclass(frozen=True, slots=True)
class SetItem(Node):
    """kind: 'property' (target is Property, op '='), 'variable' (target Variable, op '=' or
    '+='), 'labels' (target Variable, labels LabelExpr)."""

    kind: str
    target: Expr
    value: Optional[Expr] = None
    op: str = "="
    labels: Optional[LabelExpr] = None


@dataclass(frozen=True, slots=True)
class SetClause(Clause):
    items: tuple


@dataclass(frozen=True, slots=True)
class MergeAction(Node):
    """`ON CREATE SET ...` (on='CREATE') or `ON MATCH SET ...` (on='MATCH')."""

    on: str
    items: tuple


@dataclass(frozen=True, slots=True)
class Merge(Clause):
    path: PathPattern
    actions: tuple = ()


@dataclass(frozen=True, slots=True)
class RemoveItem(Node):
    """kind 'property' (target Property) or 'labels' (target Variable, labels)."""

    kind: str
    target: Expr
    labels: Optional[LabelExpr] = None


@dataclass(frozen=True, slots=True)
class Remove(Clause):
    items: tuple


@dataclass(frozen=True, slots=True)
class Delete(Clause):
    exprs: tuple
    detach: bool = False


@dataclass(frozen=True, slots=True)
class Foreach(Clause):
    var: Variable
    source: Expr
    clauses: tuple


#: The clauses that change the graph (a CALL of a writing procedure aside: the text cannot tell).
UPDATING = (Create, Merge, SetClause, Remove, Delete, Foreach)


@dataclass(frozen=True, slots=True)
class Use(Clause):
    """`USE graph`; graph is the graph reference as written (e.g. 'neo4j', 'composite.part')."""

    graph: str


@dataclass(frozen=True, slots=True)
class LoadCSV(Clause):
    source: Expr
    var: Variable
    with_headers: bool = False
    field_terminator: Optional[str] = None


@dataclass(frozen=True, slots=True)
class Finish(Clause):
    """`FINISH` (Neo4j 5): end a query without returning rows."""


@dataclass(frozen=True, slots=True)
class Command(Clause):
    """A schema/admin command (CREATE INDEX, SHOW ..., DROP ...) kept opaque.
    keyword is the leading words upper-cased, e.g. 'SHOW PROCEDURES', 'CREATE INDEX'."""

    keyword: str
    text: str


# ---------------------------------------------------------------- schema and admin commands

@dataclass(frozen=True, slots=True)
class Show(Clause):
    """`SHOW <what> [YIELD items|* [ORDER BY ..] [SKIP n] [LIMIT n]] [WHERE expr]`, followed
    in its SingleQuery by an optional RETURN. what is the normalised phrase ('INDEXES',
    'DATABASES', 'CURRENT USER', ...); kind the filter word before it ('VECTOR', 'UNIQUE',
    'BUILT IN', or None); argument the name in `SHOW DATABASE name`."""

    what: str
    kind: Optional[str] = None
    argument: Optional[Expr] = None
    yields: Optional[tuple] = None      # YieldItems; None: no YIELD; () with yield_star
    yield_star: bool = False
    order_by: tuple = ()
    skip: Optional[Expr] = None
    limit: Optional[Expr] = None
    where: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class SchemaTarget(Node):
    """`FOR (n:L)` / `FOR ()-[r:T]-()` and its properties: entity 'node' or 'relationship';
    labels (several only for FULLTEXT `:A|B`); properties in the order given."""

    entity: str
    variable: str
    labels: tuple
    properties: tuple


@dataclass(frozen=True, slots=True)
class CreateIndex(Clause):
    """`CREATE [kind] INDEX [name] [IF NOT EXISTS] FOR ... ON ... [OPTIONS {...}]`.
    kind: 'RANGE' (also plain and BTREE), 'TEXT', 'POINT', 'VECTOR' or 'FULLTEXT'.
    name: a str, a Parameter or None."""

    kind: str
    name: Optional[object]
    if_not_exists: bool
    target: SchemaTarget
    options: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class CreateConstraint(Clause):
    """`CREATE CONSTRAINT [name] [IF NOT EXISTS] FOR ... REQUIRE ... IS <kind>`.
    kind: 'UNIQUE', 'KEY', 'NOT NULL' or 'TYPE' (type_name then holds the type)."""

    name: Optional[object]
    if_not_exists: bool
    target: SchemaTarget
    kind: str
    type_name: Optional[str] = None
    options: Optional[Expr] = None


@dataclass(frozen=True, slots=True)
class DropSchema(Clause):
    """`DROP INDEX name [IF EXISTS]` (what 'INDEX') or `DROP CONSTRAINT name [IF EXISTS]`."""

    what: str
    name: object
    if_exists: bool = False


# ---------------------------------------------------------------- queries

@dataclass(frozen=True, slots=True)
class SingleQuery(Node):
    clauses: tuple


@dataclass(frozen=True, slots=True)
class Query(Node):
    """parts: single queries joined by UNION; union_all[i] says whether parts[i] and
    parts[i+1] are joined by UNION ALL. prefix is None, 'EXPLAIN' or 'PROFILE'; options the
    `CYPHER ...` text before it (None when absent)."""

    parts: tuple
    union_all: tuple = ()
    prefix: Optional[str] = None
    #: The `CYPHER 5` / `CYPHER runtime=parallel ...` options before the statement, as written.
    options: Optional[str] = None

    @property
    def clauses(self) -> tuple:
        """The clauses of a query without UNION (the common case)."""
        if len(self.parts) != 1:
            raise ValueError("query has UNION parts; use .parts")
        return self.parts[0].clauses
