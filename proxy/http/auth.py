"""HTTP `Authorization` headers -> the Bolt auth token a `Session` logs on with.

Basic and bearer credentials go to the backend exactly as a Bolt LOGON would send them.
A successful check is remembered for a minute (Neo4j caches authentication the same
way), so a client sending one request per query does not pay an upstream round trip
for each; failures are never cached.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import time
from collections import OrderedDict
from typing import Any

from core.errors import CypherError, unauthorized
from proxy.http.body import HttpError, status_for
from proxy.session import Session

CACHE_TTL = 60.0          # seconds a successful check is reused
CACHE_SIZE = 256          # distinct credentials remembered


def _invalid_header() -> CypherError:
    return CypherError("Neo.ClientError.Request.InvalidFormat", "Invalid authentication header.")


def auth_token(header: str | None) -> dict[str, Any]:
    """`Basic base64(user:password)` or `Bearer token` as a Bolt auth token."""
    if not header:
        raise unauthorized("No authentication header supplied.")
    scheme, _, value = header.strip().partition(" ")
    value = value.strip()
    if scheme.lower() == "bearer" and value:
        return {"scheme": "bearer", "credentials": value}
    if scheme.lower() != "basic":
        raise _invalid_header()
    try:
        user, colon, password = base64.b64decode(value, validate=True).decode("utf-8").partition(":")
    except (binascii.Error, UnicodeDecodeError):
        raise _invalid_header() from None
    if not colon:
        raise _invalid_header()
    return {"scheme": "basic", "principal": user, "credentials": password}


class AuthCache:
    """Logs sessions on, reusing recent successful checks of the same credentials."""

    def __init__(self, ttl: float = CACHE_TTL, size: int = CACHE_SIZE):
        self._ttl = ttl
        self._size = size
        self._entries: OrderedDict[tuple, tuple[float, str | None, Any]] = OrderedDict()

    async def logon(self, session: Session, header: str | None, source: str | None = None) -> None:
        """Authenticate `session` with an `Authorization` header (`source`: the client's address,
        for login throttling); HttpError 401 if that fails."""
        try:
            await self._logon(session, auth_token(header), source)
        except CypherError as exc:       # a database that cannot be reached is not a 401
            raise HttpError(401 if exc.classification == "ClientError" else status_for(exc), exc) from None

    async def _logon(self, session: Session, token: dict[str, Any], source: str | None) -> None:
        key = (token["scheme"], token.get("principal"),
               hashlib.sha256(str(token["credentials"]).encode()).digest())
        entry = self._entries.get(key)
        if entry is not None and entry[0] > time.monotonic():
            _, session.user, session.credentials = entry
            return
        await session.logon(token, source=source)
        self._entries[key] = (time.monotonic() + self._ttl, session.user, session.credentials)
        self._entries.move_to_end(key)
        while len(self._entries) > self._size:
            self._entries.popitem(last=False)
