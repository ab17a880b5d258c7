"""Parse the Cypher-literal syntax of TCK table cells and parameters.

Values: `null`, `true`/`false`, integers (decimal, `0x..`, `0o..`), floats (`1.5`, `1e10`, `NaN`,
`Inf`/`Infinity`), strings in single or double quotes, lists `[..]`, maps `{k: v}`, nodes
`(:A:B {p: 1})`, relationships `[:T {p: 1}]` and paths `<(:A)-[:T]->(:B)>`. Graph values become
`NodeLit` / `RelLit` / `PathLit`; everything else becomes plain Python. Anything else raises
`LiteralError` (the suite counts those cells as unparsed).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from extensions.cypher.tokens import (
    EOF,
    FLOAT,
    IDENT,
    INT,
    OP,
    QIDENT,
    STRING,
    Token,
    tokenize,
)
from core.errors import CypherError

__all__ = ["LiteralError", "NodeLit", "PathLit", "RelLit", "parse_literal"]


class LiteralError(ValueError):
    """The text is not a literal this parser understands."""


@dataclass
class NodeLit:
    labels: list[str] = field(default_factory=list)
    properties: dict = field(default_factory=dict)


@dataclass
class RelLit:
    type: str | None = None
    properties: dict = field(default_factory=dict)


@dataclass
class PathLit:
    nodes: list[NodeLit] = field(default_factory=list)
    relationships: list[RelLit] = field(default_factory=list)


#: Words the TCK writes as values (exactly so; `null` in any case).
_WORDS = {"true": True, "false": False, "NaN": float("nan"), "Inf": float("inf"), "Infinity": float("inf")}


class _Parser:
    """Recursive descent over the Cypher tokenizer's tokens (strings, numbers and names are
    lexed exactly as in queries; `<`, `-` and `>` stay single tokens, so arrows work)."""

    def __init__(self, text: str):
        self.text = text
        try:
            self.tokens = tokenize(text)
        except CypherError as exc:
            raise LiteralError(f"{exc.message} in {text!r}") from None
        self.i = 0

    def fail(self, what: str):
        raise LiteralError(f"{what} at {self.tokens[self.i].start} in {self.text!r}")

    def peek(self, op: str, ahead: int = 0) -> bool:
        tok = self.tokens[min(self.i + ahead, len(self.tokens) - 1)]
        return tok.kind == OP and tok.value == op

    def take(self, op: str) -> bool:
        if self.peek(op):
            self.i += 1
            return True
        return False

    def expect(self, op: str) -> None:
        if not self.take(op):
            self.fail(f"expected {op!r}")

    def next(self) -> Token:
        tok = self.tokens[self.i]
        self.i += 1
        return tok

    def name(self) -> str:
        if self.tokens[self.i].kind not in (IDENT, QIDENT):
            self.fail("expected a name")
        return self.next().value

    def value(self):
        tok = self.tokens[self.i]
        if tok.kind in (STRING, INT, FLOAT):
            return self.next().value
        if tok.kind == IDENT and (tok.value in _WORDS or tok.value.lower() == "null"):
            return _WORDS.get(self.next().value)
        if self.take("-"):
            number = self.value()
            if isinstance(number, bool) or not isinstance(number, (int, float)):
                self.fail("expected a number after '-'")
            return -number
        if self.peek("[") and self.peek(":", 1):
            return self.relationship()
        if self.peek("["):
            return self.list()
        if self.peek("{"):
            return self.map()
        if self.peek("("):
            return self.node()
        if self.peek("<"):
            return self.path()
        self.fail("expected a value")

    def list(self) -> list:
        self.expect("[")
        items = []
        if not self.take("]"):
            items.append(self.value())
            while self.take(","):
                items.append(self.value())
            self.expect("]")
        return items

    def map(self) -> dict:
        self.expect("{")
        out = {}
        if not self.take("}"):
            while True:
                key = self.name()
                self.expect(":")
                out[key] = self.value()
                if not self.take(","):
                    break
            self.expect("}")
        return out

    def properties(self) -> dict:
        return self.map() if self.peek("{") else {}

    def node(self) -> NodeLit:
        self.expect("(")
        if not (self.peek(":") or self.peek("{") or self.peek(")")):
            self.name()                               # a variable name, as in <(a)-->(b)>
        labels = []
        while self.take(":"):
            labels.append(self.name())
        node = NodeLit(labels, self.properties())
        self.expect(")")
        return node

    def relationship(self) -> RelLit:
        self.expect("[")
        if not (self.peek(":") or self.peek("{") or self.peek("]")):
            self.name()
        rel_type = self.name() if self.take(":") else None
        rel = RelLit(rel_type, self.properties())
        self.expect("]")
        return rel

    def path(self) -> PathLit:
        self.expect("<")
        path = PathLit([self.node()])
        while not self.take(">"):
            self.take("<")
            self.expect("-")
            rel = self.relationship() if self.peek("[") else RelLit()
            self.expect("-")
            self.take(">")
            path.relationships.append(rel)
            path.nodes.append(self.node())
        return path


def parse_literal(text: str):
    """The value written in `text`; raises LiteralError if it is not one whole literal."""
    parser = _Parser(text)
    value = parser.value()
    if parser.tokens[parser.i].kind != EOF:
        parser.fail("unexpected text")
    return value
