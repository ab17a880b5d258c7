"""`GET /`: Neo4j's discovery document, where clients learn the Bolt and HTTP addresses.

Served without authentication on the HTTP port and on the Bolt port (Neo4j Browser asks
both). Addresses use the host name the client reached us by, with each listener's port.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web

from proxy.bolt.messages import SERVER_AGENT
from proxy.json_values import dumps

NEO4J_VERSION = SERVER_AGENT.partition("/")[2]      # the version the Bolt HELLO reports
NEO4J_EDITION = "community"


@dataclass
class Endpoints:
    """Where the listeners are, filled in once they are bound."""

    bolt_port: int = 7687
    http_port: int = 7474
    tls: bool = False


ENDPOINTS = web.AppKey("endpoints", Endpoints)


def document(host: str, endpoints: Endpoints) -> dict:
    host = f"[{host}]" if ":" in host else host
    bolt = f"{host}:{endpoints.bolt_port}"
    http = f"{'https' if endpoints.tls else 'http'}://{host}:{endpoints.http_port}"
    secure = "+s" if endpoints.tls else ""
    return {
        "bolt_routing": f"neo4j{secure}://{bolt}",
        "bolt_direct": f"bolt{secure}://{bolt}",
        "query": f"{http}/db/{{databaseName}}/query/v2",
        "transaction": f"{http}/db/{{databaseName}}/tx",
        "neo4j_version": NEO4J_VERSION,
        "neo4j_edition": NEO4J_EDITION,
        "auth_config": {"oidc_providers": []},
    }


async def discovery(request: web.Request) -> web.Response:
    host = request.url.host or "localhost"
    return web.Response(body=dumps(document(host, request.app[ENDPOINTS])), content_type="application/json")
