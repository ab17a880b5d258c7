"""`GET /describe` and `GET /db/{db}/describe[?types=A,B]`: describe() as plain text, for agents
whose tool is a URL fetch. The text is the one `CALL describe()` answers (the same session,
planner and cache); errors come back as Neo4j error bodies, like the other endpoints'."""

from __future__ import annotations

from aiohttp import web

from proxy.front_ends import describe_text
from proxy.http.api import HttpApi


class DescribeEndpoint(HttpApi):
    async def describe(self, request: web.Request) -> web.Response:
        session = await self.logon(request)
        types = [name.strip() for value in request.query.getall("types", [])
                 for name in value.split(",") if name.strip()]
        text = await describe_text(session, request.match_info.get("db"), types)
        return web.Response(text=text, content_type="text/plain", charset="utf-8")
