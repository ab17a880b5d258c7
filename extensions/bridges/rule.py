"""What a bridge rule is: a pure function of one AST node and the query's context."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..cypher import ast as A

Edit = tuple[int, int, str]
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
    """Whether a rule may write `expr` out more than once from its text (see BUILTINS)."""
    return not any(isinstance(n, (A.CountStar, A.PatternExpr, A.PatternComprehension, A.ExistsSubquery,
                                  A.CountSubquery)) or isinstance(n, A.FunctionCall)
                   and n.lower_name not in BUILTINS for n in expr.walk())


@dataclass
class Context:
    """One query being bridged: its text and tree, fresh names, derived parameters and edits
    that depend on a parameter's type."""

    text: str
    query: A.Query
    names: Iterator[str]
    derived: dict[str, Derived] = field(default_factory=dict)
    #: edits that apply only when the named parameter holds a date or date-time
    conditional: dict[str, list[Edit]] = field(default_factory=dict)
    #: returned columns that are zoned date-times: index -> None, or the parameter that decides
    zoned: dict[int, str | None] = field(default_factory=dict)

    def fresh(self, stem: str) -> str:
        return f"__{stem}{next(self.names)}"


@dataclass(frozen=True, slots=True)
class Rule:
    """`apply(node, ctx) -> edits` for every node of class `node`; `[]` when it does not apply.

    A query can need the rule only if its lower-cased text holds one of `words` and matches
    `regex` (linear; both are cheap tests run before any parsing)."""

    node: type
    apply: Callable[[Any, Context], list[Edit]]
    words: tuple[str, ...]
    regex: str
