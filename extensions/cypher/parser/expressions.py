"""Expressions: a Pratt parser with binding-power tables; keywords are recognised by position."""

from __future__ import annotations

from core.errors import CypherError

from .. import ast as A
from ..tokens import FLOAT, IDENT, INT, OP, PARAM, QIDENT, STRING, Token, error_at
from .cursor import MAX_INT, CLAUSE_KEYWORDS, NOT_A_VARIABLE, COMPARISON_OPS, _BP_OP, _BP_KW, _TYPE_WORDS, _BP_NOT, _BP_UNARY, _BP_POSTFIX


class ExpressionParser:
    """Pratt parsing of expressions; keywords that start an expression dispatch through `_PREFIX_KW`."""

    # ------------------------------------------------------------ expressions (Pratt)

    def expr(self, min_bp: int = 0, labels: bool = True) -> A.Expr:
        """An expression whose infix operators all bind tighter than `min_bp`."""
        start = self.peek().start
        left = self.prefix()
        while True:
            tok = self.peek()
            if tok.kind == OP:
                bp = _BP_OP.get(tok.value)
            elif tok.kind == IDENT:
                bp = _BP_KW.get(tok.upper)
            else:
                bp = None
            if bp is None or bp <= min_bp or (tok.value == ":" and not labels):
                return left
            left = self.infix(left, tok, bp, start)

    def infix(self, left: A.Expr, tok: Token, bp: int, start: int) -> A.Expr:
        op = tok.upper or tok.value
        if bp == _BP_POSTFIX:
            return self.postfix(left, start)
        self.next()
        if op in COMPARISON_OPS:
            ops, operands = ["<>" if op == "!=" else op], [left, self.expr(bp)]
            while self.peek().kind == OP and self.peek().value in COMPARISON_OPS:
                ops.append("<>" if self.peek().value == "!=" else self.peek().value)
                self.next()
                operands.append(self.expr(bp))
            if len(ops) == 1:
                return A.BinaryOp(ops[0], left, operands[1], span=self.span(start))
            return A.ComparisonChain(tuple(ops), tuple(operands), span=self.span(start))
        if op in ("STARTS", "ENDS"):
            self.expect_kw("WITH")
            op += " WITH"
        elif op == "IS":
            negated = self.accept_kw("NOT")
            if not negated and self.peek().kind in (IDENT, QIDENT) and not self.at_kw("NULL", "TYPED"):
                return A.LabelPredicate(left, self.label_expr(colon=False), span=self.span(start))   # n IS Label
            if self.accept_kw("NULL"):
                return A.IsNull(left, negated, span=self.span(start))
            if not self.accept_op("::"):
                if not self.accept_kw("TYPED"):
                    self.fail("NULL, NOT NULL, :: or TYPED")
            return A.IsType(left, self.type_name(), negated, span=self.span(start))
        elif op == "::":
            return A.IsType(left, self.type_name(), False, span=self.span(start))
        return A.BinaryOp(op, left, self.expr(bp), span=self.span(start))

    def type_name(self) -> str:
        """A type after IS ::, kept as normalised text (e.g. 'INTEGER NOT NULL', 'LIST<STRING>')."""
        start = self.peek().start
        self.name("a type name")
        depth = 0
        while True:
            if self.at_op("<"):
                depth += 1
            elif self.at_op(">") and depth:
                depth -= 1
            elif not (depth or self.at_op("|") or self.at_kw(*_TYPE_WORDS)):
                break
            self.next()
        return " ".join(self.text[start:self.prev_end].upper().split())

    def postfix(self, left: A.Expr, start: int) -> A.Expr:
        tok = self.next()
        if tok.value == ".":
            key = self.name("a property key name")[0]
            return A.Property(left, key, span=self.span(start))
        if tok.value == ":":
            return A.LabelPredicate(left, self.label_expr(colon=False), span=self.span(start))
        # '[': index or slice
        lo = None if self.at_op("..") else self.expr()
        if self.accept_op(".."):
            hi = None if self.at_op("]") else self.expr()
            self.expect_op("]")
            return A.Slice(left, lo, hi, span=self.span(start))
        self.expect_op("]")
        return A.Index(left, lo, span=self.span(start))

    def prefix(self) -> A.Expr:
        """A primary expression. Inside any bracket a '|' is a label disjunction again."""
        if not self.no_label_or:
            return self._primary()
        self.no_label_or = False
        try:
            return self._primary()
        finally:
            self.no_label_or = True

    def _primary(self) -> A.Expr:
        tok = self.peek()
        start = tok.start
        kind = tok.kind
        if kind == IDENT:
            upper = tok.upper
            handler = _PREFIX_KW.get(upper)
            if handler is not None:
                node = handler(self, tok)
                if node is not None:
                    return node
            if self.at_op("(", 1) or self.at_op(".", 1):
                call = self.function_call()
                if call is not None:
                    return call
            if upper in NOT_A_VARIABLE:
                self.fail("an expression")
            return self._variable_or_projection()
        if kind == QIDENT:
            if self.at_op("(", 1):
                return self.function_call()
            return self._variable_or_projection()
        if kind in (INT, FLOAT):
            self.next()
            if kind == INT and tok.value > MAX_INT:
                raise error_at(self.text, start, "an integer literal in range -2^63..2^63-1",
                               self.text[start:tok.end])
            return A.Literal(tok.value, span=(start, tok.end))
        if kind == STRING:
            self.next()
            return A.Literal(tok.value, span=(start, tok.end))
        if kind == PARAM:
            self.next()
            return A.Parameter(tok.value, span=(start, tok.end))
        if kind == OP:
            value = tok.value
            if value in ("-", "+"):
                self.next()
                nxt = self.peek()
                after = self.peek(1)
                if value == "-" and nxt.kind in (INT, FLOAT) and nxt.start == tok.end and not (
                        after.kind == OP and after.value in (".", "[", ":")):   # -1.x is -(1.x)
                    self.next()
                    if nxt.kind == INT and nxt.value > MAX_INT + 1:
                        raise error_at(self.text, start, "an integer literal in range -2^63..2^63-1",
                                       self.text[start:nxt.end])
                    return A.Literal(-nxt.value, span=(start, nxt.end))
                return A.UnaryOp(value, self.expr(_BP_UNARY), span=self.span(start))
            if value == "(":
                return self.parenthesized()
            if value == "[":
                return self.list_expr()
            if value == "{":
                return self.map_literal()
        self.fail("an expression")

    def _variable_or_projection(self) -> A.Expr:
        var = self.variable()
        if self.at_op("{"):
            return self.map_projection(var)
        return var

    def _kw_literal(self, tok: Token):
        self.next()
        value = {"TRUE": True, "FALSE": False, "NULL": None}[tok.upper]
        return A.Literal(value, span=(tok.start, tok.end))

    def _kw_not(self, tok: Token):
        self.next()
        return A.UnaryOp("NOT", self.expr(_BP_NOT), span=self.span(tok.start))

    def _kw_case(self, tok: Token):
        self.next()
        subject = None if self.at_kw("WHEN") else self.expr()
        whens = []
        while self.accept_kw("WHEN"):
            cond = self.expr()
            self.expect_kw("THEN")
            whens.append((cond, self.expr()))
        if not whens:
            self.fail("WHEN")
        default = self.expr() if self.accept_kw("ELSE") else None
        self.expect_kw("END")
        return A.CaseExpr(subject, tuple(whens), default, span=self.span(tok.start))

    def _kw_subquery(self, tok: Token):
        """EXISTS/COUNT/COLLECT { ... }; count(*) too. None when it is a plain function call."""
        if self.at_op("{", 1):
            self.next()
            self.next()
            cls = {"EXISTS": A.ExistsSubquery, "COUNT": A.CountSubquery, "COLLECT": A.CollectSubquery}[tok.upper]
            query = pattern = where = None
            if self.peek().kind == IDENT and self.peek().upper in CLAUSE_KEYWORDS:
                query = self.parse_query()
            else:
                pattern = self.pattern()
                where = self.expr() if self.accept_kw("WHERE") else None
            self.expect_op("}")
            return cls(query, pattern, where, span=self.span(tok.start))
        if tok.upper == "COUNT" and self.at_op("(", 1) and self.at_op("*", 2) and self.at_op(")", 3):
            self.i += 4
            return A.CountStar(span=self.span(tok.start))
        return None

    def _kw_quantifier(self, tok: Token):
        if not (self.at_op("(", 1) and self.peek(2).kind in (IDENT, QIDENT) and self.at_kw("IN", k=3)):
            return None
        self.i += 2
        var = self.variable()
        self.next()
        source = self.expr()
        where = self.expr() if self.accept_kw("WHERE") else None
        self.expect_op(")")
        return A.Quantifier(tok.upper.lower(), var, source, where, span=self.span(tok.start))

    def _kw_reduce(self, tok: Token):
        if not (self.at_op("(", 1) and self.peek(2).kind in (IDENT, QIDENT) and self.at_op("=", 3)):
            return None
        self.i += 2
        acc = self.variable()
        self.next()
        init = self.expr()
        self.expect_op(",")
        var = self.variable()
        self.expect_kw("IN")
        source = self.expr()
        self.expect_op("|")
        body = self.expr()
        self.expect_op(")")
        return A.Reduce(acc, init, var, source, body, span=self.span(tok.start))

    def function_call(self):
        """`ns.name(args)`; None when the dotted name is not followed by '(' (a property chain)."""
        j = self.i + 1
        while self.toks[j].kind == OP and self.toks[j].value == "." and self.toks[j + 1].kind in (IDENT, QIDENT):
            j += 2
        if not (self.toks[j].kind == OP and self.toks[j].value == "("):
            return None
        start = self.peek().start
        name = ".".join(self.toks[k].value for k in range(self.i, j, 2))
        name_span = (start, self.toks[j - 1].end)
        self.i = j + 1
        distinct = self.accept_kw("DISTINCT")
        args = () if self.at_op(")") else self._comma_list(self.expr)
        self.expect_op(")")
        return A.FunctionCall(name, args, distinct, name_span=name_span, span=self.span(start))

    def parenthesized(self) -> A.Expr:
        if self._looks_like_node(1):
            saved = self.i
            try:
                path = self.path()
            except CypherError:   # not a pattern after all: a parenthesised expression
                path = None
            if path is not None and len(path.elements) > 1:
                return A.PatternExpr(path, span=path.span)
            self.i = saved
        self.next()
        inner = self.expr()
        self.expect_op(")")
        return inner

    def _looks_like_node(self, k: int) -> bool:
        tok = self.peek(k)
        if tok.kind == OP:
            return tok.value in (")", ":", "(")
        if tok.kind in (IDENT, QIDENT):
            nxt = self.peek(k + 1)
            return (nxt.kind == OP and nxt.value in (")", ":", "{")) or nxt.kind == PARAM or \
                nxt.upper in ("WHERE", "IS")
        return False

    def list_expr(self) -> A.Expr:
        start = self.peek().start
        first, second = self.peek(1), self.peek(2)
        if first.kind in (IDENT, QIDENT) and second.upper == "IN":
            return self.list_comprehension()
        if (first.kind in (IDENT, QIDENT) and second.kind == OP and second.value == "=") or \
                (first.kind == OP and first.value == "(" and self._looks_like_node(2)):
            saved = self.i
            try:
                return self.pattern_comprehension()
            except CypherError:   # e.g. [(a) + 1]: a list literal
                self.i = saved
        self.next()
        items = () if self.at_op("]") else self._comma_list(self.expr)
        self.expect_op("]")
        return A.ListLiteral(items, span=self.span(start))

    def list_comprehension(self) -> A.ListComprehension:
        start = self.next().start
        var = self.variable()
        self.next()
        source = self.expr()
        saved, self.no_label_or = self.no_label_or, True
        try:
            where = self.expr() if self.accept_kw("WHERE") else None
        finally:
            self.no_label_or = saved
        projection = self.expr() if self.accept_op("|") else None
        self.expect_op("]")
        return A.ListComprehension(var, source, where, projection, span=self.span(start))

    def pattern_comprehension(self) -> A.PatternComprehension:
        start = self.next().start
        path = self.path()
        if len(path.elements) < 2 and path.var is None:
            self.fail("a relationship pattern")
        saved, self.no_label_or = self.no_label_or, True
        try:
            where = self.expr() if self.accept_kw("WHERE") else None
        finally:
            self.no_label_or = saved
        self.expect_op("|")
        projection = self.expr()
        self.expect_op("]")
        return A.PatternComprehension(path, where, projection, span=self.span(start))

    def map_literal(self) -> A.MapLiteral:
        start = self.expect_op("{").start
        items = []
        if not self.at_op("}"):
            while True:
                key = self.name("a map key")[0]
                self.expect_op(":")
                items.append((key, self.expr()))
                if not self.accept_op(","):
                    break
        self.expect_op("}")
        return A.MapLiteral(tuple(items), span=self.span(start))

    def map_projection(self, var: A.Variable) -> A.MapProjection:
        self.expect_op("{")
        items = []
        if not self.at_op("}"):
            items = list(self._comma_list(self.map_projection_item))
        self.expect_op("}")
        return A.MapProjection(var, tuple(items), span=self.span(var.span[0]))

    def map_projection_item(self) -> A.MapProjectionItem:
        start = self.peek().start
        if self.accept_op("."):
            if self.accept_op("*"):
                return A.MapProjectionItem("all", span=self.span(start))
            return A.MapProjectionItem("property", self.name("a property key name")[0], span=self.span(start))
        key = self.name("a map projection element")[0]
        if self.accept_op(":"):
            return A.MapProjectionItem("literal", key, self.expr(), span=self.span(start))
        return A.MapProjectionItem("variable", key, span=self.span(start))


_PREFIX_KW = {
    "TRUE": ExpressionParser._kw_literal, "FALSE": ExpressionParser._kw_literal, "NULL": ExpressionParser._kw_literal,
    "NOT": ExpressionParser._kw_not, "CASE": ExpressionParser._kw_case,
    "EXISTS": ExpressionParser._kw_subquery, "COUNT": ExpressionParser._kw_subquery, "COLLECT": ExpressionParser._kw_subquery,
    "ALL": ExpressionParser._kw_quantifier, "ANY": ExpressionParser._kw_quantifier, "NONE": ExpressionParser._kw_quantifier,
    "SINGLE": ExpressionParser._kw_quantifier, "REDUCE": ExpressionParser._kw_reduce,
}
