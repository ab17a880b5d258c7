"""Functions the proxy adds to Cypher under another name, on every backend: `std(x)` is Neo4j's
`stDev(x)` (the sample standard deviation), as a user of the proxy's statistics extensions
writes it. An extension registered under the alias's own name still takes it over: the planner
replaces the whole call, and of nested edits the outer one wins (`cypher/splice.outermost`).
"""

from __future__ import annotations

from ..cypher import ast as A
from .rule import Context, Edit, Rule

#: alias (lower case) -> the function it names
ALIASES = {"std": "stDev"}


def rename(call: A.FunctionCall, ctx: Context) -> list[Edit]:
    """`std(x)` -> `stDev(x)`."""
    if call.lower_name not in ALIASES:
        return []
    return [(*call.name_span, ALIASES[call.lower_name])]


RULES = tuple(Rule(A.FunctionCall, rename, (alias,), rf"{alias}\s*\(", stands_in_for=None) for alias in ALIASES)
