"""A variable-length relationship whose upper bound is below its lower bound matches nothing.

Neo4j answers `MATCH (a)-[:LIKES*2..1]->(c)` (and `*1..0`, `*..0`) with no rows; FalkorDB refuses
it ("maximum number of hops must be greater or equal to minimum number of hops"). The bounds are
written `*1..1` and the MATCH gets `WHERE false`: no row, and an OPTIONAL MATCH its null row.
"""

from __future__ import annotations

import re

from ..cypher import ast as A
from .rule import Context, Edit, Rule

_LENGTH = re.compile(r"\*\s*\d*\s*(?:\.\.\s*\d*)?")


def _empty(rel: A.RelPattern) -> bool:
    if rel.length is None or rel.length[1] is None:
        return False
    low = 1 if rel.length[0] is None else rel.length[0]
    return rel.length[1] < low


def match_nothing(match: A.Match, ctx: Context) -> list[Edit]:
    rels = [r for r in match.pattern.find_all(A.RelPattern) if _empty(r)]
    if not rels or any(not A.legacy_labels(n.labels) for n in match.pattern.find_all(A.NodePattern)):
        return []
    edits: list[Edit] = []
    for rel in rels:
        found = _LENGTH.search(ctx.text, rel.span[0], rel.span[1])
        edits.append((found.start(), found.end(), "*1..1"))
    if match.where is None:
        return edits + [(match.span[1], match.span[1], " WHERE false")]
    return edits + [(match.where.span[0], match.where.span[0], "false AND ("),
                    (match.where.span[1], match.where.span[1], ")")]


RULES = (Rule(A.Match, match_nothing, ("..",), r"\*\s*\d*\s*\.\.\s*\d"),)
