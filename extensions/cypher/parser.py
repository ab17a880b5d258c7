"""Cypher parser: recursive descent for clauses and patterns, Pratt for expressions.

`parse(text)` returns an immutable `Query` and is cached by query text. Every node gets the
character span of its source. Keywords are recognised by position, not reserved by the
tokenizer: after an operand `CONTAINS` is the operator, where an operand may start
`contains(` is a function call (likewise `exists(`, `count(`, `any(` ...).
"""

from __future__ import annotations

from functools import lru_cache

from proxy.errors import CypherError, syntax_error

from . import ast as A
from .tokens import EOF, FLOAT, IDENT, INT, OP, PARAM, QIDENT, STRING, Token, error_at, tokenize

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


class Parser:
    """One parse of one text. Use the module-level `parse()`."""

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

    # ------------------------------------------------------------ statements

    def parse_statement(self) -> A.Query:
        start = self.peek().start
        prefix = None
        if self.at_kw("EXPLAIN", "PROFILE"):
            prefix = self.next().upper
        if self._at_command():
            query = self._command(start, prefix)
        else:
            query = self.parse_query(prefix, start)
        self.accept_op(";")
        if self.peek().kind != EOF:
            self.fail("a clause (MATCH, WITH, RETURN, ...) or the end of the query")
        return query

    def _at_command(self) -> bool:
        tok = self.peek()
        if tok.upper in COMMAND_KEYWORDS:
            return True
        return tok.upper == "CREATE" and self.peek(1).kind in (IDENT, QIDENT) and not self.at_op("=", 2)

    def _command(self, start: int, prefix) -> A.Query:
        cmd_start = self.peek().start
        words = [self.next().upper]
        if self.peek().kind == IDENT:
            words.append(self.peek().upper)
        while self.peek().kind != EOF and not (self.at_op(";") and self.peek(1).kind == EOF):
            self.next()
        cmd = A.Command(" ".join(words), self.text[cmd_start:self.prev_end], span=self.span(cmd_start))
        part = A.SingleQuery((cmd,), span=cmd.span)
        return A.Query((part,), (), prefix, span=self.span(start))

    def parse_query(self, prefix=None, start=None) -> A.Query:
        start = self.peek().start if start is None else start
        parts = [self.single_query()]
        union_all = []
        while self.accept_kw("UNION"):
            union_all.append(self.accept_kw("ALL"))
            if not union_all[-1]:
                self.accept_kw("DISTINCT")
            parts.append(self.single_query())
        return A.Query(tuple(parts), tuple(union_all), prefix, span=self.span(start))

    def single_query(self) -> A.SingleQuery:
        start = self.peek().start
        clauses = []
        while True:
            tok = self.peek()
            if tok.kind == EOF or tok.upper == "UNION" or (tok.kind == OP and tok.value in ";}"):
                break
            clauses.append(self.clause())
        if not clauses:
            self.fail("a clause (MATCH, CREATE, WITH, RETURN, CALL, ...)")
        return A.SingleQuery(tuple(clauses), span=self.span(start))

    # ------------------------------------------------------------ clauses

    def clause(self) -> A.Clause:
        tok = self.peek()
        handler = _CLAUSES.get(tok.upper) if tok.kind == IDENT else None
        if handler is None:
            self.fail("a clause (MATCH, OPTIONAL MATCH, CREATE, MERGE, WITH, UNWIND, RETURN, CALL, "
                      "SET, REMOVE, DELETE, FOREACH, LOAD CSV, ...)")
        return handler(self, tok.start)

    def _match(self, start) -> A.Clause:
        optional = self.accept_kw("OPTIONAL")
        if optional and self.at_kw("CALL"):
            return self._call(start, optional=True)
        self.expect_kw("MATCH")
        pattern = self.pattern()
        hints = []
        while self.at_kw("USING"):
            hint_start = self.next().start
            while self.peek().kind != EOF and not self.at_kw("USING", "WHERE", *CLAUSE_KEYWORDS, "UNION") \
                    and not self.at_op(";") and not self.at_op("}"):
                self.next()
            hints.append(self.text[hint_start:self.prev_end])
        where = self.expr() if self.accept_kw("WHERE") else None
        return A.Match(pattern, optional, where, tuple(hints), span=self.span(start))

    def _unwind(self, start) -> A.Clause:
        self.next()
        expr = self.expr()
        self.expect_kw("AS")
        return A.Unwind(expr, self.variable(), span=self.span(start))

    def _projection(self, start, cls):
        self.next()
        distinct = self.accept_kw("DISTINCT")
        star = self.accept_op("*")
        items = ()
        if not star or self.accept_op(","):
            items = self._comma_list(self.return_item)
        order_by = ()
        if self.accept_kw("ORDER"):
            self.expect_kw("BY")
            order_by = self._comma_list(self.sort_item)
        skip = self.expr() if self.accept_kw("SKIP", "OFFSET") else None
        limit = self.expr() if self.accept_kw("LIMIT") else None
        kwargs = dict(star=star, distinct=distinct, order_by=order_by, skip=skip, limit=limit)
        if cls is A.With:
            kwargs["where"] = self.expr() if self.accept_kw("WHERE") else None
        return cls(items, **kwargs, span=self.span(start))

    def _with(self, start):
        return self._projection(start, A.With)

    def _return(self, start):
        return self._projection(start, A.Return)

    def return_item(self) -> A.ReturnItem:
        start = self.peek().start
        expr = self.expr()
        alias = alias_span = None
        if self.accept_kw("AS"):
            alias, tok = self.name("an alias name")
            alias_span = (tok.start, tok.end)
        return A.ReturnItem(expr, alias, alias_span=alias_span, span=self.span(start))

    def sort_item(self) -> A.SortItem:
        start = self.peek().start
        expr = self.expr()
        descending = False
        if self.at_kw("DESC", "DESCENDING"):
            self.next()
            descending = True
        else:
            self.accept_kw("ASC", "ASCENDING")
        return A.SortItem(expr, descending, span=self.span(start))

    def _call(self, start, optional=False) -> A.Clause:
        self.expect_kw("CALL")
        if self.at_op("{") or self.at_op("("):
            return self._call_subquery(start, optional)
        name_start = self.peek().start
        parts = [self.name("a procedure name")[0]]
        while self.accept_op("."):
            parts.append(self.name("a procedure name")[0])
        name_span = self.span(name_start)
        args = None
        if self.accept_op("("):
            args = () if self.at_op(")") else self._comma_list(self.expr)
            self.expect_op(")")
        yields, yield_star, where = None, False, None
        if self.accept_kw("YIELD"):
            if self.accept_op("*"):
                yields, yield_star = (), True
            else:
                yields = self._comma_list(self.yield_item)
            where = self.expr() if self.accept_kw("WHERE") else None
        return A.CallProcedure(".".join(parts), args, yields, yield_star, where, optional,
                               name_span=name_span, span=self.span(start))

    def yield_item(self) -> A.YieldItem:
        start = self.peek().start
        field = self.name("a procedure output name")[0]
        alias = self.name("an alias name")[0] if self.accept_kw("AS") else None
        return A.YieldItem(field, alias, span=self.span(start))

    def _call_subquery(self, start, optional) -> A.CallSubquery:
        scope = None
        if self.accept_op("("):
            if self.accept_op("*"):
                scope = ("*",)
            elif self.at_op(")"):
                scope = ()
            else:
                scope = self._comma_list(self.variable)
            self.expect_op(")")
        query = self.braced_query()
        in_tx = self._in_transactions() if self.at_kw("IN") else None
        return A.CallSubquery(query, scope, in_tx, optional, span=self.span(start))

    def braced_query(self) -> A.Query:
        self.expect_op("{")
        query = self.parse_query()
        self.expect_op("}")
        return query

    def _in_transactions(self) -> A.InTransactions:
        start = self.next().start
        concurrency, concurrent = None, False
        if not self.at_kw("TRANSACTIONS", "CONCURRENT"):
            concurrency = self.expr()
        if self.accept_kw("CONCURRENT"):
            concurrent = True
        self.expect_kw("TRANSACTIONS")
        batch = on_error = report = None
        while True:
            if self.accept_kw("OF"):
                batch = self.expr()
                if not self.accept_kw("ROWS", "ROW"):
                    self.fail("ROWS")
            elif self.accept_kw("ON"):
                self.expect_kw("ERROR")
                on_error = self.next().upper
                if on_error == "RETRY":
                    while self.peek().kind in (INT, FLOAT) or self.at_kw("FOR", "SECONDS", "SECOND", "SEC",
                                                                          "THEN", "CONTINUE", "BREAK", "FAIL"):
                        self.next()
            elif self.accept_kw("REPORT"):
                self.expect_kw("STATUS")
                self.expect_kw("AS")
                report = self.variable()
            else:
                break
        return A.InTransactions(batch, concurrency, concurrent, on_error, report, span=self.span(start))

    def _create(self, start) -> A.Clause:
        self.next()
        return A.Create(self.pattern(), span=self.span(start))

    def _merge(self, start) -> A.Clause:
        self.next()
        path = self.path()
        actions = []
        while self.at_kw("ON"):
            action_start = self.next().start
            if not self.at_kw("CREATE", "MATCH"):
                self.fail("CREATE or MATCH")
            on = self.next().upper
            self.expect_kw("SET")
            actions.append(A.MergeAction(on, self._comma_list(self.set_item), span=self.span(action_start)))
        return A.Merge(path, tuple(actions), span=self.span(start))

    def _set(self, start) -> A.Clause:
        self.next()
        return A.SetClause(self._comma_list(self.set_item), span=self.span(start))

    def _target(self) -> A.Expr:
        """A SET/REMOVE target: a variable with property or index accesses, no label suffix."""
        return self.expr(_BP_POSTFIX - 1, labels=False)

    def set_item(self) -> A.SetItem:
        start = self.peek().start
        target = self._target()
        if self.at_op(":") or self.at_kw("IS"):
            self.accept_kw("IS")
            labels = self.label_expr(colon=True, allow_or=False)
            return A.SetItem("labels", target, labels=labels, span=self.span(start))
        if self.accept_op("+="):
            return A.SetItem("variable", target, self.expr(), "+=", span=self.span(start))
        self.expect_op("=")
        kind = "variable" if isinstance(target, A.Variable) else "property"
        return A.SetItem(kind, target, self.expr(), span=self.span(start))

    def _remove(self, start) -> A.Clause:
        self.next()
        return A.Remove(self._comma_list(self.remove_item), span=self.span(start))

    def remove_item(self) -> A.RemoveItem:
        start = self.peek().start
        target = self._target()
        if self.at_op(":") or self.at_kw("IS"):
            self.accept_kw("IS")
            labels = self.label_expr(colon=True, allow_or=False)
            return A.RemoveItem("labels", target, labels, span=self.span(start))
        if isinstance(target, A.Variable):
            self.fail("a property (n.key) or labels (n:Label) to remove")
        return A.RemoveItem("property", target, span=self.span(start))

    def _delete(self, start) -> A.Clause:
        detach = self.at_kw("DETACH")
        self.accept_kw("DETACH", "NODETACH")
        self.expect_kw("DELETE")
        return A.Delete(self._comma_list(self.expr), detach, span=self.span(start))

    def _foreach(self, start) -> A.Clause:
        self.next()
        self.expect_op("(")
        var = self.variable()
        self.expect_kw("IN")
        source = self.expr()
        self.expect_op("|")
        clauses = []
        while not self.at_op(")"):
            clauses.append(self.clause())
        self.expect_op(")")
        if not clauses:
            self.fail("an updating clause")
        return A.Foreach(var, source, tuple(clauses), span=self.span(start))

    def _use(self, start) -> A.Clause:
        self.next()
        graph_start = self.peek().start
        self.expr(_BP_POSTFIX - 1, labels=False)
        if self.at_op("("):   # USE graph.byName('x')
            self.expr()
        return A.Use(self.text[graph_start:self.prev_end], span=self.span(start))

    def _load(self, start) -> A.Clause:
        self.next()
        self.expect_kw("CSV")
        with_headers = False
        if self.accept_kw("WITH"):
            self.expect_kw("HEADERS")
            with_headers = True
        self.expect_kw("FROM")
        source = self.expr()
        self.expect_kw("AS")
        var = self.variable()
        terminator = None
        if self.accept_kw("FIELDTERMINATOR"):
            if self.peek().kind != STRING:
                self.fail("a string")
            terminator = self.next().value
        return A.LoadCSV(source, var, with_headers, terminator, span=self.span(start))

    def _finish(self, start) -> A.Clause:
        self.next()
        return A.Finish(span=self.span(start))

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
        if self.accept_op("("):
            inner = self._label_or(True)
            self.expect_op(")")
            return inner
        value, tok = self.name("a label or relationship type name")
        return A.LabelName(value, span=(tok.start, tok.end))

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


_CLAUSES = {
    "MATCH": Parser._match, "OPTIONAL": Parser._match, "UNWIND": Parser._unwind,
    "WITH": Parser._with, "RETURN": Parser._return, "CALL": Parser._call, "CREATE": Parser._create,
    "MERGE": Parser._merge, "SET": Parser._set, "REMOVE": Parser._remove, "DELETE": Parser._delete,
    "DETACH": Parser._delete, "NODETACH": Parser._delete, "FOREACH": Parser._foreach,
    "USE": Parser._use, "LOAD": Parser._load, "FINISH": Parser._finish,
}

_PREFIX_KW = {
    "TRUE": Parser._kw_literal, "FALSE": Parser._kw_literal, "NULL": Parser._kw_literal,
    "NOT": Parser._kw_not, "CASE": Parser._kw_case,
    "EXISTS": Parser._kw_subquery, "COUNT": Parser._kw_subquery, "COLLECT": Parser._kw_subquery,
    "ALL": Parser._kw_quantifier, "ANY": Parser._kw_quantifier, "NONE": Parser._kw_quantifier,
    "SINGLE": Parser._kw_quantifier, "REDUCE": Parser._kw_reduce,
}


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
