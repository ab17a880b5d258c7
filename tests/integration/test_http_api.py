"""Neo4j's HTTP APIs on a real proxy, posted to as curl would, compared with Neo4j's documented
shapes (docs-query-api, docs-http-api) and, value by value, with what Bolt returns."""

from __future__ import annotations

import asyncio
import email.utils
import http.client
import re
import socket
import ssl
import subprocess
import time
from urllib.parse import urlsplit

import aiohttp
import pytest

from tests.harness import PASSWORD, USER, ProxyProcess
from tests.http_client import basic, query, request

# Shapes as Neo4j documents them.
DISCOVERY_KEYS = {"bolt_routing", "bolt_direct", "query", "transaction", "neo4j_version", "neo4j_edition",
                  "auth_config"}
COUNTERS = {"containsUpdates", "nodesCreated", "nodesDeleted", "propertiesSet", "relationshipsCreated",
            "relationshipsDeleted", "labelsAdded", "labelsRemoved", "indexesAdded", "indexesRemoved",
            "constraintsAdded", "constraintsRemoved", "containsSystemUpdates", "systemUpdates"}
LEGACY_STATS = {"contains_updates", "nodes_created", "nodes_deleted", "properties_set", "relationships_created",
                "relationship_deleted", "labels_added", "labels_removed", "indexes_added", "indexes_removed",
                "constraints_added", "constraints_removed", "contains_system_updates", "system_updates"}
PLAIN_NODE = {"elementId", "labels", "properties"}
PLAIN_REL = {"elementId", "startNodeElementId", "endNodeElementId", "type", "properties"}
TYPED_NODE = {"_element_id", "_labels", "_properties"}
TYPED_REL = {"_element_id", "_start_node_element_id", "_end_node_element_id", "_type", "_properties"}
META = {"id", "elementId", "type", "deleted"}
GRAPH_NODE = {"id", "elementId", "labels", "properties"}
GRAPH_REL = {"id", "elementId", "type", "startNode", "startNodeElementId", "endNode", "endNodeElementId",
             "properties"}
QUERY_API_KEYS = {"data", "counters", "bookmarks", "notifications", "queryPlan", "profiledQueryPlan",
                  "queryType", "resultAvailableAfter", "resultConsumedAfter", "transaction", "errors"}

GRAPH_QUERY = ("MATCH p = (a:H {name: 'Ann'})-[r:KNOWS]->(b:H) "
               "RETURN a, r, b, p, a.born AS born, a.home AS home, "
               "duration({months: 14, days: 3, seconds: 5}) AS d, [1, 'two', null] AS l, {k: 1.5} AS m")
TYPED = {"Content-Type": "application/vnd.neo4j.query", "Accept": "application/vnd.neo4j.query"}


@pytest.fixture
def people(clean_graph):
    clean_graph.execute_query(
        "CREATE (:H:Person {name: 'Ann', born: date('1990-05-17'), "
        "home: point({latitude: 60.39, longitude: 5.32})})-[:KNOWS {since: 2020}]->(:H {name: 'Bob'})")
    return clean_graph


def _ok(reply, status=202):
    assert reply.status == status, reply.text
    assert "Traceback" not in reply.text
    return reply.json


def _error(reply, status, code):
    assert reply.status == status, reply.text
    body = reply.json
    assert set(body) == {"errors"} and [e["code"] for e in body["errors"]] == [code], body
    assert set(body["errors"][0]) == {"code", "message"} and body["errors"][0]["message"]
    assert "Traceback" not in reply.text
    return body["errors"][0]["message"]


# ---- discovery -----------------------------------------------------------------------------

@pytest.mark.parametrize("port", ["http", "bolt"])
def test_discovery_without_auth_on_both_ports(proxy, port):
    base = proxy.http_uri if port == "http" else proxy.uri.replace("bolt://", "http://")
    reply = request(base, "GET", "/", auth=None, headers={"Accept": "application/json"})
    doc = _ok(reply, 200)
    assert set(doc) == DISCOVERY_KEYS
    assert doc["bolt_direct"] == proxy.uri and doc["bolt_routing"] == proxy.uri.replace("bolt://", "neo4j://")
    assert doc["query"] == proxy.http_uri + "/db/{databaseName}/query/v2"
    assert doc["transaction"] == proxy.http_uri + "/db/{databaseName}/tx"
    assert isinstance(doc["neo4j_version"], str) and doc["neo4j_edition"] == "community"
    assert doc["auth_config"] == {"oidc_providers": []}
    assert reply.headers["Access-Control-Allow-Origin"] == "*"


def test_cors_preflight(proxy):
    reply = request(proxy.http_uri, "OPTIONS", "/db/neo4j/query/v2", auth=None,
                    headers={"Origin": "http://example.org", "Access-Control-Request-Method": "POST",
                             "Access-Control-Request-Headers": "authorization, content-type"})
    assert reply.status == 204
    assert reply.headers["Access-Control-Allow-Origin"] == "*"
    assert "POST" in reply.headers["Access-Control-Allow-Methods"]
    assert "authorization" in reply.headers["Access-Control-Allow-Headers"]


# ---- Query API -----------------------------------------------------------------------------

def test_query_api_plain_json_matches_bolt(people, proxy):
    body = _ok(query(proxy.http_uri, GRAPH_QUERY, includeCounters=True))
    assert set(body) <= QUERY_API_KEYS
    assert body["data"]["fields"] == ["a", "r", "b", "p", "born", "home", "d", "l", "m"]
    assert set(body["counters"]) == COUNTERS and body["counters"]["containsUpdates"] is False
    [[a, r, b, p, born, home, d, lst, m]] = body["data"]["values"]
    bolt = people.execute_query(GRAPH_QUERY).records[0]
    assert set(a) == PLAIN_NODE and set(r) == PLAIN_REL
    assert (a["elementId"], sorted(a["labels"]), a["properties"]["name"]) == \
        (bolt["a"].element_id, sorted(bolt["a"].labels), "Ann")
    assert a["properties"]["born"] == bolt["a"]["born"].iso_format() == "1990-05-17"
    assert (r["elementId"], r["type"], r["properties"], r["startNodeElementId"], r["endNodeElementId"]) == \
        (bolt["r"].element_id, "KNOWS", {"since": 2020}, bolt["a"].element_id, bolt["b"].element_id)
    assert [part["elementId"] for part in p] == [bolt[k].element_id for k in ("a", "r", "b")]
    assert born == "1990-05-17"
    lon, lat = map(float, re.fullmatch(r"SRID=4326;POINT \((\S+) (\S+)\)", home).groups())
    assert (lon, lat) == pytest.approx((bolt["home"].longitude, bolt["home"].latitude))
    assert d == "P1Y2M3DT5S" and lst == [1, "two", None] and m == {"k": 1.5}


def test_query_api_typed_json_matches_bolt(people, proxy):
    reply = query(proxy.http_uri, GRAPH_QUERY, typed=True)
    body = _ok(reply)
    assert reply.headers["Content-Type"].startswith("application/vnd.neo4j.query")
    [[a, r, b, p, born, home, d, lst, m]] = body["data"]["values"]
    bolt = people.execute_query(GRAPH_QUERY).records[0]
    assert a["$type"] == "Node" and set(a["_value"]) == TYPED_NODE
    assert a["_value"]["_properties"]["name"] == {"$type": "String", "_value": "Ann"}
    assert a["_value"]["_properties"]["born"] == {"$type": "Date", "_value": "1990-05-17"}
    assert r["$type"] == "Relationship" and set(r["_value"]) == TYPED_REL
    assert r["_value"]["_properties"] == {"since": {"$type": "Integer", "_value": "2020"}}
    assert r["_value"]["_start_node_element_id"] == bolt["a"].element_id
    assert p["$type"] == "Path" and [x["$type"] for x in p["_value"]] == ["Node", "Relationship", "Node"]
    assert born == {"$type": "Date", "_value": "1990-05-17"}
    assert home["$type"] == "Point" and home["_value"].startswith("SRID=4326;POINT (")
    assert d == {"$type": "Duration", "_value": "P1Y2M3DT5S"}
    assert lst == {"$type": "List", "_value": [{"$type": "Integer", "_value": "1"},
                                               {"$type": "String", "_value": "two"},
                                               {"$type": "Null", "_value": None}]}
    assert m == {"$type": "Map", "_value": {"k": {"$type": "Float", "_value": "1.5"}}}


TYPED_ROUND_TRIP = [
    ("Null", None), ("Boolean", False), ("Integer", "-9223372036854775808"), ("Float", "-2.5e-07"),
    ("String", "Ærøskøbing 東京 🚀"), ("Date", "2024-02-29"), ("LocalTime", "12:50:35"),
    ("LocalDateTime", "2015-07-04T19:32:24"), ("Duration", "P14DT16H12M"),
    ("Point", "SRID=4326;POINT (5.5 60.25)"),
    ("List", [{"$type": "Integer", "_value": "1"}, {"$type": "String", "_value": "x"}]),
    ("Map", {"a": {"$type": "Boolean", "_value": True}}),
]


@pytest.mark.parametrize("kind,value", TYPED_ROUND_TRIP)
def test_typed_parameters_round_trip(proxy, kind, value):
    """Typed JSON in (Content-Type) and out (Accept): what FalkorDB can store comes back unchanged."""
    param = {"$type": kind, "_value": value}
    reply = request(proxy.http_uri, "POST", "/db/neo4j/query/v2",
                    {"statement": "RETURN $x AS x", "parameters": {"x": param}}, headers=TYPED)
    assert _ok(reply)["data"]["values"] == [[param]]


def test_typed_parameter_the_database_cannot_hold_gets_its_error(proxy):
    reply = request(proxy.http_uri, "POST", "/db/neo4j/query/v2",
                    {"statement": "RETURN $x AS x", "parameters": {"x": {"$type": "Time", "_value": "12:00+01:00"}}},
                    headers=TYPED)
    assert "time zone" in _error(reply, 400, "Neo.ClientError.Statement.TypeError")


@pytest.mark.parametrize("param,problem", [
    ({"$type": "Integer", "_value": "five"}, "Integer"), ({"$type": "Date", "_value": "2024-13-01"}, "Date"),
    ({"$type": "Colour", "_value": "red"}, "Unknown parameter type"),
    ({"$type": "Integer", "_value": "99999999999999999999"}, "64-bit"),
])
def test_bad_typed_parameters(proxy, param, problem):
    reply = request(proxy.http_uri, "POST", "/db/neo4j/query/v2",
                    {"statement": "RETURN $x", "parameters": {"x": param}}, headers=TYPED)
    assert problem in _error(reply, 400, "Neo.ClientError.Request.InvalidFormat")


def test_counters_bookmarks_and_access_mode(clean_graph, proxy):
    body = _ok(query(proxy.http_uri, "CREATE (:C {v: 1}), (:C {v: 2})", includeCounters=True))
    assert body["data"] == {"fields": [], "values": []}
    assert body["counters"]["nodesCreated"] == 2 and body["counters"]["propertiesSet"] == 2
    assert body["counters"]["containsUpdates"] is True
    [bookmark] = body["bookmarks"]
    follow = _ok(query(proxy.http_uri, "MATCH (c:C) RETURN sum(c.v) AS s",
                       bookmarks=[bookmark], accessMode="Read"))
    assert follow["data"]["values"] == [[3]] and "counters" not in follow
    refused = query(proxy.http_uri, "CREATE (:C {v: 3})", accessMode="Read")
    assert refused.status == 400 and refused.json["errors"][0]["code"].startswith("Neo.ClientError.")
    assert clean_graph.execute_query("MATCH (c:C) RETURN count(c) AS n").records[0]["n"] == 2


def test_db_ping_on_the_system_database(proxy):
    """What the http:// driver's verify_connectivity() sends."""
    reply = request(proxy.http_uri, "POST", "/db/system/query/v2",
                    {"statement": "CALL db.ping()", "accessMode": "Read"})
    assert _ok(reply)["data"] == {"fields": ["success"], "values": [[True]]}


def test_explain_returns_a_plan(proxy):
    body = _ok(query(proxy.http_uri, "EXPLAIN MATCH (n:Nothing) RETURN n"))
    assert body["data"]["values"] == [] and body["queryPlan"]["operatorType"]
    assert "children" in body["queryPlan"] and body["queryType"] == "r"


def test_query_api_errors(proxy):
    uri = proxy.http_uri
    assert "line 1" in _error(query(uri, "MATCH (n RETURN n"), 400, "Neo.ClientError.Statement.SyntaxError")
    assert _error(request(uri, "POST", "/db/neo4j/query/v2", {"statement": "RETURN 1"}, auth=None), 401,
                  "Neo.ClientError.Security.Unauthorized") == "No authentication header supplied."
    one = {"statement": "RETURN 1"}
    _error(request(uri, "POST", "/db/neo4j/query/v2", one, auth=basic(USER, "wrong")), 401,
           "Neo.ClientError.Security.Unauthorized")
    _error(request(uri, "POST", "/db/neo4j/query/v2", one, auth="Bearer some-token"), 401,
           "Neo.ClientError.Security.Unauthorized")              # the embedded database knows no tokens
    assert _error(request(uri, "POST", "/db/neo4j/query/v2", one, auth="Basic not-base64!"),
                  401, "Neo.ClientError.Request.InvalidFormat") == "Invalid authentication header."
    assert "nope" in _error(request(uri, "POST", "/db/nope/query/v2", {"statement": "RETURN 1"}), 404,
                            "Neo.ClientError.Database.DatabaseNotFound")
    truncated = request(uri, "POST", "/db/neo4j/query/v2", raw=b'{"statement": "RETURN')
    assert "deserialize" in _error(truncated, 400, "Neo.ClientError.Request.InvalidFormat")
    assert "statement" in _error(request(uri, "POST", "/db/neo4j/query/v2", {"parameters": {}}), 400,
                                 "Neo.ClientError.Request.InvalidFormat")
    assert "accessMode" in _error(query(uri, "RETURN 1", accessMode="Sometimes"), 400,
                                  "Neo.ClientError.Request.InvalidFormat")
    wrong_method = request(uri, "GET", "/db/neo4j/query/v2")
    assert "POST" in _error(wrong_method, 405, "Neo.ClientError.Request.Invalid")
    assert wrong_method.headers["Allow"] == "POST"
    assert "/db/{database}/query/v2" in _error(request(uri, "POST", "/api/v1/cypher", {}), 404,
                                               "Neo.ClientError.Request.Invalid")


def test_body_over_the_limit_is_refused_before_it_is_read(proxy):
    """A Content-Length over 64 MiB gets 413 at once (only the header is sent)."""
    url = urlsplit(proxy.http_uri)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    connection.putrequest("POST", "/db/neo4j/query/v2")
    for name, value in {"Authorization": basic(), "Content-Type": "application/json",
                        "Content-Length": str(65 * 1024 * 1024)}.items():
        connection.putheader(name, value)
    connection.endheaders()
    response = connection.getresponse()
    body = response.read().decode()
    connection.close()
    assert response.status == 413 and "exceeds the limit" in body and "Neo.ClientError.Request.Invalid" in body


def test_query_api_explicit_transactions(clean_graph, proxy):
    uri, base = proxy.http_uri, "/db/neo4j/query/v2/tx"
    begun = _ok(request(uri, "POST", base, {}))
    tx = begun["transaction"]
    assert set(tx) == {"id", "expires"} and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", tx["expires"])
    ran = _ok(request(uri, "POST", f"{base}/{tx['id']}", {"statement": "CREATE (t:QT {v: $v}) RETURN t.v AS v",
                                                          "parameters": {"v": 7}, "includeCounters": True}))
    assert ran["data"]["values"] == [[7]] and ran["counters"]["nodesCreated"] == 1
    assert ran["transaction"]["id"] == tx["id"]
    committed = _ok(request(uri, "POST", f"{base}/{tx['id']}/commit", {}))
    assert len(committed["bookmarks"]) == 1
    assert clean_graph.execute_query("MATCH (t:QT) RETURN count(t) AS n").records[0]["n"] == 1
    _error(request(uri, "POST", f"{base}/{tx['id']}", {"statement": "RETURN 1"}), 404,
           "Neo.ClientError.Transaction.TransactionNotFound")

    # begin with a statement, then roll back
    begun = _ok(request(uri, "POST", base, {"statement": "CREATE (:QT {v: 8}) RETURN 1 AS one"}))
    assert begun["data"]["values"] == [[1]]
    assert request(uri, "DELETE", f"{base}/{begun['transaction']['id']}").status == 202
    assert clean_graph.execute_query("MATCH (t:QT) RETURN collect(t.v) AS v").records[0]["v"] == [7]

    # an error inside a transaction rolls it back and ends it
    tx_id = _ok(request(uri, "POST", base, {"statement": "CREATE (:QT {v: 9})"}))["transaction"]["id"]
    _error(request(uri, "POST", f"{base}/{tx_id}", {"statement": "RETURN nosuch(1)"}), 400,
           "Neo.ClientError.Statement.SyntaxError")
    _error(request(uri, "POST", f"{base}/{tx_id}/commit", {}), 404,
           "Neo.ClientError.Transaction.TransactionNotFound")
    assert clean_graph.execute_query("MATCH (t:QT) RETURN collect(t.v) AS v").records[0]["v"] == [7]


def test_transaction_belongs_to_its_user_and_database(proxy):
    uri = proxy.http_uri
    tx_id = _ok(request(uri, "POST", "/db/neo4j/query/v2/tx", {}))["transaction"]["id"]
    _error(request(uri, "POST", f"/db/other/query/v2/tx/{tx_id}", {"statement": "RETURN 1"}), 404,
           "Neo.ClientError.Transaction.TransactionNotFound")
    _error(request(uri, "POST", f"/db/neo4j/query/v2/tx/{tx_id}", {"statement": "RETURN 1"},
                   auth=basic(USER, "wrong")), 401, "Neo.ClientError.Security.Unauthorized")
    assert request(uri, "DELETE", f"/db/neo4j/query/v2/tx/{tx_id}").status == 202


def test_large_result_streams(proxy):
    reply = query(proxy.http_uri, "UNWIND range(1, 100000) AS i RETURN i, toString(i) AS s")
    values = _ok(reply)["data"]["values"]
    assert reply.headers.get("Transfer-Encoding") == "chunked"
    assert len(values) == 100000 and values[-1] == [100000, "100000"]
    assert sum(v[0] for v in values) == 100000 * 100001 // 2


# ---- transactional endpoint ------------------------------------------------------------------

def test_tx_commit_row_graph_meta_stats(people, proxy):
    body = _ok(request(proxy.http_uri, "POST", "/db/neo4j/tx/commit", {"statements": [
        {"statement": GRAPH_QUERY, "resultDataContents": ["row", "graph"], "includeStats": True},
        {"statement": "RETURN $x + 1 AS y", "parameters": {"x": 41}},
    ]}), 200)
    assert set(body) == {"results", "errors", "lastBookmarks"} and body["errors"] == []
    first, second = body["results"]
    assert first["columns"] == ["a", "r", "b", "p", "born", "home", "d", "l", "m"]
    assert set(first["stats"]) == LEGACY_STATS and first["stats"]["contains_updates"] is False
    [item] = first["data"]
    row, meta, graph = item["row"], item["meta"], item["graph"]
    bolt = people.execute_query(GRAPH_QUERY).records[0]
    assert row[0]["name"] == "Ann" and row[1] == {"since": 2020}
    assert [x.get("name") for x in row[3]] == ["Ann", None, "Bob"]
    assert row[4] == "1990-05-17" and row[6] == "P1Y2M3DT5S" and row[7] == [1, "two", None]
    assert row[5]["type"] == "Point" and row[5]["crs"]["srid"] == 4326 and row[5]["crs"]["name"] == "wgs-84"
    assert row[5]["coordinates"] == pytest.approx([bolt["home"].longitude, bolt["home"].latitude])
    assert set(meta[0]) == META and meta[0]["type"] == "node" and meta[0]["elementId"] == bolt["a"].element_id
    assert meta[1]["type"] == "relationship"
    assert [m["type"] for m in meta[3]] == ["node", "relationship", "node"]
    assert meta[4] == {"type": "date"} and meta[5] == {"type": "point"} and meta[8] is None
    assert all(set(n) == GRAPH_NODE and isinstance(n["id"], str) for n in graph["nodes"])
    assert sorted(n["elementId"] for n in graph["nodes"]) == sorted(bolt[k].element_id for k in ("a", "b"))
    [rel] = graph["relationships"]
    assert set(rel) == GRAPH_REL and rel["startNodeElementId"] == bolt["a"].element_id
    assert second == {"columns": ["y"], "data": [{"row": [42], "meta": [None]}]}


def test_tx_commit_rolls_back_every_statement_on_error(clean_graph, proxy):
    body = _ok(request(proxy.http_uri, "POST", "/db/neo4j/tx/commit", {"statements": [
        {"statement": "CREATE (n:Roll {v: 1}) RETURN n.v AS v"},
        {"statement": "RETURN nosuch(1)"},
    ]}), 200)
    assert body["results"] == [{"columns": ["v"], "data": [{"row": [1], "meta": [None]}]}]
    assert [e["code"] for e in body["errors"]] == ["Neo.ClientError.Statement.SyntaxError"]
    assert "lastBookmarks" not in body
    assert clean_graph.execute_query("MATCH (n:Roll) RETURN count(n) AS c").records[0]["c"] == 0


def test_tx_endpoint_open_run_commit_and_rollback(clean_graph, proxy):
    uri = proxy.http_uri
    opened = request(uri, "POST", "/db/neo4j/tx", {"statements": [{"statement": "CREATE (:Open {v: 1})"}]})
    body = _ok(opened, 201)
    location = opened.headers["Location"]
    tx_id = location.rsplit("/", 1)[1]
    assert location == f"{uri}/db/neo4j/tx/{tx_id}" and body["commit"] == location + "/commit"
    assert email.utils.parsedate_to_datetime(body["transaction"]["expires"]).tzinfo is not None
    more = _ok(request(uri, "POST", f"/db/neo4j/tx/{tx_id}", {"statements": [
        {"statement": "MATCH (o:Open) RETURN count(o) AS c"}]}), 200)
    assert more["results"][0]["data"] == [{"row": [1], "meta": [None]}] and more["commit"] == body["commit"]
    keep_alive = _ok(request(uri, "POST", f"/db/neo4j/tx/{tx_id}", None), 200)
    assert keep_alive["results"] == [] and "transaction" in keep_alive
    done = _ok(request(uri, "POST", f"/db/neo4j/tx/{tx_id}/commit", {"statements": [
        {"statement": "CREATE (:Open {v: 2})"}]}), 200)
    assert done["errors"] == [] and len(done["lastBookmarks"]) == 1 and "transaction" not in done
    assert clean_graph.execute_query("MATCH (o:Open) RETURN count(o) AS c").records[0]["c"] == 2

    tx_id = request(uri, "POST", "/db/neo4j/tx", {"statements": [{"statement": "CREATE (:Open {v: 3})"}]}) \
        .headers["Location"].rsplit("/", 1)[1]
    assert _ok(request(uri, "DELETE", f"/db/neo4j/tx/{tx_id}"), 200) == {"results": [], "errors": []}
    assert clean_graph.execute_query("MATCH (o:Open) RETURN count(o) AS c").records[0]["c"] == 2
    _error(request(uri, "DELETE", f"/db/neo4j/tx/{tx_id}"), 404,
           "Neo.ClientError.Transaction.TransactionNotFound")


def test_tx_endpoint_errors(proxy):
    uri = proxy.http_uri
    bad_json = _ok(request(uri, "POST", "/db/neo4j/tx/commit", raw=b"{nope"), 200)
    assert bad_json["results"] == []
    assert bad_json["errors"][0]["code"] == "Neo.ClientError.Request.InvalidFormat"
    bad_contents = _ok(request(uri, "POST", "/db/neo4j/tx/commit", {"statements": [
        {"statement": "RETURN 1", "resultDataContents": ["rest"]}]}), 200)
    assert "resultDataContents" in bad_contents["errors"][0]["message"]
    assert _error(request(uri, "POST", "/db/neo4j/tx/commit", {"statements": []}, auth=None), 401,
                  "Neo.ClientError.Security.Unauthorized") == "No authentication header supplied."
    _error(request(uri, "POST", "/db/nope/tx", {"statements": []}), 404,
           "Neo.ClientError.Database.DatabaseNotFound")
    _error(request(uri, "POST", "/db/neo4j/tx/12345", {"statements": []}), 404,
           "Neo.ClientError.Transaction.TransactionNotFound")
    _error(request(uri, "GET", "/db/neo4j/tx/commit"), 405, "Neo.ClientError.Request.Invalid")


def test_idle_transactions_expire(tmp_path):
    with ProxyProcess(args=["--http-tx-timeout", "0.5"]) as proc:
        opened = request(proc.http_uri, "POST", "/db/neo4j/tx", {"statements": [{"statement": "CREATE (:Gone)"}]})
        tx_id = opened.headers["Location"].rsplit("/", 1)[1]
        q_id = _ok(request(proc.http_uri, "POST", "/db/neo4j/query/v2/tx", {"statement": "CREATE (:Gone)"}))[
            "transaction"]["id"]
        time.sleep(1.5)
        _error(request(proc.http_uri, "POST", f"/db/neo4j/tx/{tx_id}/commit", None), 404,
               "Neo.ClientError.Transaction.TransactionNotFound")
        _error(request(proc.http_uri, "POST", f"/db/neo4j/query/v2/tx/{q_id}/commit", None), 404,
               "Neo.ClientError.Transaction.TransactionNotFound")
        # the expired transactions were rolled back and released the write lock
        body = _ok(query(proc.http_uri, "MATCH (g:Gone) RETURN count(g)"))
        assert body["data"]["values"] == [[0]]


def test_http_in_front_of_a_neo4j_backend(proxy):
    """Credentials go upstream as a Bolt LOGON would (here: a proxy whose upstream is another proxy)."""
    with ProxyProcess(args=["--upstream", proxy.uri]) as chained:
        assert _ok(query(chained.http_uri, "RETURN 'through' AS s"))["data"]["values"] == [["through"]]
        _error(request(chained.http_uri, "POST", "/db/neo4j/query/v2", {"statement": "RETURN 1"},
                       auth=basic(USER, "wrong")), 401, "Neo.ClientError.Security.Unauthorized")
        tx = _ok(request(chained.http_uri, "POST", "/db/neo4j/tx", {"statements": [
            {"statement": "UNWIND [1, 2] AS x RETURN x"}]}), 201)
        assert [d["row"] for d in tx["results"][0]["data"]] == [[1], [2]]
        assert _ok(request(chained.http_uri, "POST", tx["commit"].split(chained.http_uri)[1], None), 200)["errors"] == []


# ---- Bolt over WebSocket (protocol level) ---------------------------------------------------

async def test_websocket_handshake_reply_is_one_frame(proxy):
    ws_uri = proxy.uri.replace("bolt://", "ws://")
    async with aiohttp.ClientSession() as session, session.ws_connect(ws_uri) as ws:
        # magic + manifest v1 slot + 5.8..5.0: the reply (manifest) must arrive in one binary frame
        await ws.send_bytes(bytes.fromhex("6060b017" "000001ff" "00080805") + bytes(8))
        frame = await ws.receive(timeout=10)
        assert frame.type == aiohttp.WSMsgType.BINARY
        assert frame.data[:4] == bytes.fromhex("000001ff") and len(frame.data) > 5
    async with aiohttp.ClientSession() as session, session.ws_connect(ws_uri) as ws:
        await ws.send_bytes(bytes.fromhex("6060b017" "00000405") + bytes(12))      # legacy: 5.4..5.0
        frame = await ws.receive(timeout=10)
        assert frame.data == bytes.fromhex("00000405")
        await ws.send_str("not bolt")                     # a text frame ends the connection
        assert (await ws.receive(timeout=10)).type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED)


def test_bolt_port_refuses_other_http_methods(proxy):
    host, port = proxy.uri.removeprefix("bolt://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(b"POST /db/neo4j/query/v2 HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
        assert sock.recv(100) == b""                       # closed, as Neo4j's Bolt port does


def test_tls_serves_https_wss_and_mcp(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    trust_any = ssl.create_default_context()
    trust_any.check_hostname, trust_any.verify_mode = False, ssl.CERT_NONE

    async def exercise(proc):
        bolt = proc.uri.removeprefix("bolt+s://")
        https = proc.http_uri.replace("http://", "https://")
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=trust_any)) as session:
            async with session.get(f"https://{bolt}/") as reply:
                doc = await reply.json()
            assert doc["bolt_direct"] == f"bolt+s://{bolt}" and doc["query"].startswith("https://")
            async with session.post(f"{https}/db/neo4j/query/v2", json={"statement": "RETURN 'tls' AS s"},
                                    headers={"Authorization": basic(USER, PASSWORD)}) as reply:
                assert (await reply.json())["data"]["values"] == [["tls"]]
            call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "read-cypher", "arguments": {"query": "RETURN 'tls' AS s"}}}
            async with session.post(f"{https}/mcp", json=call, headers={
                    "Authorization": basic(USER, PASSWORD), "Accept": "application/json, text/event-stream"}) as reply:
                assert (await reply.json())["result"]["content"][0]["text"] == '["s"]\n["tls"]'
            async with session.ws_connect(f"wss://{bolt}/") as ws:
                await ws.send_bytes(bytes.fromhex("6060b017" "00000405") + bytes(12))
                assert (await ws.receive(timeout=10)).data == bytes.fromhex("00000405")

    with ProxyProcess(args=["--tls-cert", str(cert), "--tls-key", str(key)]) as proc:
        asyncio.run(exercise(proc))
