"""NOT NULL constraints checked when a write statement ends, as Neo4j checks them at commit.

FalkorDB checks its MANDATORY constraint at every operation: with `title` required on `:Ticket`,
`MERGE (t:Ticket {id: 7}) ON CREATE SET t += $props` and `CREATE (t:Ticket {id: 8}) SET t.title
= 'x'` fail, though the statement leaves every ticket with a title (Neo4j accepts both). So the
proxy keeps existence constraints itself (`compat.schema_catalog.Definition.existence`) and a
statement that may set or create something (CREATE, MERGE, SET, REMOVE) gets a check after its
last clause: for each constraint it could break (`relevant`), the elements still missing the property are counted, and a
count above zero fails the statement with an error raised inside FalkorDB, which undoes a query
that fails (measured: nothing of it stays). The rows are kept through the check:

    ... RETURN a, b.x ORDER BY a LIMIT 5
    -> ... WITH a, b.x AS __c1 ORDER BY a LIMIT 5 WITH collect([a, __c1]) AS __rows
       <checks> UNWIND __rows AS __r RETURN __r[0] AS a, __r[1] AS `b.x`

A statement without RETURN ends `WITH count(*) AS __rows <checks> RETURN __rows`, and the
client gets no rows (`run_checked`). FalkorDB's errors name no value, so the check fails with a
runtime error of its own (`range()` with a step of 0 computed from the count) that the proxy
turns into Neo4j's `ConstraintValidationFailed`. Each check scans its label (a statement that
only deletes has none). `RETURN *` and UNION write statements are refused while such
constraints exist; in an explicit transaction each statement is checked, so a node created
without the property in one statement is refused there, not at COMMIT.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.backend import ListResult, Result
from core.errors import CypherError

from ..cypher import ast as A
from ..cypher.effects import effects
from ..cypher.parser import parse
from ..cypher.render import name as quote
from ..cypher.splice import splice

#: (constraint name, entity 'NODE'|'RELATIONSHIP', label or type, property)
Constraint = tuple[str, str, str, str]
VIOLATED = "Neo.ClientError.Schema.ConstraintValidationFailed"
UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"
#: FalkorDB's message for the check's own failure.
_FAILURE = "step argument to range() can't be 0"


@dataclass(frozen=True)
class Checked:
    text: str
    returns: bool           # the statement returns rows (else the check's row is dropped)
    constraints: tuple      # the constraints checked


def may_violate(text: str) -> bool:
    """The statement creates, merges, sets or removes something (`cypher.effects`)."""
    does = effects(text)
    return does.creates or does.sets


async def run_checked(runner, text: str, params: dict[str, Any], constraints: tuple[Constraint, ...]) -> Result:
    """Run the write statement `text` with the existence checks it needs after it."""
    checked = with_checks(text, constraints)
    if checked is None:
        return await runner.run(text, params)
    constraints = checked.constraints
    try:
        result = await runner.run(checked.text, params)
    except CypherError as exc:
        if _FAILURE in exc.message:
            raise violation(constraints) from None
        raise
    if checked.returns:
        return result
    await result.fetch(-1)
    return ListResult([], [], await result.consume())


def violation(constraints: tuple[Constraint, ...]) -> CypherError:
    """Neo4j's error; FalkorDB's error names no element, so neither does this one (and with several
    constraints, it lists them: one of them failed)."""
    missing = [f"{'Node' if entity == 'NODE' else 'Relationship'} with {'label' if entity == 'NODE' else 'type'} "
               f"`{label}` must have the property `{prop}`" for _, entity, label, prop in constraints]
    names = ", ".join(f"`{name}`" for name, *_ in constraints)
    head = missing[0] if len(missing) == 1 else "One of these does not hold: " + "; ".join(missing)
    return CypherError(VIOLATED, f"{head} (constraint {names}, checked when the statement ended; "
                                 "nothing of the statement was kept).")


def relevant(tree: A.Query, constraints: tuple[Constraint, ...]) -> tuple[Constraint, ...]:
    """The constraints a statement could break: those on a label or type it creates, merges or
    sets, or on a property it sets or removes; all of them if it assigns a whole map (`SET n =
    $map`, `SET n += $map`, which can null any property)."""
    names: set[str] = set()
    keys: set[str] = set()
    for node in tree.walk():
        if isinstance(node, (A.Create, A.Merge)):
            for element in node.walk():
                labels = getattr(element, "labels", None) if isinstance(element, A.NodePattern) \
                    else getattr(element, "types", None) if isinstance(element, A.RelPattern) else None
                names.update(labels.names() if labels is not None else ())
        elif isinstance(node, (A.SetItem, A.RemoveItem)):
            if node.kind == "labels":
                names.update(node.labels.names())
            elif node.kind == "property" and isinstance(node.target, A.Property):
                keys.add(node.target.key)
            else:
                return constraints
    return tuple(c for c in constraints if c[2] in names or c[3] in keys)


@lru_cache(maxsize=1024)
def with_checks(text: str, constraints: tuple[Constraint, ...]) -> Checked | None:
    """`text` with the checks of the constraints it could break, or None when it can break none."""
    tree = parse(text)
    constraints = relevant(tree, constraints)
    if not constraints:
        return None
    if len(tree.parts) != 1:
        raise _refuse("a UNION statement that writes")
    last = tree.parts[0].clauses[-1]
    checks = " ".join(_check(k, c) for k, c in enumerate(constraints))
    if not isinstance(last, A.Return):
        return Checked(f"{text} WITH count(*) AS __rows {checks} RETURN __rows", False, constraints)
    if last.star:
        raise _refuse("`RETURN *` after a write")
    edits, variables, columns = [(last.span[0], last.span[0] + len("RETURN"), "WITH")], [], []
    for k, item in enumerate(last.items):
        column = item.name(text)
        if item.alias is None and not isinstance(item.expr, A.Variable):
            edits.append((item.span[1], item.span[1], f" AS __c{k}"))
            variables.append(f"__c{k}")
        else:
            variables.append(quote(column))
        columns.append(f"__r[{k}] AS {quote(column)}")
    tail = (f" WITH collect([{', '.join(variables)}]) AS __rows {checks} "
            f"UNWIND __rows AS __r RETURN {', '.join(columns)}")
    edits.append((last.span[1], last.span[1], tail))
    return Checked(splice(text, [((start, end), new) for start, end, new in edits]), True, constraints)


def _check(k: int, constraint: Constraint) -> str:
    """Fails the statement if an element of the constraint's label lacks its property."""
    _, entity, label, prop = constraint
    element = f"__e{k}"
    pattern = f"({element}:{quote(label)})" if entity == "NODE" else f"()-[{element}:{quote(label)}]->()"
    return (f"OPTIONAL MATCH {pattern} WHERE {element}.{quote(prop)} IS NULL "
            f"WITH __rows, count({element}) AS __bad{k} "
            f"WITH __rows, [__x IN [1] WHERE __bad{k} > 0 | range(0, 0, __bad{k} - __bad{k})] AS __fail{k}")


def _refuse(construct: str) -> CypherError:
    return CypherError(UNSUPPORTED, (
        f"{construct} cannot be checked against this database's NOT NULL constraints on the embedded "
        "FalkorDB (the proxy checks them when the statement ends). Name the returned columns, or "
        "run the UNION branches as separate statements. (A limit of the embedded FalkorDB; Neo4j "
        "accepts this query.)"))
