"""Parser: one test per construct, span correctness, function/operator disambiguation, errors,
caching, and scope discovery."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extensions.cypher import ast as A
from extensions.cypher import bindings, parse, parse_expression, scopes
from proxy.demo import SEED_QUERY as SEED
from core.errors import CypherError


def calls(text: str) -> list[str]:
    return [c.name for c in parse(text).find_all(A.FunctionCall)]


def assert_spans(text: str, node: A.Node) -> None:
    """Every node's span lies inside its parent's, and leaf spans are their exact source."""
    for child in node.children():
        assert node.span[0] <= child.span[0] <= child.span[1] <= node.span[1], (node, child)
        assert_spans(text, child)
    if isinstance(node, A.Variable):
        assert text[node.span[0]:node.span[1]].strip("`") == node.name
    if isinstance(node, A.FunctionCall):
        assert text[node.name_span[0]:node.name_span[1]] == node.name
        assert text[node.span[1] - 1] == ")"


# ---------------------------------------------------------------- the seed query

def test_seed_query_structure():
    q = parse(SEED)
    kinds = [type(c).__name__ for c in q.clauses]
    assert kinds == ["Match", "Unwind", "With", "With", "With", "Return"]
    assert calls(SEED) == ["range", "toString", "ts_avg", "ts_avg", "avg", "std", "count", "avg"]
    ts = [c for c in q.find_all(A.FunctionCall) if c.name == "ts_avg"]
    assert [c.text_in(SEED) for c in ts] == ["ts_avg(p.prd_oe_net, y)", "ts_avg(p.prd_oe_net, y + '-6', y + '-8')"]
    assert ts[0].args[0] == A.Property(A.Variable("p"), "prd_oe_net")
    ret = q.clauses[-1]
    assert [i.alias for i in ret.items] == ["mean_ratio", "std_ratio", "n_years", "mean_reduction"]
    assert SEED[slice(*ret.items[0].alias_span)] == "mean_ratio"
    assert q.clauses[3].where.text_in(SEED) == "yearly_avg > 0"
    assert_spans(SEED, q)


def test_clause_spans_cover_their_text():
    q = parse(SEED)
    assert q.clauses[1].text_in(SEED) == "UNWIND range(2015, 2024) AS year"
    assert q.span == (0, len(SEED))


# ---------------------------------------------------------------- contains(): function vs operator

@pytest.mark.parametrize("text, is_call", [
    ("MATCH (f) WHERE contains(f.geometry, point({latitude: 60, longitude: 3})) RETURN f", True),
    ("MATCH (f) WHERE f.name CONTAINS 'x' RETURN f", False),
    ("MATCH (f) WHERE f.name CONTAINS ('x') RETURN f", False),
    ("MATCH (f) WHERE NOT contains(f.g, f.p) AND f.n CONTAINS ('x') RETURN f", True),
    ("RETURN [x IN $l WHERE contains(x, $p)] AS l", True),
    ("RETURN CONTAINS(a, b)", True),
])
def test_contains_function_or_operator(text, is_call):
    q = parse(text)
    assert ("contains" in [c.name.lower() for c in q.find_all(A.FunctionCall)]) == is_call
    if "CONTAINS '" in text or "CONTAINS ('" in text:
        assert any(isinstance(n, A.BinaryOp) and n.op == "CONTAINS" for n in q.walk())


def test_keyword_named_functions():
    assert calls("RETURN exists(n.prop), count(x), any(x), collect(y), all(z)") == \
        ["exists", "count", "any", "collect", "all"]


def test_fake_calls_in_strings_and_comments_are_ignored():
    text = "MATCH (n) // ts_avg(n.x)\nWHERE n.name = 'ts_avg(' /* ts_avg(n.y) */ RETURN \"ts_avg(\" AS `ts_avg(`"
    assert calls(text) == []
    assert [lit.value for lit in parse(text).find_all(A.Literal)] == ["ts_avg(", "ts_avg("]


def test_dotted_function_names_keep_namespace():
    text = "CALL apoc.meta.data() YIELD label RETURN apoc.text.join(['a'], ',') AS j, n.a.b AS p"
    q = parse(text)
    (call,) = q.find_all(A.FunctionCall)
    assert call.name == "apoc.text.join" and text[slice(*call.name_span)] == "apoc.text.join"
    assert q.clauses[0].name == "apoc.meta.data"
    assert q.clauses[1].items[1].expr == A.Property(A.Property(A.Variable("n"), "a"), "b")


# ---------------------------------------------------------------- expressions

@pytest.mark.parametrize("text, expected", [
    ("a OR b AND c", A.BinaryOp("OR", A.Variable("a"), A.BinaryOp("AND", A.Variable("b"), A.Variable("c")))),
    ("a XOR b OR c", A.BinaryOp("OR", A.BinaryOp("XOR", A.Variable("a"), A.Variable("b")), A.Variable("c"))),
    ("NOT a = b", A.UnaryOp("NOT", A.BinaryOp("=", A.Variable("a"), A.Variable("b")))),
    ("1 + 2 * 3", A.BinaryOp("+", A.Literal(1), A.BinaryOp("*", A.Literal(2), A.Literal(3)))),
    ("2 ^ 3 ^ 2", A.BinaryOp("^", A.BinaryOp("^", A.Literal(2), A.Literal(3)), A.Literal(2))),
    ("-x ^ 2", A.BinaryOp("^", A.UnaryOp("-", A.Variable("x")), A.Literal(2))),
    ("-1", A.Literal(-1)),
    ("a + b IN c", A.BinaryOp("IN", A.BinaryOp("+", A.Variable("a"), A.Variable("b")), A.Variable("c"))),
    ("a = b IS NULL", A.BinaryOp("=", A.Variable("a"), A.IsNull(A.Variable("b")))),
    ("x IS NOT NULL", A.IsNull(A.Variable("x"), True)),
    ("x IS :: INTEGER", A.IsType(A.Variable("x"), "INTEGER")),
    ("1 < x <= 3", A.ComparisonChain(("<", "<="), (A.Literal(1), A.Variable("x"), A.Literal(3)))),
    ("a != b", A.BinaryOp("<>", A.Variable("a"), A.Variable("b"))),
    ("s STARTS WITH 'a'", A.BinaryOp("STARTS WITH", A.Variable("s"), A.Literal("a"))),
    ("s ENDS WITH 'a'", A.BinaryOp("ENDS WITH", A.Variable("s"), A.Literal("a"))),
    ("s =~ 'a.*'", A.BinaryOp("=~", A.Variable("s"), A.Literal("a.*"))),
    ("n:A:B", A.LabelPredicate(A.Variable("n"), A.LabelAnd(A.LabelName("A"), A.LabelName("B"), ":"))),
    ("n IS A", A.LabelPredicate(A.Variable("n"), A.LabelName("A"))),
    ("n:A|B", A.LabelPredicate(A.Variable("n"), A.LabelOr(A.LabelName("A"), A.LabelName("B")))),
    ("l[0]", A.Index(A.Variable("l"), A.Literal(0))),
    ("l[1..]", A.Slice(A.Variable("l"), A.Literal(1), None)),
    ("l[..-1]", A.Slice(A.Variable("l"), None, A.Literal(-1))),
    ("$p.x", A.Property(A.Parameter("p"), "x")),
    ("count(*)", A.CountStar()),
    ("count(DISTINCT x)", A.FunctionCall("count", (A.Variable("x"),), True)),
    ("[1, 'a', null, true]", A.ListLiteral((A.Literal(1), A.Literal("a"), A.Literal(None), A.Literal(True)))),
    ("{a: 1, `b c`: 2}", A.MapLiteral((("a", A.Literal(1)), ("b c", A.Literal(2))))),
    ("(1 + 2) * 3", A.BinaryOp("*", A.BinaryOp("+", A.Literal(1), A.Literal(2)), A.Literal(3))),
])
def test_expression_trees(text, expected):
    assert parse_expression(text) == expected


def test_case_expressions():
    searched = parse_expression("CASE WHEN x > 1 THEN 'a' ELSE 'b' END")
    assert searched.subject is None and searched.default == A.Literal("b") and len(searched.whens) == 1
    simple = parse_expression("CASE x WHEN 1 THEN 'one' WHEN 2 THEN 'two' END")
    assert simple.subject == A.Variable("x") and simple.default is None and len(simple.whens) == 2


def test_comprehensions_quantifiers_reduce():
    lc = parse_expression("[x IN range(1, 5) WHERE x % 2 = 0 | x ^ 2]")
    assert isinstance(lc, A.ListComprehension) and lc.var.name == "x" and lc.where and lc.projection
    pc = parse_expression("[p = (a)-[:R]->(b:B) WHERE b.v > 1 | b.v]")
    assert isinstance(pc, A.PatternComprehension) and pc.path.var.name == "p"
    for kind in ("all", "any", "none", "single"):
        qn = parse_expression(f"{kind.upper()}(x IN l WHERE x > 0)")
        assert qn == A.Quantifier(kind, A.Variable("x"), A.Variable("l"),
                                  A.BinaryOp(">", A.Variable("x"), A.Literal(0)))
    r = parse_expression("reduce(s = 0, x IN l | s + x)")
    assert isinstance(r, A.Reduce) and r.acc.name == "s" and r.var.name == "x"


def test_label_or_inside_comprehension_where_is_the_projection_bar():
    lc = parse_expression("[x IN l WHERE x:A | x.name]")
    assert lc.where == A.LabelPredicate(A.Variable("x"), A.LabelName("A"))
    assert lc.projection == A.Property(A.Variable("x"), "name")


def test_map_projection():
    mp = parse_expression("n {.name, .*, total: 1, m}")
    assert [(i.kind, i.key) for i in mp.items] == [("property", "name"), ("all", None),
                                                    ("literal", "total"), ("variable", "m")]


def test_subquery_expressions():
    text = ("MATCH (n) WHERE EXISTS { (n)-[:R]->(:B) WHERE n.x > 1 } AND COUNT { MATCH (n)-->() RETURN 1 } > 2 "
            "RETURN COLLECT { MATCH (n)-->(m) RETURN m.name } AS names")
    q = parse(text)
    ex, = q.find_all(A.ExistsSubquery)
    assert ex.pattern is not None and ex.where is not None and ex.query is None
    cnt, = q.find_all(A.CountSubquery)
    assert cnt.query is not None
    col, = q.find_all(A.CollectSubquery)
    assert col.text_in(text) == "COLLECT { MATCH (n)-->(m) RETURN m.name }"


def test_pattern_predicates_vs_parenthesised_expressions():
    q = parse("MATCH (a), (b) WHERE (a)-[:R]->(b) AND NOT (b)<--(:X) AND (a.x) - (b.y) > 0 AND (a:L) RETURN a")
    assert len(list(q.find_all(A.PatternExpr))) == 2
    assert any(isinstance(n, A.LabelPredicate) for n in q.walk())


def test_integer_bounds():
    assert parse_expression("-9223372036854775808") == A.Literal(-2**63)
    for text in ("9223372036854775808", "-9223372036854775809"):
        with pytest.raises(CypherError):
            parse(f"RETURN {text}")


# ---------------------------------------------------------------- patterns

def test_node_and_relationship_patterns():
    text = "MATCH p = (a:A:B {x: 1})-[r:KNOWS|LIKES*1..3 {since: $s}]->(b), (c)<-[*]-(), (d)-[:T*2]-(e) RETURN p"
    m = parse(text).clauses[0]
    path = m.pattern.paths[0]
    a, r, b = path.elements
    assert path.var.name == "p" and a.labels.names() == ["A", "B"] and a.properties.get("x") == A.Literal(1)
    assert r.var.name == "r" and r.types.names() == ["KNOWS", "LIKES"] and r.direction == "right"
    assert r.length == (1, 3) and r.properties.get("since") == A.Parameter("s")
    assert b.labels is None and b.properties is None
    assert m.pattern.paths[1].elements[1].direction == "left"
    assert m.pattern.paths[1].elements[1].length == (None, None)
    assert m.pattern.paths[2].elements[1].length == (2, 2) and m.pattern.paths[2].elements[1].direction == "none"
    assert_spans(text, m)


def test_label_expressions():
    node = parse("MATCH (n:(A|B)&!C) RETURN n").clauses[0].pattern.paths[0].elements[0]
    assert node.labels == A.LabelAnd(A.LabelOr(A.LabelName("A"), A.LabelName("B")), A.LabelNot(A.LabelName("C")))


def test_shortest_paths_and_quantified_paths():
    sp = parse("MATCH p = shortestPath((a)-[:R*..5]-(b)) RETURN p").clauses[0].pattern.paths[0]
    assert sp.shortest == "shortestpath" and sp.elements[1].length == (None, 5)
    asp = parse("MATCH p = allShortestPaths((a)-[*]-(b)) RETURN p").clauses[0].pattern.paths[0]
    assert asp.shortest == "allshortestpaths"
    gql = parse("MATCH p = ANY SHORTEST (a)-[:R]->+(b) RETURN p").clauses[0].pattern.paths[0]
    assert gql.shortest == "any shortest" and gql.elements[1].quantifier == (1, None)
    qpp = parse("MATCH (a) ((x)-[:R]->(y) WHERE x.v > 1){1,3} (b) RETURN a").clauses[0].pattern.paths[0]
    assert isinstance(qpp.elements[1], A.QuantifiedPath) and qpp.elements[1].quantifier == (1, 3)


# ---------------------------------------------------------------- clauses

def test_match_optional_where():
    q = parse("MATCH (a) OPTIONAL MATCH (a)-->(b) WHERE b.x = 1 RETURN a, b")
    assert not q.clauses[0].optional and q.clauses[1].optional and q.clauses[1].where is not None


def test_projection_options():
    w = parse("MATCH (n) WITH DISTINCT n.x AS x ORDER BY x DESC, n.y SKIP 1 LIMIT $l WHERE x > 0 RETURN *").clauses[1]
    assert w.distinct and [s.descending for s in w.order_by] == [True, False]
    assert w.skip == A.Literal(1) and w.limit == A.Parameter("l") and w.where is not None
    assert parse("MATCH (n) RETURN *").clauses[1].star


def test_call_procedure():
    text = "CALL pagerank({label: 'Field'}) YIELD node, score AS s WHERE s > 0.1 RETURN node.name, s"
    c = parse(text).clauses[0]
    assert c.name == "pagerank" and c.args[0].get("label") == A.Literal("Field")
    assert [(y.field, y.alias, y.name) for y in c.yields] == [("node", None, "node"), ("score", "s", "s")]
    assert c.where is not None and text[slice(*c.name_span)] == "pagerank"
    bare = parse("CALL db.labels").clauses[0]
    assert bare.name == "db.labels" and bare.args is None and bare.yields is None
    assert parse("CALL describe()").clauses[0].args == ()
    assert parse("CALL x.y() YIELD *").clauses[0].yield_star


def test_call_subqueries():
    q = parse("MATCH (n) CALL (n) { MATCH (n)-->(m) RETURN count(m) AS c } RETURN n, c")
    sub = q.clauses[1]
    assert isinstance(sub, A.CallSubquery) and sub.scope == (A.Variable("n"),)
    assert isinstance(sub.query.clauses[-1], A.Return)
    assert parse("CALL { RETURN 1 AS x } RETURN x").clauses[0].scope is None
    assert parse("CALL () { RETURN 1 AS x } RETURN x").clauses[0].scope == ()
    tx = parse("UNWIND $rows AS r CALL (r) { CREATE (:X {v: r}) } IN 2 CONCURRENT TRANSACTIONS OF 100 ROWS "
               "ON ERROR CONTINUE REPORT STATUS AS s RETURN s").clauses[1].in_transactions
    assert tx.batch == A.Literal(100) and tx.concurrent and tx.concurrency == A.Literal(2)
    assert tx.on_error == "CONTINUE" and tx.report.name == "s"


def test_updating_clauses():
    q = parse("MERGE (n:Mem {k: $k}) ON CREATE SET n.c = 1 ON MATCH SET n.c = coalesce(n.c, 0) + 1, n:Seen "
              "SET n += $props, n.x = date(datetime()), n = {} REMOVE n.y, n:Old DETACH DELETE n")
    merge, set_, remove, delete = q.clauses
    assert [a.on for a in merge.actions] == ["CREATE", "MATCH"]
    assert [i.kind for i in merge.actions[1].items] == ["property", "labels"]
    assert [(i.kind, i.op) for i in set_.items] == [("variable", "+="), ("property", "="), ("variable", "=")]
    assert [i.kind for i in remove.items] == ["property", "labels"]
    assert delete.detach and delete.exprs == (A.Variable("n"),)
    assert not parse("MATCH (n) DELETE n").clauses[1].detach


def test_foreach_unwind_create_load_use_finish():
    fe = parse("FOREACH (x IN [1, 2] | CREATE (:N {v: x}) SET x.y = 1)").clauses[0]
    assert fe.var.name == "x" and [type(c).__name__ for c in fe.clauses] == ["Create", "SetClause"]
    lc = parse("LOAD CSV WITH HEADERS FROM 'file:///x.csv' AS row FIELDTERMINATOR ';' RETURN row").clauses[0]
    assert lc.with_headers and lc.var.name == "row" and lc.field_terminator == ";"
    assert parse("USE neo4j MATCH (n) RETURN n").clauses[0].graph == "neo4j"
    assert isinstance(parse("MATCH (n) SET n.x = 1 FINISH").clauses[-1], A.Finish)


def test_union_explain_profile_and_semicolon():
    q = parse("EXPLAIN MATCH (n) RETURN n.a AS a UNION ALL MATCH (m) RETURN m.a AS a UNION RETURN 1 AS a;")
    assert q.prefix == "EXPLAIN" and len(q.parts) == 3 and q.union_all == (True, False)
    with pytest.raises(ValueError):
        q.clauses
    assert parse("profile RETURN 1").prefix == "PROFILE"


@pytest.mark.parametrize("text, keyword", [
    ("CREATE INDEX ON :Field(name)", "CREATE INDEX"),           # FalkorDB's own syntax passes through
    ("GRANT ROLE reader TO alice", "GRANT ROLE"), ("SHOW SETTINGS", "SHOW SETTINGS"),
    ("ALTER DATABASE neo4j SET ACCESS READ ONLY;", "ALTER DATABASE"),
])
def test_unknown_commands_are_opaque(text, keyword):
    q = parse(text)
    (cmd,) = q.clauses
    assert isinstance(cmd, A.Command) and cmd.keyword == keyword and cmd.text == text.rstrip(";")


def test_create_index_commands_are_typed():
    (vector,) = parse("CREATE VECTOR INDEX $name IF NOT EXISTS FOR (m:Doc) ON m.embedding OPTIONS "
                      "{indexConfig: {`vector.dimensions`: 3}}").clauses
    assert vector == A.CreateIndex("VECTOR", A.Parameter("name"), True,
                                   A.SchemaTarget("node", "m", ("Doc",), ("embedding",)),
                                   A.MapLiteral((("indexConfig", A.MapLiteral((("vector.dimensions", A.Literal(3)),))),)))
    (fulltext,) = parse("CREATE FULLTEXT INDEX ft FOR (n:A|B) ON EACH [n.t, n.b]").clauses
    assert fulltext.kind == "FULLTEXT" and fulltext.target == A.SchemaTarget("node", "n", ("A", "B"), ("t", "b"))
    (rel,) = parse("CREATE INDEX idx FOR ()-[r:T]->() ON (r.a, r.b)").clauses
    assert (rel.kind, rel.name, rel.if_not_exists) == ("RANGE", "idx", False)
    assert rel.target == A.SchemaTarget("relationship", "r", ("T",), ("a", "b"))
    (text,) = parse("create text index `my idx` for (n:Field) on (n.title)").clauses
    assert (text.kind, text.name) == ("TEXT", "my idx")


@pytest.mark.parametrize("text, kind, properties", [
    ("CREATE CONSTRAINT IF NOT EXISTS FOR (b:__Entity__) REQUIRE b.id IS UNIQUE;", "UNIQUE", ("id",)),
    ("CREATE CONSTRAINT k FOR (b:X) REQUIRE (b.a, b.c) IS NODE KEY", "KEY", ("a", "c")),
    ("CREATE CONSTRAINT FOR (b:X) REQUIRE b.a IS NOT NULL", "NOT NULL", ("a",)),
    ("CREATE CONSTRAINT FOR ()-[r:R]-() REQUIRE r.a IS RELATIONSHIP UNIQUE", "UNIQUE", ("a",)),
])
def test_create_constraint_commands_are_typed(text, kind, properties):
    (constraint,) = parse(text).clauses
    assert isinstance(constraint, A.CreateConstraint)
    assert constraint.kind == kind and constraint.target.properties == properties
    assert parse("CREATE CONSTRAINT t FOR (n:X) REQUIRE n.a IS :: INTEGER").clauses[0].type_name == "INTEGER"


def test_drop_and_show_commands_are_typed():
    assert parse("DROP INDEX $name IF EXISTS").clauses == (A.DropSchema("INDEX", A.Parameter("name"), True),)
    assert parse("DROP CONSTRAINT c").clauses == (A.DropSchema("CONSTRAINT", "c", False),)
    show, ret = parse("SHOW VECTOR INDEXES YIELD name, type AS t ORDER BY name LIMIT 2 WHERE t = 'V' "
                      "RETURN name").clauses
    assert (show.what, show.kind, [y.name for y in show.yields]) == ("INDEXES", "VECTOR", ["name", "t"])
    assert show.limit == A.Literal(2) and isinstance(show.where, A.BinaryOp) and isinstance(ret, A.Return)
    assert parse("SHOW DEFAULT DATABASE").clauses[0].what == "DEFAULT DATABASE"
    database = parse("SHOW DATABASE neo4j YIELD *").clauses[0]
    assert (database.what, database.argument, database.yield_star) == ("DATABASES", "neo4j", True)
    assert parse("SHOW CURRENT USER").clauses[0].what == "CURRENT USER"
    assert parse("SHOW ALL FUNCTIONS EXECUTABLE BY CURRENT USER").clauses[0].kind == "ALL"


def test_cypher_options_and_dynamic_labels():
    q = parse("CYPHER 25 runtime=parallel EXPLAIN MATCH (n:$any(['A', 'B'])) SET n:$(row.t) RETURN n")
    assert (q.options, q.prefix) == ("CYPHER 25 runtime=parallel", "EXPLAIN")
    match, set_, _ = q.clauses
    assert match.pattern.paths[0].elements[0].labels == A.DynamicLabel(
        A.ListLiteral((A.Literal("A"), A.Literal("B"))), "any")
    assert set_.items[0].labels == A.DynamicLabel(A.Property(A.Variable("row"), "t"), "all")
    assert parse("CYPHER 5 SHOW INDEXES").options == "CYPHER 5"


# ---------------------------------------------------------------- errors and caching

@pytest.mark.parametrize("text, message", [
    ("MATCH (n RETURN n", "Invalid input 'RETURN': expected ')' (line 1, column 10 (offset: 9))"),
    ("RETURN 1 +", "Invalid input '': expected an expression (line 1, column 11 (offset: 10))"),
    ("MATCH (n)\nWHERE n.x = = 1 RETURN n", "Invalid input '=': expected an expression (line 2, column 13 (offset: 22))"),
    ("RETURN {, }", "Invalid input ',': expected a map key"),
    ("MATCH (n) RETRUN n", "Invalid input 'RETRUN': expected a clause"),
    ("RETURN " + "[" * 5000, "nested too deeply"),
])
def test_syntax_errors(text, message):
    with pytest.raises(CypherError) as info:
        parse(text)
    assert info.value.code == "Neo.ClientError.Statement.SyntaxError"
    assert message in info.value.message


def test_parse_is_cached_by_text():
    assert parse(SEED) is parse(SEED)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="MATCHRETURNWITH ()[]{}-<>:.,'$|*=+0123456789abnxyz\n", max_size=60))
def test_parser_never_crashes(text):
    try:
        parse(text)
    except CypherError as err:
        assert err.code == "Neo.ClientError.Statement.SyntaxError"


# ---------------------------------------------------------------- scope

def test_scope_after_each_clause():
    q = parse("MATCH p = (a:A)-[r:R]->(b)-[rs*]->(c) UNWIND [1] AS u "
              "WITH a, r AS rel, u + 1 AS v CALL (a) { MATCH (a)-->(m) RETURN m, count(*) AS k } "
              "CALL db.labels() YIELD label RETURN *")
    after = scopes(q.parts[0])
    assert after[0] == {"p": "path", "a": "node", "r": "relationship", "b": "node",
                        "rs": "relationship_list", "c": "node"}
    assert after[1]["u"] == "value"
    assert after[2] == {"a": "node", "rel": "relationship", "v": "value"}
    assert after[3] == {"a": "node", "rel": "relationship", "v": "value", "m": "node", "k": "value"}
    assert after[4]["label"] == "value"
    assert bindings(q.clauses[0]) == after[0]


_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True).filter(
    lambda s: s.upper() not in {"IF", "FOR", "ON", "OPTIONS", "EACH", "REQUIRE", "IS", "NOT", "INDEX"})


@given(kind=st.sampled_from(["", "RANGE ", "TEXT ", "VECTOR ", "FULLTEXT "]), name=st.none() | _names,
       exists=st.booleans(), label=_names, properties=st.lists(_names, min_size=1, max_size=3, unique=True),
       relationship=st.booleans())
@settings(max_examples=150, deadline=None)
def test_create_index_parses_to_its_parts(kind, name, exists, label, properties, relationship):
    var = "x"
    target = f"()-[{var}:`{label}`]->()" if relationship else f"({var}:`{label}`)"
    props = ", ".join(f"{var}.`{p}`" for p in properties)
    on = f"EACH [{props}]" if kind == "FULLTEXT " else f"({props})"
    text = (f"CREATE {kind}INDEX {f'`{name}` ' if name else ''}{'IF NOT EXISTS ' if exists else ''}"
            f"FOR {target} ON {on}")
    (index,) = parse(text).clauses
    assert isinstance(index, A.CreateIndex)
    assert (index.kind, index.name, index.if_not_exists) == ((kind.strip() or "RANGE"), name, exists)
    assert index.target == A.SchemaTarget("relationship" if relationship else "node", var, (label,),
                                          tuple(properties))


def test_cypher_25_search_subclause():
    from extensions.cypher.parser import parse as _parse
    text = ("CYPHER 25 MATCH (node:Doc) SEARCH node IN (VECTOR INDEX `idx` FOR $q WHERE node.a = 1 "
            "LIMIT $k * 2) SCORE AS score RETURN node, score")
    match = _parse(text).parts[0].clauses[0]
    search = match.search
    assert (search.var.name, search.index, search.score.name) == ("node", "idx", "score")
    assert search.query.text_in(text) == "$q" and search.limit.text_in(text) == "$k * 2"
    assert search.where.text_in(text) == "node.a = 1" and match.where is None
