"""Schema and admin commands the proxy translates: SHOW ..., CREATE/DROP INDEX and CONSTRAINT.

`_COMMANDS` maps a leading phrase to the method that builds its typed node. A phrase that is not
in the table, or a command whose syntax the typed parser does not know (FalkorDB's own
`CREATE INDEX ON :L(p)`, `GRANT ...`), stays an opaque `A.Command` and reaches the database as
written.
"""

from __future__ import annotations

from core.errors import CypherError

from .. import ast as A
from ..tokens import EOF, IDENT, PARAM, QIDENT
from .cursor import _BP_KW

#: SHOW <kind words> <object word>: the object word -> the normalised phrase.
_SHOW_OBJECTS = {
    "INDEX": "INDEXES", "INDEXES": "INDEXES", "CONSTRAINT": "CONSTRAINTS", "CONSTRAINTS": "CONSTRAINTS",
    "PROCEDURE": "PROCEDURES", "PROCEDURES": "PROCEDURES", "FUNCTION": "FUNCTIONS", "FUNCTIONS": "FUNCTIONS",
    "DATABASE": "DATABASE", "DATABASES": "DATABASES", "USER": "USER", "USERS": "USERS",
}
_INDEX_KINDS = {"RANGE": "RANGE", "BTREE": "RANGE", "TEXT": "TEXT", "POINT": "POINT",
                "VECTOR": "VECTOR", "FULLTEXT": "FULLTEXT"}
_CONSTRAINT_KINDS = {"UNIQUE": "UNIQUE", "KEY": "KEY"}


class CommandParser:
    """Typed parsing of the commands in `_COMMANDS`; everything else is `A.Command`."""

    def _command(self, start: int, prefix, options) -> A.Query:
        cmd_start = self.peek().start
        handler = self._command_handler()
        if handler is not None:
            saved = self.i
            try:
                clauses = handler(self, cmd_start)
                if self.peek().kind == EOF or (self.at_op(";") and self.peek(1).kind == EOF):
                    part = A.SingleQuery(clauses, span=self.span(cmd_start))
                    return A.Query((part,), (), prefix, options, span=self.span(start))
            except CypherError:
                pass
            self.i = saved
        words = [self.next().upper]
        if self.peek().kind == IDENT:
            words.append(self.peek().upper)
        while self.peek().kind != EOF and not (self.at_op(";") and self.peek(1).kind == EOF):
            self.next()
        cmd = A.Command(" ".join(words), self.text[cmd_start:self.prev_end], span=self.span(cmd_start))
        part = A.SingleQuery((cmd,), span=cmd.span)
        return A.Query((part,), (), prefix, options, span=self.span(start))

    def _command_handler(self):
        words = [self.peek(k).upper for k in range(3) if self.peek(k).kind == IDENT]
        for size in (3, 2, 1):
            handler = _COMMANDS.get(" ".join(words[:size])) if len(words) >= size else None
            if handler is not None:
                return handler
        return None

    # -- SHOW

    def _show(self, start: int) -> tuple:
        self.next()
        kind_words: list[str] = []
        while self.peek().kind == IDENT and self.peek().upper not in _SHOW_OBJECTS:
            kind_words.append(self.next().upper)
        if self.peek().kind != IDENT:
            self.fail("what to show (INDEXES, CONSTRAINTS, PROCEDURES, FUNCTIONS, DATABASES, ...)")
        what = _SHOW_OBJECTS[self.next().upper]
        kind = " ".join(kind_words) or None
        argument = None
        if what == "DATABASE" and kind in ("DEFAULT", "HOME"):
            what, kind = f"{kind} DATABASE", None
        elif what == "DATABASE":
            argument = self._name_or_parameter()
            what = "DATABASES"
        elif what in ("USER", "USERS") and kind == "CURRENT":
            what, kind = "CURRENT USER", None
        elif what in ("USER", "USERS"):
            self.fail("CURRENT USER")
        if what in ("PROCEDURES", "FUNCTIONS") and self.accept_kw("EXECUTABLE"):
            if self.accept_kw("BY") and not (self.accept_kw("CURRENT") and self.accept_kw("USER")):
                self.name("a user name")
        yields, star, order_by, skip, limit = None, False, (), None, None
        if self.accept_kw("YIELD"):
            if self.accept_op("*"):
                yields, star = (), True
            else:
                yields = self._comma_list(self.yield_item)
            if self.accept_kw("ORDER"):
                self.expect_kw("BY")
                order_by = self._comma_list(self.sort_item)
            skip = self.expr() if self.accept_kw("SKIP", "OFFSET") else None
            limit = self.expr() if self.accept_kw("LIMIT") else None
        where = self.expr() if self.accept_kw("WHERE") else None
        show = A.Show(what, kind, argument, yields, star, order_by, skip, limit, where, span=self.span(start))
        rest = []
        while self.peek().kind != EOF and not self.at_op(";"):
            rest.append(self.clause())
        return (show, *rest)

    # -- CREATE / DROP

    def _create_index(self, start: int) -> tuple:
        self.next()
        kind = "RANGE"
        if not self.at_kw("INDEX"):
            kind = _INDEX_KINDS[self.next().upper]
        self.expect_kw("INDEX")
        name, if_not_exists = self._schema_name()
        self.expect_kw("FOR")
        target_start = self.peek().start
        entity, variable, labels = self._schema_pattern()
        self.expect_kw("ON")
        if self.accept_kw("EACH"):
            self.expect_op("[")
            properties = self._schema_properties(variable, "]")
        elif self.at_op("("):
            self.next()
            properties = self._schema_properties(variable, ")")
        else:
            properties = (self._schema_property(variable),)
        target = A.SchemaTarget(entity, variable, labels, properties, span=self.span(target_start))
        options = self._schema_options()
        return (A.CreateIndex(kind, name, if_not_exists, target, options, span=self.span(start)),)

    def _create_constraint(self, start: int) -> tuple:
        self.next()
        self.expect_kw("CONSTRAINT")
        name, if_not_exists = self._schema_name()
        self.expect_kw("FOR")
        target_start = self.peek().start
        entity, variable, labels = self._schema_pattern()
        self.expect_kw("REQUIRE")
        if self.accept_op("("):
            properties = self._schema_properties(variable, ")")
        else:
            properties = (self._schema_property(variable),)
        target = A.SchemaTarget(entity, variable, labels, properties, span=self.span(target_start))
        self.expect_kw("IS")
        type_name = None
        if self.accept_kw("NOT"):
            self.expect_kw("NULL")
            kind = "NOT NULL"
        elif self.accept_op("::") or self.accept_kw("TYPED"):
            kind, type_name = "TYPE", self.type_name()
        else:
            self.accept_kw("NODE", "RELATIONSHIP", "REL")
            word = self.name("UNIQUE, KEY, NOT NULL or :: TYPE")[0].upper()
            if word not in _CONSTRAINT_KINDS:
                self.fail("UNIQUE, KEY, NOT NULL or :: TYPE")
            kind = _CONSTRAINT_KINDS[word]
        options = self._schema_options()
        return (A.CreateConstraint(name, if_not_exists, target, kind, type_name, options, span=self.span(start)),)

    def _drop(self, start: int) -> tuple:
        self.next()
        what = self.next().upper
        name = self._name_or_parameter()
        if_exists = False
        if self.accept_kw("IF"):
            self.expect_kw("EXISTS")
            if_exists = True
        return (A.DropSchema(what, name, if_exists, span=self.span(start)),)

    # -- pieces

    def _name_or_parameter(self):
        if self.peek().kind == PARAM:
            tok = self.next()
            return A.Parameter(tok.value, span=(tok.start, tok.end))
        return self.name("a name")[0]

    def _schema_name(self) -> tuple:
        """[name] [IF NOT EXISTS] after INDEX / CONSTRAINT."""
        name = None
        tok = self.peek()
        if tok.kind == PARAM or tok.kind == QIDENT or (tok.kind == IDENT and tok.upper not in ("IF", "FOR", "ON")):
            name = self._name_or_parameter()
        if_not_exists = False
        if self.accept_kw("IF"):
            self.expect_kw("NOT")
            self.expect_kw("EXISTS")
            if_not_exists = True
        return name, if_not_exists

    def _schema_pattern(self) -> tuple[str, str, tuple]:
        """`(n:L)` / `(n:A|B)` or `()-[r:T]-()` -> (entity, variable, labels)."""
        path = self.path()
        elements = path.elements
        if len(elements) == 1:
            element, entity = elements[0], "node"
            labels = element.labels
        elif len(elements) == 3:
            element, entity = elements[1], "relationship"
            labels = element.types
        else:
            self.fail("(n:Label) or ()-[r:TYPE]-()")
        if element.var is None or labels is None:
            self.fail("a variable and a label or relationship type")
        return entity, element.var.name, tuple(labels.names())

    def _schema_properties(self, variable: str, closing: str) -> tuple:
        properties = [self._schema_property(variable)]
        while self.accept_op(","):
            properties.append(self._schema_property(variable))
        self.expect_op(closing)
        return tuple(properties)

    def _schema_property(self, variable: str) -> str:
        """`n.p` where n is the command's variable (IS is left for the constraint kind)."""
        expr = self.expr(_BP_KW["IS"])
        if not (isinstance(expr, A.Property) and isinstance(expr.expr, A.Variable)
                and expr.expr.name == variable):
            self.fail(f"a property of {variable}, like {variable}.name")
        return expr.key

    def _schema_options(self):
        if not self.accept_kw("OPTIONS"):
            return None
        if self.peek().kind == PARAM:
            tok = self.next()
            return A.Parameter(tok.value, span=(tok.start, tok.end))
        return self.map_literal()


_COMMANDS = {
    "SHOW": CommandParser._show,
    "CREATE INDEX": CommandParser._create_index,
    **{f"CREATE {word} INDEX": CommandParser._create_index for word in _INDEX_KINDS},
    "CREATE CONSTRAINT": CommandParser._create_constraint,
    "DROP INDEX": CommandParser._drop,
    "DROP CONSTRAINT": CommandParser._drop,
}
