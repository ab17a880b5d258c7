"""Parameter serialisation, compact-reply decoding, statistics and plans for FalkorDB."""

import pytest
from neo4j.time import Date, DateTime, Duration, Time

from proxy.backends.falkordb.values import (
    Schema,
    SchemaMiss,
    decode,
    encode_params,
    parse_plan,
    parse_stats,
    plan_query_type,
    to_literal,
)
from core.errors import CypherError
from core.values import Node, Path, Relationship, WGS84Point


def test_header_quotes_names_and_ends_with_space():
    assert encode_params({"a b": 1, "s": "x"}) == "CYPHER `a b`=1 `s`='x' "
    assert encode_params({}) == "" and encode_params(None) == ""


@pytest.mark.parametrize("value, literal", [
    (None, "null"), (True, "true"), (False, "false"), (-9223372036854775808, "-9223372036854775808"),
    (1.5, "1.5"), (1e300, "1e+300"), (float("inf"), "1e999"), (float("-inf"), "-1e999"),
    ("it's", r"'it\'s'"), ("back\\slash", r"'back\\slash'"), ("line\nbreak é😀", "'line\nbreak é😀'"),
    ([1, [None, "a"]], "[1,[null,'a']]"), ({"a-b": {"x": []}}, "{`a-b`:{`x`:[]}}"), ((1, 2), "[1,2]"),
])
def test_literals(value, literal):
    assert to_literal(value) == literal


@pytest.mark.parametrize("value, fragment", [
    (b"\x00", "byte array"), ("nul\x00", "NUL"), ({"x`y": 1}, "backtick"), (object(), "object"),
])
def test_unsendable_parameters_are_type_errors_that_teach(value, fragment):
    with pytest.raises(CypherError) as info:
        encode_params({"p": value})
    assert info.value.code == "Neo.ClientError.Statement.TypeError"
    assert fragment in info.value.message and "$p" in info.value.message


SCHEMA = Schema(["A", "B"], ["R"], ["x", "s"])


def test_decode_scalars_and_containers():
    cell = [6, [[3, 1], [2, b"\xc3\xa9"], [10, [b"k", [6, [[5, b"1.5"], [1, None], [4, b"true"]]]]]]]
    assert decode(cell, SCHEMA) == [1, "é", {"k": [1.5, None, True]}]
    assert decode([5, b"-nan"], SCHEMA) != decode([5, b"-nan"], SCHEMA)      # NaN
    assert decode([5, b"inf"], SCHEMA) == float("inf")


def test_decode_vectors_as_lists_of_floats():
    """RESP3 (the reply streams) sends a vector's elements as doubles, which hiredis has made
    floats; a RESP2 reply's text is parsed to the same values."""
    floats = [0.10000000149011612, -0.0, float("inf"), 1.0]
    assert decode([12, floats], SCHEMA) is floats
    text = decode([12, [b"0.10000000149011612", b"-0", b"inf", b"1"]], SCHEMA)
    assert [repr(v) for v in text] == [repr(v) for v in floats]
    assert decode([12, []], SCHEMA) == []


def test_decode_graph_values_use_string_ids_as_element_ids():
    node = [8, [0, [0, 1], [[0, 3, 1], [1, 2, b"hi"]]]]
    edge = [7, [4, 0, 0, 1, []]]
    assert decode(node, SCHEMA) == Node(0, ["A", "B"], {"x": 1, "s": "hi"}, "0")
    assert decode(edge, SCHEMA) == Relationship(4, 0, 1, "R", {}, "4", "0", "1")
    path = decode([9, [[6, [node, [8, [1, [], []]]]], [6, [edge]]]], SCHEMA)
    assert isinstance(path, Path) and [n.id for n in path.nodes] == [0, 1] and path.relationships[0].id == 4


def test_unknown_schema_id_asks_for_a_refresh():
    with pytest.raises(SchemaMiss):
        decode([8, [0, [7], []]], SCHEMA)


def test_decode_temporals_and_points():
    assert decode([14, 1577923200], SCHEMA) == Date(2020, 1, 2)
    assert decode([14, -30610224000], SCHEMA) == Date(1000, 1, 1)
    local = decode([13, 1577934245], SCHEMA)
    assert local == DateTime(2020, 1, 2, 3, 4, 5) and local.tzinfo is None
    assert decode([15, -2208943504], SCHEMA) == Time(12, 34, 56)
    assert decode([16, 86402], SCHEMA) == Duration(days=1, seconds=2)
    assert decode([16, -31536000], SCHEMA) == Duration(days=-365)
    point = decode([11, [b"1.5", b"2.5"]], SCHEMA)
    assert isinstance(point, WGS84Point) and (point.longitude, point.latitude) == (2.5, 1.5)


def test_stats_map_to_bolt_keys():
    lines = [b"Labels added: 3", b"Nodes created: 2", b"Properties set: 3", b"Properties removed: 1",
             b"Relationships deleted: 0", b"Indices created: 1", b"Cached execution: 0",
             b"Query internal execution time: 0.7 milliseconds"]
    assert parse_stats(lines) == {"labels-added": 3, "nodes-created": 2, "properties-set": 4,
                                  "indexes-added": 1}


def test_explain_plan_tree_and_query_type():
    plan = parse_plan([b"Results", b"    Project", b"        All Node Scan | (m)",
                       b"            Project", b"                Create"])
    assert plan["operatorType"] == "Results"
    scan = plan["children"][0]["children"][0]
    assert scan["identifiers"] == ["m"] and scan["arguments"] == {"Details": "(m)"}
    assert plan_query_type(plan) == "rw"
    assert plan_query_type(parse_plan([b"Delete", b"    All Node Scan | (n)"])) == "w"
    assert plan_query_type(parse_plan(b"Create Index")) == "s"
    assert plan_query_type(parse_plan([b"Results", b"    Project"])) == "r"


def test_profile_plan_has_rows_and_time():
    plan = parse_plan([b"Results | Records produced: 1, Execution time: 0.000451 ms",
                       b"    Node By Label Scan | (n:T) | Records produced: 3, Execution time: 0.5 ms"],
                      profile=True)
    child = plan["children"][0]
    assert plan["rows"] == 1 and child["rows"] == 3 and child["identifiers"] == ["n"]
    assert child["arguments"]["Details"] == "(n:T)"
