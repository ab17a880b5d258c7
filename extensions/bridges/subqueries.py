"""Writes inside `CALL { }` subqueries: run for every row, as Neo4j does, or refused.

FalkorDB 4.16 runs a subquery that holds a MERGE or a DELETE once, for the first incoming row,
without an error: `UNWIND $rows AS row CALL { WITH row MERGE (:Item {k: row.k}) }` over six rows
merges one node, `MATCH (a:A) CALL { WITH a DELETE a }` deletes one, and every other clause of
that subquery runs once too; a returning subquery returns one row. CREATE, SET and REMOVE alone
run per row. A subquery whose writes include a MERGE or a DELETE becomes:

- a unit subquery (no RETURN) whose body is only writes and UNWINDs ->
  `FOREACH (__u IN [1] | <writes>)`, each `UNWIND x AS v` -> `FOREACH (v IN x | ...)`; FOREACH
  keeps the outer rows as they are, as a unit subquery does, and runs its body row by row
  (measured: ON CREATE / ON MATCH counters per row as in Neo4j). UNION branches of a unit
  subquery become one inner FOREACH each, so each row runs the first branch, then the next.
- the last clause of the query, a unit subquery reading too (`CALL (row) { MATCH ... MERGE ... }`)
  -> its body after `WITH <imports>`: nothing follows, so the rows it leaves do not matter.
- a unit subquery `MATCH <one path with a relationship> [WHERE ...]` then DELETE/SET/REMOVE ->
  the matches listed by a pattern comprehension, FOREACH over them (`_matches_as_foreach`).
- a returning subquery with MERGE/CREATE clauses (one, or several without ON CREATE/ON MATCH)
  then a RETURN of plain items -> `<writes> WITH <outer variables>, <returned items>`: the writes
  yield the same rows for each outer row inside or outside the subquery.
- anything else is refused with an error that shows the forms above.

The subquery sees only its imports; FOREACH and the flat forms see every outer variable, so a
body that reads a variable it did not import is refused as Neo4j refuses it, and one that
declares a name the outer query already uses is refused (rename it).
"""

from __future__ import annotations

from core.errors import CypherError, syntax_error

from ..cypher import ast as A
from ..cypher.scope import pattern_bindings, scopes
from ..cypher.render import name as quote_name
from .lazy_case import aggregates
from .rule import Context, Edit, Rule
from .writes import local_names

UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"
#: The writes FalkorDB runs only once inside a subquery.
_ONCE = (A.Merge, A.Delete)


def subquery_writes(part: A.SingleQuery, ctx: Context) -> list[Edit]:
    """Edits for every CALL subquery of `part` that holds a MERGE or a DELETE."""
    edits: list[Edit] = []
    after = scopes(part)
    for index, clause in enumerate(part.clauses):
        if isinstance(clause, A.CallSubquery) and any(isinstance(n, _ONCE) for n in clause.query.walk()):
            outer = set(after[index - 1]) if index else set()
            edits += _bridge(clause, outer, index == len(part.clauses) - 1, ctx)
    return edits


def _bridge(call: A.CallSubquery, outer: set[str], last: bool, ctx: Context) -> list[Edit]:
    if call.in_transactions is not None and call.in_transactions.report is not None:
        raise _refuse("CALL { ... } IN TRANSACTIONS ... REPORT STATUS", "")
    bodies = [_split(part, call, outer) for part in call.query.parts]
    if not all(body for _, body in bodies):
        return []                      # `CALL { WITH x }`: nothing to run; the database answers
    returning = isinstance(call.query.parts[-1].clauses[-1], A.Return)
    for imported, body in bodies:
        _check_scope(body, imported, outer, ctx)
    if not returning and all(_only_writes(body) for _, body in bodies):
        return _as_foreach(call, bodies, ctx)
    if not returning and last and len(bodies) == 1:
        return _flattened(call, bodies[0][0], bodies[0][1], ctx)
    if returning and len(bodies) == 1 and not call.optional and _writes_returning(bodies[0][1]):
        return _flattened_returning(call, bodies[0][1], outer, ctx)
    if not returning and len(bodies) == 1 and outer and _match_then_delete(bodies[0][1]):
        return _matches_as_foreach(call, *bodies[0], outer, ctx)
    raise _refuse("a CALL { } subquery with a MERGE or DELETE", call.text_in(ctx.text))


def _split(part: A.SingleQuery, call: A.CallSubquery, outer: set[str]) -> tuple[set[str], tuple]:
    """(the variables the part imports, its clauses after the importing WITH)."""
    clauses = part.clauses
    if call.scope is not None:
        return (set(outer) if call.scope == ("*",) else {v.name for v in call.scope}), clauses
    first = clauses[0]
    if isinstance(first, A.With) and _importing(first):
        imported = set(outer) if first.star else {item.expr.name for item in first.items}
        return imported, clauses[1:]
    return set(), clauses


def _importing(clause: A.With) -> bool:
    """`WITH a, b` / `WITH *`: plain references, nothing else."""
    plain = all(isinstance(i.expr, A.Variable) and i.alias in (None, i.expr.name) for i in clause.items)
    return plain and not (clause.where or clause.order_by or clause.skip or clause.limit or clause.distinct)


def _only_writes(body: tuple) -> bool:
    return bool(body) and all(isinstance(c, A.UPDATING + (A.Unwind,)) for c in body) \
        and isinstance(body[-1], A.UPDATING)


def _match_then_delete(body: tuple) -> bool:
    """`MATCH <one path with a relationship> [WHERE ...]` then DELETE, SET or REMOVE clauses."""
    match, *writes = body
    return isinstance(match, A.Match) and not match.optional and not match.hints \
        and len(match.pattern.paths) == 1 and len(match.pattern.paths[0].elements) > 1 \
        and bool(writes) and all(isinstance(c, (A.Delete, A.SetClause, A.Remove)) for c in writes)


def _writes_returning(body: tuple) -> bool:
    """`MERGE|CREATE ... RETURN a, b.x AS y`: plain items, nothing that regroups rows, and one
    write, or several MERGE/CREATE without ON CREATE / ON MATCH. Flat, each clause runs for every
    row before the next; a MERGE finds or makes the same elements in either order, only which
    of its actions fires could change."""
    *writes, ret = body
    if not writes or not isinstance(ret, A.Return) or not all(isinstance(w, (A.Merge, A.Create)) for w in writes):
        return False
    if len(writes) > 1 and any(isinstance(w, A.Merge) and w.actions for w in writes):
        return False
    return not (ret.star or ret.distinct or ret.order_by or ret.skip or ret.limit or aggregates(ret))


def _check_scope(body: tuple, imported: set[str], outer: set[str], ctx: Context) -> None:
    """Neo4j's scoping, which the rewritten forms no longer enforce."""
    declared = _declared(body)
    local = {name for clause in body for name in local_names(clause)}
    hidden = outer - imported
    for node in (n for clause in body for n in clause.walk()):
        if isinstance(node, A.Variable) and node.name in hidden - declared - local:
            raise syntax_error(f"Variable `{node.name}` not defined (import it into the subquery: "
                               f"`CALL ({node.name}) {{ ... }}` or `CALL {{ WITH {node.name} ... }}`)")
    clash = sorted(declared & hidden)
    if clash:
        raise _refuse("a CALL { } subquery with a MERGE or DELETE that declares "
                      f"`{clash[0]}`, a name the outer query also uses", "",
                      f"Rename `{clash[0]}` inside the subquery.")


def _declared(body: tuple) -> set[str]:
    names: set[str] = set()
    for clause in body:
        for node in clause.walk():
            if isinstance(node, (A.Create, A.Match)):
                names |= set(pattern_bindings(node.pattern))
            elif isinstance(node, A.Merge):
                names |= set(pattern_bindings(node.path))
            elif isinstance(node, (A.Unwind, A.Foreach)):
                names.add(node.var.name)
            elif isinstance(node, A._Projection):
                names |= {item.alias for item in node.items if item.alias}
    return names


def _as_foreach(call: A.CallSubquery, bodies: list, ctx: Context) -> list[Edit]:
    """`CALL { WITH x <writes> }` -> `FOREACH (__u IN [1] | <writes>)` (UNWINDs nested)."""
    edits: list[Edit] = []
    branch = len(bodies) > 1
    opened = f"FOREACH ({ctx.fresh('u')} IN [1] | "
    cursor = call.span[0]
    for (_, body), part in zip(bodies, call.query.parts):
        head = f"FOREACH ({ctx.fresh('u')} IN [1] | " if branch else ""
        edits.append((cursor, body[0].span[0], opened + head))
        opened, closing = "", 1 if branch else 0
        for clause in body:
            if isinstance(clause, A.Unwind):
                items = clause.expr.text_in(ctx.text)
                edits.append((clause.span[0], clause.span[1],
                              f"FOREACH ({quote_name(clause.var.name)} IN {_as_list(items)} |"))
                closing += 1
        edits.append((body[-1].span[1], body[-1].span[1], ")" * closing))
        cursor = body[-1].span[1]
        if part is not call.query.parts[-1]:
            following = call.query.parts[call.query.parts.index(part) + 1]
            edits.append((cursor, following.span[0], " "))
            cursor = following.span[0]
    edits.append((cursor, call.span[1], ")"))
    return edits


def _as_list(items: str) -> str:
    """UNWIND's reading of a value: a list as it is, null as no row, anything else as one row."""
    return f"(CASE typeOf({items}) WHEN 'List' THEN {items} WHEN 'Null' THEN [] ELSE [{items}] END)"


def _flattened(call: A.CallSubquery, imported: set[str], body: tuple, ctx: Context) -> list[Edit]:
    """The query's last clause, a unit subquery -> `WITH <imports> <body>`."""
    head = f"WITH {', '.join(quote_name(v) for v in sorted(imported))} " if imported else ""
    return [(call.span[0], body[0].span[0], head), (body[-1].span[1], call.span[1], "")]


def _flattened_returning(call: A.CallSubquery, body: tuple, outer: set[str], ctx: Context) -> list[Edit]:
    """`CALL { WITH x MERGE ... RETURN items }` -> `MERGE ... WITH <outer>, items`."""
    write, *_, ret = body
    keep = "".join(f"{quote_name(v)}, " for v in sorted(outer))
    return [(call.span[0], write.span[0], ""),
            (ret.span[0], ret.items[0].span[0], f" WITH {keep}"),
            (ret.span[1], call.span[1], "")]


def _matches_as_foreach(call: A.CallSubquery, imported: set[str], body: tuple, outer: set[str],
                        ctx: Context) -> list[Edit]:
    """`CALL { WITH a MATCH (a)-[r]->(b) WHERE w DELETE r }` ->
    `WITH *, [(a)-[r]->(b) WHERE w | [r, b]] AS __ms FOREACH (__m IN __ms | FOREACH (r IN [__m[0]] |
    FOREACH (b IN [__m[1]] | DELETE r))) WITH <outer>`: each match of each row, as the subquery
    runs them (FalkorDB takes no pattern comprehension as FOREACH's list, hence the WITH). Only
    deletes and property or label updates follow the MATCH: a later row's MATCH cannot find
    anything an earlier row wrote, so matching every row first finds what Neo4j finds."""
    match, *writes = body
    path = match.pattern.paths[0]
    found = [v for v in pattern_bindings(match.pattern) if v not in imported]
    matches, each = ctx.fresh("ms"), ctx.fresh("m")
    opened = "".join(f"FOREACH ({quote_name(v)} IN [{each}[{k}]] | " for k, v in enumerate(found))
    listed = ", ".join(quote_name(v) for v in found)
    end = (match.where or path).span[1]
    return [(call.span[0], path.span[0], "WITH *, ["),
            (end, writes[0].span[0], f" | [{listed}]] AS {matches} FOREACH ({each} IN {matches} | {opened}"),
            (writes[-1].span[1], call.span[1],
             ")" * (len(found) + 1) + " WITH " + ", ".join(quote_name(v) for v in sorted(outer)))]


def _refuse(construct: str, text: str, instead: str = "") -> CypherError:
    shown = f" ({text.strip()[:120]})" if text else ""
    return CypherError(UNSUPPORTED, (
        f"{construct}{shown} cannot run faithfully on the embedded FalkorDB: it would run the "
        "subquery for the first row only. "
        + (instead or "Write it as a unit subquery of writes only (`CALL { WITH row MERGE ... SET ... }`, "
           "which runs as FOREACH), as the query's last clause, or as one MERGE/CREATE returning plain "
           "items (`CALL { WITH row MERGE (n:L {k: row.k}) RETURN n }`); or do the MATCH before the "
           "CALL and use FOREACH (x IN list | MERGE ...).")
        + " (A limit of the embedded FalkorDB; Neo4j accepts this query.)"))


RULES = (Rule(A.SingleQuery, subquery_writes, ("merge", "delete"), r"\bcall\s*[({]"),)
