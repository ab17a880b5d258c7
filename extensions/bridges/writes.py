"""Bridges around writes: named paths in CREATE, and filters FalkorDB would move below a write.

Both measured on FalkorDB 4.16 (tests/unit/test_bridges.py compares against hand-written
equivalents on a real FalkorDB):

- `CREATE p = (a)-[:R]->(b) RETURN p` fails ("'p' not defined"): FalkorDB has no named paths in
  CREATE. The path is rebuilt right after the CREATE from its elements, every one of which is
  then bound (anonymous ones get fresh variables): `WITH *, [__p = (a)-[__r0]->(b) | __p][0] AS p`.
- FalkorDB places the filter of `WITH v WHERE <uses v>` at the earliest operation that binds `v`.
  After a write that is below the write: `MATCH (a) SET a.y = 5 WITH a WHERE a.y = 5` filters on
  the old value and skips the SET for the rows it drops (langchain's chat history loses a
  message's role and content this way); after a leading OPTIONAL MATCH it is inside the optional
  branch, so `OPTIONAL MATCH (q:Unknown) WITH q WHERE q IS NOT NULL RETURN q` returns a null row.
  A projection that renames, `WITH v AS v`, binds `v` anew and keeps the filter above it, so the
  bare items the WHERE uses are written that way (only after a write or an OPTIONAL MATCH, where
  the move is wrong; elsewhere the early filter is what makes index seeks possible).
- `CREATE (a {id: 0}), (:B {num: a.id})` fails on FalkorDB ("`a` not defined"): a path's
  properties cannot read a node created by an earlier path of the same CREATE. Neo4j creates
  the paths in order, as consecutive CREATE clauses do: `CREATE (a {id: 0}) CREATE (:B {num: a.id})`.
- `DELETE n` of a node that still has relationships deletes them too on FalkorDB, silently;
  Neo4j refuses the transaction ("Cannot delete node, because it still has relationships").
  Where the query's one DELETE deletes nodes only, a check before it refuses such a row as Neo4j
  does: `WITH *, <fails when size([(n)--() | 1]) > 0> AS __d DELETE n`.
"""

from __future__ import annotations

from ..cypher import ast as A
from ..cypher.scope import NODE, bindings, scopes
from ..cypher.render import name as quote_name
from ..cypher.tokens import OP, tokenize
from .rule import Context, Edit, Rule



def rename_filtered_items(part: A.SingleQuery, ctx: Context) -> list[Edit]:
    """`WITH v WHERE f(v)` after a write or OPTIONAL MATCH -> `WITH v AS v WHERE f(v)`."""
    edits: list[Edit] = []
    after_write_or_optional = False
    for clause in part.clauses:
        if isinstance(clause, A.With) and clause.where is not None and after_write_or_optional:
            edits += _rename(clause, ctx)
        after_write_or_optional |= isinstance(clause, A.UPDATING) or (
            isinstance(clause, A.Match) and clause.optional)
    return edits


def _rename(clause: A.With, ctx: Context) -> list[Edit]:
    used = {v.name for v in clause.where.find_all(A.Variable)}
    edits: list[Edit] = []
    listed: set[str] = set()
    for item in clause.items:
        if isinstance(item.expr, A.Variable) and item.alias is None:
            listed.add(item.expr.name)
            if item.expr.name in used:
                name = item.expr.text_in(ctx.text)
                edits.append((*item.span, f"{name} AS {name}"))
    if clause.star:                        # `WITH *`: the variables in scope come along as they are
        extra = sorted(used - listed - {i.name(ctx.text) for i in clause.items} - local_names(clause.where))
        if extra:
            at = clause.items[-1].span[1] if clause.items else _star_end(clause, ctx.text)
            edits.append((at, at, "".join(f", {quote_name(v)} AS {quote_name(v)}" for v in extra)))
    return edits


def local_names(expr: A.Expr) -> set[str]:
    """Variables an expression declares itself (list comprehensions, quantifiers, reduce)."""
    names = set()
    for node in expr.walk():
        for attr in ("var", "acc"):
            var = getattr(node, attr, None)
            if isinstance(var, A.Variable) and not isinstance(node, A.MapProjection):
                names.add(var.name)
    return names


def _star_end(clause: A.With, text: str) -> int:
    head = text[clause.span[0]:clause.where.span[0]]
    star = next(t for t in tokenize(head) if t.kind == OP and t.value == "*")
    return clause.span[0] + star.end


def named_create_paths(part: A.SingleQuery, ctx: Context) -> list[Edit]:
    """`CREATE p = (a)-[:R]->(b) ...` -> `CREATE (a)-[__r0:R]->(b) WITH *, [...][0] AS p ...`."""
    edits: list[Edit] = []
    after = scopes(part)
    for index, clause in enumerate(part.clauses):
        named = [path for path in getattr(clause, "pattern", A.Pattern(())).paths if path.var is not None] \
            if isinstance(clause, A.Create) else []
        if not named:
            continue
        edits += [(path.var.span[0], path.elements[0].span[0], "") for path in named]   # drop `p =`
        if index == len(part.clauses) - 1:
            continue                                  # nothing reads the path
        projections, matches, fresh = [], [], []
        for path in named:
            variables, bind = _variables(path, ctx)
            edits += bind
            fresh += [v for v, e in zip(variables, path.elements) if e.var is None]
            if len(variables) == 1:                   # a pattern comprehension needs a relationship
                matches.append(f" MATCH {quote_name(path.var.name)} = ({quote_name(variables[0])})")
            else:
                projections.append(f"{_rebuilt(path, variables, ctx)} AS {quote_name(path.var.name)}")
        later = part.clauses[index + 1:]
        if any(isinstance(c, A._Projection) and c.star for c in later):    # list the user's variables
            keep = [quote_name(v) for v in after[index] if v not in {p.var.name for p in named}]
            keep += [quote_name(v) for v in fresh] if matches else []
        else:
            keep = ["*"]
        edits.append((clause.span[1], clause.span[1], f" WITH {', '.join(keep + projections)}{''.join(matches)}"))
    return edits


def drop_path_names_in_foreach(foreach: A.Foreach, ctx: Context) -> list[Edit]:
    """Inside FOREACH nothing can read a CREATE's path, so its name is just dropped."""
    return [(path.var.span[0], path.elements[0].span[0], "")
            for clause in foreach.clauses if isinstance(clause, A.Create)
            for path in clause.pattern.paths if path.var is not None]


def _variables(path: A.PathPattern, ctx: Context) -> tuple[list[str], list[Edit]]:
    """The variable of each element of a created path, and the edits that name anonymous ones."""
    names, edits = [], []
    for element in path.elements:
        if element.var is not None:
            names.append(element.var.name)
            continue
        names.append(ctx.fresh("c"))
        opening = ctx.text.index("(" if isinstance(element, A.NodePattern) else "[", *element.span) + 1
        edits.append((opening, opening, names[-1]))
    return names, edits


def _rebuilt(path: A.PathPattern, variables: list[str], ctx: Context) -> str:
    """A path comprehension that finds exactly the created path (every element is bound)."""
    pieces = []
    for element, var in zip(path.elements, variables):
        if isinstance(element, A.NodePattern):
            pieces.append(f"({quote_name(var)})")
        else:
            left, right = ("<-", "-") if element.direction == "left" else ("-", "->")
            pieces.append(f"{left}[{quote_name(var)}]{right}")
    local = ctx.fresh("p")
    return f"[{local} = {''.join(pieces)} | {local}][0]"


def split_create(create: A.Create, ctx: Context) -> list[Edit]:
    """The comma before a path whose properties read a variable an earlier path of the same
    CREATE declares becomes ` CREATE `."""
    edits: list[Edit] = []
    declared: set[str] = set()
    for before, path in zip((None, *create.pattern.paths), create.pattern.paths):
        elements = [e for e in path.elements if isinstance(e, (A.NodePattern, A.RelPattern))]
        read = {v.name for e in elements if e.properties is not None for v in e.properties.find_all(A.Variable)}
        if before is not None and read & declared:
            edits.append((before.span[1], path.span[0], " CREATE "))
        declared |= {e.var.name for e in elements if e.var is not None}
        declared |= {path.var.name} if path.var is not None else set()
    return edits


#: Neo4j's error for a deleted node that keeps relationships (a constraint checked at commit).
CONNECTED_NODE = ("Cannot delete a node that still has relationships: `{names}`. Delete its relationships "
                  "first, or use DETACH DELETE.")


def refuse_connected_deletes(part: A.SingleQuery, ctx: Context) -> list[Edit]:
    """A check before the part's one DELETE (none in a FOREACH or subquery) of nodes only: a row
    whose node keeps a relationship fails (skipped where a projection shows every variable,
    `RETURN *`)."""
    deletes = [n for c in part.clauses for n in c.walk() if isinstance(n, A.Delete)]
    if len(deletes) != 1 or deletes[0] not in part.clauses or deletes[0].detach \
            or any(isinstance(c, A._Projection) and c.star for c in part.clauses):
        return []
    clause = deletes[0]
    index = part.clauses.index(clause)
    scope: dict[str, str] = {}
    for earlier in part.clauses[:index]:
        scope = bindings(earlier, scope)
    names = [e.name for e in clause.exprs if isinstance(e, A.Variable)]
    if len(names) != len(clause.exprs) or any(scope.get(name) != NODE for name in names):
        return []
    connected = " OR ".join(f"size([({quote_name(name)})--() | 1]) > 0" for name in names)
    check = ctx.refuse_when("0", connected, CONNECTED_NODE.format(names="`, `".join(names)),
                            "Neo.ClientError.Schema.ConstraintValidationFailed")
    return [(clause.span[0], clause.span[0], f"WITH *, {check} AS {ctx.fresh('d')} ")]


RULES = (
    # a later path (`, (`) whose property map reads a property (`a.id`); each scan stops at the
    # next bracket, so the search is linear (a lazy `create\s[^;]*?,` from each CREATE was quadratic)
    Rule(A.Create, split_create, ("create",), r",\s*+\([^)(;{]*+\{(?:[^{};.]++|\.(?!\w))*+(?<=\w)\.\w"),
    Rule(A.SingleQuery, refuse_connected_deletes, ("delete",), r"delete\s"),
    Rule(A.SingleQuery, rename_filtered_items, ("where",),
         r"\b(?:optional|set|create|merge|delete|remove|foreach)\b"),
    Rule(A.SingleQuery, named_create_paths, ("create",), r"\bcreate\s+`?\w+`?\s*="),
    Rule(A.Foreach, drop_path_names_in_foreach, ("create",), r"\bcreate\s+`?\w+`?\s*="),
)
