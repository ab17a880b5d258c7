"""Parse every query of the openCypher TCK (../shared/tck beside the repo).

Valid queries (all but those marked "SyntaxError ... at compile time") must parse. Queries the
TCK marks as compile-time SyntaxErrors must be rejected by the parser unless their error is
semantic (scoping, typing, aggregation rules): those are left for the backend, which reports
them with Neo4j's own message.
"""

from __future__ import annotations

import re

from extensions.cypher import ast as A
from extensions.cypher import parse, render
from proxy.errors import CypherError
from tests.harness import SHARED

TCK = SHARED / "tck"

# Error kinds that are about grammar, not meaning: the parser must reject these queries.
SYNTACTIC = {"UnexpectedSyntax", "InvalidNumberLiteral", "IntegerOverflow", "FloatingPointOverflow",
             "InvalidUnicodeLiteral", "InvalidUnicodeCharacter"}

# Valid TCK queries the parser does not accept, with the reason. Keep this empty if possible.
ALLOWED_FAILURES: dict[str, str] = {}

# Grammar-level TCK errors the parser accepts, keyed by test-id prefix, with the reason. The
# backend rejects them with Neo4j's message; the proxy needs no second opinion.
ACCEPTED_SYNTAX_ERRORS: dict[str, str] = {
    "clauses/call/Call5.feature::Scenario: [7]":
        "YIELD * is grammatical; only standalone CALL may use it (a scoping rule)",
    "expressions/list/List6.feature::Scenario Outline: [6]":
        "pattern expressions outside WHERE (size((a)-->())) are openCypher 9 grammar; "
        "Neo4j 5 rejects them semantically",
    "expressions/pattern/Pattern1.feature::Scenario: [2":
        "same: pattern expression used as a value in RETURN/WITH/SET",
}


def _docstring(lines: list[str], i: int) -> tuple[str, int]:
    """The text of the \"\"\" block starting at or after line i, and the line after it."""
    while '"""' not in lines[i]:
        i += 1
    indent = lines[i].index('"""')
    body = []
    i += 1
    while '"""' not in lines[i]:
        body.append(lines[i][indent:] if lines[i][:indent].strip() == "" else lines[i].lstrip())
        i += 1
    return "\n".join(body), i + 1


def _examples(lines: list[str], i: int) -> list[dict[str, str]]:
    """Rows of the Examples: table starting after line i (cells with \\| unescaped)."""
    rows = []
    while i < len(lines) and not lines[i].strip().startswith("|"):
        i += 1
    while i < len(lines) and lines[i].strip().startswith("|"):
        cells = re.split(r"(?<!\\)\|", lines[i].strip())[1:-1]
        rows.append([c.strip().replace("\\|", "|") for c in cells])
        i += 1
    return [dict(zip(rows[0], row)) for row in rows[1:]]


def tck_queries() -> list[tuple[str, str, str | None]]:
    """(test id, query, error kind or None) for every query in every .feature file."""
    out = []
    for path in sorted(TCK.rglob("*.feature")):
        lines = path.read_text(encoding="utf-8").splitlines()
        scenarios: list[tuple[str, int, int]] = []   # (name, first line, last line)
        for n, line in enumerate(lines):
            if line.strip().startswith(("Scenario:", "Scenario Outline:")):
                scenarios.append((line.strip(), n, len(lines)))
        for k in range(len(scenarios) - 1):
            scenarios[k] = (scenarios[k][0], scenarios[k][1], scenarios[k + 1][1])
        for name, first, last in scenarios:
            queries, error, examples = [], None, [{}]
            i = first
            while i < last:
                stripped = lines[i].strip()
                if stripped.startswith(("When executing query:", "And having executed:",
                                        "When executing control query:", "Given having executed:")):
                    text, i = _docstring(lines, i + 1)
                    queries.append((stripped.startswith("When executing query"), text))
                    continue
                m = re.match(r"Then a SyntaxError should be raised at compile time: (\w+)", stripped)
                if m:
                    error = m.group(1)
                if stripped.startswith("Examples:"):
                    examples = _examples(lines, i + 1)
                i += 1
            for row_no, row in enumerate(examples):
                for q_no, (is_main, text) in enumerate(queries):
                    for key, value in row.items():
                        text = text.replace(f"<{key}>", value)
                    test_id = f"{path.relative_to(TCK)}::{name[:60]}#{row_no}.{q_no}"
                    out.append((test_id, text, error if is_main else None))
    return out


QUERIES = tck_queries()
VALID = [(tid, q) for tid, q, err in QUERIES if err is None]
INVALID = [(tid, q, err) for tid, q, err in QUERIES if err is not None]


def _parses(query: str) -> bool:
    try:
        parse(query)
        return True
    except CypherError:
        return False


def test_tck_found_queries():
    assert len(VALID) > 1500 and len(INVALID) > 100


def test_tck_valid_queries_parse():
    failures = [(tid, q) for tid, q in VALID if tid not in ALLOWED_FAILURES and not _parses(q)]
    rate = f"{len(VALID) - len(failures)}/{len(VALID)}"
    print(f"\nTCK valid queries parsed: {rate}")
    assert not failures, f"{rate} parsed; failures:\n" + "\n\n".join(f"{t}\n{q}" for t, q in failures[:40])


def test_tck_syntax_errors_rejected():
    accepted = [(tid, q, err) for tid, q, err in INVALID if _parses(q)]
    left_for_backend = [a for a in accepted if a[2] not in SYNTACTIC]
    print(f"\nTCK compile-time SyntaxErrors rejected by the parser: {len(INVALID) - len(accepted)}/{len(INVALID)}; "
          f"{len(left_for_backend)} semantic ones left for the backend")
    must_reject = [a for a in accepted if a[2] in SYNTACTIC
                   and not any(a[0].startswith(prefix) for prefix in ACCEPTED_SYNTAX_ERRORS)]
    assert not must_reject, "\n\n".join(f"{t} ({e})\n{q}" for t, q, e in must_reject)


def _check_spans(text: str, node: A.Node) -> None:
    for child in node.children():
        assert node.span[0] <= child.span[0] <= child.span[1] <= node.span[1], (text, node, child)
        _check_spans(text, child)
    if isinstance(node, A.Variable):
        assert text[node.span[0]:node.span[1]] in (node.name, "`" + node.name.replace("`", "``") + "`")
    elif isinstance(node, A.FunctionCall):
        assert "".join(text[node.name_span[0]:node.name_span[1]].split()) == node.name


def test_tck_spans_and_render_round_trip():
    """Over every valid TCK query: spans nest and name their source; render re-parses equal."""
    for tid, query in VALID:
        tree = parse(query)
        assert tree.span[1] <= len(query)
        _check_spans(query, tree)
        rendered = render(tree)
        assert parse(rendered) == tree, (tid, query, rendered)
