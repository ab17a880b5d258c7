"""Patterns and label expressions."""

from __future__ import annotations

from dataclasses import replace

from .. import ast as A
from ..tokens import IDENT, INT, OP, PARAM, QIDENT


class PatternParser:
    """Path patterns, node and relationship patterns, quantifiers and label expressions."""

    # ------------------------------------------------------------ patterns

    def pattern(self) -> A.Pattern:
        start = self.peek().start
        return A.Pattern(self._comma_list(self.path), span=self.span(start))

    def path(self) -> A.PathPattern:
        start = self.peek().start
        var = None
        if self.peek().kind in (IDENT, QIDENT) and self.at_op("=", 1):
            var = self.variable()
            self.next()
        shortest = None
        if self.at_kw("SHORTESTPATH", "ALLSHORTESTPATHS") and self.at_op("(", 1):
            shortest = self.next().upper.lower()
            self.next()
            elements = self.path_elements()
            self.expect_op(")")
        else:
            words = []
            while self.at_kw("ANY", "ALL", "SHORTEST", "GROUP", "GROUPS", "PATH", "PATHS") or \
                    (words and self.peek().kind == INT):
                tok = self.next()
                words.append(str(tok.value).lower())
            shortest = " ".join(words) or None
            elements = self.path_elements()
        return A.PathPattern(elements, var, shortest, span=self.span(start))

    def path_elements(self) -> tuple:
        elements = [self._path_factor()]
        while self.at_op("-") or self.at_op("<") or (self.at_op("(") and (
                self.at_op("(", 1) or isinstance(elements[-1], A.QuantifiedPath))):
            if self.at_op("("):   # (a) ((b)-->(c)){2} (d): juxtaposed quantified paths
                elements.append(self._path_factor())
                continue
            rel = self.rel_pattern()
            if self.at_op("+") or self.at_op("*") or self.at_op("{"):
                rel = A.QuantifiedPath((rel,), self.quantifier(), span=(rel.span[0], self.prev_end))
            elements.append(rel)
            elements.append(self._path_factor())
        return tuple(elements)

    def _path_factor(self):
        if self.at_op("(") and self.at_op("(", 1):
            start = self.next().start
            inner = self.path_elements()
            where = self.expr() if self.accept_kw("WHERE") else None
            self.expect_op(")")
            quantifier = self.quantifier() if (self.at_op("+") or self.at_op("*") or self.at_op("{")) else None
            return A.QuantifiedPath(inner, quantifier, where, span=self.span(start))
        return self.node_pattern()

    def quantifier(self) -> tuple:
        if self.accept_op("+"):
            return (1, None)
        if self.accept_op("*"):
            return (0, None)
        self.expect_op("{")
        low = self.int_literal() if self.peek().kind == INT else None
        if self.accept_op(","):
            high = self.int_literal() if self.peek().kind == INT else None
        else:
            high = low
        self.expect_op("}")
        return (low, high)

    def node_pattern(self) -> A.NodePattern:
        start = self.expect_op("(").start
        var = self.variable() if self.peek().kind in (IDENT, QIDENT) and not self.at_kw("WHERE", "IS") else None
        labels = None
        if self.at_op(":"):
            labels = self.label_expr(colon=True)
        elif self.accept_kw("IS"):
            labels = self.label_expr(colon=False)
        props = self._pattern_properties()
        where = self.expr() if self.accept_kw("WHERE") else None
        self.expect_op(")")
        return A.NodePattern(var, labels, props, where, span=self.span(start))

    def _pattern_properties(self):
        if self.at_op("{"):
            return self.map_literal()
        if self.peek().kind == PARAM:
            tok = self.next()
            return A.Parameter(tok.value, span=(tok.start, tok.end))
        return None

    def rel_pattern(self) -> A.RelPattern:
        start = self.peek().start
        left = self.accept_op("<")
        self.expect_op("-")
        var = labels = length = props = where = None
        if self.accept_op("["):
            if self.peek().kind in (IDENT, QIDENT) and not self.at_kw("WHERE", "IS"):
                var = self.variable()
            if self.at_op(":"):
                labels = self.label_expr(colon=True)
            elif self.accept_kw("IS"):
                labels = self.label_expr(colon=False)
            if self.accept_op("*"):
                length = self._range()
            props = self._pattern_properties()
            where = self.expr() if self.accept_kw("WHERE") else None
            self.expect_op("]")
        self.expect_op("-")
        right = self.accept_op(">")
        direction = {(False, False): "none", (True, False): "left", (False, True): "right",
                     (True, True): "both"}[(left, right)]
        return A.RelPattern(var, labels, direction, length, props, where, span=self.span(start))

    def _range(self) -> tuple:
        low = self.int_literal() if self.peek().kind == INT else None
        if self.accept_op(".."):
            high = self.int_literal() if self.peek().kind == INT else None
            return (low, high)
        return (low, low)

    # ------------------------------------------------------------ label expressions

    def label_expr(self, colon: bool, allow_or: bool = True) -> A.LabelExpr:
        """Labels after ':' (colon=True consumes it); '|' or, '&' and legacy ':' and, '!' not."""
        if colon:
            self.expect_op(":")
        return self._label_or(allow_or and not self.no_label_or)

    def _label_or(self, allow_or: bool) -> A.LabelExpr:
        start = self.peek().start
        left = self._label_and()
        while allow_or and self.at_op("|"):
            self.next()
            self.accept_op(":")   # legacy [:A|:B]
            left = A.LabelOr(left, self._label_and(), span=self.span(start))
        return left

    def _label_and(self) -> A.LabelExpr:
        start = self.peek().start
        left = self._label_not()
        while self.at_op("&") or self.at_op(":"):
            op = self.next().value
            left = A.LabelAnd(left, self._label_not(), op, span=self.span(start))
        return left

    def _label_not(self) -> A.LabelExpr:
        start = self.peek().start
        if self.accept_op("!"):
            return A.LabelNot(self._label_not(), span=self.span(start))
        if self.accept_op("%"):
            return A.LabelWildcard(span=self.span(start))
        if self.at_op("$") or (self.peek().kind == PARAM and self.peek().value.lower() in ("any", "all")
                               and self.at_op("(", 1)):
            mode = "all" if self.next().kind == OP else self.toks[self.i - 1].value.lower()
            self.expect_op("(")
            expr = self.expr()
            self.expect_op(")")
            return A.DynamicLabel(expr, mode, span=self.span(start))
        if self.accept_op("("):
            inner = self._label_or(True)
            self.expect_op(")")
            return replace(inner, span=self.span(start))      # the parentheses are part of its text
        value, tok = self.name("a label or relationship type name")
        return A.LabelName(value, span=(tok.start, tok.end))
