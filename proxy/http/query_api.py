"""Neo4j's Query API v2: `POST /db/{db}/query/v2` and its explicit transactions.

JSON in -> `Session` -> JSON out, the same session and planner a Bolt connection uses.
Answers are 202 Accepted; an error before the first row gets its own status (400 for a
client error, 401, 404 for an unknown database or transaction); an error after rows were
streamed is appended as `errors` at the end of the body, as Neo4j does. Any error inside
an explicit transaction rolls it back.
"""

from __future__ import annotations

import datetime as _dt
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from core.backend import Result, Summary, TxConfig
from core.errors import CypherError, database_error
from proxy import json_values as jv
from proxy.front_ends import consume_quietly
from proxy.http.api import HttpApi
from proxy.http.body import (
    JSON, TYPED_JSON, JsonBody, accepts_typed, error_entries, error_response, read_json,
    sends_typed, status_for, write_rows,
)
from proxy.http.summary import query_api_counters, query_api_plan
from proxy.http.transactions import OpenTransaction

_ACCESS_MODES = {"read": "r", "write": "w"}


@dataclass
class QueryRequest:
    """A Query API request body, checked."""

    statement: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    include_counters: bool = False
    config: TxConfig = field(default_factory=TxConfig)


def _field(body: dict, name: str, kind: type | tuple[type, ...], default: Any, what: str) -> Any:
    value = body.get(name)
    if value is None:
        return default
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise jv.invalid_format(f"'{name}' must be {what}, got {value!r:.100}")
    return value


def parse_request(body: Any, database: str, *, typed: bool, statement_required: bool) -> QueryRequest:
    """Check a request body (`statement`, `parameters`, `includeCounters`, `accessMode`,
    `bookmarks`, `impersonatedUser`); typed JSON parameters are decoded."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise jv.invalid_format("The request body must be a JSON object such as "
                                "{\"statement\": \"RETURN 1\", \"parameters\": {}}.")
    statement = _field(body, "statement", str, None, "a string holding a Cypher query")
    if statement_required and statement is None:
        raise jv.invalid_format("The request body has no 'statement': send "
                                "{\"statement\": \"<Cypher query>\", \"parameters\": {...}}.")
    parameters = _field(body, "parameters", dict, {}, "a JSON object")
    if typed:
        parameters = {name: jv.typed_parameter(value) for name, value in parameters.items()}
    mode = _field(body, "accessMode", str, "Write", "\"Read\" or \"Write\"")
    if mode.lower() not in _ACCESS_MODES:
        raise jv.invalid_format(f"'accessMode' must be \"Read\" or \"Write\", got {mode!r:.60}")
    bookmarks = _field(body, "bookmarks", list, [], "a list of bookmark strings")
    if not all(isinstance(b, str) for b in bookmarks):
        raise jv.invalid_format("'bookmarks' must be a list of bookmark strings")
    return QueryRequest(
        statement=statement, parameters=parameters,
        include_counters=_field(body, "includeCounters", bool, False, "true or false"),
        config=TxConfig(database=database, bookmarks=tuple(bookmarks), mode=_ACCESS_MODES[mode.lower()],
                        imp_user=_field(body, "impersonatedUser", str, None, "a user name")))


def _ms_since(start: float) -> int:
    return int((time.monotonic() - start) * 1000)


def _plain_rows(rows: list[list[Any]]) -> bytes:
    return jv.dumps([[jv.plain_value(v) for v in row] for row in rows])[1:-1]


def _typed_rows(rows: list[list[Any]]) -> bytes:
    return jv.dumps([[jv.typed_value(v) for v in row] for row in rows])[1:-1]


class QueryApi(HttpApi):
    """The handlers of the Query API v2 routes."""

    # ---- routes --------------------------------------------------------------------------

    async def run(self, request: web.Request) -> web.StreamResponse:
        """POST /db/{db}/query/v2: one statement in its own (auto-commit) transaction."""
        session = await self.logon(request)
        query = await self._read(request, statement_required=True)
        start = time.monotonic()
        result = await session.run(query.statement, query.parameters, query.config)
        return await self._respond(request, result, query, start)

    async def begin(self, request: web.Request) -> web.StreamResponse:
        """POST /db/{db}/query/v2/tx: open a transaction (and run a first statement, if sent)."""
        session = await self.logon(request)
        query = await self._read(request, statement_required=False)
        tx = await self.transactions.begin(session, query.config)
        async with self.transactions.use(tx):
            return await self._in_transaction(request, tx, query, commit=False)

    async def run_in_transaction(self, request: web.Request) -> web.StreamResponse:
        """POST /db/{db}/query/v2/tx/{id}: one more statement in an open transaction."""
        return await self._continue(request, statement_required=True, commit=False)

    async def commit(self, request: web.Request) -> web.StreamResponse:
        """POST /db/{db}/query/v2/tx/{id}/commit: a last statement (optional), then commit."""
        return await self._continue(request, statement_required=False, commit=True)

    async def rollback(self, request: web.Request) -> web.StreamResponse:
        """DELETE /db/{db}/query/v2/tx/{id}."""
        tx = await self.claim(request)
        async with self.transactions.use(tx):
            await self.transactions.rollback(tx)
        return web.Response(status=202, body=b"{}", content_type=JSON)

    # ---- steps ----------------------------------------------------------------------------

    async def _read(self, request: web.Request, *, statement_required: bool) -> QueryRequest:
        return parse_request(await read_json(request), request.match_info["db"], typed=sends_typed(request),
                             statement_required=statement_required)

    async def _continue(self, request: web.Request, *, statement_required: bool,
                        commit: bool) -> web.StreamResponse:
        tx = await self.claim(request)
        async with self.transactions.use(tx):
            try:
                query = await self._read(request, statement_required=statement_required)
            except CypherError:
                await self.transactions.rollback(tx)
                raise
            return await self._in_transaction(request, tx, query, commit=commit)

    async def _in_transaction(self, request: web.Request, tx: OpenTransaction, query: QueryRequest, *,
                              commit: bool) -> web.StreamResponse:
        """Run the request's statement (if any) in `tx`, then commit or report the transaction."""
        start = time.monotonic()
        try:
            result = await tx.session.run(query.statement, query.parameters) if query.statement else None
        except Exception:
            await self.transactions.rollback(tx)
            raise
        return await self._respond(request, result, query, start, tx=tx, commit=commit)

    async def _respond(self, request: web.Request, result: Result | None, query: QueryRequest,
                       start: float, *, tx: OpenTransaction | None = None,
                       commit: bool = False) -> web.StreamResponse:
        """Stream the result's rows, then the summary (and commit, or the transaction's id).

        The body is `{"data": {"fields", "values"}, <summary keys>}`; `values` streams.
        """
        typed = accepts_typed(request)
        out = JsonBody(request, 202, TYPED_JSON if typed else JSON)
        tail: dict[str, Any] = {}
        data_open = False
        try:
            if result is not None:
                await out.write(b'{"data":{"fields":' + jv.dumps(result.keys) + b',"values":[')
                data_open = True
                available = _ms_since(start)
                await write_rows(result, out, _typed_rows if typed else _plain_rows)
                summary = await result.consume()
                await out.write(b"]}")
                data_open = False
                tail = self._summary(summary, query, available, _ms_since(start))
            if commit:
                assert tx is not None
                bookmark = await self.transactions.commit(tx)
                tail["bookmarks"] = [bookmark] if bookmark else []
            elif tx is not None:
                tail["transaction"] = {"id": tx.id, "expires": _iso_expiry(self.transactions.idle_timeout)}
        except (CypherError, jv.UnsupportedValue) as exc:
            error = exc if isinstance(exc, CypherError) else database_error(
                f"The result holds a value JSON cannot carry: {exc}")
            if tx is not None:
                await self.transactions.rollback(tx)
            if not out.started:
                return error_response(status_for(error), [error])
            tail = {"errors": error_entries([error])}
            await out.write(b"]}" if data_open else b"")
        except Exception:
            if tx is not None:
                await self.transactions.rollback(tx)
            raise
        finally:
            if result is not None:
                await consume_quietly(result)
        await out.write(_members(tail, first=result is None) + b"}")
        return await out.finish()

    @staticmethod
    def _summary(summary: Summary, query: QueryRequest, available: int, consumed: int) -> dict[str, Any]:
        tail: dict[str, Any] = {}
        if query.include_counters:
            tail["counters"] = query_api_counters(summary)
        if summary.bookmark:
            tail["bookmarks"] = [summary.bookmark]
        if summary.notifications:
            tail["notifications"] = summary.notifications
        if summary.plan is not None:
            tail["queryPlan"] = query_api_plan(summary.plan)
        if summary.profile is not None:
            tail["profiledQueryPlan"] = query_api_plan(summary.profile)
        tail.update(queryType=summary.query_type, resultAvailableAfter=available, resultConsumedAfter=consumed)
        return tail


def _members(values: dict[str, Any], *, first: bool) -> bytes:
    """`"k":v,...` for the rest of a JSON object (with its opening brace if `first`)."""
    members = jv.dumps(values)[1:-1]
    if first:
        return b"{" + members
    return b"," + members if members else b""


def _iso_expiry(seconds: float) -> str:
    expiry = _dt.datetime.now(_dt.timezone.utc) + _dt.timedelta(seconds=seconds)
    return expiry.strftime("%Y-%m-%dT%H:%M:%SZ")
