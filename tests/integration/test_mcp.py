"""The MCP tools, through the `mcp` package's own client: Streamable HTTP at `/mcp` on the HTTP
port and stdio (`cypher-proxy mcp`), against real proxies on the embedded database.

The seed question is answered in two tool calls (get-schema, one read-cypher) and checked
against pandas on Sodir's CSV; errors, caps, read-only mode, timeouts and guards are checked
against what a Bolt driver gets from the same proxy.
"""

from __future__ import annotations

import contextlib
import json
import math
import sys

import httpx2
import neo4j
import pytest
from bpe_openai import get_encoding
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from proxy.demo import SEED_QUERY
from tests.harness import NO_LOCKOUT, PASSWORD, REPO, USER, ProxyProcess
from tests.seed import expected_seed_answer

ALL_TOOLS = ["get-schema", "read-cypher", "write-cypher", "explain-cypher"]
#: cl100k tokens the tool list may cost an agent's context (measured: 715 with the defaults).
TOOL_LIST_BUDGET = 750
GUARDED = "RETURN " + "NOT " * 200 + "true"                     # refused by the guards (levels)
SLOW = "UNWIND range(1, 5000000) AS x WITH x WHERE x % 7 = 0 RETURN count(x)"


@contextlib.asynccontextmanager
async def http_tools(proxy: ProxyProcess, auth=(USER, PASSWORD)):
    async with httpx2.AsyncClient(auth=auth) as http, \
            streamable_http_client(proxy.http_uri + "/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def stdio_tools(*args: str):
    server = StdioServerParameters(command=sys.executable, args=["-m", "proxy", "mcp", *args], cwd=str(REPO))
    async with stdio_client(server) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, tool: str, **arguments) -> tuple[bool, str]:
    result = await session.call_tool(tool, arguments)
    return result.is_error, "".join(c.text for c in result.content)


def rows(text: str) -> tuple[list[str], list[list]]:
    """The column names and rows of a JSON-lines answer (without the notes: `[cut: ...]` is no JSON)."""
    lines = []
    for line in text.splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            lines.append(json.loads(line))
    return lines[0], lines[1:]


async def answer_seed_question(session: ClientSession) -> None:
    error, schema = await call(session, "get-schema")
    assert not error and "ProductionProfile (124; ts)" in schema and "ts_avg" in schema
    error, text = await call(session, "read-cypher", query=SEED_QUERY)
    assert not error, text
    keys, values = rows(text)
    answer = dict(zip(keys, values[0]))
    expected = expected_seed_answer()
    assert answer["n_years"] == expected["n_years"] == 10
    assert math.isclose(answer["mean_reduction"], expected["mean_reduction"], rel_tol=1e-9)
    assert round(answer["mean_reduction"], 4) == 0.0809              # summer: 8.1 % lower


# ---- Streamable HTTP, on the demo graph ------------------------------------------------

async def test_the_seed_question_in_two_tool_calls(demo):
    async with http_tools(demo) as session:
        await answer_seed_question(session)


async def test_the_tool_list_and_its_token_budget(demo):
    async with http_tools(demo) as session:
        listed = await session.list_tools()
    assert [t.name for t in listed.tools] == ALL_TOOLS
    read = next(t for t in listed.tools if t.name == "read-cypher")
    assert read.input_schema["required"] == ["query"] and read.annotations.read_only_hint
    wire = json.dumps({"tools": [t.model_dump(by_alias=True, exclude_none=True, mode="json")
                                 for t in listed.tools]})
    assert len(get_encoding("cl100k_base").encode_ordinary(wire)) <= TOOL_LIST_BUDGET


async def test_schema_detail_params_and_csv(demo):
    async with http_tools(demo) as session:
        error, detail = await call(session, "get-schema", types=["ProductionProfile"])
        assert not error and "prd_oe_net" in detail
        error, text = await call(session, "read-cypher", query="MATCH (f:Field {title: $t}) RETURN f.title, f.npdid",
                                 params={"t": "TROLL"}, format="csv")
    assert not error and text.splitlines() == ["f.title,f.npdid", "TROLL,46437"]


async def test_errors_are_tool_errors_with_neo4j_code_and_message(demo):
    async with http_tools(demo) as session:
        error, text = await call(session, "read-cypher", query="MATCH (n RETURN n")
        assert error and text.startswith("Neo.ClientError.Statement.SyntaxError: Invalid input")
        assert "(line 1, column 10 (offset: 9))" in text
        error, text = await call(session, "read-cypher", query="MATCH (p:ProductionProfile) RETURN ts_avg(p.production)")
        assert error and text.startswith("Neo.ClientError.Statement.ArgumentError: Unknown channel 'production'")
        error, text = await call(session, "read-cypher", query="RETURN 1", parameters={})
        assert error and text.startswith("Neo.ClientError.Request.Invalid: Invalid arguments for read-cypher")


async def test_read_cypher_refuses_a_write_and_writes_nothing(demo):
    async with http_tools(demo) as session:
        error, text = await call(session, "read-cypher", query="CREATE (:McpProbe {n: 1})")
    assert error and text.startswith("Neo.ClientError.Statement.AccessMode")
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        assert driver.execute_query("MATCH (n:McpProbe) RETURN count(n) AS n").records[0]["n"] == 0


async def test_answers_are_capped_by_rows_and_tokens(demo):
    tokens = get_encoding("cl100k_base")
    async with http_tools(demo) as session:
        _, many = await call(session, "read-cypher", query="UNWIND range(1, 500) AS i RETURN i")
        _, wide = await call(session, "read-cypher", query="MATCH (f:Field) RETURN f ORDER BY f.title")
        _, huge = await call(session, "read-cypher", query="RETURN reduce(s = '', i IN range(1, 5000) | s + 'word ') AS s")
    assert rows(many)[1] == [[i] for i in range(1, 101)]
    assert many.splitlines()[-1].startswith("[cut: 100 rows shown, more follow (cap: 100 rows)")
    assert "SKIP 100 LIMIT 100" in many
    fields = rows(wide)[1]
    assert fields and all(f[0]["labels"] == ["Field"] for f in fields)     # whole nodes, as the Query API
    assert f"SKIP {len(fields)} LIMIT" in wide.splitlines()[-1] and "cap: 4000 tokens" in wide
    assert len(tokens.encode_ordinary(wide)) <= 4000
    assert huge.splitlines()[-1].startswith("[cut: the first row alone passes the cap of 4000 tokens")


async def test_explain_cypher(demo):
    async with http_tools(demo) as session:
        error, seed = await call(session, "explain-cypher", query=SEED_QUERY)
        assert not error and seed.startswith("valid: a read query\nplan: Results <- Aggregate")
        error, write = await call(session, "explain-cypher", query="CREATE (:McpProbe)")
        assert not error and write.startswith("valid: a write query")
        error, broken = await call(session, "explain-cypher", query="MATCH (n) RETURN n ORDER BY")
        assert error and broken.startswith("Neo.ClientError.Statement.SyntaxError") and "line 1, column" in broken
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        assert driver.execute_query("MATCH (n:McpProbe) RETURN count(n) AS n").records[0]["n"] == 0


async def test_the_sdks_newest_protocol_too(demo):
    async with httpx2.AsyncClient(auth=(USER, PASSWORD)) as http, \
            Client(streamable_http_client(demo.http_uri + "/mcp", http_client=http)) as client:
        result = await client.call_tool("read-cypher", {"query": "MATCH (f:Field {title: 'TROLL'}) RETURN f.npdid"})
        assert client.protocol_version == "2026-07-28"      # no initialize handshake: one request per call
    assert not result.is_error and result.content[0].text == '["f.npdid"]\n[46437]'


async def test_mcp_needs_a_login_like_the_other_http_endpoints(demo):
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    headers = {"Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient() as http:
        missing = await http.post(demo.http_uri + "/mcp", json=request, headers=headers)
        wrong = await http.post(demo.http_uri + "/mcp", json=request, headers=headers, auth=(USER, "wrong"))
        stream = await http.get(demo.http_uri + "/mcp", headers={"Accept": "text/event-stream"}, auth=(USER, PASSWORD))
    for response in (missing, wrong):
        assert response.status_code == 401
        assert response.json()["errors"][0]["code"] == "Neo.ClientError.Security.Unauthorized"
    assert stream.status_code == 405                   # the tools send nothing unasked: no SSE stream


# ---- stdio ------------------------------------------------------------------------------

async def test_stdio_connected_to_a_running_proxy(demo):
    async with stdio_tools("--connect", demo.uri, "--user", USER, "--password", PASSWORD) as session:
        assert [t.name for t in (await session.list_tools()).tools] == ALL_TOOLS
        await answer_seed_question(session)


async def test_stdio_on_its_own_data_directory(tmp_path):
    async with stdio_tools("--data-dir", str(tmp_path), "--mcp-read-only", "--mcp-max-rows", "3") as session:
        assert [t.name for t in (await session.list_tools()).tools] == ["get-schema", "read-cypher", "explain-cypher"]
        error, text = await call(session, "read-cypher", query="UNWIND range(1, 5) AS i RETURN i")
        assert not error and rows(text)[1] == [[1], [2], [3]] and "cap: 3 rows" in text


# ---- writes, read-only, timeouts and guards ----------------------------------------------

async def test_write_cypher_answers_rows_and_update_counts(proxy):
    async with http_tools(proxy) as session:
        error, text = await call(session, "write-cypher", query="CREATE (n:McpNote {text: $t}) RETURN n.text",
                                 params={"t": "hello"})
        assert not error and text.splitlines() == [
            '["n.text"]', '["hello"]', "[updates: nodes-created 1, properties-set 1, labels-added 1]"]
        error, text = await call(session, "write-cypher", query="MATCH (n:McpNote) DELETE n")
        assert not error and text == "[updates: nodes-deleted 1]"


@pytest.fixture(scope="module")
def guarded_proxy():
    """Read-only MCP, and a query timeout short enough for SLOW to pass it."""
    with ProxyProcess(args=["--mcp-read-only", "--query-timeout", "0.05", *NO_LOCKOUT]) as process:
        yield process


async def test_a_read_only_server_offers_no_write_tool(guarded_proxy):
    async with http_tools(guarded_proxy) as session:
        assert [t.name for t in (await session.list_tools()).tools] == ["get-schema", "read-cypher", "explain-cypher"]
        error, text = await call(session, "write-cypher", query="CREATE ()")
    assert error and "--mcp-read-only" in text


async def test_timeouts_and_guards_as_on_bolt(guarded_proxy):
    with neo4j.GraphDatabase.driver(guarded_proxy.uri, auth=(USER, PASSWORD)) as driver:
        bolt = {}
        for query in (SLOW, GUARDED):
            with pytest.raises(neo4j.exceptions.ClientError) as info:
                driver.execute_query(query)
            bolt[query] = info.value.code
    assert bolt[SLOW] == "Neo.ClientError.Transaction.TransactionTimedOut"
    async with http_tools(guarded_proxy) as session:
        for query, code in bolt.items():
            error, text = await call(session, "read-cypher", query=query)
            assert error and text.startswith(code + ":")
        assert await call(session, "read-cypher", query="RETURN 1 AS one") == (False, '["one"]\n[1]')
