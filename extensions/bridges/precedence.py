"""Operator precedence where FalkorDB's grammar differs from Neo4j's: explicit parentheses.

Neo4j (openCypher) binds, loosest first: OR, XOR, AND, NOT, comparisons, the string and list
predicates (`IN`, `STARTS WITH`, `ENDS WITH`, `CONTAINS`, `IS [NOT] NULL`), `+ -`,
`* / %`, `^` (left-associative), unary `+ -`. FalkorDB 4.16 (and 4.22) binds the predicates
tighter than arithmetic and `^` to the right, so it reads `[1]+2 IN [3]+4` as
`[1] + (2 IN [3]) + 4`, `1 + 2 IS NULL` as `1 + (2 IS NULL)` and `2^3^2` as `2^(3^2)` (512, not
64): silently different values. The proxy's parser follows Neo4j's table
(`cypher/parser/cursor.py`), so each place where the two grammars can disagree gets the
parentheses Neo4j's reading implies; parentheses are zero-width insertions, so the bridges
inside the operands keep their edits.

A chain of comparisons means each pair in Neo4j (`a < b = c` is `a < b AND b = c`); FalkorDB
compares the first result with the next operand (`1 < 2 = true` is true there, false in
Neo4j), so a chain is written out pair by pair (dates compared by year first, see
`temporal_order`); one whose inner operands cannot be written twice (an extension call,
`rand()`) is refused.
"""

from __future__ import annotations

from core.errors import CypherError

from ..cypher import ast as A
from .rule import Context, Edit, Rule, copy, copyable
from .temporal_order import COMPARISONS, by_year, never_temporal

#: Predicates FalkorDB binds tighter than Neo4j does (`=~` is rewritten whole by `regex.py`
#: into a bracketed expression).
PREDICATES = frozenset({"IN", "STARTS WITH", "ENDS WITH", "CONTAINS"})
#: Operators a predicate may not be an operand of without parentheses on FalkorDB.
ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "^", "||"})
_OPERATORS = (A.BinaryOp, A.UnaryOp, A.ComparisonChain, A.IsNull, A.IsType)


def _predicate(node: A.Node) -> bool:
    return isinstance(node, A.IsNull) or (isinstance(node, A.BinaryOp) and node.op in PREDICATES)


def _wrapped(operand: A.Expr) -> list[Edit]:
    return [(operand.span[0], operand.span[0], "("), (operand.span[1], operand.span[1], ")")]


def parenthesize(node: A.BinaryOp | A.IsNull, ctx: Context) -> list[Edit]:
    """Parentheses around the operands of `node` that FalkorDB would group differently."""
    if isinstance(node, A.IsNull):
        return _wrapped(node.expr) if isinstance(node.expr, _OPERATORS) else []
    edits: list[Edit] = []
    for side, operand in (("left", node.left), ("right", node.right)):
        if (node.op in PREDICATES and isinstance(operand, _OPERATORS)
                or node.op in ARITHMETIC and _predicate(operand)
                or node.op == "^" and side == "left" and isinstance(operand, A.BinaryOp) and operand.op == "^"):
            edits += _wrapped(operand)
    return edits


def pairwise(chain: A.ComparisonChain, ctx: Context) -> list[Edit]:
    """`a < b = c` -> `(a < b AND b = c)`."""
    if not all(copyable(operand) for operand in chain.operands[1:-1]):
        raise CypherError("Neo.ClientError.Statement.UnsupportedOperationError",
                          f"`{chain.text_in(ctx.text)}`: the embedded FalkorDB reads a chain of "
                          "comparisons differently from Neo4j, and the proxy cannot write this one "
                          "out pair by pair; write it with AND (a < b AND b < c). (A limit of the "
                          "embedded FalkorDB.)")
    texts = [copy(operand, ctx) for operand in chain.operands]
    numbers = ctx.numbers(never_temporal)
    pairs = [by_year(texts[i], op, texts[i + 1]) if op in COMPARISONS and not (
                 never_temporal(chain.operands[i], numbers) or never_temporal(chain.operands[i + 1], numbers))
             else f"{texts[i]} {op} {texts[i + 1]}" for i, op in enumerate(chain.ops)]
    return [(*chain.span, "(" + " AND ".join(pairs) + ")")]


_WORDS = ("^", "in", "starts", "ends", "contains", "null")
_REGEX = r"\^|\bin\b|starts\s+with|ends\s+with|contains|\bis\s+(?:not\s+)?null"
_CHAIN = r"(?:[<>]=?|<>|!=|=)[^<>=!]*?(?<![-<])(?:[<>]=?|<>|!=|=)(?![->])"
RULES = (Rule(A.BinaryOp, parenthesize, _WORDS, _REGEX), Rule(A.IsNull, parenthesize, _WORDS, _REGEX),
         Rule(A.ComparisonChain, pairwise, ("<", ">", "="), _CHAIN))
