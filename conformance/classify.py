"""Each TCK check, run through the proxy, judged against the answer the TCK gives (Neo4j's).

The classes follow the one rule of answers (DESIGN.md: Neo4j's answer or an error):

- match: the rows (and the side effects the TCK states) are the TCK's, or the error is one
  Neo4j reports for the TCK's error type (`ERROR_CODES`);
- silent wrong: the TCK expects rows, the proxy returns other rows, other columns, or writes
  other side effects, without an error. The one outcome never allowed;
- loud: the TCK expects rows, the proxy (or one of the scenario's setup queries, or an earlier
  query of the scenario the TCK expects to succeed, such as the CREATE a control query reads) errs;
- accepts invalid: the TCK expects an error, the proxy returns rows;
- other error: the TCK expects an error, the proxy errs with a code Neo4j does not use for it
  (a DatabaseError carrying the backend's text, a TypeError where Neo4j reports a SyntaxError,
  a dropped connection, ...). The query was still refused, so this is the mildest miss.

Side effects are the TCK's own measure (the openCypher tck-api): the difference between the graph
before and after the query in node and relationship ids, label names in use, and
(entity, key, value) property triples, so changing a value is `+properties 1, -properties 1`.
"""

from __future__ import annotations

from dataclasses import dataclass

from conformance.literals import parse_literal
from conformance.tck import Check, Expected
from conformance.values import cypher_text, normalise_rows, rows_equal

MATCH, SILENT_WRONG, LOUD, ACCEPTS_INVALID, OTHER_ERROR = (
    "match", "silent wrong", "loud", "accepts invalid", "other error")
CLASSES = (MATCH, SILENT_WRONG, LOUD, ACCEPTS_INVALID, OTHER_ERROR)

#: The status codes (after `Neo.ClientError.`) Neo4j answers each TCK error type with.
ERROR_CODES = {
    "SyntaxError": {"Statement.SyntaxError"},
    "SemanticError": {"Statement.SemanticError"},
    "TypeError": {"Statement.TypeError"},
    "ArgumentError": {"Statement.ArgumentError"},
    "EntityNotFound": {"Statement.EntityNotFound"},
    "ParameterMissing": {"Statement.ParameterMissing"},
    "ConstraintVerificationFailed": {"Schema.ConstraintValidationFailed"},
    "ProcedureError": {"Procedure.ProcedureNotFound", "Procedure.ProcedureCallFailed"},
}
#: Neo4j reports what it finds while compiling (type mismatches, bad arguments, semantic
#: errors) as a SyntaxError or SemanticError whatever the TCK's type; a SyntaxError the TCK
#: places at runtime (a negative SKIP from a parameter) comes as an ArgumentError.
COMPILE_TIME_CODES = {"Statement.SyntaxError", "Statement.SemanticError"}
RUNTIME_SYNTAX_CODES = {"Statement.ArgumentError"}


@dataclass(frozen=True)
class GraphState:
    """What the TCK's side effects count: node and relationship ids, label names in use, and
    property triples (("n" | "r", id, key, comparable value)); plus each entity's shape
    (("n", id, labels) or ("r", id, type, start id, end id)) to tell a reused id."""

    nodes: frozenset = frozenset()
    relationships: frozenset = frozenset()
    labels: frozenset = frozenset()
    properties: frozenset = frozenset()
    shapes: frozenset = frozenset()


def _rewritten(before: GraphState, after: GraphState, kind: str) -> set:
    """Ids of one kind ("n" or "r") in both states whose shape or properties changed."""
    changed = {item[1] for item in (before.shapes ^ after.shapes) | (before.properties ^ after.properties)
               if item[0] == kind}
    ids = before.nodes & after.nodes if kind == "n" else before.relationships & after.relationships
    return changed & ids


def side_effects(before: GraphState, after: GraphState, counters: dict | None = None) -> dict[str, int]:
    """`{"+nodes": 1, "-properties": 2, ...}` from one state to the next, zero counts left out.

    FalkorDB gives a deleted entity's id to the next one created, even in the same query, so
    such a pair shows in the ids as neither. `counters` ({"nodes": (created, deleted), ...},
    the query's own counts) tell how many pairs the ids hide; each is counted when an id
    present before and after changed its labels, type, ends or properties. An entity created
    and deleted in the query (in no state) stays uncounted, as the TCK's graph comparison has
    it, and so does a new entity identical to the deleted one whose id it took.
    """
    effects = {}
    for name in ("nodes", "relationships", "labels", "properties"):
        old, new = getattr(before, name), getattr(after, name)
        effects[f"+{name}"], effects[f"-{name}"] = len(new - old), len(old - new)
    for name, (created, deleted) in (counters or {}).items():
        hidden = created - effects[f"+{name}"]
        if hidden > 0 and deleted - effects[f"-{name}"] == hidden:
            reused = min(hidden, len(_rewritten(before, after, name[0])))
            effects[f"+{name}"] += reused
            effects[f"-{name}"] += reused
    return {key: n for key, n in effects.items() if n}


@dataclass(frozen=True)
class Outcome:
    """What one query produced: an error, or column names + rows (raw values), and when the
    target can see the graph, the side effects it had."""

    error: str | None = None
    keys: tuple = ()
    rows: tuple = ()
    setup_step: int | None = None     # set when a setup query failed (then `error` is set)
    failed_check: int | None = None   # set when an earlier check query failed (then `error` is set)
    effects: dict | None = None       # the TCK's side effects, from the graph before and after
    counters: dict | None = None      # the query's own {"nodes": (created, deleted), ...}


@dataclass(frozen=True)
class Verdict:
    kind: str                 # one of CLASSES
    expected: str = ""        # the TCK's answer, as the report prints it
    got: str = ""             # the proxy's


def error_code(error: str) -> str:
    """`Statement.SyntaxError` from `Neo.ClientError.Statement.SyntaxError: message`; the whole
    code for errors that are not client errors."""
    code = error.split(":", 1)[0].strip()
    return code.removeprefix("Neo.ClientError.")


def accepted_codes(expected: Expected) -> set[str]:
    codes = set(ERROR_CODES.get(expected.error or "", ()))
    if expected.phase in ("compile time", "any time"):
        codes |= COMPILE_TIME_CODES
    if expected.error == "SyntaxError" and expected.phase in ("runtime", "any time"):
        codes |= RUNTIME_SYNTAX_CODES
    return codes


def expected_text(expected: Expected) -> str:
    if expected.kind == "error":
        return f"{expected.error} at {expected.phase}: {expected.detail}"
    if expected.kind == "empty":
        text = "empty result"
    else:
        order = ", in order" if expected.ordered else ""
        text = f"columns {expected.header}{order}, rows " + \
            "; ".join("[" + ", ".join(row) + "]" for row in expected.rows)
    return text + (f"; side effects {expected.side_effects}" if expected.side_effects else "")


def got_text(outcome: Outcome) -> str:
    if outcome.error:
        return outcome.error
    rows = "; ".join("[" + ", ".join(cypher_text(v) for v in row) + "]" for row in outcome.rows)
    return f"columns {list(outcome.keys)}, rows {rows or '(none)'}" + \
        (f"; side effects {outcome.effects}" if outcome.effects else "")


def rows_match(expected: Expected, outcome: Outcome) -> bool:
    """The TCK's rows (LiteralError for a cell this suite cannot parse)."""
    if expected.kind == "empty":
        return not outcome.rows
    options = {"temporal_as_string": True, "unordered_lists": expected.ignore_list_order}
    want = normalise_rows([[parse_literal(c) for c in row] for row in expected.rows], **options)
    got = normalise_rows(outcome.rows, **options)
    return list(outcome.keys) == expected.header and rows_equal(want, got, expected.ordered)


def classify(check: Check, outcome: Outcome) -> Verdict:
    """The class of one check's outcome (LiteralError for an unparsable expected cell)."""
    expected = check.expected
    want, got = expected_text(expected), got_text(outcome)
    if outcome.setup_step is not None:
        return Verdict(LOUD, want, f"setup query {outcome.setup_step + 1}: {outcome.error}")
    if outcome.failed_check is not None:
        return Verdict(LOUD, want, f"query {outcome.failed_check + 1}: {outcome.error}")
    if expected.kind == "error":
        if outcome.error is None:
            return Verdict(ACCEPTS_INVALID, want, got)
        ok = error_code(outcome.error) in accepted_codes(expected)
        return Verdict(MATCH if ok else OTHER_ERROR, want, got)
    if outcome.error:
        return Verdict(LOUD, want, got)
    if not rows_match(expected, outcome):
        return Verdict(SILENT_WRONG, want, got)
    stated = expected.side_effects
    if stated is not None and outcome.effects is not None and stated != outcome.effects:
        return Verdict(SILENT_WRONG, want, got + ("" if outcome.effects else "; no side effects"))
    return Verdict(MATCH, want, got)

