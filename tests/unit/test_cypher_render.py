"""Render and splice: render(parse(q)) re-parses to an equal AST (hypothesis-generated
expressions and queries), and span splicing rewrites the original text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extensions.cypher import ast as A
from extensions.cypher import parse, parse_expression, render, splice

NAMES = st.sampled_from(["n", "m", "x", "value", "count", "end", "`weird name`", "`a``b`", "_y2", "été"])
KEYS = st.sampled_from(["name", "x", "count", "match", "`key with space`"])
BINARY = st.sampled_from(["OR", "XOR", "AND", "=", "<>", "!=", "<", ">", "<=", ">=", "=~", "IN",
                          "STARTS WITH", "ENDS WITH", "CONTAINS", "+", "-", "*", "/", "%", "^", "||"])
FUNCS = st.sampled_from(["ts_avg", "contains", "toString", "apoc.text.join", "exists", "count", "any"])


def _string_literal(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


ATOMS = st.one_of(
    st.integers(min_value=-2**63, max_value=2**63 - 1).map(str),
    st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300).map(repr),
    st.text(max_size=8).map(_string_literal),
    NAMES,
    st.sampled_from(["$p", "$0", "$`odd p`", "true", "false", "null", "count(*)", "[]", "{}"]),
)


def _compound(children):
    return st.one_of(
        st.tuples(children, BINARY, children).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        st.tuples(children, st.sampled_from(["<", "<=", "="]), children, children)
          .map(lambda t: f"{t[0]} {t[1]} {t[2]} < {t[3]}"),
        children.map(lambda c: f"NOT {c}"),
        children.map(lambda c: f"-{c}"),
        children.map(lambda c: f"({c})"),
        children.map(lambda c: f"({c}) IS NOT NULL"),
        st.tuples(children, KEYS).map(lambda t: f"({t[0]}).{t[1]}"),
        st.tuples(children, children).map(lambda t: f"({t[0]})[{t[1]}]"),
        st.tuples(children, children).map(lambda t: f"({t[0]})[{t[1]}..]"),
        st.tuples(NAMES, st.sampled_from(["A", "A:B", "A|B", "!A&B"])).map(lambda t: f"({t[0]}:{t[1]})"),
        st.tuples(FUNCS, st.lists(children, max_size=3)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.lists(children, max_size=3).map(lambda xs: f"[{', '.join(xs)}]"),
        st.lists(st.tuples(KEYS, children), max_size=3)
          .map(lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"),
        st.tuples(children, children, children).map(lambda t: f"CASE WHEN {t[0]} THEN {t[1]} ELSE {t[2]} END"),
        st.tuples(children, children, children).map(lambda t: f"CASE {t[0]} WHEN {t[1]} THEN {t[2]} END"),
        st.tuples(children, children, children).map(lambda t: f"[x IN {t[0]} WHERE {t[1]} | {t[2]}]"),
        st.tuples(st.sampled_from(["all", "any", "none", "single"]), children, children)
          .map(lambda t: f"{t[0]}(x IN {t[1]} WHERE {t[2]})"),
        children.map(lambda c: f"n {{.name, .*, k: {c}, m}}"),
        children.map(lambda c: f"EXISTS {{ (n)-[:R]->(m) WHERE {c} }}"),
        children.map(lambda c: f"[(n)-->(m:L) WHERE {c} | m.x]"),
    )


EXPRESSIONS = st.recursive(ATOMS, _compound, max_leaves=12)

PATTERNS = st.sampled_from([
    "(n)", "(n:A {x: 1})", "(n)-[r:R]->(m)", "(n)<-[:R|S*1..3]-(m:B:C)", "p = (n)-[*]-(m)",
    "p = shortestPath((n)-[:R*..4]->(m))", "(n:A|B)--(m)", "(a)((x)-[:R]->(y)){1,3}(b)",
])


def _query(parts):
    match, where, items, unwind, order = parts
    return (f"MATCH {match} WHERE {where} UNWIND {unwind} AS u "
            f"WITH n, u, {items[0]} AS a RETURN DISTINCT a, {items[1]} AS b ORDER BY a DESC SKIP 1 LIMIT 10"
            + (" UNION ALL MATCH (n) RETURN 1 AS a, 2 AS b" if order else ""))


QUERIES = st.tuples(PATTERNS, EXPRESSIONS, st.tuples(EXPRESSIONS, EXPRESSIONS), EXPRESSIONS,
                    st.booleans()).map(_query)


#: Label and relationship-type expressions: names, `%`, `!`, `&`, `|` and parentheses, nested.
LABEL_EXPRESSIONS = st.recursive(
    st.sampled_from(["A", "B", "MENTIONS", "`odd type`", "%"]),
    lambda inner: st.one_of(
        inner.map(lambda x: f"!{x}"),
        inner.map(lambda x: f"({x})"),
        st.tuples(inner, st.sampled_from(["|", "&"]), inner).map(lambda t: f"{t[0]}{t[1]}{t[2]}"),
    ), max_leaves=6)


def _labelled_match(parts):
    node, rel, keyword, length = parts
    types = f"IS {rel}" if keyword else f":{rel}"
    return f"MATCH (n:{node})-[r {types}{length}]->(m) WHERE m:{node} RETURN n, r"


LABELLED = st.tuples(LABEL_EXPRESSIONS, LABEL_EXPRESSIONS, st.booleans(),
                     st.sampled_from(["", "*", "*1..2"])).map(_labelled_match)

SCOPED_CALLS = st.tuples(
    st.sampled_from(["", "*", "n", "n, m"]),
    st.lists(st.sampled_from(["WITH n MATCH (n)-[r:!MENTIONS]->(t) RETURN t.name AS x",
                              "MATCH (n)<-[:A|B]-(t) RETURN t.name AS x", "RETURN 1 AS x",
                              "UNWIND [1, 2] AS y RETURN y AS x"]), min_size=1, max_size=3),
    st.lists(st.booleans(), min_size=2, max_size=2),
).map(lambda t: (f"MATCH (n), (m) CALL ({t[0]}) {{ "
                 + (" UNION ALL " if t[2][0] else " UNION ").join(t[1]) + " } RETURN n, x"
                 + (" UNION ALL RETURN 1 AS n, 2 AS x" if t[2][1] else "")))


def _round_trips(tree) -> None:
    text = render(tree)
    again = parse(text) if isinstance(tree, A.Query) else parse_expression(text)
    assert again == tree, text
    assert render(again) == text


@settings(max_examples=300, deadline=None)
@given(EXPRESSIONS)
def test_rendered_expressions_reparse_equal(text):
    _round_trips(parse_expression(text))


@settings(max_examples=150, deadline=None)
@given(QUERIES)
def test_rendered_queries_reparse_equal(text):
    _round_trips(parse(text))


@settings(max_examples=150, deadline=None)
@given(LABELLED)
def test_rendered_label_expressions_reparse_equal(text):
    _round_trips(parse(text))


@settings(max_examples=60, deadline=None)
@given(SCOPED_CALLS)
def test_rendered_scoped_call_unions_reparse_equal(text):
    tree = parse(text)
    call = next(tree.find_all(A.CallSubquery))
    assert len(call.query.parts) == text.split("}")[0].count(" UNION ") + 1
    _round_trips(tree)


@pytest.mark.parametrize("text, rendered", [
    ("RETURN (1 + 2) * 3", "RETURN (1 + 2) * 3"),
    ("RETURN 1 - (2 - 3)", "RETURN 1 - (2 - 3)"),
    ("RETURN (a < b) < c", "RETURN (a < b) < c"),
    ("RETURN -(1)", "RETURN -(1)"),
    ("RETURN `count`(x), count(y), `my var`", "RETURN count(x), count(y), `my var`"),
    ("RETURN \"it's\" + \"q\\\"\"", "RETURN 'it\\'s' + 'q\"'"),
    ("MATCH (a)<-[:R*2]-(b)-[*1..]->(c) RETURN a", "MATCH (a)<-[:R*2]-(b)-[*1..]->(c) RETURN a"),
])
def test_render_examples(text, rendered):
    tree = parse(text)
    assert render(tree) == rendered
    assert parse(rendered) == tree


# ---------------------------------------------------------------- splice

def test_splice_replaces_extension_calls_keeping_everything_else():
    text = ("MATCH (p:ProductionProfile) // keep ts_avg( in comments\n"
            "RETURN ts_avg(p.prd_oe_net, '2020') AS a, 'ts_avg(' AS s, ts_avg(p.prd_oe_net) AS b")
    ext = [c for c in parse(text).find_all(A.FunctionCall) if c.name == "ts_avg"]
    out = splice(text, [(c.span, f"$__ext{i}[id(p)]") for i, c in reversed(list(enumerate(ext)))])
    assert out == ("MATCH (p:ProductionProfile) // keep ts_avg( in comments\n"
                   "RETURN $__ext0[id(p)] AS a, 'ts_avg(' AS s, $__ext1[id(p)] AS b")
    parse(out)


def test_splice_inserts_and_rejects_overlaps():
    assert splice("abc", [((1, 1), "X"), ((3, 3), "!")]) == "aXbc!"
    assert splice("abc", []) == "abc"
    with pytest.raises(ValueError):
        splice("abcdef", [((0, 3), "x"), ((2, 4), "y")])
    with pytest.raises(ValueError):
        splice("abc", [((2, 9), "x")])


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30), st.data())
def test_splice_matches_piecewise_rebuild(text, data):
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=6)))
    spans = [(cuts[i], cuts[i + 1]) for i in range(0, len(cuts) - 1, 2)]
    news = [data.draw(st.text(max_size=4)) for _ in spans]
    expected, pos = "", 0
    for (s, e), new in zip(spans, news):
        expected += text[pos:s] + new
        pos = e
    expected += text[pos:]
    assert splice(text, list(zip(spans, news))) == expected


def test_outermost_keeps_the_outer_of_nested_edits():
    from extensions.cypher.splice import outermost, splice
    text = "WHERE elementId(n) = $id AND f(g(x))"
    whole_comparison = ((6, 24), "id(n) = toInteger($id)")
    inner_call = ((6, 18), "toString(id(n))")          # same start: the outer one still wins
    outer_f, inner_g = ((29, 36), "F"), ((31, 35), "G")
    kept = outermost([inner_call, inner_g, whole_comparison, outer_f])
    assert kept == [whole_comparison, outer_f]
    assert splice(text, kept) == "WHERE id(n) = toInteger($id) AND F"
