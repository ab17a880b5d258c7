"""MCP answers: rows as JSON lines or CSV, cut at the row and token caps with a note saying so."""

from __future__ import annotations

import json

from bpe_openai import get_encoding
from hypothesis import given, settings, strategies as st

from core.backend import Result, Summary
from proxy.mcp.results import count_tokens, counters_line, render_result
from proxy.mcp.settings import McpSettings, ResultLimits
from proxy.mcp.tools import TOOLS, plan_text, tools_for
from core.values import Node

CL100K = get_encoding("cl100k_base")


class ListResult(Result):
    """A test double of a backend result: rows from a list, fetched in batches."""

    def __init__(self, keys: list[str], rows: list[list], stats: dict | None = None):
        self.keys, self._rows, self.consumed, self._stats = keys, list(rows), False, stats or {}

    async def fetch(self, n: int) -> list[list]:
        n = len(self._rows) if n < 0 else n
        batch, self._rows = self._rows[:n], self._rows[n:]
        return batch

    async def consume(self) -> Summary:
        self.consumed = True
        self._rows = []
        return Summary(database="neo4j", stats=self._stats)


async def render(keys, rows, fmt="json", **limits) -> list[str]:
    result = ListResult(keys, rows)
    lines = (await render_result(result, ResultLimits(**limits), fmt)).lines
    assert result.consumed
    return lines


def parsed(lines: list[str]) -> list:
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:            # the notes in [brackets] are no JSON
            pass
    return out


async def test_all_rows_fit_no_note():
    assert await render(["a", "b"], [[1, "x"], [2, None]]) == ['["a","b"]', '[1,"x"]', '[2,null]']
    assert await render(["a"], []) == ['["a"]', "[no rows]"]
    assert await render([], []) == []                      # a write without RETURN: no rows to show


async def test_the_row_cap_says_how_to_page():
    lines = await render(["i"], [[i] for i in range(250)], max_rows=100)
    assert parsed(lines)[1:] == [[i] for i in range(100)]
    assert lines[-1].startswith("[cut: 100 rows shown, more follow (cap: 100 rows). Next page: the same "
                                "query with ORDER BY and SKIP 100 LIMIT 100")
    exactly = await render(["i"], [[i] for i in range(100)], max_rows=100)
    assert len(exactly) == 101 and not exactly[-1].startswith("[cut")


async def test_the_token_cap_holds_whole_rows_only():
    rows = [[f"row {i} " + "lorem ipsum " * 40] for i in range(50)]
    lines = await render(["text"], rows, max_tokens=1000)
    shown = parsed(lines)[1:]
    assert shown == rows[:len(shown)] and 0 < len(shown) < 50
    assert f"{len(shown)} rows shown" in lines[-1] and "cap: 1000 tokens" in lines[-1]
    assert len(CL100K.encode_ordinary("\n".join(lines))) <= 1000


async def test_a_first_row_over_the_cap_is_not_shown_in_part():
    lines = await render(["n"], [[Node(1, ["Field"], {"geometry": "POLYGON ((1 2, 3 4)) " * 2000}, "1")]], max_tokens=500)
    assert lines[0] == '["n"]' and lines[1].startswith("[cut: the first row alone passes the cap of 500 tokens")
    assert len(lines) == 2


async def test_values_as_the_query_api_writes_them_and_csv():
    node = Node(7, ["Field"], {"title": "TROLL"}, "7")
    assert parsed(await render(["n"], [[node]]))[1] == [
        {"elementId": node.element_id, "labels": ["Field"], "properties": {"title": "TROLL"}}]
    lines = await render(["a", "b", "c", "d"], [["x,y", True, None, [1, {"k": "v"}]]], fmt="csv")
    assert lines == ["a,b,c,d", '"x,y",true,,"[1,{""k"":""v""}]"']


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(st.one_of(st.integers(), st.text(max_size=400), st.none()), min_size=1, max_size=1),
                     max_size=60),
       max_rows=st.integers(1, 80), max_tokens=st.integers(100, 3000))
async def test_caps_are_kept_and_shown_rows_are_a_prefix(rows, max_rows, max_tokens):
    lines = await render(["v"], rows, max_rows=max_rows, max_tokens=max_tokens)
    shown = parsed(lines)[1:]
    assert shown == rows[:len(shown)] and len(shown) <= max_rows
    assert len(CL100K.encode_ordinary("\n".join(lines))) <= max_tokens
    assert lines[-1].startswith("[cut") == (len(shown) < len(rows))


def test_token_counts_are_cl100k_also_past_the_tokenizers_size_limit():
    text = "Troll field production, monthly 2015-2024. "
    assert count_tokens(text) == len(CL100K.encode_ordinary(text))
    per_repeat = len(CL100K.encode_ordinary(text * 2)) - len(CL100K.encode_ordinary(text))
    assert abs(count_tokens(text * 30_000) - per_repeat * 30_000) < 100     # 360,000: past 200,000
    assert count_tokens(text * 30_000, limit=1000) > 1000


async def test_update_counts_in_neo4j_order():
    assert counters_line(Summary("neo4j", stats={"properties-set": 2, "nodes-created": 1})) == \
        "[updates: nodes-created 1, properties-set 2]"
    assert counters_line(Summary("neo4j")) == "[updates: none]"


def test_plans_on_one_line():
    plan = {"operatorType": "Results", "children": [{"operatorType": "Apply", "children": [
        {"operatorType": "Node By Label Scan", "arguments": {"Details": "(f:Field)"}},
        {"operatorType": "Argument"}]}]}
    assert plan_text(plan) == "Results <- Apply <- (Node By Label Scan (f:Field) | Argument)"


def test_tool_arguments_are_checked_against_their_schema():
    read = next(t for t in TOOLS if t.name == "read-cypher")
    assert read.call({"query": "RETURN $x", "params": {"x": 1}}).params == {"x": 1}
    for arguments, words in [({}, "'query' is a required property"), ({"query": 1}, "1 is not of type 'string'"),
                             ({"query": "RETURN 1", "format": "xml"}, "'xml' is not one of"),
                             ({"query": "RETURN 1", "parameters": {}}, "'parameters' was unexpected")]:
        try:
            read.call(arguments)
        except Exception as exc:
            assert exc.code == "Neo.ClientError.Request.Invalid" and words in exc.message, exc.message
        else:
            raise AssertionError(f"{arguments} was accepted")
    assert [t.name for t in tools_for(McpSettings(read_only=True))] == ["get-schema", "read-cypher", "explain-cypher"]
