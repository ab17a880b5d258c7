"""The records of one FalkorDB reply, read from its connection as the client fetches them.

The statistics come at the end of FalkorDB's reply, so a result's summary is complete once its
rows are read (`FalkorDBResult`); `query_type` is the summary's kind of query, from the
statement and its counters.
"""

from __future__ import annotations

from typing import Any, Protocol

from core.backend import Result, Summary
from core.errors import CypherError
from proxy.backends.falkordb.endpoint import Endpoint
from proxy.backends.falkordb.graph import Graph
from proxy.backends.falkordb.statement import Statement
from proxy.backends.falkordb.stream import ReplyCut, ReplyStream
from proxy.backends.falkordb.tx import FalkorDBTransaction
from proxy.backends.falkordb.values import SchemaMiss, decode_row, parse_stats


class ResultBackend(Protocol):
    """What a result uses of its backend (`backend.FalkorDBBackend`, which makes it)."""

    async def reply_cut(self, endpoint: Endpoint) -> CypherError: ...

    async def refresh_schema(self, graph: Graph) -> None: ...

    async def check_names(self, graph: Graph, before: set[str] | None) -> None: ...


class FalkorDBResult(Result):
    """Records of one reply, read from its connection as they are fetched (`ReplyStream`). A
    read-only result abandoned before its end closes its connection instead of reading the
    rest; a writing one is read to the end for its counters."""

    def __init__(self, backend: ResultBackend, graph: Graph, statement: Statement, keys: list[str],
                 endpoint: Endpoint, stream: ReplyStream, summary: Summary, tx: FalkorDBTransaction | None,
                 names_before: set[str] | None = None):
        self.keys = keys
        self._backend, self._graph, self._statement = backend, graph, statement
        self._endpoint = endpoint
        self._stream: ReplyStream | None = stream
        self._summary = summary
        self._tx = tx
        self._names_before = names_before           # a write that may add a name (`FalkorDBBackend._upkeep`)

    async def fetch(self, n: int) -> list[list[Any]]:
        if self._stream is None:
            return []
        if self._tx is not None:
            self._tx.touch()
        try:
            raw = await self._stream.rows(n)
        except ReplyCut:
            await self._finish()
            raise await self._backend.reply_cut(self._endpoint) from None
        while True:
            try:
                batch = [decode_row(row, self._graph.schema) for row in raw]
                break
            except SchemaMiss:
                await self._backend.refresh_schema(self._graph)
        if not self._stream.remaining:
            await self._finish()
        return batch

    async def consume(self) -> Summary:
        if self._stream is not None:
            await self._finish()
        return self._summary

    async def _finish(self) -> None:
        stream, self._stream = self._stream, None
        try:
            if stream.broken or (stream.remaining and not self._statement.may_write):
                stream.broken = True          # nothing to count (or no way to): drop the connection
                stats: list = []
            else:
                stats = await stream.statistics()
        except ReplyCut:
            raise await self._backend.reply_cut(self._endpoint) from None
        finally:
            await self._endpoint.release(stream)
        self._summary.stats = parse_stats(stats)
        self._summary.query_type = query_type(self._statement, self.keys, self._summary.stats)
        if not self._summary.stats:                 # changed nothing: its effects carried no name
            await self._backend.check_names(self._graph, self._names_before)


def query_type(statement: Statement, keys: list[str], stats: dict[str, int]) -> str:
    if statement.schema or any(k.startswith(("indexes", "constraints")) for k in stats):
        return "s"
    if statement.may_write or stats:
        return "rw" if keys else "w"
    return "r"
