"""The token cursor every part of the parser moves: look ahead, accept, expect, fail."""

from __future__ import annotations

from .. import ast as A
from ..tokens import EOF, IDENT, INT, OP, QIDENT, Token, error_at, tokenize

MAX_INT = 2**63 - 1

CLAUSE_KEYWORDS = frozenset({
    "MATCH", "OPTIONAL", "UNWIND", "WITH", "RETURN", "CALL", "CREATE", "MERGE", "SET", "REMOVE",
    "DELETE", "DETACH", "NODETACH", "FOREACH", "USE", "LOAD", "FINISH",
})
# Words that start an admin/schema command, parsed as an opaque `Command`.
COMMAND_KEYWORDS = frozenset({
    "SHOW", "DROP", "ALTER", "GRANT", "REVOKE", "DENY", "START", "STOP", "TERMINATE", "ENABLE",
    "RENAME",
})
# Words that can never be a bare variable: seeing one where an expression starts is an error.
NOT_A_VARIABLE = frozenset({
    "MATCH", "RETURN", "WITH", "WHERE", "UNWIND", "MERGE", "UNION", "ORDER", "SKIP", "LIMIT",
    "AND", "OR", "XOR", "AS", "WHEN", "THEN", "ELSE", "DETACH", "OPTIONAL",
})

COMPARISON_OPS = frozenset({"=", "<>", "!=", "<", ">", "<=", ">="})
# Infix binding powers; a higher number binds tighter. NOT (prefix) sits at 4, unary +/- at 10.
_BP_OP = {"=": 5, "<>": 5, "!=": 5, "<": 5, ">": 5, "<=": 5, ">=": 5, "=~": 6, "::": 6,
          "+": 7, "-": 7, "||": 7, "*": 8, "/": 8, "%": 8, "^": 9, ".": 11, "[": 11, ":": 11}
_BP_KW = {"OR": 1, "XOR": 2, "AND": 3, "IN": 6, "STARTS": 6, "ENDS": 6, "CONTAINS": 6, "IS": 6}
_TYPE_WORDS = ("NOT", "NULL", "VALUE", "TIME", "TIMEZONE", "ZONE", "ANY",
               "BOOLEAN", "STRING", "INTEGER", "FLOAT", "DATE", "DURATION", "POINT", "NODE",
               "RELATIONSHIP", "MAP", "LIST", "PATH", "NOTHING", "LOCAL", "ZONED", "DATETIME")
_BP_NOT = 4
_BP_UNARY = 10
_BP_POSTFIX = 11


class Cursor:
    """Tokens of one text and a position in them."""

    def __init__(self, text: str):
        self.text = text
        self.toks = tokenize(text)
        self.i = 0
        self.no_label_or = False   # inside [x IN l WHERE p | e], '|' ends the WHERE


    # ------------------------------------------------------------ token helpers

    def peek(self, k: int = 0) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> Token:
        tok = self.toks[self.i]
        if tok.kind != EOF:
            self.i += 1
        return tok

    @property
    def prev_end(self) -> int:
        return self.toks[self.i - 1].end if self.i else 0

    def span(self, start: int) -> A.Span:
        return (start, self.prev_end)

    def at_op(self, op: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok.kind == OP and tok.value == op

    def at_kw(self, *words: str, k: int = 0) -> bool:
        return self.peek(k).upper in words

    def accept_op(self, op: str) -> bool:
        if self.at_op(op):
            self.i += 1
            return True
        return False

    def accept_kw(self, *words: str) -> bool:
        if self.peek().upper in words:
            self.i += 1
            return True
        return False

    def expect_op(self, op: str) -> Token:
        if not self.at_op(op):
            self.fail(f"'{op}'")
        return self.next()

    def expect_kw(self, word: str) -> Token:
        if not self.at_kw(word):
            self.fail(word)
        return self.next()

    def fail(self, expected: str):
        tok = self.peek()
        found = "" if tok.kind == EOF else self.text[tok.start:tok.end]
        raise error_at(self.text, tok.start, expected, found)

    def name(self, what: str = "an identifier") -> tuple[str, Token]:
        tok = self.peek()
        if tok.kind not in (IDENT, QIDENT):
            self.fail(what)
        self.i += 1
        return tok.value, tok

    def variable(self) -> A.Variable:
        value, tok = self.name("a variable name")
        return A.Variable(value, span=(tok.start, tok.end))

    def int_literal(self) -> int:
        tok = self.peek()
        if tok.kind != INT:
            self.fail("an integer")
        self.i += 1
        return tok.value

    def _comma_list(self, item):
        items = [item()]
        while self.accept_op(","):
            items.append(item())
        return tuple(items)
