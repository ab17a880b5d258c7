"""What both HTTP APIs share: a `Session` logged on per request, and open transactions."""

from __future__ import annotations

from collections.abc import Callable

from aiohttp import web

from proxy.http.auth import AuthCache
from proxy.http.transactions import OpenTransaction, TransactionRegistry
from proxy.session import Session


class HttpApi:
    """Base of the Query API and the transactional endpoint handlers."""

    def __init__(self, sessions: Callable[[], Session], auth: AuthCache, transactions: TransactionRegistry):
        self._sessions = sessions
        self._auth = auth
        self.transactions = transactions

    async def logon(self, request: web.Request) -> Session:
        """A new session, logged on with the request's `Authorization` header (else HttpError 401)."""
        session = self._sessions()
        await self._auth.logon(session, request.headers.get("Authorization"))
        return session

    async def claim(self, request: web.Request) -> OpenTransaction:
        """The open transaction the request's path names, if it belongs to the request's user."""
        session = await self.logon(request)
        return self.transactions.claim(request.match_info["tx"], request.match_info["db"], session.user)
