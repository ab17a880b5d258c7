"""Raw HTTP requests to a proxy, as curl would send them: a JSON body, Basic auth, headers."""

from __future__ import annotations

import base64
import http.client
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from tests.harness import PASSWORD, USER


@dataclass
class Reply:
    status: int
    headers: http.client.HTTPMessage
    text: str

    @property
    def json(self) -> Any:
        return json.loads(self.text)


def basic(user: str = USER, password: str = PASSWORD) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def request(base_uri: str, method: str, path: str, body: Any = None, *, auth: str | None = basic(),
            headers: dict[str, str] | None = None, raw: bytes | None = None, timeout: float = 60) -> Reply:
    """`method path` with `body` as JSON (or `raw` bytes); `auth` is the Authorization header."""
    url = urlsplit(base_uri)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=timeout)
    all_headers = {"Content-Type": "application/json", **(headers or {})}
    if auth:
        all_headers["Authorization"] = auth
    payload = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    try:
        connection.request(method, path, body=payload, headers=all_headers)
        response = connection.getresponse()
        return Reply(response.status, response.headers, response.read().decode())
    finally:
        connection.close()


def query(base_uri: str, statement: str, parameters: dict | None = None, *, typed: bool = False,
          **fields: Any) -> Reply:
    """POST /db/neo4j/query/v2; `typed` asks for typed JSON results."""
    headers = {"Accept": "application/vnd.neo4j.query"} if typed else {}
    body = {"statement": statement, "parameters": parameters or {}, **fields}
    return request(base_uri, "POST", "/db/neo4j/query/v2", body, headers=headers)
