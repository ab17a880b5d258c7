"""Notifications Neo4j derives from a query's plan, for EXPLAIN on FalkorDB (which gives none).

When FalkorDB's plan for an EXPLAIN holds a `Cartesian Product`, the client gets Neo4j's
`Neo.ClientNotification.Statement.CartesianProduct` (GQLSTATUS 03N90) for each MATCH that joins
patterns sharing no variable with each other or with what came before, positioned at that MATCH
and naming the disconnected part, as Neo4j words it. The Bolt layer sends it as a notification
(Bolt <= 5.4) or a GQL status (5.6+).
"""

from __future__ import annotations

from typing import Any

from ..cypher import ast as A
from ..cypher.scope import pattern_bindings, scopes

#: The triggers that make the planner parse an EXPLAIN (it looks at every one on FalkorDB).
TRIGGERS = ((("explain",), r"^\s*explain\b"),)

_TITLE = "This query builds a cartesian product between disconnected patterns."
_DESCRIPTION = ("If a part of a query contains multiple disconnected patterns, this will build a cartesian "
                "product between all those parts. This may produce a large amount of data and slow down query "
                "processing. While occasionally intended, it may often be possible to reformulate the query "
                "that avoids the use of this cross product, perhaps by adding a relationship between the "
                "different parts or by using OPTIONAL MATCH (identifier is: ({identifiers}))")
_STATUS = ("info: cartesian product. The disconnected patterns `{patterns}` build a cartesian product. "
           "A cartesian product may produce a large amount of data and slow down query processing.")


def cartesian_products(query: A.Query, text: str) -> list[dict[str, Any]]:
    """The CartesianProduct notification of each MATCH with disconnected patterns (to be sent if
    the plan shows a cartesian product)."""
    notes = []
    for part in query.parts:
        before: dict[str, str] = {}
        for clause, after in zip(part.clauses, scopes(part)):
            if isinstance(clause, A.Match) and not clause.optional:
                detached = _detached(clause, set(before))
                if detached:
                    notes.append(_note(clause, detached, text))
            before = after
    return notes


def shows_cartesian_product(plan: dict[str, Any] | None) -> bool:
    if not plan:
        return False
    return plan.get("operatorType") == "Cartesian Product" or any(
        shows_cartesian_product(child) for child in plan.get("children", ()))


def _detached(match: A.Match, bound: set[str]) -> list[set[str]]:
    """The variable sets of the parts of `match` joined by a cartesian product (all but the first)."""
    groups: list[set[str]] = [set(bound)] if bound else []
    for path in match.pattern.paths:
        names = set(pattern_bindings(path)) | {v.name for v in path.find_all(A.Variable)}
        touching = [g for g in groups if g & names]
        merged = names.union(*touching)
        groups = [g for g in groups if not g & names] + [merged]
    return groups[1:] if len(groups) > 1 else []


def _note(match: A.Match, detached: list[set[str]], text: str) -> dict[str, Any]:
    offset = match.span[0]
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    identifiers = ", ".join(sorted(name for group in detached for name in group if not name.startswith("__")))
    return {
        "code": "Neo.ClientNotification.Statement.CartesianProduct",
        "title": _TITLE,
        "description": _DESCRIPTION.format(identifiers=identifiers),
        "severity": "INFORMATION",
        "category": "PERFORMANCE",
        "position": {"offset": offset, "line": line, "column": column},
        "gql_status": "03N90",
        "status_description": _STATUS.format(patterns=match.pattern.text_in(text)),
    }
