"""Cypher tokenizer: text -> list of `Token`s with character offsets.

Comments and whitespace never produce tokens, and string/identifier contents are decoded here,
so no later stage can mistake text inside a string or comment for code. Keywords are not a
token kind: a keyword is an `IDENT` whose `upper` matches, because Cypher lets most keywords be
used as names (`n.count`, `{match: 1}`, `contains(a, b)`) and only the parser knows which is meant.
"""

from __future__ import annotations

import re

from core.errors import CypherError, syntax_error

IDENT = "IDENT"      # bare identifier or keyword; value is the text, upper the upper-cased text
QIDENT = "QIDENT"    # `backticked` identifier; value is the unescaped name
STRING = "STRING"
INT = "INT"
FLOAT = "FLOAT"
PARAM = "PARAM"      # value is the parameter name without '$'
OP = "OP"            # punctuation and operators; value is the operator text
EOF = "EOF"


class Token:
    """One token: kind, decoded value, and the [start, end) character offsets in the text."""

    __slots__ = ("kind", "value", "start", "end", "upper")

    def __init__(self, kind: str, value, start: int, end: int):
        self.kind = kind
        self.value = value
        self.start = start
        self.end = end
        self.upper = value.upper() if kind == IDENT else None

    def __repr__(self) -> str:
        return f"Token({self.kind}, {self.value!r}, {self.start}, {self.end})"


# Longest operators first so '<=' wins over '<'. '<' '-' '>' stay single characters so that
# relationship arrows ('<-', '->', '<-->') tokenize the same in every spacing.
_OPERATORS = ["=~", "<>", "!=", "<=", ">=", "+=", "..", "::", "||"]
_SINGLE = "-+*/%^=<>()[]{},.:;|&!?"

_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<line_comment>//[^\n\r]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<open_comment>/\*)
  | (?P<string>'[^'\\]*(?:\\.[^'\\]*)*'|"[^"\\]*(?:\\.[^"\\]*)*")
  | (?P<qident>`(?:[^`]|``)*`)
  | (?P<hex>0x[0-9a-fA-F_]+)
  | (?P<octal>0o[0-7_]+)
  | (?P<float>(?:\d[\d_]*)?\.\d[\d_]*(?:[eE][+-]?\d+)?|\d[\d_]*[eE][+-]?\d+)
  | (?P<int>\d[\d_]*)
  | (?P<param>\$(?:[^\W]\w*|`(?:[^`]|``)*`))
  | (?P<ident>[^\W\d]\w*)
  | (?P<op>=~|<>|!=|<=|>=|\+=|\.\.|::|\|\||[-+*/%^=<>()\[\]{},.:;|&!?]|\$(?=\())
    """,
    re.VERBOSE | re.DOTALL,
)

_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", "'": "'", '"': '"', "\\": "\\"}
_ESCAPE_RE = re.compile(r"\\(u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|.)", re.DOTALL)
_IDENT_CHAR = re.compile(r"\w")


class MalformedLiteral(CypherError):
    """A literal Neo4j's lexer refuses (`'\\uH'`): refused whatever the rest of the query is."""


def position(text: str, offset: int) -> str:
    """'(line L, column C (offset: O))' as Neo4j prints it: 1-based line and column."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"(line {line}, column {column} (offset: {offset}))"


def error_at(text: str, offset: int, expected: str, found: str | None = None) -> CypherError:
    """A Neo4j-style SyntaxError: `Invalid input 'X': expected ... (line L, column C (offset: O))`."""
    if found is None:
        m = re.compile(r"\w+|\S").match(text, offset)
        found = m.group(0) if m else ""
    return syntax_error(f"Invalid input '{found}': expected {expected} {position(text, offset)}")


def _unescape(text: str, body: str, start: int) -> str:
    """Decode Cypher string escapes; a malformed \\u escape is a SyntaxError (as in Neo4j)."""
    if "\\" not in body:
        return body

    def sub(m: re.Match) -> str:
        esc = m.group(1)
        if esc[0] in "uU" and len(esc) > 1:
            code = int(esc[1:], 16)
            if code > 0x10FFFF:
                raise error_at(text, start + m.start(), "a valid unicode escape", m.group(0))
            return chr(code)
        if esc in "uU":
            error = error_at(text, start + m.start(), "a unicode escape \\uXXXX or \\UXXXXXXXX",
                             text[start + m.start():start + m.start() + 6])
            raise MalformedLiteral(error.code, error.message)
        return _ESCAPES.get(esc, "\\" + esc)

    return _ESCAPE_RE.sub(sub, body)


def string_value(literal: str) -> str:
    """The value of one Cypher string literal, quotes included (`'it\\'s'` -> `it's`)."""
    return _unescape(literal, literal[1:-1], 1)


def _number(text: str, kind: str, raw: str, start: int):
    digits = raw.replace("_", "")
    if kind == "hex":
        return INT, int(digits[2:], 16)
    if kind == "octal":
        return INT, int(digits[2:], 8)
    if kind == "int":
        if len(digits) > 1 and digits[0] == "0":  # legacy octal literal 017
            if not digits.isdigit() or any(c in "89" for c in digits):
                raise error_at(text, start, "an integer literal", raw)
            return INT, int(digits, 8)
        try:
            return INT, int(digits)
        except ValueError:                        # past Python's 4,300-digit conversion limit
            shown = raw if len(raw) <= 40 else raw[:40] + "..."
            raise syntax_error(f"integer is too large: {shown} {position(text, start)}") from None
    value = float(digits)
    if value == float("inf"):
        raise syntax_error(f"Floating point number is too large: {raw} {position(text, start)}")
    return FLOAT, value


def tokenize(text: str) -> list[Token]:
    """Split `text` into tokens (ending with an EOF token); raises a SyntaxError CypherError."""
    tokens: list[Token] = []
    append = tokens.append
    match = _TOKEN_RE.match
    pos, n = 0, len(text)
    while pos < n:
        m = match(text, pos)
        if m is None:
            ch = text[pos]
            if ch in "'\"":
                raise error_at(text, pos, "a closing quote for the string", ch)
            if ch == "`":
                raise error_at(text, pos, "a closing backtick", ch)
            raise error_at(text, pos, "a valid token", ch)
        kind = m.lastgroup
        end = m.end()
        raw = m.group(kind)
        if kind == "ident":
            append(Token(IDENT, raw, pos, end))
        elif kind == "op":
            append(Token(OP, raw, pos, end))
        elif kind in ("ws", "line_comment", "block_comment"):
            pass
        elif kind == "open_comment":
            raise error_at(text, pos, "'*/' closing the comment", "/*")
        elif kind == "string":
            append(Token(STRING, _unescape(text, raw[1:-1], pos + 1), pos, end))
        elif kind == "qident":
            append(Token(QIDENT, raw[1:-1].replace("``", "`"), pos, end))
        elif kind == "param":
            name = raw[1:]
            if name.startswith("`"):
                name = name[1:-1].replace("``", "`")
            append(Token(PARAM, name, pos, end))
        else:
            if end < n and _IDENT_CHAR.match(text, end):
                raise error_at(text, pos, "a number literal", raw + _IDENT_CHAR.match(text, end).group(0))
            tkind, value = _number(text, kind, raw, pos)
            append(Token(tkind, value, pos, end))
        pos = end
    append(Token(EOF, "", n, n))
    return tokens


#: Strings (the unrolled form: a C loop per run of plain characters), quoted names, comments,
#: each also when left open (it then runs to the end of the text).
_LEXEME = re.compile(r"""'[^'\\]*+(?:\\.[^'\\]*+)*+'?|"[^"\\]*+(?:\\.[^"\\]*+)*+"?|`[^`]*+`?"""
                     r"""|//[^\n]*+|/\*.*?(?:\*/|$)""", re.S)


def code_only(text: str) -> str:
    """`text` with strings, quoted names and comments blanked out (same length): what a scan for
    keywords may read, for text the tokenizer refuses too."""
    return _LEXEME.sub(lambda m: " " * len(m.group()), text)


def after_first(first: str, then: str, within: str = ";") -> str:
    """A regex that holds where `then` follows `first` in one stretch of text free of `within`
    (a statement, by default), found in linear time: each stretch is scanned once, from its first
    `first` (a lazy `first[^;]*?then` scans again from every later `first`: quadratic in a text
    repeating `first`, such as `in in in ...`)."""
    free = f"[^{re.escape(within)}]"
    return rf"(?:^|{re.escape(within)})(?>{free}*?{first}){free}*?{then}"
