"""Neo4j's transactional HTTP endpoint: `/db/{db}/tx`, `/tx/commit`, `/tx/{id}`, `/tx/{id}/commit`.

Deprecated by Neo4j in favour of the Query API, but still what many scripts and older
tools post to. Each request carries a list of statements; the response lists one result
per statement (`row`/`meta` and/or `graph`, optional `stats`) and an `errors` list.
As in Neo4j the status is 200 (201 for a new transaction) whatever the statements do;
the first failing statement stops the request and rolls the whole transaction back.
"""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from core.backend import TxConfig
from core.errors import CypherError, database_error
from proxy import json_values as jv
from proxy.front_ends import consume_quietly
from proxy.http.api import HttpApi
from proxy.http.body import JSON, JsonBody, error_entries, read_json, write_rows
from proxy.http.summary import legacy_stats
from proxy.http.transactions import OpenTransaction
from proxy.session import Session

_CONTENTS = ("row", "graph")


@dataclass
class Statement:
    text: str
    parameters: dict[str, Any] = field(default_factory=dict)
    contents: tuple[str, ...] = ("row",)
    include_stats: bool = False


def _statement(item: Any, index: int) -> Statement:
    if not isinstance(item, dict) or not isinstance(item.get("statement"), str):
        raise jv.invalid_format(f"Statement {index} must be an object with a 'statement' string, "
                                f"got {item!r:.100}")
    parameters = item.get("parameters") or {}
    contents = item.get("resultDataContents") or ["row"]
    stats = item.get("includeStats", False)
    if not isinstance(parameters, dict):
        raise jv.invalid_format(f"'parameters' of statement {index} must be a JSON object")
    if not isinstance(contents, list) or not contents or \
            not all(isinstance(c, str) and c.lower() in _CONTENTS for c in contents):
        raise jv.invalid_format(f"'resultDataContents' of statement {index} must list \"row\" and/or "
                                f"\"graph\", got {contents!r:.100}")
    if not isinstance(stats, bool):
        raise jv.invalid_format(f"'includeStats' of statement {index} must be true or false")
    return Statement(item["statement"], parameters, tuple(c.lower() for c in contents), stats)


def parse_statements(body: Any) -> list[Statement]:
    """`{"statements": [{"statement", "parameters", "resultDataContents", "includeStats"}]}`."""
    if body is None:
        return []
    statements = body.get("statements", []) if isinstance(body, dict) else None
    if not isinstance(statements, list):
        raise jv.invalid_format("The request body must be {\"statements\": [{\"statement\": \"...\"}, ...]}.")
    return [_statement(item, i) for i, item in enumerate(statements)]


def _row_encoder(statement: Statement) -> Callable[[list[list[Any]]], bytes]:
    want_row, want_graph = "row" in statement.contents, "graph" in statement.contents

    def encode(rows: list[list[Any]]) -> bytes:
        items = []
        for row in rows:
            item: dict[str, Any] = {}
            if want_row:
                item["row"] = [jv.row_value(value) for value in row]
                item["meta"] = [jv.meta(value) for value in row]
            if want_graph:
                item["graph"] = jv.graph(row)
            items.append(item)
        return jv.dumps(items)[1:-1]
    return encode


@dataclass
class _Outcome:
    """What running a request's statements left behind."""

    error: CypherError | None = None
    bookmark: str | None = None
    notifications: list[dict[str, Any]] = field(default_factory=list)


class TransactionalEndpoint(HttpApi):
    """The handlers of the `/db/{db}/tx...` routes."""

    async def commit_now(self, request: web.Request) -> web.StreamResponse:
        """POST /db/{db}/tx/commit: the statements in one transaction, committed at once."""
        session = await self.logon(request)
        try:
            statements = parse_statements(await read_json(request))
        except CypherError as exc:
            return _errors_only(exc)
        config = _tx_config(request)
        out = JsonBody(request, 200)
        if len(statements) == 1:          # one statement: auto-commit, as a Bolt RUN would
            outcome = await self._run(out, session, statements, config)
        else:
            await session.begin(config)
            try:
                outcome = await self._run(out, session, statements)
            except BaseException:
                await session.reset()
                raise
            await _commit_unless_failed(session, outcome)
        return await self._close(out, outcome, last_bookmarks=outcome.error is None)

    async def begin(self, request: web.Request) -> web.StreamResponse:
        """POST /db/{db}/tx: open a transaction, run the statements sent with it."""
        session = await self.logon(request)
        try:
            statements = parse_statements(await read_json(request))
        except CypherError as exc:
            return _errors_only(exc)
        tx = await self.transactions.begin(session, _tx_config(request))
        async with self.transactions.use(tx):
            out = JsonBody(request, 201, headers={"Location": _tx_url(request, tx)})
            return await self._in_transaction(request, out, tx, statements, commit=False)

    async def run(self, request: web.Request) -> web.StreamResponse:
        """POST /db/{db}/tx/{id}: more statements (none: keep the transaction alive)."""
        return await self._continue(request, commit=False)

    async def commit(self, request: web.Request) -> web.StreamResponse:
        """POST /db/{db}/tx/{id}/commit: last statements (optional), then commit."""
        return await self._continue(request, commit=True)

    async def rollback(self, request: web.Request) -> web.StreamResponse:
        """DELETE /db/{db}/tx/{id}."""
        tx = await self.claim(request)
        async with self.transactions.use(tx):
            await self.transactions.rollback(tx)
        return web.Response(body=b'{"results":[],"errors":[]}', content_type=JSON)

    # ---- steps ----------------------------------------------------------------------------

    async def _continue(self, request: web.Request, *, commit: bool) -> web.StreamResponse:
        tx = await self.claim(request)
        async with self.transactions.use(tx):
            try:
                statements = parse_statements(await read_json(request))
            except CypherError as exc:
                await self.transactions.rollback(tx)
                return _errors_only(exc)
            return await self._in_transaction(request, JsonBody(request, 200), tx, statements, commit=commit)

    async def _in_transaction(self, request: web.Request, out: JsonBody, tx: OpenTransaction,
                              statements: list[Statement], *, commit: bool) -> web.StreamResponse:
        try:
            outcome = await self._run(out, tx.session, statements)
        except Exception:
            await self.transactions.rollback(tx)
            raise
        if outcome.error is not None:
            await self.transactions.rollback(tx)
            return await self._close(out, outcome)
        if commit:
            try:
                outcome.bookmark = await self.transactions.commit(tx)
            except CypherError as exc:
                outcome.error = exc
            return await self._close(out, outcome, last_bookmarks=outcome.error is None)
        expires = email.utils.formatdate(time.time() + self.transactions.idle_timeout, usegmt=True)
        return await self._close(out, outcome, extra={"commit": f"{_tx_url(request, tx)}/commit",
                                                      "transaction": {"expires": expires}})

    async def _run(self, out: JsonBody, session: Session, statements: list[Statement],
                   config: TxConfig | None = None) -> _Outcome:
        """Write `{"results":[` and one result per statement, up to the first error."""
        outcome = _Outcome()
        await out.write(b'{"results":[')
        for i, statement in enumerate(statements):
            try:
                result = await session.run(statement.text, statement.parameters, config)
            except CypherError as exc:
                outcome.error = exc
                break
            try:
                head = b'{"columns":' + jv.dumps(result.keys) + b',"data":['
                await out.write(head if i == 0 else b"," + head)
                await write_rows(result, out, _row_encoder(statement))
                summary = await result.consume()
            except (CypherError, jv.UnsupportedValue) as exc:
                outcome.error = exc if isinstance(exc, CypherError) else database_error(
                    f"The result holds a value JSON cannot carry: {exc}")
                await out.write(b"]}")
                break
            finally:
                await consume_quietly(result)
            await out.write(b"]" + (b',"stats":' + jv.dumps(legacy_stats(summary))
                                    if statement.include_stats else b"") + b"}")
            outcome.bookmark = summary.bookmark
            outcome.notifications += summary.notifications
        return outcome

    @staticmethod
    async def _close(out: JsonBody, outcome: _Outcome, *, last_bookmarks: bool = False,
                     extra: dict[str, Any] | None = None) -> web.StreamResponse:
        tail: dict[str, Any] = {"errors": error_entries([outcome.error] if outcome.error else [])}
        if outcome.notifications:
            tail["notifications"] = outcome.notifications
        if last_bookmarks and outcome.bookmark:
            tail["lastBookmarks"] = [outcome.bookmark]
        tail.update(extra or {})
        await out.write(b"]," + jv.dumps(tail)[1:])
        return await out.finish()


async def _commit_unless_failed(session: Session, outcome: _Outcome) -> None:
    """End the transaction `_run` ran in: commit, or roll back if a statement failed."""
    if outcome.error is not None:
        await session.reset()
        return
    try:
        outcome.bookmark = await session.commit()
    except CypherError as exc:
        outcome.error = exc


def _tx_url(request: web.Request, tx: OpenTransaction) -> str:
    return f"{request.scheme}://{request.host}/db/{request.match_info['db']}/tx/{tx.id}"


def _tx_config(request: web.Request) -> TxConfig:
    """The database from the path; `access-mode: READ` makes a read transaction, as in Neo4j."""
    mode = "r" if request.headers.get("access-mode", "").upper() == "READ" else "w"
    return TxConfig(database=request.match_info["db"], mode=mode)


def _errors_only(error: CypherError) -> web.Response:
    """A request that ran nothing: 200 with the error, as Neo4j answers a malformed body."""
    return web.Response(content_type=JSON,
                        body=jv.dumps({"results": [], "errors": error_entries([error])}))
