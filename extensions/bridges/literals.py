"""Literals FalkorDB reads differently from Neo4j, written as FalkorDB reads them.

- `'\\u01FF'`: FalkorDB keeps a unicode escape as its six characters (`\\u01FF`), silently;
  Neo4j reads the character `ǿ`. The string is written out again with the character itself
  (the proxy's tokenizer decodes the escapes and refuses a malformed one, `'\\uH'`, as Neo4j does).
- `0o17` (octal) and `.1e-5` (a float without integer digits but with an exponent): FalkorDB
  refuses them ("Invalid numeric value"); they are written in decimal.
"""

from __future__ import annotations

import re

from ..cypher import ast as A
from ..cypher.render import string
from .rule import Context, Edit, Rule

#: Number literals FalkorDB cannot read: octal, or a float opening with its point and an exponent.
_UNREADABLE_NUMBER = re.compile(r"0o|\.\d[\d_]*e", re.IGNORECASE)


def literal(node: A.Literal, ctx: Context) -> list[Edit]:
    text = node.text_in(ctx.text)
    if isinstance(node.value, str) and re.search(r"\\[uU]", text):
        return [(*node.span, string(node.value))]
    if isinstance(node.value, (int, float)) and not isinstance(node.value, bool) and _UNREADABLE_NUMBER.search(text):
        return [(*node.span, repr(node.value))]
    return []


RULES = (Rule(A.Literal, literal, ("\\u", "0o", *(f"e{c}" for c in "-+0123456789")),
              r"\\u|0o[0-7]|\.\d[\d_]*e"),)
