"""With `--workers`, every worker serves the HTTP port; state that spans requests stays in one.

An HTTP transaction lives in the worker that began it, and its next request may arrive on a new
connection that the kernel gives to another worker. So a transaction's id says which worker owns
it (`id % workers == index`), and a worker hands a request naming another worker's transaction to
that worker over its private Unix socket, returning the owner's answer as it is. MCP sessions
live in the MCP library's memory under ids it chooses, so every MCP request is handled by
worker 0. Everything else (auto-commit queries, discovery, describe) is served where it lands.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
from aiohttp import web

from proxy.http.transactions import not_found

#: Headers that belong to one connection, not to the request or answer being handed on.
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "transfer-encoding", "content-length", "upgrade"})
MCP_OWNER = 0
#: What a handing-over worker tells the owner about the client's request (trusted only on the
#: private Unix socket, which only the workers reach).
_SCHEME, _CLIENT = "X-Cypher-Proxy-Scheme", "X-Cypher-Proxy-Client"


def _handed_over(request: web.Request) -> bool:
    """Did `request` come from another worker (over a Unix socket, with what it knew)?"""
    local = request.transport.get_extra_info("sockname") if request.transport else None
    return isinstance(local, str) and _SCHEME in request.headers and _CLIENT in request.headers


@dataclass
class Affinity:
    """This worker's place among `count` workers whose Unix sockets are in `sockets`."""

    index: int
    count: int
    sockets: Path
    _clients: dict[int, aiohttp.ClientSession] = field(default_factory=dict, repr=False)

    def socket(self, index: int) -> Path:
        return self.sockets / f"http-{index}.sock"

    def transaction_ids(self) -> Iterator[int]:
        """The ids this worker gives its transactions: the ones that say it owns them."""
        return itertools.count(self.count + self.index, self.count)

    def owner(self, request: web.Request) -> int:
        """The worker that must serve `request`."""
        if request.path == "/mcp":
            return MCP_OWNER
        tx_id = request.match_info.get("tx", "")
        return int(tx_id) % self.count if tx_id.isdigit() else self.index

    @web.middleware
    async def middleware(self, request: web.Request, handler) -> web.StreamResponse:
        owner = self.owner(request)
        if owner != self.index:
            return await self._hand_over(request, owner)
        if _handed_over(request):      # answer as the worker that received it would (its URLs, its client)
            request = request.clone(scheme=request.headers[_SCHEME], remote=request.headers[_CLIENT])
        return await handler(request)

    async def _hand_over(self, request: web.Request, owner: int) -> web.StreamResponse:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_BY_HOP}
        headers.update({_SCHEME: request.scheme, _CLIENT: request.remote or ""})
        try:
            async with self._client(owner).request(request.method, f"http://worker{request.path_qs}",
                                                   headers=headers, data=await request.read()) as reply:
                body = await reply.read()
                answer = {k: v for k, v in reply.headers.items() if k.lower() not in _HOP_BY_HOP}
                return web.Response(status=reply.status, body=body, headers=answer)
        except aiohttp.ClientConnectionError:
            # The owner died (and was replaced): its transactions went with it.
            raise not_found() from None

    def _client(self, owner: int) -> aiohttp.ClientSession:
        client = self._clients.get(owner)
        if client is None or client.closed:
            client = self._clients[owner] = aiohttp.ClientSession(
                connector=aiohttp.UnixConnector(path=str(self.socket(owner))), auto_decompress=False)
        return client

    async def close(self) -> None:
        for client in self._clients.values():
            await client.close()
        self._clients.clear()
