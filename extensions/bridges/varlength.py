"""A variable-length relationship variable is a list of relationships in Neo4j, a path in FalkorDB.

`MATCH (a)-[rs:R*]->(b) RETURN rs` returns a path on FalkorDB 4.16 (silently another type), and
`size(rs)`, `rs[0]` or `[r IN rs | ...]` fail. Every use of such a variable after its pattern
becomes its relationships, up to the WITH or RETURN that projects it: there `WITH rs` becomes
`WITH <relationships> AS rs`, a list from then on (`WITH *` keeps the path, so uses stay
wrapped; a RETURN item keeps its column name through the planner's aliasing).

FalkorDB's path runs the way it traversed, which is not always the pattern's way
(`(a)-[r*2]->(b:End)` starts at `b`); Neo4j lists the relationships from the pattern's left
node. So the list is `relationships(rs)`, or its reverse when it does not start there (an
anonymous left node gets a name to compare with). `[r*1..1]` and `[r*..1]` bind one
relationship in FalkorDB, whose list is `[r]`.

In the MATCH's own WHERE, FalkorDB binds the variable to one relationship at a time, so a WHERE
that uses it is moved after the MATCH (`MATCH ... WITH *, rs AS rs WHERE ...`: the same rows for
a MATCH, and the projection keeps FalkorDB from pushing the filter back into the traversal; an
OPTIONAL MATCH keeps its WHERE, and FalkorDB's type error).
"""

from __future__ import annotations

import re

from proxy.errors import CypherError

from ..cypher import ast as A
from ..cypher.render import name as quote_name
from .rule import Context, Edit, Rule

_PATTERN_VARS = (A.NodePattern, A.RelPattern, A.PathPattern)
UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"
_WHERE = re.compile(r"where\s*\Z", re.I)
#: how to tell that the path starts at the pattern's left node, by the pattern's direction
_STARTS_AT = {"right": "startNode(head(relationships({p}))) = {left}",
              "left": "endNode(head(relationships({p}))) = {left}",
              "none": "nodes({p})[0] = {left}", "both": "nodes({p})[0] = {left}"}


def relationship_lists(part: A.SingleQuery, ctx: Context) -> list[Edit]:
    edits: list[Edit] = []
    paths: dict[str, str] = {}                 # variable -> its relationships, in Neo4j's order
    for clause in part.clauses:
        if isinstance(clause, (A.With, A.Return)) and not clause.star:
            edits += _uses(clause.items, paths, alias=isinstance(clause, A.With))
            paths = {}
        elif paths:
            if isinstance(clause, A.Return):              # RETURN *: the path would be a column
                raise CypherError(UNSUPPORTED, f"RETURN * would return {', '.join(sorted(paths))} as a "
                                  "path: on the embedded FalkorDB a variable-length relationship "
                                  "variable is one. List the columns instead (RETURN a, rs, b), and "
                                  "the proxy returns it as Neo4j does, a list of relationships.")
            edits += _uses((clause,), paths)
        if isinstance(clause, A.Match):
            edits += _bind(clause, paths, ctx)
            if clause.where is not None and (where := _uses((clause.where,), paths)):
                used = sorted({n.name for n in clause.where.walk() if isinstance(n, A.Variable) and n.name in paths})
                edits += where + _after_match(clause, used, ctx)
    return edits


def _bind(match: A.Match, paths: dict[str, str], ctx: Context) -> list[Edit]:
    """Record the variable-length relationship variables of `match` (naming anonymous left nodes)."""
    edits: list[Edit] = []
    for path in match.pattern.find_all(A.PathPattern):
        for i, rel in enumerate(path.elements):
            if not (isinstance(rel, A.RelPattern) and rel.var is not None and rel.length is not None):
                continue
            left = path.elements[i - 1] if i and isinstance(path.elements[i - 1], A.NodePattern) else None
            low, high = rel.length
            if (low if low is not None else 1) == 1 and high == 1:      # FalkorDB binds one relationship
                paths[rel.var.name] = f"[{quote_name(rel.var.name)}]"
                continue
            if left is None:
                paths[rel.var.name] = f"relationships({quote_name(rel.var.name)})"
                continue
            if left.var is None:
                name = ctx.fresh("vl")
                edits.append((left.span[0] + 1, left.span[0] + 1, name))
            else:
                name = quote_name(left.var.name)
            p = quote_name(rel.var.name)
            starts = _STARTS_AT[rel.direction].format(p=p, left=name)
            paths[rel.var.name] = (f"CASE WHEN coalesce({starts}, true) THEN relationships({p}) "
                                   f"ELSE reverse(relationships({p})) END")
    return edits


def _uses(nodes, paths: dict[str, str], alias: bool = False) -> list[Edit]:
    """Each use of a path-bound variable in `nodes` as its relationships; with `alias`, a
    projected one keeps its name."""
    bare = {id(item.expr) for item in nodes if isinstance(item, A.ReturnItem)
            and isinstance(item.expr, A.Variable) and item.alias is None} if alias else set()
    edits: list[Edit] = []
    for top in nodes:
        declared = {id(n.var) for n in top.walk() if isinstance(n, _PATTERN_VARS) and n.var is not None}
        for node in top.walk():
            if isinstance(node, A.Variable) and node.name in paths and id(node) not in declared:
                suffix = f" AS {quote_name(node.name)}" if id(node) in bare else ""
                edits.append((*node.span, f"({paths[node.name]}){suffix}"))
    return edits


def _after_match(match: A.Match, names: list[str], ctx: Context) -> list[Edit]:
    """`WITH *, rs AS rs` before the MATCH's WHERE (a plain MATCH only)."""
    keyword = _WHERE.search(ctx.text, 0, match.where.span[0])
    if match.optional or keyword is None:
        return []
    kept = ", ".join(f"{quote_name(name)} AS {quote_name(name)}" for name in names)
    return [(keyword.start(), keyword.start(), f"WITH *, {kept} ")]


RULES = (Rule(A.SingleQuery, relationship_lists, ("*",), r"\[[^\]]*\*"),)
