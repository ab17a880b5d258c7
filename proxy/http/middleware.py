"""Every HTTP answer in Neo4j's words: errors as `{"errors": [{code, message}]}`, CORS.

Errors raised by handlers (`CypherError`, `HttpError`) and by aiohttp itself (unknown
path, wrong method, body too large) become Neo4j-style bodies; anything unexpected is
logged and answered 500 without a stack trace. CORS is open, as Neo4j's default is, so
a page such as Neo4j Browser on another origin can call the APIs.
"""

from __future__ import annotations

import logging

from aiohttp import web

from core.errors import CypherError, database_error
from proxy.http.body import HttpError, error_response, status_for, too_large

log = logging.getLogger("proxy.http")

_METHODS = "GET, POST, DELETE, OPTIONS"


def _http_exception(request: web.Request, exc: web.HTTPException) -> web.Response:
    """aiohttp's own refusals (routing, limits) as Neo4j errors."""
    if exc.status == 404:
        error = CypherError("Neo.ClientError.Request.Invalid",
                            f"No endpoint at {request.path}. The HTTP APIs are GET / (discovery), "
                            "/db/{database}/query/v2[/tx[/{id}[/commit]]], "
                            "/db/{database}/tx[/{id}][/commit], [/db/{database}]/describe and /mcp.")
    elif exc.status == 405:
        allowed = ", ".join(sorted(getattr(exc, "allowed_methods", ()) or ()))
        error = CypherError("Neo.ClientError.Request.Invalid",
                            f"{request.method} is not allowed on {request.path}; use {allowed}.")
    elif exc.status == 413:
        error = too_large(request.client_max_size)
    else:
        error = CypherError("Neo.ClientError.Request.Invalid", exc.reason or f"HTTP {exc.status}")
    response = error_response(exc.status, [error])
    if "Allow" in exc.headers:
        response.headers["Allow"] = exc.headers["Allow"]
    return response


def _preflight(request: web.Request) -> web.Response:
    requested = request.headers.get("Access-Control-Request-Headers", "Authorization, Content-Type, Accept")
    return web.Response(status=204, headers={
        "Access-Control-Allow-Methods": _METHODS, "Access-Control-Allow-Headers": requested,
        "Access-Control-Max-Age": "86400", "Allow": _METHODS})


@web.middleware
async def neo4j_errors(request: web.Request, handler) -> web.StreamResponse:
    if request.method == "OPTIONS":
        return _preflight(request)
    try:
        return await handler(request)
    except HttpError as exc:
        return error_response(exc.status, [exc.error])
    except CypherError as exc:
        return error_response(status_for(exc), [exc])
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _http_exception(request, exc)
    except (ConnectionError, OSError):
        raise                                  # the client went away: nobody to answer
    except Exception:
        log.exception("%s %s failed", request.method, request.path)
        return error_response(500, [database_error("An unexpected error occurred in the proxy; "
                                                   "see the proxy's log for details.")])


async def allow_any_origin(request: web.Request, response: web.StreamResponse) -> None:
    """`on_response_prepare` hook: every response may be read by a page of any origin."""
    response.headers["Access-Control-Allow-Origin"] = "*"
