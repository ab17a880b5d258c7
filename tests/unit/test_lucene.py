"""Lucene query syntax -> RediSearch (extensions/compat/lucene.py)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, strategies as st

from extensions.compat.lucene import matches, parse, translate
from core.errors import CypherError


@pytest.mark.parametrize("lucene, redisearch", [
    ("Lovelace London", "((Lovelace) | (London))"),                 # Lucene's default operator is OR
    ("ada AND lovelace", "(ada) (lovelace)"),
    ("ada && lovelace", "(ada) (lovelace)"),
    ("+ada london", "(ada)"),                                        # should-clauses only score then
    ("ada -babbage", "((ada)) -(babbage)"),
    ("ada NOT babbage", "((ada)) -(babbage)"),
    ("name:London", "((@name:London))"),
    ('"ada lovelace"', '(("ada lovelace"))'),
    ("lov*", "((lov*))"),
    ("lovelase~", "((%%lovelase%%))"),                               # Lucene's default edit distance: 2
    ("lovelase~1", "((%lovelase%))"),
    ("engine^3 ada", "((engine) | (ada))"),
    ("(ada OR london) AND person", "((((ada) | (london)))) (person)"),
    ("o'brien", "((o\\'brien))"),
    ("*", "*"),
])
def test_translations(lucene, redisearch):
    assert translate(lucene) == redisearch


@pytest.mark.parametrize("query, words", [("", "empty"), ("-ada", "only excluded"), ("(ada", "unclosed"),
                                          ("ada)", "unmatched"), ("l?ve", "wildcard"), ("*ove", "wildcard")])
def test_refusals_say_why(query, words):
    with pytest.raises(CypherError, match=words):
        translate(query)


@given(st.lists(st.sampled_from(list('ab :"()+-!~^*?&|\\') + [" AND ", " OR ", "NOT ", "x1"]), max_size=20))
def test_any_input_translates_or_is_refused_cleanly(pieces):
    query = "".join(pieces)
    try:
        out = translate(query)
    except CypherError as error:
        assert error.code == "Neo.ClientError.Statement.ArgumentError"
    else:
        unescaped = re.sub(r"\\.", "", out)
        assert unescaped.count("(") == unescaped.count(")")


DOC = {"name": ["Ada Lovelace"], "type": ["Person"], "observations": ["wrote the first program", "lived in London"]}


@pytest.mark.parametrize("query, score", [
    ("program", 1), ("Lovelace London", 2), ("ada AND program", 2), ("name:program", 0),
    ("observations:program", 1), ("progrm~", 1), ("progrm~1", 1), ("prgrm~1", 0), ("prog*", 1),
    ('"first program"', 1), ('"program first"', 0), ('"program lived"', 0),   # a phrase stays in one string
    ("ada -london", 0), ("+babbage ada", 0), ("(babbage OR ada) AND person", 2), ("*", 1)])
def test_matches_evaluates_lucene_on_each_string(query, score):
    assert matches(parse(query), DOC) == score
