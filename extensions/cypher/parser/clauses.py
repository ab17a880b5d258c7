"""Statements and clauses: recursive descent, one method per clause keyword."""

from __future__ import annotations

from .. import ast as A
from ..tokens import EOF, FLOAT, IDENT, INT, OP, QIDENT, STRING
from .cursor import CLAUSE_KEYWORDS, COMMAND_KEYWORDS, _BP_POSTFIX


class ClauseParser:
    """Statements and clauses (the `_CLAUSES` table dispatches on the leading keyword)."""

    # ------------------------------------------------------------ statements

    def parse_statement(self) -> A.Query:
        start = self.peek().start
        options = self._cypher_options()
        prefix = None
        if self.at_kw("EXPLAIN", "PROFILE"):
            prefix = self.next().upper
        if self._at_command():
            query = self._command(start, prefix, options)
        else:
            query = self.parse_query(prefix, start, options)
        self.accept_op(";")
        if self.peek().kind != EOF:
            self.fail("a clause (MATCH, WITH, RETURN, ...) or the end of the query")
        return query

    def _cypher_options(self) -> str | None:
        """`CYPHER 5`, `CYPHER 25 runtime=parallel`, `CYPHER planner=cost`: the text, or None."""
        if not self.at_kw("CYPHER"):
            return None
        start = self.next().start
        while self.peek().kind in (INT, FLOAT) or (self.peek().kind == IDENT and self.at_op("=", 1)):
            if self.next().kind == IDENT:
                self.next()
                self.next()
        return self.text[start:self.prev_end]

    def _at_command(self) -> bool:
        tok = self.peek()
        if tok.upper in COMMAND_KEYWORDS:
            return True
        return tok.upper == "CREATE" and self.peek(1).kind in (IDENT, QIDENT) and not self.at_op("=", 2)

    def parse_query(self, prefix=None, start=None, options=None) -> A.Query:
        start = self.peek().start if start is None else start
        parts = [self.single_query()]
        union_all = []
        while self.accept_kw("UNION"):
            union_all.append(self.accept_kw("ALL"))
            if not union_all[-1]:
                self.accept_kw("DISTINCT")
            parts.append(self.single_query())
        return A.Query(tuple(parts), tuple(union_all), prefix, options, span=self.span(start))

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
        search = self._search() if self.at_kw("SEARCH") else None
        where = self.expr() if self.accept_kw("WHERE") else None
        return A.Match(pattern, optional, where, tuple(hints), search, span=self.span(start))

    def _search(self) -> A.VectorSearch:
        """`SEARCH v IN (VECTOR INDEX name FOR query [WHERE ...] LIMIT k) [SCORE AS s]` (Cypher 25)."""
        start = self.next().start
        var = self.variable()
        self.expect_kw("IN")
        self.expect_op("(")
        self.expect_kw("VECTOR")
        self.expect_kw("INDEX")
        index, _ = self.name("a vector index name")
        self.expect_kw("FOR")
        query = self.expr()
        where = self.expr() if self.accept_kw("WHERE") else None
        self.expect_kw("LIMIT")
        limit = self.expr()
        self.expect_op(")")
        score = None
        if self.accept_kw("SCORE"):
            self.expect_kw("AS")
            score = self.variable()
        return A.VectorSearch(var, index, query, limit, where, score, span=self.span(start))

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


_CLAUSES = {
    "MATCH": ClauseParser._match, "OPTIONAL": ClauseParser._match, "UNWIND": ClauseParser._unwind,
    "WITH": ClauseParser._with, "RETURN": ClauseParser._return, "CALL": ClauseParser._call, "CREATE": ClauseParser._create,
    "MERGE": ClauseParser._merge, "SET": ClauseParser._set, "REMOVE": ClauseParser._remove, "DELETE": ClauseParser._delete,
    "DETACH": ClauseParser._delete, "NODETACH": ClauseParser._delete, "FOREACH": ClauseParser._foreach,
    "USE": ClauseParser._use, "LOAD": ClauseParser._load, "FINISH": ClauseParser._finish,
}
