"""Parse the Cypher-literal syntax of TCK table cells and parameters.

Values: `null`, `true`/`false`, integers (decimal, `0x..`, `0o..`), floats (`1.5`, `1e10`, `NaN`,
`Inf`/`Infinity`), strings in single or double quotes, lists `[..]`, maps `{k: v}`, nodes
`(:A:B {p: 1})`, relationships `[:T {p: 1}]` and paths `<(:A)-[:T]->(:B)>`. Graph values become
`NodeLit` / `RelLit` / `PathLit`; everything else becomes plain Python. Anything else raises
`LiteralError` (the suite counts those cells as unparsed).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

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


_NUMBER = re.compile(r"-?(0x[0-9a-fA-F]+|0o[0-7]+|(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?)")
_NAME = re.compile(r"`([^`]*)`|[A-Za-z_][A-Za-z0-9_]*")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", "\\": "\\", "'": "'", '"': '"'}


class _Parser:
    def __init__(self, text: str):
        self.text, self.pos = text, 0

    def fail(self, what: str):
        raise LiteralError(f"{what} at {self.pos} in {self.text!r}")

    def ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def peek(self, s: str) -> bool:
        self.ws()
        return self.text.startswith(s, self.pos)

    def take(self, s: str) -> bool:
        if self.peek(s):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str) -> None:
        if not self.take(s):
            self.fail(f"expected {s!r}")

    def name(self) -> str:
        self.ws()
        m = _NAME.match(self.text, self.pos)
        if not m:
            self.fail("expected a name")
        self.pos = m.end()
        return m.group(1) if m.group(1) is not None else m.group(0)

    def value(self):
        self.ws()
        for word, val in (("null", None), ("true", True), ("false", False), ("NaN", float("nan")),
                          ("-Infinity", float("-inf")), ("Infinity", float("inf")),
                          ("-Inf", float("-inf")), ("Inf", float("inf"))):
            if re.match(re.escape(word) + r"\b", self.text[self.pos:], re.IGNORECASE if word == "null" else 0):
                self.pos += len(word)
                return val
        if self.peek("'") or self.peek('"'):
            return self.string()
        if self.peek("[:"):
            return self.relationship()
        if self.peek("["):
            return self.list()
        if self.peek("{"):
            return self.map()
        if self.peek("("):
            return self.node()
        if self.peek("<"):
            return self.path()
        m = _NUMBER.match(self.text, self.pos)
        if not m:
            self.fail("expected a value")
        self.pos = m.end()
        body = m.group(0)
        if "0x" in body or "0o" in body:
            return int(body, 0)
        if m.group(2) and ("." in body or "e" in body.lower()):
            return float(body)
        return int(body)

    def string(self) -> str:
        quote = self.text[self.pos]
        self.pos += 1
        out = []
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "\\" and self.pos + 1 < len(self.text):
                nxt = self.text[self.pos + 1]
                if nxt == "u":
                    out.append(chr(int(self.text[self.pos + 2:self.pos + 6], 16)))
                    self.pos += 6
                    continue
                out.append(_ESCAPES.get(nxt, "\\" + nxt))
                self.pos += 2
                continue
            self.pos += 1
            if c == quote:
                return "".join(out)
            out.append(c)
        self.fail("unterminated string")

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
        if not self.peek(":") and not self.peek("{") and not self.peek(")"):
            self.name()                               # a variable name, as in <(a)-->(b)>
        labels = []
        while self.take(":"):
            labels.append(self.name())
        node = NodeLit(labels, self.properties())
        self.expect(")")
        return node

    def relationship(self) -> RelLit:
        self.expect("[")
        if not self.peek(":") and not self.peek("{") and not self.peek("]"):
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
    parser.ws()
    if parser.pos != len(text):
        parser.fail("unexpected text")
    return value
