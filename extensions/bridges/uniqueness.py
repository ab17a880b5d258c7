"""Relationship uniqueness and multiplicity in MATCH, as Neo4j matches patterns.

Neo4j matches each relationship at most once per row across a whole MATCH clause (all its
comma-separated paths); a variable bound earlier and named again is that same relationship;
`[rs*]` binds a list of relationships. FalkorDB 4.16 (and 4.22) does none of this, silently
(measured; tests/unit|integration/test_pattern_semantics.py):

- one relationship is matched twice: `(t {name: 'Tom'})-[:ACTED_IN]->(m)<-[:ACTED_IN]-(co)`
  lists Tom as his own co-actor, `(a)-[:R]-(b)-[:R]-(c)` on one R gives 2 rows (Neo4j 0);
  its variable-length traversals are unique only within themselves;
- parallel relationships collapse when the relationship is not referenced: with two relationships
  between p and f, `MATCH (p)-[:A|B]->(f) RETURN f, count(*)` counts 1, `MATCH ()-->() RETURN
  count(*)` 1, `(f)--(p)` 2 rows instead of 4 (FalkorDB issue #1848), `[*1..1]` likewise;
- a relationship bound by WITH and named again in a MATCH is matched as a new one (all
  relationships), and without WITH it is refused ("same relationship variable for multiple
  patterns");
- `[rs*]` binds a path, and `relationships(p)` of a path with a variable-length part reverses
  that part in place at every call (two calls in one row give two orders).

The bridge is the one FalkorDB's maintainers advise, done for the user: every relationship of a
MATCH gets a name (a fresh one if anonymous), and the MATCH's own WHERE (inside an OPTIONAL MATCH,
so its null row stays) gets `r1 <> r2` for each pair whose types may overlap, and `r IS NOT NULL`
for one no pair mentions (any reference makes FalkorDB expand each parallel relationship). A path
with a variable-length relationship is named (which also keeps its multiplicity); the ids of its
relationships are read once (`all(l IN [ids] WHERE ...)`) and its pairs become `NOT id(r) IN l`,
`none(x IN l1 WHERE x IN l2)` and, within the path, no repeated id. A bound relationship named
again becomes a fresh one equal to it. A `[rs*]` read elsewhere leaves the pattern and is bound
after the MATCH as its part of the path's relationships, put in path order by the path's nodes.
Fresh names never reach the client: a later `RETURN *` / `WITH *` lists the user's variables.
Pattern comprehensions (and `EXISTS { }` / `COUNT { }` in a projection, through `dialect`) get
the same predicates in their WHERE; a MERGE or a pattern predicate that would need them cannot
take a WHERE and is refused. FalkorDB's variable-length traversal never continues from a node
it has already passed (over two loops on one node `*2..2` finds nothing): a fixed length arrives
here already written as hops (`fixed_lengths.py`, whose names `RETURN *` leaves out); a range is
checked against the graph's cycles and, where one could matter, written one length per branch
(`ranges.py`, `range_unions.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import combinations, count

from core.errors import CypherError

from ..cypher import ast as A
from ..cypher.scope import bindings
from ..cypher.render import name as quote_name
from ..cypher.splice import splice as splice_text
from ..cypher.tokens import IDENT, OP, after_first, tokenize
from .fixed_lengths import HOP
from .labels import type_predicate
from .rule import Context, Edit, Rule

UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"


@dataclass(frozen=True)
class _Unit:
    """A relationship of the pattern (`single`) or the relationships of a path with a
    variable-length one (a list expression); types None: any type."""

    expr: str
    types: frozenset | None
    single: bool
    repeats: bool = False          # a list that may repeat an element within itself


def _types(rel: A.RelPattern) -> frozenset | None:
    labels = rel.types
    if labels is None:
        return None
    if all(isinstance(n, (A.LabelName, A.LabelOr)) for n in labels.walk()):
        return frozenset(labels.names())
    return None


def _may_share(a: _Unit, b: _Unit) -> bool:
    return a.types is None or b.types is None or bool(a.types & b.types)


def _rels(path: A.PathPattern) -> list[A.RelPattern]:
    return [e for e in path.elements if isinstance(e, A.RelPattern)]


def _supported(paths) -> bool:
    return all(p.shortest is None and not any(isinstance(e, A.QuantifiedPath) for e in p.elements)
               for p in paths)


class _Naming:
    """The units of some paths, with the edits that name what the predicates refer to."""

    def __init__(self, ctx: Context, bound: dict[str, str], *, lists: bool = True):
        self.ctx, self.bound, self.bind_lists = ctx, bound, lists
        self.edits: list[Edit] = []
        self.units: list[_Unit] = []
        self.equalities: list[str] = []
        self.list_equalities: list[str] = []
        #: (variable, the ids of a path's relationships, the path)
        self.list_ids: list[tuple[str, str, str]] = []
        self.referenced: set[str] = set()      # by an equality
        #: variable-length relationship variables read elsewhere -> (path, hops before, hops after,
        #: direction): their part of the path's relationships
        self.lists: dict[str, tuple[str, int, int, str]] = {}
        #: `type(r) ...` for relationship type expressions FalkorDB cannot read (`[r:!A]`)
        self.type_filters: list[str] = []
        self.fresh = False

    def add(self, path: A.PathPattern) -> None:
        rels = _rels(path)
        if any(rel.length is not None for rel in rels):
            _refuse_list_type_expressions(rels, self.ctx.text)
            self._add_list(path, rels)
        else:
            for rel in rels:
                self.units.append(_Unit(self._rel_name(rel), _types(rel), True))

    def _add_list(self, path: A.PathPattern, rels: list[A.RelPattern]) -> None:
        if path.var is not None:
            name = quote_name(path.var.name)
        else:
            name = self.ctx.fresh("p")
            self.fresh = True
            self.edits.append((path.span[0], path.span[0], f"{name} = "))
        listed = self.ctx.fresh("rl")          # the path's relationship ids, evaluated once
        self.list_ids.append((listed, _ids(f"relationships({name})"), name))
        for rel in rels:
            if rel.var is not None and rel.var.name in self.bound:
                if rel.length is None:
                    self._rel_name(rel)
                elif len(rels) == 1:          # `[rs*]` with rs a bound list: the path's relationships
                    self.edits.append((*rel.var.span, ""))
                    self.list_equalities.append(f"{listed} = {_ids(quote_name(rel.var.name))}")
                else:
                    raise CypherError(UNSUPPORTED, "A variable-length relationship bound earlier "
                                      f"(`{rel.var.name}`) next to other relationships in one path cannot "
                                      "be matched faithfully on the embedded FalkorDB: match it in a "
                                      "path of its own.")
        if self.bind_lists:
            self._bind_lists(rels, name)
        types = [_types(r) for r in rels]
        merged = None if any(t is None for t in types) else frozenset().union(*types)
        repeats = any(a is None or b is None or a & b for a, b in combinations(types, 2))
        self.units.append(_Unit(listed, merged, False, repeats=repeats))

    def _bind_lists(self, rels: list[A.RelPattern], path: str) -> None:
        """`[rs*]` binds a path on FalkorDB, a list of relationships on Neo4j: a variable read
        elsewhere in the query leaves the pattern and becomes its part of the path's list."""
        lists = [i for i, rel in enumerate(rels) if rel.length is not None and rel.var is not None
                 and rel.var.name not in self.bound and _read_elsewhere(rel.var, self.ctx.query)]
        if len(lists) > 1 or (lists and sum(rel.length is not None for rel in rels) > 1):
            raise CypherError(UNSUPPORTED, "Two variable-length relationships in one path, one of them "
                              f"named (`{rels[lists[0]].var.name}`), cannot be bound as lists on the embedded "
                              "FalkorDB: write them as two paths joined by their shared node.")
        for i in lists:
            self.lists[rels[i].var.name] = (path, i, len(rels) - i - 1, rels[i].direction)
            self.edits.append((*rels[i].var.span, ""))
            self.fresh = True

    def _rel_name(self, rel: A.RelPattern) -> str:
        """The relationship's variable as the predicates name it; anonymous ones get a fresh
        name, a bound one a fresh name equal to it."""
        if not _native_types(rel.types, self.ctx.text):
            return self._typed_name(rel)
        if rel.var is not None and rel.var.name not in self.bound:
            self.fresh |= rel.var.name.startswith(HOP)
            return quote_name(rel.var.name)
        fresh = self.ctx.fresh("u")
        self.fresh = True
        if rel.var is not None:
            self.edits.append((*rel.var.span, fresh))
            self.equalities.append(f"{fresh} = {quote_name(rel.var.name)}")
            self.referenced.add(fresh)
            return fresh
        text = rel.text_in(self.ctx.text)
        if "[" in text:
            at = rel.span[0] + text.index("[") + 1
            self.edits.append((at, at, fresh))
        else:                                  # `-->`, `<--`, `--`, `<-->`
            left = "<-" if rel.direction == "left" else "-"
            right = "->" if rel.direction == "right" else "-"
            self.edits.append((*rel.span, f"{left}[{fresh}]{right}"))
        return fresh

    def _typed_name(self, rel: A.RelPattern) -> str:
        """`[r:!A]` -> `[r]` with `NOT (type(r) = 'A')` among the predicates (named as
        `_rel_name` names, in one edit from the variable or bracket to the end of the types)."""
        if rel.var is not None and rel.var.name not in self.bound:          # `[r:!A]` -> `[r]`
            name = quote_name(rel.var.name)
            self.edits.append((rel.var.span[1], rel.types.span[1], ""))
        else:                                                               # `[:!A]` -> `[__u0]`
            name = self.ctx.fresh("u")
            self.fresh = True
            start = rel.span[0] + rel.text_in(self.ctx.text).index("[") + 1
            if rel.var is not None:                                         # bound earlier: equal to it
                start = rel.var.span[0]
                self.equalities.append(f"{name} = {quote_name(rel.var.name)}")
                self.referenced.add(name)
            self.edits.append((start, rel.types.span[1], name))
        self.type_filters.append(type_predicate(name, rel.types))
        return name

    def predicates(self, *, multiplicity: bool) -> list[str]:
        """The uniqueness predicates and the type filters; with `multiplicity`, a reference to
        every relationship."""
        return self._uniqueness(multiplicity) + self.type_filters

    def _uniqueness(self, multiplicity: bool) -> list[str]:
        single, listed = list(self.equalities), list(self.list_equalities)
        mentioned = set(self.referenced)
        for unit in self.units:
            if unit.repeats:
                listed.append(_distinct(unit.expr))
        for a, b in combinations(self.units, 2):
            if a.expr == b.expr or not _may_share(a, b):
                continue
            (single if a.single and b.single else listed).append(_differ(a, b))
            mentioned |= {a.expr, b.expr}
        if multiplicity:
            single += [f"{u.expr} IS NOT NULL" for u in self.units if u.single and u.expr not in mentioned]
        return single + ([self._once(" AND ".join(listed))] if listed else [])

    def _once(self, condition: str) -> str:
        """`condition` with each path's relationship ids bound once: FalkorDB's `relationships(p)`
        reverses the variable-length part of `p` in place at every call (measured: two calls in one
        row give two orders), so predicates that index it must see a single evaluation.

        FalkorDB places a filter after the variables it sees outside quantifiers only (measured:
        `all(l IN [ids(p)] WHERE NOT id(r) IN l)` ran before `r` was bound and kept no row), so
        every variable the condition reads is named outside too, as `OR v IS NULL` (never true
        for a row the MATCH produces)."""
        read = [u.expr for u in self.units if u.single and u.expr in condition]
        for variable, ids, path in reversed(self.list_ids):
            if variable in condition:
                condition = f"all({variable} IN [{ids}] WHERE {condition})"
                read.append(path)
        return f"({' OR '.join([condition] + [f'{v} IS NULL' for v in dict.fromkeys(read)])})"

    def needs_predicates(self) -> bool:
        return bool(self._uniqueness(multiplicity=False))


def _native_types(types: A.LabelExpr | None, text: str) -> bool:
    """No types, `:A` or `:A|B` (without parentheses, which the tree does not keep): the
    relationship types FalkorDB reads in a pattern."""
    return types is None or "(" not in types.text_in(text) and _names_or(types)


def _names_or(types: A.LabelExpr) -> bool:
    return isinstance(types, A.LabelName) or (
        isinstance(types, A.LabelOr) and _names_or(types.left) and _names_or(types.right))


def _refuse_list_type_expressions(rels: list[A.RelPattern], text: str) -> None:
    """A variable-length relationship's types must be FalkorDB's own `:A|B`: the filter that
    bridges the others would test the path's relationships, not the pattern's (refused, not bent)."""
    for rel in rels:
        if rel.length is not None and not _native_types(rel.types, text):
            raise CypherError(UNSUPPORTED, f"The relationship type expression `{rel.types.text_in(text)}` on a "
                              "variable-length relationship cannot be matched on the embedded FalkorDB, which "
                              "reads only `:A|B` there: list the types (`[:A|B*1..3]`), or name the path and "
                              "filter it (`MATCH p = (a)-[*1..3]->(b) WHERE all(r IN relationships(p) WHERE "
                              "NOT type(r) IN ['X'])`).")


def _read_elsewhere(var: A.Variable, query: A.Query) -> bool:
    return any(isinstance(n, A.Variable) and n.name == var.name and n is not var for n in query.walk())


def _bound_lists(clause: A.Match, naming: _Naming, ctx: Context) -> list[Edit]:
    """Each list variable is bound by `WITH *, <list> AS rs` after the MATCH. A WHERE that reads
    one moves after it too; in an OPTIONAL MATCH, whose WHERE cannot move, the reads become the
    list itself (an expression FalkorDB evaluates less reliably inside the traversal).

    `relationships(p)` is read once per path (it reverses its variable-length part in place at
    every call, see `_Naming._once`), and the part set in path order by the nodes of the path."""
    if not naming.lists:
        return []
    moved = _moves_where(clause, naming)
    edits, where = [], ""
    if moved:
        edits.append((_where_keyword(clause, ctx.text), clause.where.span[1], ""))
        where = f" WHERE {clause.where.text_in(ctx.text)}"
    elif clause.where is not None:
        edits = [(*n.span, _inline_segment(*naming.lists[n.name])) for n in clause.where.walk()
                 if isinstance(n, A.Variable) and n.name in naming.lists]
    read, parts, held = [], [], {}
    for name, (path, before, after, direction) in naming.lists.items():
        if path not in held:
            held[path] = (ctx.fresh("r"), ctx.fresh("n"))
            read.append(f"coalesce(relationships({path}), []) AS {held[path][0]}, "
                        f"coalesce(nodes({path}), []) AS {held[path][1]}")
        relationships, nodes = held[path]
        end = f"size({relationships}) - {after}" if after else ""
        part = relationships if not before and not after else f"{relationships}[{before}..{end}]"
        parts.append(f"CASE WHEN {path} IS NULL THEN null ELSE {_oriented(part, nodes, before, direction)} "
                     f"END AS {quote_name(name)}")
    return edits + [(clause.span[1], clause.span[1], f" WITH *, {', '.join(read)} WITH *, {', '.join(parts)}{where}")]


def _moves_where(clause: A.Match, naming: _Naming) -> bool:
    """Whether the MATCH's WHERE reads a list variable and can move after the MATCH."""
    return not clause.optional and clause.where is not None and any(
        isinstance(n, A.Variable) and n.name in naming.lists for n in clause.where.walk())


def _where_keyword(clause: A.Match, text: str) -> int:
    head = text[clause.span[0]:clause.where.span[0]]
    keyword = [t for t in tokenize(head) if t.kind == IDENT and t.upper == "WHERE"][-1]
    return clause.span[0] + keyword.start


#: Relationship `{part}[__j]` goes from node `{n}[{i} + __j]` to the next, by direction.
_STEP = {"right": "startNode({part}[__j]) = {n}[{i} + __j] AND endNode({part}[__j]) = {n}[{i} + __j + 1]",
         "left": "endNode({part}[__j]) = {n}[{i} + __j] AND startNode({part}[__j]) = {n}[{i} + __j + 1]"}
_STEP["both"] = _STEP["none"] = f"({_STEP['right']}) OR ({_STEP['left']})"


def _oriented(part: str, nodes: str, before: int, direction: str) -> str:
    """`part`, the relationships of a variable-length element `before` hops into a path whose
    nodes are `nodes`, in path order (reversed if they come the other way round)."""
    forward = _STEP[direction].format(part=part, n=nodes, i=before)
    return f"CASE WHEN all(__j IN range(0, size({part}) - 1) WHERE {forward}) THEN {part} ELSE reverse({part}) END"


def _inline_segment(path: str, before: int, after: int, direction: str) -> str:
    """The same as one expression, for the MATCH's own WHERE (its path is never null there)."""
    end = f"size(relationships({path})) - {after}" if after else ""
    part = f"relationships({path})" if not before and not after else f"relationships({path})[{before}..{end}]"
    return f"head([__r IN [{part}] | head([__n IN [nodes({path})] | {_oriented('__r', '__n', before, direction)}])])"


def _ids(listed: str) -> str:
    """The ids of a list of relationships: FalkorDB's `IN` over the relationships of a path with
    a variable-length part can match a different relationship (measured), its ids are exact."""
    return f"[__x IN {listed} | id(__x)]"


def _differ(a: _Unit, b: _Unit) -> str:
    if a.single and b.single:
        return f"{a.expr} <> {b.expr}"
    if a.single or b.single:
        one, many = (a, b) if a.single else (b, a)
        return f"NOT id({one.expr}) IN {many.expr}"
    return f"none(__x IN {a.expr} WHERE __x IN {b.expr})"


def _distinct(listed: str) -> str:
    return f"all(__i IN range(0, size({listed}) - 1) WHERE NOT {listed}[__i] IN {listed}[__i + 1..])"


def _where(where: A.Expr | None, at: int, predicates: list[str], joiner: str = " WHERE ") -> list[Edit]:
    condition = " AND ".join(predicates)
    if where is None:
        return [(at, at, f"{joiner}{condition}")]
    return [(where.span[0], where.span[0], f"{condition} AND ("), (where.span[1], where.span[1], ")")]


_FRESH = re.compile(r"(?<![\w`])__[up]\d+\b")


def fresh_names(text: str) -> list[str]:
    """The relationship and path names this bridge added to a rewritten pattern's text (a
    rewrite that projects the pattern's variables must carry them to the WHERE)."""
    return list(dict.fromkeys(_FRESH.findall(text)))


def _labels_moved(match: A.Match) -> bool:
    """Whether `dialect` moves a label expression of this MATCH into a WHERE it adds."""
    return match.where is None and any(not A.legacy_labels(n.labels) for n in match.pattern.find_all(A.NodePattern))


def unique_in_query(part: A.SingleQuery, ctx: Context) -> list[Edit]:
    """Every MATCH of one single query; `*` projections after a fresh name list the user's."""
    edits: list[Edit] = []
    scope: dict[str, str] = {}
    fresh = False
    for clause in part.clauses:
        if isinstance(clause, A.Match) and _supported(clause.pattern.paths):
            naming = _Naming(ctx, scope)
            for path in clause.pattern.paths:
                naming.add(path)
            predicates = naming.predicates(multiplicity=True)
            edits += naming.edits
            fresh |= naming.fresh
            if predicates:
                joiner = " AND " if _labels_moved(clause) else " WHERE "
                edits += _where(None if _moves_where(clause, naming) else clause.where, clause.span[1],
                                predicates, joiner)
            edits += _bound_lists(clause, naming, ctx)
        elif isinstance(clause, A.Merge) and _supported((clause.path,)):
            naming = _Naming(ctx, scope)
            naming.add(clause.path)
            if naming.needs_predicates():
                raise CypherError(UNSUPPORTED, "This MERGE pattern has relationships that could match "
                                  "the same relationship twice, which the embedded FalkorDB does not rule "
                                  "out (Neo4j does). MATCH the existing part with `WHERE r1 <> r2`, then "
                                  "MERGE one relationship at a time.")
        elif isinstance(clause, A._Projection) and fresh:
            if clause.star:
                edits += _listed_star(clause, scope, ctx.text)
            else:
                fresh = False
        scope = bindings(clause, scope)
    return edits


def _listed_star(clause: A._Projection, scope: dict[str, str], text: str) -> list[Edit]:
    """`RETURN *` -> `RETURN a, b` (the user's variables, as Neo4j orders them: by name)."""
    end = clause.items[0].span[0] if clause.items else clause.span[1]
    star = next((t for t in tokenize(text[clause.span[0]:end]) if t.kind == OP and t.value == "*"), None)
    if star is None or not scope:
        return []
    listed = ", ".join(quote_name(v) for v in sorted(scope) if not v.startswith(HOP))
    return [(clause.span[0] + star.start, clause.span[0] + star.end, listed)]


def unique_in_comprehension(node: A.PatternComprehension, ctx: Context) -> list[Edit]:
    """`[(a)-[:R]-(b)-[:R]-(c) | c]` -> `[(a)-[__u0:R]-(b)-[__u1:R]-(c) WHERE __u0 <> __u1 | c]`."""
    if not _supported((node.path,)):
        return []
    naming = _Naming(ctx, {})
    naming.add(node.path)
    predicates = naming.predicates(multiplicity=False)
    if not predicates:
        return []
    return naming.edits + _where(node.where, node.path.span[1], predicates)


def unique_body(path: A.PathPattern, where: A.Expr | None, outer: Context) -> str:
    """`path [WHERE where]` (in `outer`'s query) as the body of a pattern comprehension that matches
    each relationship once (what `spelling` makes of `EXISTS { }` and `COUNT { }` in a projection)."""
    text = outer.text
    ctx = Context(text, A.Query(()), (str(i) for i in count()), outer.dialect)
    naming = _Naming(ctx, {}, lists=False)
    naming.add(path)
    predicates = naming.predicates(multiplicity=False) if _supported((path,)) else []
    start, edits = path.span[0], naming.edits if predicates else []
    body = splice_text(path.text_in(text), [((s - start, e - start), new) for s, e, new in edits])
    conditions = predicates + ([f"({where.text_in(text)})"] if where is not None else [])
    return body + (" WHERE " + " AND ".join(conditions) if conditions else "")


def refuse_subquery_predicate(node: A.ExistsSubquery, ctx: Context) -> list[Edit]:
    """`WHERE EXISTS { pattern }` becomes a pattern predicate (`dialect`): refused like one when
    it needs uniqueness predicates."""
    pattern = node.pattern
    if node.query is not None and len(node.query.parts) == 1 and len(node.query.parts[0].clauses) == 1 \
            and isinstance(node.query.parts[0].clauses[0], A.Match):
        pattern = node.query.parts[0].clauses[0].pattern
    if pattern is None or len(pattern.paths) != 1 or not _in_filter(node, ctx.query):
        return []
    return _refuse_predicate(pattern.paths[0], node.text_in(ctx.text), ctx, in_filter=True)


def _in_filter(node: A.Node, query: A.Query) -> bool:
    return any(isinstance(clause, (A.Match, A.With)) and clause.where is not None
               and any(n is node for n in clause.where.walk()) for clause in query.walk())


def refuse_pattern_predicate(node: A.PatternExpr, ctx: Context) -> list[Edit]:
    """A pattern predicate cannot take a WHERE: one that needs uniqueness, or a filter for a
    relationship type expression (in a WHERE; elsewhere `dialect` makes it a comprehension), is
    refused."""
    return _refuse_predicate(node.path, node.text_in(ctx.text), ctx, _in_filter(node, ctx.query))


def _refuse_predicate(path: A.PathPattern, text: str, ctx: Context, in_filter: bool) -> list[Edit]:
    if _supported((path,)):
        naming = _Naming(ctx, {})
        naming.add(path)
        if naming.needs_predicates():
            raise CypherError(UNSUPPORTED, f"The pattern predicate {text} has relationships "
                              "that could match the same relationship twice, which the embedded FalkorDB "
                              "does not rule out (Neo4j does). Write it as an OPTIONAL MATCH with "
                              "`WHERE r1 <> r2` (or a MATCH, to filter rows).")
        if naming.type_filters and in_filter:
            raise CypherError(UNSUPPORTED, f"The pattern predicate {text} has a relationship "
                              "type expression, which the embedded FalkorDB reads only as `:A|B` in a pattern "
                              "and cannot filter inside a WHERE. List the types (`-[:A|B]->`), or match it: "
                              "`OPTIONAL MATCH (a)-[r]->() WHERE NOT type(r) IN ['X'] WITH a, count(r) AS n "
                              "WHERE n > 0`.")
    return []


#: A relationship: `)` then `-` or `<-` (`(a)-->(b)`, `(a)<-[r]-(b)`).
_RELATIONSHIP = r"\)\s*+<?-"
RULES = (
    Rule(A.SingleQuery, unique_in_query, ("match", "merge"), _RELATIONSHIP),
    Rule(A.PatternComprehension, unique_in_comprehension, ("[",), after_first(_RELATIONSHIP, _RELATIONSHIP)),
    Rule(A.PatternExpr, refuse_pattern_predicate, ("(",), after_first(_RELATIONSHIP, _RELATIONSHIP)),
    Rule(A.ExistsSubquery, refuse_subquery_predicate, ("exists",), after_first(_RELATIONSHIP, _RELATIONSHIP)),
)
