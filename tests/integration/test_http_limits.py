"""Slow, half-sent, oversized and overlapping HTTP requests, against the HTTP front end run
in-process (with short timeouts) over a real embedded FalkorDB."""

from __future__ import annotations

import asyncio
import json

import pytest

from proxy.http import body
from proxy.http.server import HttpFrontEnd
from proxy.session import Session
from tests.http_client import basic

TIMEOUT = 0.5


@pytest.fixture(scope="module")
async def backend(embedded):
    return embedded


@pytest.fixture
async def http(backend, monkeypatch):
    monkeypatch.setattr(body, "BODY_TIMEOUT", TIMEOUT)
    front = HttpFrontEnd(lambda: Session(backend), request_timeout=TIMEOUT, tx_idle_timeout=30, max_body=4096)
    await front.setup()
    server = await front.listen("127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    await front.close()


async def _send(port: int, data: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    return reader, writer


def _head(path: str, length: int | None = None, chunked: bool = False) -> bytes:
    lines = [f"POST {path} HTTP/1.1", "Host: localhost", f"Authorization: {basic()}",
             "Content-Type: application/json"]
    lines.append("Transfer-Encoding: chunked" if chunked else f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def _response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    status = int((await asyncio.wait_for(reader.readline(), 10)).split()[1])
    headers = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return status, await reader.readexactly(int(headers["content-length"]))


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bool:
    try:
        return await asyncio.wait_for(reader.read(), seconds) == b""
    except asyncio.TimeoutError:
        return False


async def test_silent_connection_is_closed(http):
    reader, writer = await asyncio.open_connection("127.0.0.1", http)
    assert await _closed_within(reader, TIMEOUT + 5)
    writer.close()


async def test_half_sent_request_head_is_closed(http):
    reader, writer = await _send(http, b"POST /db/neo4j/query/v2 HTTP/1.1\r\nHost: localhost\r\n")
    assert await _closed_within(reader, TIMEOUT + 5)
    writer.close()


async def test_half_sent_body_times_out_with_an_error(http):
    reader, writer = await _send(http, _head("/db/neo4j/query/v2", 100) + b'{"statement"')
    status, text = await _response(reader)
    assert status == 400 and b"did not arrive within" in text and b"Neo.ClientError.Request.Invalid" in text
    writer.close()


async def test_chunked_body_over_the_limit(http):
    chunk = b"x" * 3000
    piece = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    reader, writer = await _send(http, _head("/db/neo4j/query/v2", chunked=True) + piece + piece)
    status, text = await _response(reader)
    assert status == 413 and b"exceeds the limit of 4096 bytes" in text
    writer.close()


async def test_one_request_at_a_time_per_transaction(http):
    reader, writer = await _send(http, _head("/db/neo4j/query/v2/tx", 2) + b"{}")
    status, text = await _response(reader)
    assert status == 202
    tx = json.loads(text)["transaction"]["id"]
    # a first request holds the transaction while its body trickles in ...
    slow_reader, slow_writer = await _send(http, _head(f"/db/neo4j/query/v2/tx/{tx}", 100) + b"{")
    await asyncio.sleep(0.1)
    # ... so a second one is refused instead of interleaving with it
    writer.write(_head(f"/db/neo4j/query/v2/tx/{tx}", 2) + b"{}")
    status, text = await _response(reader)
    assert status == 400 and b"serving another request" in text
    status, _ = await _response(slow_reader)          # the slow one times out (and rolls back)
    assert status == 400
    for w in (writer, slow_writer):
        w.close()
