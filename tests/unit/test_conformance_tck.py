"""The TCK .feature reader (conformance.tck) and literal parser on real TCK files."""

from __future__ import annotations

import pytest

from conformance.literals import NodeLit, PathLit, RelLit, parse_literal
from conformance.tck import read_feature, read_tck
from tests.harness import TCK_DIR as TCK_ROOT
from tests.harness import TCK_MISSING

pytestmark = pytest.mark.skipif(not TCK_ROOT.is_dir(), reason=TCK_MISSING)

LIST1 = TCK_ROOT / "expressions" / "list" / "List1.feature"
MATCH5 = TCK_ROOT / "clauses" / "match" / "Match5.feature"


def test_list1_counts_and_outline_expansion():
    scenarios = list(read_feature(LIST1))
    # 5 plain scenarios + outlines [6] (4 rows), [7] (4), [8] (5), [9] (5)
    assert len(scenarios) == 23
    outline = [s for s in scenarios if s.name.startswith("[6]")]
    assert [s.name for s in outline][:2] == ["[6] Fail when indexing a non-list #Example: boolean #1",
                                             "[6] Fail when indexing a non-list #Example: integer #2"]
    assert outline[1].query == "WITH 123 AS list, 0 AS idx\nRETURN list[idx]"
    assert outline[1].example == {"expr": "123", "exampleName": "integer"}
    assert outline[1].graph == "any"


def test_parameters_table_and_expected_rows():
    third = next(s for s in read_feature(LIST1) if s.name.startswith("[3]"))
    assert third.parameters == {"expr": "['Apa']", "idx": "0"}
    assert third.expected.kind == "rows" and not third.expected.ordered
    assert third.expected.header == ["value"] and third.expected.rows == [["'Apa'"]]
    assert third.expected.side_effects == {}
    assert parse_literal(third.parameters["expr"]) == ["Apa"]


def test_expected_error():
    sixth = next(s for s in read_feature(LIST1) if s.name.startswith("[6]"))
    assert (sixth.expected.kind, sixth.expected.error, sixth.expected.phase, sixth.expected.detail) == \
        ("error", "TypeError", "any time", "InvalidArgumentType")


def test_background_docstring_is_setup_of_every_scenario():
    scenarios = list(read_feature(MATCH5))
    assert len(scenarios) == 29
    for s in scenarios:
        assert s.graph == "empty"
        assert s.setup[0].startswith("CREATE (n0:A {name: 'n0'}),\n       (n00:B {name: 'n00'}),")
        assert '"""' not in s.setup[0] and s.query.startswith("MATCH")


def test_control_query_and_side_effects():
    temporal4 = TCK_ROOT / "expressions" / "temporal" / "Temporal4.feature"
    first = next(read_feature(temporal4))
    assert [c.control for c in first.checks] == [False, True]
    assert first.checks[0].expected.side_effects == {"+nodes": 1, "+properties": 1}
    assert first.checks[1].query == "MATCH (n)\nRETURN n.created"


def test_whole_tck_counts():
    scenarios = list(read_tck(TCK_ROOT))
    assert len({(s.feature, s.line) for s in scenarios}) == 1615
    assert len(scenarios) == 3897
    assert all(c.expected is not None for s in scenarios for c in s.checks)


@pytest.mark.parametrize("text, value", [
    ("(:L {p: 1})", NodeLit(["L"], {"p": 1})),
    ("[:T {k: 'v'}]", RelLit("T", {"k": "v"})),
    ("<(a)-->(b)>", PathLit([NodeLit(), NodeLit()], [RelLit()])),
    ("[1, -2.5e3, 'it\\'s', null, {`a b`: [true]}]", [1, -2500.0, "it's", None, {"a b": [True]}]),
    ("-0x1F", -31),
])
def test_literals(text, value):
    assert parse_literal(text) == value
