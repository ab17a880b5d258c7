"""The FalkorDB guards (`proxy.backends.falkordb.guards`): what they count, and that they count it
the way Cypher's grammar nests expressions (a property test against an independent depth)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proxy.backends.falkordb.guards import (
    MAX_CLAUSES, MAX_MAP_ENTRIES, MAX_NESTING, MAX_OPERATORS, MAX_QUERY_CHARS, MAX_RANGE,
    MAX_READING_PARTS, MAX_UNDIRECTED_HOPS, check_map_size, check_query, code_only,
)
from core.errors import CypherError


def refused(query: str, params: dict | None = None) -> str | None:
    try:
        check_query(query, params)
    except CypherError as exc:
        return exc.message
    return None


# ---- an independent model: expression trees that know their own nesting depth

@dataclass(frozen=True)
class Expr:
    text: str
    depth: int          # nesting levels FalkorDB's parser goes through (brackets, CASE, unary)
    precedence: int     # 6 atom/bracketed, 5 unary minus, 4 +, 3 =, 2 NOT, 1 AND


def _operand(child: Expr, at_least: int) -> Expr:
    """`child` as an operand that needs `at_least` precedence: parenthesised (a level) if lower."""
    if child.precedence >= at_least:
        return child
    return Expr(f"({child.text})", child.depth + 1, 6)


def _bracket(open_: str, close: str):
    return lambda e: Expr(f"{open_}{e.text}{close}", e.depth + 1, 6)


def _unary_minus(e: Expr) -> Expr:
    e = _operand(e, 5)
    return Expr(f"-{e.text}", e.depth + 1, 5)


def _not(e: Expr) -> Expr:
    e = _operand(e, 3)
    return Expr(f"NOT {e.text}", e.depth + 1, 2)


def _binary(op: str, precedence: int):
    def build(a: Expr, b: Expr) -> Expr:
        a, b = _operand(a, precedence + 1), _operand(b, precedence + 1)
        return Expr(f"{a.text} {op} {b.text}", max(a.depth, b.depth), precedence)
    return build


def _case(c: Expr, a: Expr, b: Expr) -> Expr:
    return Expr(f"CASE WHEN {c.text} THEN {a.text} ELSE {b.text} END",
                max(c.depth, a.depth, b.depth) + 1, 6)


ATOMS = st.sampled_from(["1", "x", "n.name", "$p", "'(-['", "true", "[]", "n.not"]).map(
    lambda t: Expr(t, 1 if t == "[]" else 0, 6))

def _iterating(open_: str, close: str):
    """`[x IN e | x]`, `any(x IN e WHERE true)`: a bracket that iterates counts two levels."""
    return lambda e: Expr(f"{open_}{e.text}{close}", e.depth + 2, 6)


WRAPPERS = [_bracket("(", ")"), _bracket("[", "]"), _bracket("{a: ", "}"), _bracket("abs(", ")"),
            _unary_minus, _not, _iterating("[x IN ", " | x]"), _iterating("any(x IN ", " WHERE true)")]
BINARIES = [_binary("+", 4), _binary("=", 3), _binary("AND", 1)]
SMALL = st.recursive(ATOMS, lambda inner: st.one_of(
    *(inner.map(wrap) for wrap in WRAPPERS), *(st.builds(op, inner, inner) for op in BINARIES),
    st.builds(_case, inner, inner, inner)), max_leaves=5)


@st.composite
def expressions(draw) -> Expr:
    """A small expression wrapped 8 to 22 times, with siblings on the way: depths on both
    sides of the limit."""
    expr = draw(SMALL)
    for step in draw(st.lists(st.integers(0, len(WRAPPERS) + len(BINARIES)), min_size=8, max_size=22)):
        if step < len(WRAPPERS):
            expr = WRAPPERS[step](expr)
        elif step < len(WRAPPERS) + len(BINARIES):
            other = draw(SMALL)
            pair = (expr, other) if draw(st.booleans()) else (other, expr)
            expr = BINARIES[step - len(WRAPPERS)](*pair)
        else:
            expr = _case(draw(SMALL), expr, draw(SMALL))
    return expr


@settings(max_examples=400, deadline=None)
@given(expressions())
def test_nesting_is_measured_as_the_grammar_nests(expr):
    problem = refused(f"WITH 1 AS x, {{name: 'a'}} AS n RETURN {expr.text} AS v")
    if expr.depth > MAX_NESTING:
        assert problem and "levels deep" in problem, expr
    else:
        assert problem is None, (expr, problem)


# ---- each limit

@pytest.mark.parametrize("query", [
    "RETURN " + "(" * MAX_NESTING + "1" + ")" * MAX_NESTING,
    "RETURN " + "NOT " * MAX_NESTING + "true",
    "RETURN " + "-" * MAX_NESTING + "1",
    "RETURN " + "CASE WHEN true THEN " * MAX_NESTING + "1" + " END" * MAX_NESTING,
    "RETURN " + " + ".join(["1"] * MAX_OPERATORS),
    "WITH 1 AS x " * (MAX_CLAUSES - 1) + "RETURN 1",
    "".join(f"MATCH (a{i}) " for i in range(MAX_READING_PARTS)) + "RETURN 1",
    "RETURN {" + ",".join(f"k{i}: 1" for i in range(MAX_MAP_ENTRIES)) + "}",
    f"UNWIND range(1, {MAX_RANGE}) AS x RETURN count(x)",
    "x" * MAX_QUERY_CHARS,
    "MATCH ()" + "-[]-()" * MAX_UNDIRECTED_HOPS + " RETURN 1",
    "MATCH ()" + "-[:R]->()" * 40 + ", ()" + "<--()" * 40 + " RETURN 1",                # directed
    "MATCH ()" + "-[]-()" * 5 + ", ()" + "-[]-()" * 5 + " WITH 1 AS x MATCH ()" + "--()" * 8 + " RETURN 1",
    "MATCH ()<--()" + "-[]-()" * MAX_UNDIRECTED_HOPS + " RETURN 1",
    "CREATE ()" + "-[:R]-()" * 40,                                                       # not a match
    "MATCH (a) WHERE a.x - (1) > 0 - (2) RETURN a",
    # an `x IN list` predicate beside an aggregate iterates nothing (issue 29)
    "UNWIND ['A'] AS label CALL { WITH label MATCH (n) WHERE label IN labels(n) RETURN count(n) AS c } RETURN c",
    "MATCH (n) WITH n, (1 IN [1]) AS t RETURN t, count(n)",
    "MATCH (n) RETURN size([x IN [1] | x]) + count(n)",
])
def test_at_each_limit_the_query_passes(query):
    assert refused(query) is None


@pytest.mark.parametrize("query, words", [
    ("RETURN " + "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1), "levels deep"),
    ("RETURN " + "NOT " * (MAX_NESTING + 1) + "true", "levels deep"),
    ("RETURN " + "-" * (MAX_NESTING + 1) + "1", "levels deep"),
    ("RETURN " + "- " * (MAX_NESTING + 1) + "1", "levels deep"),
    ("RETURN " + "NOT " * 8 + "1 + " + "(" * 8 + "1" + ")" * 8, "levels deep"),  # NOT spans the +
    ("RETURN " + "CASE WHEN true THEN " * (MAX_NESTING + 1) + "1" + " END" * (MAX_NESTING + 1), "levels deep"),
    ("RETURN " + " + ".join(["1"] * (MAX_OPERATORS + 2)), "operators"),
    ("RETURN " + " OR ".join(["x = 1"] * (MAX_OPERATORS // 2 + 1)), "operators"),
    ("WITH 1 AS x " * (MAX_CLAUSES + 1) + "RETURN 1", "clauses"),
    ("".join(f"OPTIONAL MATCH (a{i}) " for i in range(MAX_READING_PARTS + 1)) + "RETURN 1", "MATCH"),
    ("MATCH " + ",".join(f"(a{i})" for i in range(MAX_READING_PARTS + 1)) + " RETURN 1", "MATCH"),
    ("RETURN {" + ",".join(f"k{i}: 1" for i in range(MAX_MAP_ENTRIES + 1)) + "}", "map"),
    (f"UNWIND range(1, {MAX_RANGE + 1}) AS x RETURN count(x)", "range"),
    (f"UNWIND range({MAX_RANGE * 3}, 0, -2) AS x RETURN count(x)", "range"),
    ("RETURN range(0, " + "9" * 18_000 + ")", "range"),       # past Python's digit limit (fuzz)
    ("MATCH ()" + "-[]-()" * (MAX_UNDIRECTED_HOPS + 1) + " RETURN 1", "direction"),   # wedged (fuzz)
    ("MATCH p = (a)" + "--(b)" * (MAX_UNDIRECTED_HOPS + 1) + " RETURN p", "direction"),
    ("OPTIONAL MATCH ()<-[]-()" + "".join(f"-[r{i}]-()" for i in range(MAX_UNDIRECTED_HOPS + 1)) + " RETURN 1",
     "direction"),
    ("MATCH (a)" + "-[]-()" * 6 + ", (a)" + "-[]-()" * 6 + " RETURN 1", "direction"),     # minutes too
    ("MATCH (a)" + "-[]-()" * 6 + " MATCH (a)" + "-[]-()" * 6 + " RETURN 1", "direction"),
    ("x" * (MAX_QUERY_CHARS + 1), "characters"),
    ("RETURN [1, 2] <= [3, " + "(" * 9 + "CASE WHEN true THEN " * 5, "no END"),   # ~2 s to fail
    ("RETURN " + "single(x IN " * 8 + "x, month: 1}) AS r", "levels deep"),     # ~10 s at 11 levels
    ("MATCH (n) RETURN [x IN [1, 2] | count(*)]", "aggregating"),                # crashes FalkorDB
    ("MATCH (n) RETURN [x IN [1] | collect(x)]", "aggregating"),
    ("MATCH (n) RETURN any(x IN [1] WHERE count(*) > 0)", "aggregating"),       # wrong, not refused
    ("MATCH (n) RETURN reduce(s = 0, x IN [1] | s + sum(x))", "aggregating"),
    ("MATCH (n) RETURN none(x IN [1] WHERE x > max(n.v))", "aggregating"),
    ("MATCH (n) RETURN [x IN [1] WHERE (count(*) > 0)]", "aggregating"),
    ("MATCH (a) WHERE NOT (n)" + "-" * 1000 + ">(b) RETURN 1", "levels deep"),  # ran 10+ minutes
    ("MATCH (a)<" + "-" * (MAX_NESTING + 3) + "(b) RETURN 1", "levels deep"),
    # found by the fuzz suite: a bound relationship variable twice in one path crashes the planner
    ("MATCH (a)-[r:T]->() WITH r, a MATCH (a)-[r:T]->(b)-[r:T]->() RETURN a", "variable 'r'"),
    ("UNWIND $rels AS r MATCH p = ()<-[r]-()-[]->()<-[r*]-() RETURN p", "variable 'r'"),
    ("WITH $r AS r MATCH ()-[`r`]->()-[r]->() RETURN 1", "variable 'r'"),
    ("MATCH ()-[r]->() WITH r MATCH (a) WHERE exists((a)-[r]->()-[r]->()) RETURN a", "variable 'r'"),
])
def test_past_each_limit_the_query_is_refused(query, words):
    assert words in (refused(query) or "")


def test_a_range_down_to_a_huge_negative_bound_is_empty_and_allowed():
    assert refused("RETURN range(-1236, -" + "9" * 18_000 + ")") is None


def test_range_parameters_are_checked_and_others_left_to_the_timeout():
    assert "range" in refused("UNWIND range(0, $n) AS x RETURN x", {"n": MAX_RANGE + 5})
    assert refused("UNWIND range(0, $n) AS x RETURN x", {"n": 100}) is None
    assert refused("UNWIND range(0, n.x) AS x RETURN x") is None            # computed: not known here
    assert refused("RETURN 'range(1, 999999999999)' AS text") is None        # a string, not a call


@pytest.mark.parametrize("query", [
    "RETURN '" + "(" * 40 + "' AS s",
    "RETURN \"NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT NOT\" AS s",
    "RETURN 1 // " + "(" * 40,
    "RETURN 1 /* " + "[" * 40 + " */",
    "RETURN `" + "{" * 40 + "` AS odd",
    "MATCH (n) RETURN n.not, n.case, n.end, {end: 1, match: 2}",
    "MATCH (n:Match)-[:NOT]->(m) WHERE n.name STARTS WITH 'a' AND NOT m.x IS NOT NULL RETURN m",
    "MATCH (a)-[:R]->(b)<--(c)--(d)<-[:S*1..3]-(e) RETURN a",
    "RETURN [x IN range(1, 10) WHERE NOT x % 2 = 0 | -x] AS odd",
    "MATCH (n) RETURN collect([x IN n.list | x.count]) AS c, [x IN [1] | x] + count(*) AS d",
    "MATCH ()-[r]->() WITH r MATCH (a)-[r]->(b), (b)-[r]->(c) MATCH (c)-[r]->() RETURN a",
    "MATCH (a)-[r]->(b)-[R]->(c)<-[:r]-(d)-[`r `]-() RETURN [(a)-[r]->() | r], [(b)-[r]->() | r]",
    "MATCH (n {x: [1]})-[r]->(m) RETURN (n.x)-[r][0] AS y, (m.y) - [r][0] AS z",
])
def test_strings_comments_names_and_patterns_do_not_count(query):
    assert refused(query) is None


@pytest.mark.parametrize("query, words", [
    # found by the fuzz suite: a syntax error, then a quote left open hiding 266 brackets (a hang)
    ("MATCH (), r== ()-[*]-(), (r)'\nRETURN r" + "(" * 266, "string literal"),
    ("RETURN 'abc", "string literal"),
    ("RETURN 'a\\'", "string literal"),            # the closing quote is escaped
    ("RETURN \"a" + "(" * 30, "string literal"),
    ("RETURN 'abc\\", "string literal"),           # a lone backslash at the end
    ("RETURN `name" + "(" * 30, "quoted name"),
    ("RETURN 1 /* " + "(" * 30, "comment"),
])
def test_a_string_name_or_comment_left_open_is_refused(query, words):
    assert words in (refused(query) or "")


@pytest.mark.parametrize("query", [
    "RETURN 'a\\\\' AS backslash", "RETURN 'it\\'s' AS s", "RETURN 1 // it's", "RETURN 1 /* it's */",
    "RETURN `a``b` AS name", "RETURN '' + \"\" AS empty",
])
def test_closed_strings_names_and_comments_pass(query):
    assert refused(query) is None


def test_map_parameters_are_limited_per_map():
    check_map_size({f"k{i}": i for i in range(MAX_MAP_ENTRIES)}, "m")
    with pytest.raises(CypherError) as info:
        check_map_size({f"k{i}": i for i in range(MAX_MAP_ENTRIES + 1)}, "m")
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError" and "$m" in info.value.message


def test_code_only_blanks_strings_comments_and_names_in_place():
    query = "RETURN 'a$b' + \"c\" /* $x */ AS `$y` // $z"
    code = code_only(query)
    assert len(code) == len(query) and "$" not in code and code.startswith("RETURN ")
