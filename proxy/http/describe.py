"""`GET /describe` and `GET /db/{db}/describe[?types=A,B]`: describe() as plain text, for agents
whose tool is a URL fetch. The text is the one `CALL describe()` answers (the same session,
planner and cache); errors come back as Neo4j error bodies, like the other endpoints'."""

from __future__ import annotations

from aiohttp import web

from proxy.backends.base import TxConfig
from proxy.http.api import HttpApi
from proxy.session import Session

_QUERY = "CALL describe($options)"


async def describe_text(session: Session, database: str | None, types: list[str] | None) -> str:
    """describe()'s text (with `types`: their detail), read in a read transaction."""
    config = TxConfig(database=database, mode="r")
    result = await session.run(_QUERY, {"options": {"types": types or None}}, config)
    rows = await result.fetch(-1)
    await result.consume()
    return rows[0][0]


class DescribeEndpoint(HttpApi):
    async def describe(self, request: web.Request) -> web.Response:
        session = await self.logon(request)
        types = [name.strip() for value in request.query.getall("types", [])
                 for name in value.split(",") if name.strip()]
        text = await describe_text(session, request.match_info.get("db"), types)
        return web.Response(text=text, content_type="text/plain", charset="utf-8")
