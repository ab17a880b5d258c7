"""What a bridge rule is: a pure function of one AST node and the query's context."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from core.dialect import Capability, Dialect

from ..cypher import ast as A
from ..cypher.splice import splice
from .temporal_text import canonical

TEMPORAL_KINDS = frozenset({"date", "localtime", "localdatetime", "datetime"})

Edit = tuple[int, int, str]
UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"
#: A parameter the planner computes from the client's parameters before the query runs.
Derived = Callable[[dict[str, Any]], Any]


#: Functions a rule may write out again: Cypher's own (an extension call is replaced by the
#: planner, an aggregate is matched to its column by its text, so a copy of either would miss).
BUILTINS = frozenset({
    "date", "datetime", "localdatetime", "localtime", "duration", "coalesce", "head", "last",
    "size", "length", "tointeger", "tofloat", "tostring", "toboolean", "id", "abs", "ceil", "floor",
    "round", "sqrt", "sign", "log", "log10", "exp", "tolower", "toupper", "trim", "substring",
    "replace", "left", "right", "split", "labels", "type", "keys", "properties"})


def copyable(expr: A.Expr) -> bool:
    """Whether a rule may write `expr` out more than once (`copy`): Cypher's own functions
    (BUILTINS) only, no temporal parameter (`temporal.py` replaces it when the query runs), and
    no CASE (a copy outside it would evaluate the branch the CASE does not take)."""
    return not any(isinstance(n, (A.CountStar, A.PatternExpr, A.PatternComprehension, A.ExistsSubquery,
                                  A.CountSubquery, A.CaseExpr)) or isinstance(n, A.FunctionCall)
                   and (n.lower_name not in BUILTINS or n.lower_name in TEMPORAL_KINDS
                        and any(isinstance(a, A.Parameter) for a in n.args)) for n in expr.walk())


AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "collect", "stdev", "stdevp",
                        "percentilecont", "percentiledisc"})


def aggregates(expr: A.Expr) -> bool:
    """Whether `expr` holds an aggregate (FalkorDB refuses one inside a list comprehension)."""
    return any(isinstance(n, A.CountStar) or isinstance(n, A.FunctionCall) and n.lower_name in AGGREGATES
               for n in expr.walk())


def numeric_variables(query: A.Query, numeric: Callable[[A.Expr, frozenset[str]], bool]) -> frozenset[str]:
    """Variables that only ever hold what `numeric(expr, names)` accepts: `UNWIND range(...) AS v`
    and WITH aliases of such values (a later binding of the name to something else drops it, and
    a name that is also a list comprehension's, quantifier's or reduce's variable is never one)."""
    names: set[str] = set()
    nodes = list(query.walk())
    inner = {n.var.name for n in nodes if isinstance(n, (A.ListComprehension, A.Quantifier, A.Reduce))}
    inner |= {n.acc.name for n in nodes if isinstance(n, A.Reduce)}
    for node in nodes:
        if isinstance(node, A.Unwind):
            is_range = isinstance(node.expr, A.FunctionCall) and node.expr.lower_name == "range"
            (names.add if is_range else names.discard)(node.var.name)
        elif isinstance(node, (A.With, A.Return)):
            for item in node.items:
                if item.alias:
                    (names.add if numeric(item.expr, frozenset(names)) else names.discard)(item.alias)
    return frozenset(names - inner)


def copy(expr: A.Expr, ctx: "Context") -> str:
    """The text of a `copyable` expression as FalkorDB must see it: `datetime(...)` as
    `localdatetime(...)` and temporal strings in the form FalkorDB reads (the edits `spelling.py`
    and `temporal.py` make to the original)."""
    edits = []
    for node in expr.walk():
        if isinstance(node, A.FunctionCall) and node.lower_name in TEMPORAL_KINDS:
            if node.lower_name == "datetime":
                edits.append((*node.name_span, "localdatetime"))
            if len(node.args) == 1 and isinstance(node.args[0], A.Literal) and isinstance(node.args[0].value, str):
                try:
                    edits.append((*node.args[0].span, "'" + canonical(node.args[0].value, node.lower_name)[0] + "'"))
                except ValueError:
                    pass                          # refused by temporal.py
    start = expr.span[0]
    return splice(ctx.text[start:expr.span[1]], [((a - start, b - start), new) for a, b, new in edits])


@dataclass
class Context:
    """One query being bridged: its text and tree, fresh names, derived parameters and edits
    that depend on a parameter's type."""

    text: str
    query: A.Query
    names: Iterator[str]
    #: the backend's dialect (its binding forms: how a rule writes a node's id)
    dialect: Dialect
    derived: dict[str, Derived] = field(default_factory=dict)
    #: rewrites to run on the text once every edit is applied (see `bridges.after_edits`)
    after: set[str] = field(default_factory=set)
    #: edits that apply only when the named parameter holds a date or date-time
    conditional: dict[str, list[Edit]] = field(default_factory=dict)
    #: returned columns that are zoned date-times: index -> None, or the parameter that decides
    zoned: dict[int, str | None] = field(default_factory=dict)
    #: why the query may be refused while it runs (see `refuse_when`)
    refusals: list[str] = field(default_factory=list)
    #: per-query facts rules share, computed once (`numbers`)
    memo: dict[Any, Any] = field(default_factory=dict)

    def numbers(self, numeric: Callable[[A.Expr, frozenset[str]], bool]) -> frozenset[str]:
        """`numeric_variables(self.query, numeric)`, once per query."""
        if numeric not in self.memo:
            self.memo[numeric] = numeric_variables(self.query, numeric)
        return self.memo[numeric]

    def fresh(self, stem: str) -> str:
        return f"__{stem}{next(self.names)}"

    def refuse_when(self, value: str, condition: str, message: str, code: str = UNSUPPORTED) -> str:
        """`value`, but the query fails with `message` (reported as `code`) when `condition` holds
        for a row: FalkorDB has no error of one's own, so `range()` with a step of 0 raises one
        the planner recognises (`RUNTIME_REFUSAL`) and replaces with `message`. Evaluated
        eagerly, as FalkorDB evaluates every CASE branch."""
        if message not in self.refusals:
            self.refusals.append(Refusal(message, code))
        return f"[{value}, range(0, 0, CASE WHEN {condition} THEN 0 ELSE 1 END)][0]"


class Refusal(str):
    """A runtime refusal's message, carrying the Neo4j code it is reported under."""

    def __new__(cls, message: str, code: str = "") -> "Refusal":
        refusal = super().__new__(cls, message)
        refusal.code = code or UNSUPPORTED
        return refusal


#: The text of FalkorDB's error `Context.refuse_when` raises.
RUNTIME_REFUSAL = "step argument to range() can't be 0"


@dataclass(frozen=True, slots=True)
class Rule:
    """`apply(node, ctx) -> edits` for every node of class `node`; `[]` when it does not apply.

    A query can need the rule only if its lower-cased text holds one of `words` and matches
    `regex` (linear; both are cheap tests run before any parsing), and only on a backend whose
    dialect lacks the capability the rule `stands_in_for` (None: on every backend, for what no
    database does, such as the proxy's aliases)."""

    node: type
    apply: Callable[[Any, Context], list[Edit]]
    words: tuple[str, ...]
    regex: str
    stands_in_for: Capability | None = Capability.NEO4J_CYPHER

    def needed_by(self, dialect: Dialect) -> bool:
        """Whether a backend of `dialect` needs the rule."""
        return self.stands_in_for is None or not dialect.has(self.stands_in_for)
