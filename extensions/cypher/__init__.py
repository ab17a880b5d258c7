"""Cypher front end: tokenizer, parser (spans on every node), renderer and span splicer.

    from extensions.cypher import parse, render, splice, ast
    query = parse(text)                # cached by text; raises a SyntaxError CypherError
    for call in query.find_all(ast.FunctionCall): ...
    new_text = splice(text, [(call.span, "$__ext0[id(n)]")])
"""

from . import ast
from .scope import bindings, pattern_bindings, scopes
from .parser import parse, parse_expression
from .render import render
from .splice import splice
from .tokens import tokenize

__all__ = ["ast", "bindings", "parse", "parse_expression", "pattern_bindings", "render", "scopes",
           "splice", "tokenize"]
