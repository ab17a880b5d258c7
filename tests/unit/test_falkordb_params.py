"""Writing temporal, point and NaN parameters into FalkorDB query text (falkordb.params)."""

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st
from neo4j.spatial import CartesianPoint, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

from proxy.backends.falkordb.guards import code_only as _code_only
from proxy.backends.falkordb.params import (
    inline_params,
    needs_expression,
    to_expression,
)
from core.errors import CypherError

DAY = Date(2024, 1, 1)


def inline(query, params):
    return inline_params(query, _code_only(query), params)


@pytest.mark.parametrize("value, expression", [
    (DAY, "date('2024-01-01')"), (dt.date(5, 6, 7), "date('0005-06-07')"),
    (DateTime(2024, 1, 2, 3, 4, 5), "localdatetime({year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5})"),
    (dt.datetime(2024, 1, 2, 3, 4, 5), "localdatetime({year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5})"),
    (dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc),        # UTC: the instant stored
     "localdatetime({year: 2024, month: 1, day: 2, hour: 3, minute: 4, second: 5})"),
    (Time(3, 4, 5), "localtime('03:04:05')"), (dt.time(23, 59, 59), "localtime('23:59:59')"),
    (Duration(months=14, days=3, seconds=5), "duration({months: 14, days: 3, seconds: 5})"),
    (Duration(seconds=-1), "duration({months: 0, days: 0, seconds: -1})"),
    (dt.timedelta(days=-1), "duration({months: 0, days: -1, seconds: 0})"),
    (WGS84Point((10.5, -59.25)), "point({latitude: -59.25, longitude: 10.5})"),
    (float("nan"), "(0.0/0.0)"), (float("-inf"), "(-1.0/0.0)"), (1.5, "1.5"),
    (5e-324, f"({5e-324 * 2.0 ** 537!r} * {2.0 ** -537!r})"),
    ([DAY, None, "it's"], r"[date('2024-01-01'), null, 'it\'s']"),
    ({"a-b": [DAY], "n": 1}, "{`a-b`: [date('2024-01-01')], `n`: 1}"),
])
def test_expressions(value, expression):
    assert to_expression(value) == expression


def test_subnormal_expression_is_exact():
    assert float(eval(to_expression(5e-324 * 3))) == 5e-324 * 3


@pytest.mark.parametrize("value, expected", [
    (DAY, True), (float("nan"), True), ([1, [{"x": Duration()}]], True), (WGS84Point((1, 2)), True),
    (float("inf"), False), ([1, {"x": "s"}], False), ((1, 2), False), (None, False),
])
def test_needs_expression(value, expected):
    assert needs_expression(value) is expected


@pytest.mark.parametrize("value, fragment", [
    (DateTime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5))), "date-time with a time zone"),
    (DateTime(2024, 1, 2, 3, 4, 5, 999999999), "fraction of a second"),
    (dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc), "fraction of a second"),
    (Time(3, 4, 5, 6), "fraction of a second"), (Duration(seconds=-1.5), "whole second"),
    (Duration(days=40), "P40D as P1M9D"), (dt.timedelta(days=-1, seconds=5), "P40D as P1M9D"),
    (dt.datetime(2024, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1))), "UTC+01:00"),
    (dt.time(1, tzinfo=dt.timezone.utc), "time with a time zone"),
    (CartesianPoint((1.0, 2.0)), "srid 7203"), (WGS84Point((1.0, 2.0, 3.0)), "srid 4979"),
    ([DAY, b"x"], "byte array"),
])
def test_values_without_a_faithful_form_are_type_errors(value, fragment):
    with pytest.raises(CypherError) as info:
        inline("RETURN $p", {"p": value})
    assert info.value.code == "Neo.ClientError.Statement.TypeError"
    assert fragment in info.value.message and "$p" in info.value.message


def test_only_code_tokens_are_replaced_and_literals_stay_in_the_header():
    query = "RETURN $d, '$d', \"$d\", `$d`, $dd, $n /* $d */ // $d\n, $ d, $`d`"
    result = inline(query, {"d": DAY, "dd": 1, "n": 2})
    day = "date('2024-01-01')"
    assert result.query == (f"RETURN {day}, '$d', \"$d\", `$d`, $dd, $n /* $d */ // $d\n, {day}, {day}")
    assert result.params == {"dd": 1, "n": 2}


def test_names_falkordb_cannot_read_are_quoted_and_columns_restored():
    result = inline("RETURN $0, $ünï, $`odd name`, [$l, $0]", {"0": 1, "ünï": 2, "odd name": 3, "l": [DAY]})
    assert result.query == "RETURN $`0`, $`ünï`, $`odd name`, [[date('2024-01-01')], $`0`]"
    assert result.params == {"0": 1, "ünï": 2, "odd name": 3}
    assert result.column("[[date('2024-01-01')], $`0`]") == "[$l, $0]"
    assert result.column("$`odd name`") == "$`odd name`"


def test_nested_expressions_restore_the_outer_name_first():
    result = inline("RETURN $d, $l", {"d": DAY, "l": [DAY]})
    assert result.column("[date('2024-01-01')]") == "$l" and result.column("date('2024-01-01')") == "$d"


def test_unreferenced_expression_parameters_are_dropped_like_neo4j_ignores_them():
    zoned = DateTime(2024, 1, 1, tzinfo=dt.timezone.utc)
    result = inline("RETURN 1 // $d", {"d": DAY, "z": zoned, "n": 1})
    assert result.query == "RETURN 1 // $d" and result.params == {"n": 1}
    assert inline("RETURN $x", None).params == {}


code_piece = st.sampled_from([" RETURN ", "$d", ", ", "$e", "[", "]", "$d.year", "\n"])
quoted_piece = st.text(st.sampled_from("$de' \\`\n*/"), max_size=8).map(
    lambda s: "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'")
comment_piece = st.text(st.sampled_from("$de' `*"), max_size=8).map(lambda s: "/*" + s.replace("*", "") + "*/")


@given(st.lists(code_piece | quoted_piece | comment_piece, max_size=12))
def test_tokens_in_strings_and_comments_are_never_replaced(pieces):
    """Build a query from code tokens, strings and comments; only code `$d` may change."""
    query = "".join(pieces)
    expected = "".join(text.replace("$d", "date('2024-01-01')") if text in ("$d", "$d.year") else text
                       for text in pieces)
    result = inline(query, {"d": DAY, "e": 1})
    assert result.query == expected and result.params == {"e": 1}
