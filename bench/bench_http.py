"""The HTTP APIs against Bolt on the same proxy and query: latency of a trivial query and the
time to fetch 10k rows, reported as ratios to Bolt (the neo4j driver on one session).

HTTP requests go over one kept-alive connection, as a driver's connection pool would, with
the JSON body parsed, so both sides pay for decoding what they receive.
"""

from __future__ import annotations

import http.client
import json
from urllib.parse import urlsplit

import neo4j

from bench import median_seconds
from tests.harness import PASSWORD, USER, ProxyProcess
from tests.http_client import basic

ROWS_QUERY = "UNWIND range(1, 10000) AS i RETURN i, 'row-' + toString(i) AS s"


class KeptAliveHttp:
    def __init__(self, base_uri: str):
        url = urlsplit(base_uri)
        self._connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
        self._headers = {"Authorization": basic(), "Content-Type": "application/json"}

    def post(self, path: str, body: dict, accept: str = "application/json") -> dict:
        self._connection.request("POST", path, json.dumps(body), {**self._headers, "Accept": accept})
        response = self._connection.getresponse()
        data = json.loads(response.read())
        assert response.status in (200, 202), data
        return data


def main() -> None:
    with ProxyProcess() as proc, neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver, \
            driver.session() as session:
        client = KeptAliveHttp(proc.http_uri)

        def bolt(query: str) -> int:
            return len(list(session.run(query)))

        def query_api(query: str, accept: str = "application/json") -> int:
            return len(client.post("/db/neo4j/query/v2", {"statement": query}, accept)["data"]["values"])

        def tx_commit(query: str) -> int:
            return len(client.post("/db/neo4j/tx/commit", {"statements": [{"statement": query}]})
                       ["results"][0]["data"])

        runs = {
            "Bolt (neo4j driver)": bolt,
            "Query API, plain JSON": query_api,
            "Query API, typed JSON": lambda q: query_api(q, "application/vnd.neo4j.query"),
            "transactional endpoint": tx_commit,
        }
        for fn in runs.values():                      # warm up connections, caches, plans
            for _ in range(30):
                assert fn("RETURN 1") == 1
            assert fn(ROWS_QUERY) == 10_000
        print("machine shared with other work: compare the ratios, not the absolute times")
        base_latency = base_rows = None
        for name, fn in runs.items():
            latency = median_seconds(lambda: fn("RETURN 1"), 500)
            rows = median_seconds(lambda: fn(ROWS_QUERY), 20)
            base_latency, base_rows = base_latency or latency, base_rows or rows
            print(f"{name:<24} RETURN 1 {latency * 1e3:7.3f} ms ({latency / base_latency:5.2f}x)   "
                  f"10k rows {rows * 1e3:7.1f} ms ({rows / base_rows:5.2f}x, {10_000 / rows:9,.0f} rows/s)")
