"""Cypher parser: recursive descent for clauses and patterns, Pratt for expressions.

`parse(text)` returns an immutable `Query` and is cached by query text. Every node gets the
character span of its source. Keywords are recognised by position, not reserved by the
tokenizer: after an operand `CONTAINS` is the operator, where an operand may start
`contains(` is a function call (likewise `exists(`, `count(`, `any(` ...).
"""

from __future__ import annotations

from functools import lru_cache

from core.errors import syntax_error

from .. import ast as A
from ..tokens import EOF
from .clauses import ClauseParser
from .commands import CommandParser
from .cursor import Cursor
from .expressions import ExpressionParser
from .patterns import PatternParser


class Parser(CommandParser, ClauseParser, PatternParser, ExpressionParser, Cursor):
    """One parse of one text. Use the module-level `parse()`."""


@lru_cache(maxsize=2048)
def parse(text: str) -> A.Query:
    """Parse one Cypher statement (optionally EXPLAIN/PROFILE-prefixed, optional trailing ';').

    Raises a `CypherError` with code Neo.ClientError.Statement.SyntaxError on invalid input.
    The result is cached by text and must be treated as immutable.
    """
    try:
        return Parser(text).parse_statement()
    except RecursionError:
        raise syntax_error("Invalid input: the query is nested too deeply to parse; "
                           "reduce the nesting of parentheses, lists or subqueries") from None


def parse_expression(text: str) -> A.Expr:
    """Parse a standalone expression (used by tests and tools)."""
    parser = Parser(text)
    node = parser.expr()
    if parser.peek().kind != EOF:
        parser.fail("the end of the expression")
    return node
