"""What a bridge rule is: a pure function of one AST node and the query's context."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..cypher import ast as A

Edit = tuple[int, int, str]
#: A parameter the planner computes from the client's parameters before the query runs.
Derived = Callable[[dict[str, Any]], Any]


@dataclass
class Context:
    """One query being bridged: its text and tree, fresh names, derived parameters."""

    text: str
    query: A.Query
    names: Iterator[str]
    derived: dict[str, Derived] = field(default_factory=dict)
    #: rewrites to run on the text once every edit is applied (see `bridges.after_edits`)
    after: set[str] = field(default_factory=set)

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
