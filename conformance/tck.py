"""Reader for the openCypher TCK `.feature` files (the subset of Gherkin the TCK uses).

`read_feature(path)` yields one `Scenario` per scenario, with Scenario Outlines expanded once per
Examples row (`<name>` placeholders substituted in the steps, docstrings and tables) and the
feature's Background steps put in front. Steps are interpreted into what a runner needs: the
starting graph, the setup queries, the parameters, the procedures the scenario declares, and one
`Check` (query + expected outcome) per `When executing [control] query:`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Check", "Expected", "Scenario", "Step", "read_feature", "read_tck", "table_cells"]


@dataclass
class Step:
    """One Gherkin step: its text without the keyword, plus an optional docstring or table."""

    text: str
    line: int
    docstring: str | None = None
    table: list[list[str]] | None = None


@dataclass
class Expected:
    """What a query should produce.

    kind: "rows" (a table, maybe of zero rows), "empty", or "error".
    """

    kind: str
    header: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)   # raw cell text (Cypher-literal syntax)
    ordered: bool = False
    ignore_list_order: bool = False
    error: str | None = None                             # e.g. "SyntaxError"
    phase: str | None = None                             # "compile time" | "runtime" | "any time"
    detail: str | None = None                            # e.g. "UndefinedVariable"
    side_effects: dict[str, int] | None = None           # None: not stated


@dataclass
class Check:
    query: str
    expected: Expected | None
    control: bool = False


@dataclass
class Scenario:
    name: str
    feature: Path
    line: int
    tags: list[str] = field(default_factory=list)
    graph: str = "empty"               # "empty", "any", or a named graph such as "binary-tree-1"
    setup: list[str] = field(default_factory=list)
    parameters: dict[str, str] = field(default_factory=dict)   # raw literal text per name
    procedures: list[str] = field(default_factory=list)       # signatures declared by the scenario
    checks: list[Check] = field(default_factory=list)
    example: dict[str, str] | None = None                     # the Examples row of an outline

    @property
    def query(self) -> str:
        return self.checks[0].query

    @property
    def expected(self) -> Expected | None:
        return self.checks[0].expected

    @property
    def id(self) -> str:
        """`Feature.feature:line Name`; outline names end with ` #n`, the Examples row number."""
        return f"{self.feature.name}:{self.line} {self.name}"


_KEYWORD = re.compile(r"^(Given|When|Then|And|But)\s+(.*)$")
_SCENARIO = re.compile(r"^(Scenario|Scenario Outline|Background):\s*(.*)$")
_ERROR = re.compile(r"^a (\w+) should be raised at (compile time|runtime|any time): (\S+)$")
_PROCEDURE = re.compile(r"^there exists a procedure (.*):$")
_NAMED_GRAPH = re.compile(r"^the ([\w-]+) graph$")


_CELL_ESCAPES = {"\\|": "|", "\\\\": "\\", "\\n": "\n"}


def table_cells(line: str) -> list[str]:
    """The cells of one `| a | b |` row, trimmed, then Gherkin's escapes undone: `\\|` is a
    bar, `\\\\` one backslash, `\\n` a newline (any other backslash stays, for the Cypher
    literal inside)."""
    cells, cell = [], []
    for token in re.findall(r"\\[|\\n]|\||[^|\\]+|\\", line.strip()):
        if token == "|":
            cells.append("".join(cell).strip())
            cell = []
        else:
            cell.append(token)
    return [re.sub(r"\\[|\\n]", lambda m: _CELL_ESCAPES[m.group()], c) for c in cells[1:]]


def _docstring(lines: list[str], i: int) -> tuple[str, int]:
    """The block opening with `\"\"\"` on line i, dedented by its opening indent; next line index."""
    indent = lines[i].index('"""')
    body = []
    i += 1
    while lines[i].strip() != '"""':
        text = lines[i]
        body.append(text[indent:] if text[:indent].strip() == "" else text.lstrip())
        i += 1
    return "\n".join(body), i + 1


def _table(lines: list[str], i: int) -> tuple[list[list[str]], int]:
    """The rows of the table starting at line i (commented-out `#|` rows skipped); next line."""
    rows = []
    while i < len(lines) and lines[i].strip().startswith(("|", "#")):
        if lines[i].strip().startswith("|"):
            rows.append(table_cells(lines[i]))
        i += 1
    return rows, i


def _skip_blank(lines: list[str], i: int) -> int:
    while i < len(lines) and (not lines[i].strip() or lines[i].strip().startswith("#")):
        i += 1
    return i


@dataclass
class _Block:
    kind: str                  # "Scenario", "Scenario Outline", "Background"
    name: str
    line: int
    tags: list[str]
    steps: list[Step] = field(default_factory=list)
    examples: list[dict[str, str]] = field(default_factory=list)


def _blocks(lines: list[str]) -> Iterator[_Block]:
    """Backgrounds and scenarios with their raw steps and Examples rows."""
    block: _Block | None = None
    tags: list[str] = []
    i = 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("@"):
            tags += stripped.split()
        elif m := _SCENARIO.match(stripped):
            if block:
                yield block
            block, tags = _Block(m.group(1), m.group(2), i + 1, tags), []
        elif stripped.startswith("Examples:") and block:
            rows, i = _table(lines, _skip_blank(lines, i + 1))
            block.examples += [dict(zip(rows[0], row)) for row in rows[1:]]
            continue
        elif (m := _KEYWORD.match(stripped)) and block:
            step = Step(m.group(2), i + 1)
            j = _skip_blank(lines, i + 1)
            if j < len(lines) and lines[j].strip() == '"""':
                step.docstring, i = _docstring(lines, j)
            elif j < len(lines) and lines[j].strip().startswith("|"):
                step.table, i = _table(lines, j)
            else:
                i += 1
            block.steps.append(step)
            continue
        i += 1
    if block:
        yield block


def _substitute(text: str, example: dict[str, str]) -> str:
    return re.sub(r"<([\w ]+)>", lambda m: example.get(m.group(1), m.group(0)), text)


def _instantiate(step: Step, example: dict[str, str]) -> Step:
    if not example:
        return step
    return Step(_substitute(step.text, example), step.line,
                None if step.docstring is None else _substitute(step.docstring, example),
                None if step.table is None else [[_substitute(c, example) for c in row]
                                                 for row in step.table])


def _expected(step: Step) -> Expected | None:
    text = step.text
    if text.startswith("the result should be empty"):
        return Expected("empty")
    if text.startswith("the result should be"):
        table = step.table or [[]]
        return Expected("rows", header=table[0], rows=table[1:], ordered=", in order" in text,
                        ignore_list_order="ignoring element order for lists" in text)
    if m := _ERROR.match(text):
        return Expected("error", error=m.group(1), phase=m.group(2), detail=m.group(3))
    return None


def _interpret(scenario: Scenario, steps: list[Step]) -> Scenario:
    for step in steps:
        text = step.text
        if text == "an empty graph":
            scenario.graph = "empty"
        elif text == "any graph":
            scenario.graph = "any"
        elif m := _NAMED_GRAPH.match(text):
            scenario.graph = m.group(1)
        elif text.startswith("having executed"):
            scenario.setup.append(step.docstring or "")
        elif text.startswith("parameters are"):
            scenario.parameters.update({row[0]: row[1] for row in step.table or []})
        elif m := _PROCEDURE.match(text):
            scenario.procedures.append(m.group(1))
        elif text.startswith(("executing query", "executing control query")):
            scenario.checks.append(Check(step.docstring or "", None, control="control" in text))
        elif (expected := _expected(step)) is not None and scenario.checks:
            scenario.checks[-1].expected = expected
        elif text == "no side effects" and scenario.checks and scenario.checks[-1].expected:
            scenario.checks[-1].expected.side_effects = {}
        elif text.startswith("the side effects should be") and scenario.checks \
                and scenario.checks[-1].expected:
            scenario.checks[-1].expected.side_effects = {row[0]: int(row[1])
                                                         for row in step.table or []}
    return scenario


def read_feature(path: Path) -> Iterator[Scenario]:
    """Every scenario of one .feature file, outlines expanded, in file order."""
    path = Path(path)
    background: list[Step] = []
    for block in _blocks(path.read_text(encoding="utf-8").splitlines()):
        if block.kind == "Background":
            background = block.steps
            continue
        examples = block.examples if block.kind == "Scenario Outline" else [{}]
        for n, example in enumerate(examples):
            name = _substitute(block.name, example) + (f" #{n + 1}" if example else "")
            steps = [_instantiate(s, example) for s in background + block.steps]
            yield _interpret(Scenario(name, path, block.line, block.tags,
                                      example=example or None), steps)


def read_tck(root: Path) -> Iterator[Scenario]:
    """Every scenario under `root`, features in sorted path order."""
    for path in sorted(Path(root).rglob("*.feature")):
        yield from read_feature(path)
