"""Request bodies in (size limit, read timeout, JSON) and JSON response bodies out.

A response is built in pieces. Small ones go out whole with a Content-Length; once a
response passes `STREAM_THRESHOLD` bytes it is streamed (chunked), so a million-row
result never sits in the proxy's memory. Until the first piece is sent the status can
still change, which lets an error that arrives before any row get its own status code.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from aiohttp import web

from proxy.bolt.chunking import MAX_MESSAGE_SIZE
from core.errors import CypherError
from proxy.json_values import dumps, invalid_format

MAX_BODY = MAX_MESSAGE_SIZE       # bytes: the same bound as one Bolt message
BODY_TIMEOUT = 30.0              # seconds a client may take to send its request body
STREAM_THRESHOLD = 256 * 1024    # bytes buffered before a response starts streaming

JSON = "application/json"
TYPED_JSON = "application/vnd.neo4j.query"


def too_large(limit: int, size: int | None = None) -> CypherError:
    got = f" ({size} bytes)" if size else ""
    return CypherError("Neo.ClientError.Request.Invalid",
                       f"The request body{got} exceeds the limit of {limit} bytes. "
                       "Send large data in several requests, or pass it as smaller parameters.")


class HttpError(Exception):
    """An error answered with a fixed HTTP status (401 for authentication, 413, 406 ...)."""

    def __init__(self, status: int, error: CypherError):
        super().__init__(error.message)
        self.status = status
        self.error = error


async def read_json(request: web.Request) -> Any:
    """The request's JSON body (None when empty); raises CypherError on a bad body and
    HttpError 413 on one over the application's `client_max_size`."""
    raw = await read_body(request)
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, ValueError) as exc:
        raise invalid_format(f"Unable to deserialize request: {exc}") from None


async def read_body(request: web.Request) -> bytes:
    """The request's body, within the application's `client_max_size` (else HttpError 413)
    and `BODY_TIMEOUT`."""
    limit = request.client_max_size
    if request.content_length is not None and request.content_length > limit:
        raise HttpError(413, too_large(limit, request.content_length))
    try:
        return await asyncio.wait_for(request.read(), BODY_TIMEOUT)
    except asyncio.TimeoutError:
        raise CypherError("Neo.ClientError.Request.Invalid",
                          f"The request body did not arrive within {BODY_TIMEOUT:g} s.") from None
    except web.HTTPRequestEntityTooLarge:
        raise HttpError(413, too_large(limit)) from None


def sends_typed(request: web.Request) -> bool:
    """The client sent typed JSON parameters (Content-Type application/vnd.neo4j.query)."""
    return request.content_type.startswith(TYPED_JSON)


def accepts_typed(request: web.Request) -> bool:
    """The client asked for typed JSON results (Accept: application/vnd.neo4j.query)."""
    return TYPED_JSON in request.headers.get("Accept", "")


def error_entries(errors: list[CypherError]) -> list[dict[str, str]]:
    return [{"code": e.code, "message": e.message} for e in errors]


def error_response(status: int, errors: list[CypherError], content_type: str = JSON) -> web.Response:
    return web.Response(status=status, body=dumps({"errors": error_entries(errors)}), content_type=content_type)


class JsonBody:
    """A JSON response written in pieces: whole when small, streamed when large."""

    def __init__(self, request: web.Request, status: int, content_type: str = JSON,
                 headers: dict[str, str] | None = None):
        self.status = status
        self._request = request
        self._content_type = content_type
        self._headers = headers or {}
        self._pieces: list[bytes] = []
        self._size = 0
        self._stream: web.StreamResponse | None = None

    @property
    def started(self) -> bool:
        """True once bytes went to the client (the status can no longer change)."""
        return self._stream is not None

    async def write(self, piece: bytes) -> None:
        self._pieces.append(piece)
        self._size += len(piece)
        if self._size >= STREAM_THRESHOLD:
            await self._flush()

    def discard(self) -> None:
        """Forget what is buffered (only before anything was sent)."""
        assert not self.started
        self._pieces, self._size = [], 0

    async def finish(self) -> web.StreamResponse:
        if self._stream is None:
            return web.Response(status=self.status, body=b"".join(self._pieces),
                                content_type=self._content_type, headers=self._headers)
        await self._flush()
        await self._stream.write_eof()
        return self._stream

    async def _flush(self) -> None:
        if self._stream is None:
            self._stream = web.StreamResponse(status=self.status, headers=self._headers)
            self._stream.content_type = self._content_type
            self._stream.enable_chunked_encoding()
            await self._stream.prepare(self._request)
        await self._stream.write(b"".join(self._pieces))
        self._pieces, self._size = [], 0


BATCH = 1000                     # records fetched from the backend per step


async def write_rows(result: Any, out: JsonBody, encode: Any) -> bool:
    """Write every record of `result` as JSON array items, `encode(rows) -> b"item,item"`
    for one batch. Returns whether there was any record."""
    any_rows = False
    while rows := await result.fetch(BATCH):
        await out.write(b"," + encode(rows) if any_rows else encode(rows))
        any_rows = True
    return any_rows


#: Neo4j status codes answered with something other than the classification's status.
_STATUS_BY_CODE = {
    "Neo.ClientError.Security.Unauthorized": 401,
    "Neo.ClientError.Security.Forbidden": 403,
    "Neo.ClientError.Database.DatabaseNotFound": 404,
    "Neo.ClientError.Transaction.TransactionNotFound": 404,
}
_STATUS_BY_CLASSIFICATION = {"ClientError": 400, "TransientError": 503}


def status_for(error: CypherError) -> int:
    """The HTTP status the Query API answers an error with."""
    return _STATUS_BY_CODE.get(error.code) or _STATUS_BY_CLASSIFICATION.get(error.classification, 500)
