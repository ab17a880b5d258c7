"""Tokenizer: literals, names, parameters, comments, operators, errors; never crashes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from extensions.cypher.tokens import (
    EOF,
    FLOAT,
    IDENT,
    INT,
    OP,
    PARAM,
    QIDENT,
    STRING,
    tokenize,
)
from core.errors import CypherError


def kinds_values(text: str) -> list[tuple[str, object]]:
    return [(t.kind, t.value) for t in tokenize(text) if t.kind != EOF]


def test_keywords_are_case_insensitive_identifiers():
    toks = tokenize("match MaTcH RETURN")
    assert [t.kind for t in toks[:3]] == [IDENT] * 3
    assert [t.upper for t in toks[:3]] == ["MATCH", "MATCH", "RETURN"]


@pytest.mark.parametrize("text, name", [
    ("`a b`", "a b"), ("`a``b`", "a`b"), ("`ts_avg(`", "ts_avg("), ("`Ünïcode`", "Ünïcode"),
])
def test_backtick_identifiers(text, name):
    assert kinds_values(text) == [(QIDENT, name)]


@pytest.mark.parametrize("text, value", [
    (r"'a\nb'", "a\nb"), (r"'\t'", "\t"), (r"'\\'", "\\"), (r"'\''", "'"), (r'"\""', '"'),
    (r"'\"'", '"'), (r"'\u00e9'", "é"), (r"'\U0001F600'", "😀"), ('"it\'s"', "it's"),
    (r"'\b\f\r'", "\b\f\r"), ("'multi\nline'", "multi\nline"), ("''", ""),
])
def test_string_escapes(text, value):
    assert kinds_values(text) == [(STRING, value)]


@pytest.mark.parametrize("text, kind, value", [
    ("42", INT, 42), ("0x1F", INT, 31), ("0o17", INT, 15), ("1.5", FLOAT, 1.5), (".5", FLOAT, 0.5),
    ("1e3", FLOAT, 1000.0), ("1.5E-2", FLOAT, 0.015), (".5e1", FLOAT, 5.0), ("1_000", INT, 1000),
])
def test_numbers(text, kind, value):
    assert kinds_values(text) == [(kind, value)]


def test_range_dots_are_not_floats():
    assert kinds_values("1..2") == [(INT, 1), (OP, ".."), (INT, 2)]


@pytest.mark.parametrize("text, name", [("$name", "name"), ("$0", "0"), ("$`odd name`", "odd name")])
def test_parameters(text, name):
    assert kinds_values(text) == [(PARAM, name)]


def test_comments_produce_no_tokens():
    text = "RETURN 1 // ts_avg(x)\n/* ts_avg(\n y) */ + 2"
    assert kinds_values(text) == [(IDENT, "RETURN"), (INT, 1), (OP, "+"), (INT, 2)]


def test_comment_markers_inside_strings_are_text():
    assert kinds_values("'// not a comment /* nor this */'") == [(STRING, "// not a comment /* nor this */")]


@pytest.mark.parametrize("op", ["=~", "<>", "!=", "<=", ">=", "+=", "..", "::", "|", "&", "!", "||",
                                "^", "%", "-", "+", "*", "/", "=", "<", ">", ":", ".", ";"])
def test_operators(op):
    assert kinds_values(f"a {op} b") == [(IDENT, "a"), (OP, op), (IDENT, "b")]


def test_arrows_are_single_characters():
    assert [t.value for t in tokenize("<-->")[:-1]] == ["<", "-", "-", ">"]


def test_offsets():
    toks = tokenize("MATCH  (n)")
    assert [(t.start, t.end) for t in toks] == [(0, 5), (7, 8), (8, 9), (9, 10), (10, 10)]


@pytest.mark.parametrize("text, fragment", [
    ("RETURN 'abc", "closing quote"), ("RETURN `abc", "closing backtick"), ("/* never closed", "'*/'"),
    (r"RETURN '\uH'", "unicode escape"), ("RETURN 42 — 41", "Invalid input '—'"),
    ("RETURN 1B2c3e67", "number"), ("RETURN 0x1G", "number"), ("RETURN 1e500", "too large"),
])
def test_errors_are_syntax_errors_with_position(text, fragment):
    with pytest.raises(CypherError) as info:
        tokenize(text)
    assert info.value.code == "Neo.ClientError.Statement.SyntaxError"
    assert fragment in info.value.message and "(line 1, column" in info.value.message


def test_error_position_counts_lines():
    with pytest.raises(CypherError) as info:
        tokenize("MATCH (n)\nRETURN §")
    assert info.value.message.endswith("(line 2, column 8 (offset: 17))")


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=80)
       | st.text(alphabet="'\"`/*\\$0x.e-<>()[]{}:aZ 9u\n", max_size=40))
def test_tokenizer_never_crashes(text):
    try:
        toks = tokenize(text)
    except CypherError as err:
        assert err.code == "Neo.ClientError.Statement.SyntaxError"
        return
    assert toks[-1].kind == EOF
    assert all(0 <= t.start <= t.end <= len(text) for t in toks)


def test_an_integer_literal_past_pythons_digit_limit_is_a_syntax_error():
    with pytest.raises(CypherError) as info:                 # found by the long fuzz (58,787 digits)
        tokenize("RETURN datetime({year: 1984" + "9" * 5000 + "})")
    assert info.value.code == "Neo.ClientError.Statement.SyntaxError"
    assert "integer is too large" in info.value.message and len(info.value.message) < 200
