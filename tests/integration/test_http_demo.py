"""The demo graph over HTTP and over Bolt in a real browser: the seed query runs over both HTTP
APIs and over a WebSocket from headless Chromium, with Bolt's answer as the reference
(test_seed_question.py checks that one against pandas); extension errors read the same."""

from __future__ import annotations

import json
import os
import urllib.parse
from pathlib import Path

import neo4j
import pytest

from proxy.demo import SEED_QUERY
from tests.browser import HeadlessChromium, chromium_path
from tests.harness import PASSWORD, REPO, USER
from tests.http_client import query, request

#: Where tests leave files for people to look at (the browser test's screenshot).
TEST_OUTPUT = Path(os.environ.get("TEST_OUTPUT_DIR", REPO / "test-output"))
UNKNOWN_CHANNEL = ("MATCH (f:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile) "
                   "RETURN ts_avg(p.production) AS avg")


@pytest.fixture(scope="module")
def bolt_answer(demo):
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        records, _, keys = driver.execute_query(SEED_QUERY)
    assert records[0]["n_years"] == 10
    return keys, [list(r.values()) for r in records]


def test_seed_query_over_the_query_api(demo, bolt_answer):
    keys, rows = bolt_answer
    plain = query(demo.http_uri, SEED_QUERY)
    assert plain.status == 202, plain.text
    assert plain.json["data"] == {"fields": keys, "values": rows}
    typed = query(demo.http_uri, SEED_QUERY, typed=True).json["data"]
    assert typed["fields"] == keys
    [values] = typed["values"]
    assert [v["$type"] for v in values] == ["Float", "Float", "Integer", "Float"]
    assert [int(v["_value"]) if v["$type"] == "Integer" else float(v["_value"]) for v in values] == rows[0]


def test_seed_query_over_the_transactional_endpoint(demo, bolt_answer):
    keys, rows = bolt_answer
    reply = request(demo.http_uri, "POST", "/db/neo4j/tx/commit", {"statements": [{"statement": SEED_QUERY}]})
    assert reply.status == 200, reply.text
    body = reply.json
    assert body["errors"] == [] and body["results"] == [
        {"columns": keys, "data": [{"row": row, "meta": [None] * len(row)} for row in rows]}]


def test_extension_errors_read_the_same_over_http(demo):
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        with pytest.raises(neo4j.exceptions.ClientError) as bolt:
            driver.execute_query(UNKNOWN_CHANNEL)
    expected = {"code": bolt.value.code, "message": bolt.value.message}
    assert expected["code"] == "Neo.ClientError.Statement.ArgumentError" and "prd_oe_net" in expected["message"]
    reply = query(demo.http_uri, UNKNOWN_CHANNEL)
    assert (reply.status, reply.json) == (400, {"errors": [expected]})
    body = request(demo.http_uri, "POST", "/db/neo4j/tx/commit", {"statements": [{"statement": UNKNOWN_CHANNEL}]})
    assert body.json == {"results": [], "errors": [expected]}


@pytest.mark.skipif(chromium_path() is None,
                    reason="chromium is not installed (`make test` installs it with apt-get when it can)")
async def test_browser_runs_the_seed_query_over_websocket(demo, bolt_answer):
    """The neo4j-driver browser bundle in headless Chromium, ws:// to the Bolt port."""
    keys, rows = bolt_answer
    page = REPO / "tests" / "js" / "browser" / "seed_query.html"
    port = demo.uri.rsplit(":", 1)[1]
    params = urllib.parse.urlencode({"port": port, "user": USER, "password": PASSWORD, "query": SEED_QUERY})
    async with HeadlessChromium(f"{page.as_uri()}?{params}") as browser:
        state = await browser.wait_for("document.body.dataset.state", {"done", "error"})
        status = await browser.evaluate("document.getElementById('status').textContent")
        shot = await browser.screenshot(TEST_OUTPUT / "browser-seed-query.png")
        assert state == "done", status
        shown = json.loads(await browser.evaluate("document.getElementById('result').textContent"))
        cells = await browser.evaluate("[...document.querySelectorAll('td')].map(td => td.textContent)")
    assert shown["keys"] == keys and shown["rows"] == rows
    assert shown["agent"] == "Neo4j/5.26.0" and "WebSocket" in status
    assert [float(c) for c in cells] == pytest.approx(rows[0], rel=1e-12)
    assert shot.stat().st_size > 1000
