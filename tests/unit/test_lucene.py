"""Lucene query syntax -> RediSearch (extensions/compat/lucene.py)."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from extensions.compat.lucene import translate
from proxy.errors import CypherError


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
        unescaped = out.replace("\\(", "").replace("\\)", "")
        assert unescaped.count("(") == unescaped.count(")")
