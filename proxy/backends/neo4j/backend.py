"""The Neo4j backend: Cypher goes to a Neo4j server, cluster or Aura over the proxy's own Bolt client.

Each client's queries run upstream under the client's own credentials, on pooled connections
logged in with them (`pool.py`), so the upstream decides who may read what and the proxy stores
no passwords. A `neo4j://` upstream is routed as the drivers route it (`routing.py`); `+s` and
`+ssc` schemes use TLS (verified, or self-signed accepted).

Nothing here decodes records unless someone asks: a pass-through query's RECORD messages reach
the client as the bytes the upstream sent (`relay.py`). The official driver is not used at all:
discovery (the default database, the database list) is a query like any other.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from core.backend import Backend, Summary, Transaction, TxConfig
from proxy.backends.neo4j.client import Address, UpstreamConnection
from proxy.backends.neo4j.dialect import NEO4J
from proxy.backends.neo4j.errors import DATABASE_UNAVAILABLE, UpstreamLost
from proxy.backends.neo4j.pool import Credentials, Pool
from proxy.backends.neo4j.relay import FIRST_PULL, UpstreamResult, read_together
from proxy.backends.neo4j.routing import Router
from proxy.bolt import messages as m
from core.errors import CypherError

log = logging.getLogger(__name__)

_SECURITY = "Neo.ClientError.Security."
_SCHEMES = {"bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc"}
#: The encoding asked for when the client reads none (HTTP, the proxy's own queries).
DEFAULT_ENCODING = "bolt5"
#: Seconds a transaction with a timeout may wait for a silent upstream past that timeout (Neo4j
#: would have ended it by then): then the upstream counts as lost, and the client is told so.
STALL_GRACE = 5.0
ROUTING_ATTEMPTS = 3         # servers tried for one request when a cluster member is unreachable


def _ssl_context(scheme: str) -> ssl.SSLContext | None:
    if scheme.endswith("+s"):
        return ssl.create_default_context()
    if scheme.endswith("+ssc"):
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    return None


def request_extra(config: TxConfig, version: tuple[int, int]) -> dict[str, Any]:
    """RUN / BEGIN `extra` for what the client asked of its transaction."""
    extra: dict[str, Any] = {}
    if config.bookmarks:
        extra["bookmarks"] = list(config.bookmarks)
    if config.timeout is not None:
        extra["tx_timeout"] = int(config.timeout * 1000)
    if config.metadata:
        extra["tx_metadata"] = config.metadata
    if config.mode == "r":
        extra["mode"] = "r"
    if config.database:
        extra["db"] = config.database
    if config.imp_user:
        extra["imp_user"] = config.imp_user
    if config.notifications and version >= (5, 2):
        for key, value in config.notifications.items():      # 5.5 renamed categories to classifications
            if key.startswith("notifications_disabled_"):
                key = "notifications_disabled_" + ("classifications" if version >= (5, 5) else "categories")
            extra[key] = value
    return extra


class _AutoCommit:
    """The `Link` of an auto-commit result: its connection goes back to the pool when it ends."""

    def __init__(self, pool: Pool, connection: UpstreamConnection):
        self._pool = pool
        self.connection = connection

    async def claim(self, result: UpstreamResult) -> None:
        pass

    async def done(self, result: UpstreamResult) -> None:
        await self._pool.release(self.connection)

    async def abandon(self, result: UpstreamResult) -> None:
        """RESET upstream: Neo4j rolls back an auto-commit query not read to its end."""
        try:
            await self.connection.reset()
        except BaseException:
            self._pool.discard(self.connection)
            raise
        await self._pool.release(self.connection)


class UpstreamTransaction(Transaction):
    """An explicit transaction on one upstream connection; its results share it (`Link`).

    Its BEGIN is queued on the connection, not sent (`UpstreamConnection.begin`): it leaves with
    the transaction's first request (RUN and its PULL, or COMMIT), in the same write, and the
    connection reads its reply before that request's, whoever reads. A client that sends BEGIN,
    RUN and PULL in one write (the Python driver's `execute_query`) then costs the upstream one
    round trip, not two. A refused BEGIN is raised by `begun` and by every later use."""

    def __init__(self, backend: "Neo4jBackend", connection: UpstreamConnection, database: str):
        self.connection = connection
        self._backend = backend
        self._database = database
        self._results: list[UpstreamResult] = []
        self._streaming: UpstreamResult | None = None     # the result whose PULL reply is arriving

    async def claim(self, result: UpstreamResult | None) -> None:
        if self._streaming is not None and self._streaming is not result:
            await self._streaming.park()
        self._streaming = result

    async def done(self, result: UpstreamResult) -> None:
        if result in self._results:
            self._results.remove(result)
        if self._streaming is result:
            self._streaming = None

    async def abandon(self, result: UpstreamResult) -> None:
        """Forget it: the transaction's ROLLBACK follows, and its RESET reads what is still due."""
        await self.done(result)

    async def begun(self) -> None:
        try:
            await self.connection.begun()
        except CypherError as error:
            self._backend.note_failure(error, self.connection)
            raise

    async def run(self, query: str, params: dict[str, Any]) -> UpstreamResult:
        await self.claim(None)
        meta = await self._backend.start_query(self.connection, query, params, {})
        result = UpstreamResult(self, list(meta.get("fields") or ()), self._database, qid=meta.get("qid", -1),
                                on_update=self._mark_written)
        self._results.append(result)
        self._streaming = result
        return result

    async def read_together(self, queries: list[tuple[str, dict[str, Any]]]) -> list[list[list[Any]]]:
        await self.claim(None)
        answers, wrote = await read_together(self.connection, queries, {})
        self.wrote = self.wrote or wrote
        return answers

    def _mark_written(self) -> None:
        self.wrote = True

    async def commit(self) -> str | None:
        try:
            for result in list(self._results):     # COMMIT needs every result read
                await result.consume()
            self.connection.send(m.COMMIT)
            await self.connection.flush()
            return (await self.connection.response()).get("bookmark")
        finally:
            await self._end()

    async def rollback(self) -> None:
        """RESET rolls back as ROLLBACK does, and also clears a failed connection and any replies
        still due (BEGIN's, if no request followed it; those of unread results). A refused BEGIN
        began nothing: the pool clears what its FAILURE left."""
        try:
            for result in self._results:
                result.end_with(Summary(database=self._database))
            if not self.connection.broken and self.connection.begin_refusal is None:
                await self.connection.reset()
        finally:
            await self._end()

    async def _end(self) -> None:
        self._results.clear()
        await self._backend.pool.release(self.connection)
        if self.wrote:
            self._backend.note_write(self._database)


class Neo4jBackend(Backend):
    """Forwards every query to the Neo4j at `uri` (bolt://, neo4j://, bolt+s://, neo4j+ssc:// ...)."""

    dialect = NEO4J

    def __init__(self, uri: str, *, state_ttl: float | None = 60.0, connect_timeout: float = 30.0,
                 stall_grace: float = STALL_GRACE):
        super().__init__()
        parts = urlsplit(uri)
        if parts.scheme not in _SCHEMES or not parts.hostname:
            raise ValueError(f"not a Neo4j URI: {uri!r} (bolt://host:port or neo4j://host:port, +s / +ssc for TLS)")
        self.uri = uri
        self.state_ttl = state_ttl          # other clients may write to the upstream
        self.default_database = "neo4j"
        self._default_known = False
        self._stall_grace = stall_grace
        self._seed = Address(parts.hostname, parts.port or 7687)
        routing = {"address": str(self._seed), **dict(parse_qsl(parts.query))} \
            if parts.scheme.startswith("neo4j") else None
        self.pool = Pool(ssl_context=_ssl_context(parts.scheme), routing=routing, connect_timeout=connect_timeout)
        self._router = Router(self.pool, self._seed, routing) if routing is not None else None

    async def start(self) -> None:
        """Nothing to open: connections are made per client credentials, when a client logs in."""

    async def stop(self) -> None:
        self.pool.close()

    async def authenticate(self, auth: dict[str, Any]) -> Credentials:
        credentials = Credentials.of(auth)
        connection = await self._acquire(TxConfig(database="system", mode="r"), credentials, check_login=True)
        await self.pool.release(connection)
        await self._discover_default_database(credentials)
        return credentials

    # ---- queries -------------------------------------------------------------------------

    async def run(self, query: str, params: dict[str, Any], config: TxConfig,
                  credentials: Credentials) -> UpstreamResult:
        connection = await self._acquire(config, credentials)
        async with self._given_back_on_failure(connection):
            meta = await self.start_query(connection, query, params, request_extra(config, connection.version),
                                          pull=config.pull_with_run)
        database = config.database or self.default_database
        return UpstreamResult(_AutoCommit(self.pool, connection), list(meta.get("fields") or ()), database,
                              pulling=config.pull_with_run, on_update=lambda: self.note_write(database))

    async def read_together(self, queries: list[tuple[str, dict[str, Any]]], config: TxConfig,
                            credentials: Credentials) -> list[list[list[Any]]]:
        """All the queries on one connection, sent in one write (`relay.read_together`)."""
        connection = await self._acquire(config, credentials)
        async with self._given_back_on_failure(connection):
            answers, wrote = await read_together(connection, queries, request_extra(config, connection.version))
        await self.pool.release(connection)
        if wrote:
            self.note_write(config.database or self.default_database)
        return answers

    @contextlib.asynccontextmanager
    async def _given_back_on_failure(self, connection: UpstreamConnection):
        """A request that fails gives its connection back: to the pool after a FAILURE (the
        upstream still speaks), thrown away after anything else (it may be mid-message)."""
        try:
            yield
        except CypherError as error:
            self.note_failure(error, connection)
            await self.pool.release(connection)
            raise
        except BaseException:
            self.pool.discard(connection)
            raise

    async def start_query(self, connection: UpstreamConnection, query: str, params: dict[str, Any],
                          extra: dict[str, Any], *, pull: bool = True) -> dict[str, Any]:
        """RUN, with the first PULL behind it if `pull`; the RUN's SUCCESS metadata."""
        connection.send(m.RUN, query, params, extra)
        if pull:
            connection.send(m.PULL, {"n": FIRST_PULL})
        await connection.flush()
        try:
            return await connection.response()
        except CypherError:
            if connection.failed and not connection.broken:
                await connection.reset()     # the PULL behind it was IGNORED; clear both
            raise

    async def begin(self, config: TxConfig, credentials: Credentials) -> UpstreamTransaction:
        """A transaction whose BEGIN goes upstream with its first request (`UpstreamTransaction`).
        The connection is chosen now: a routed upstream's writer or reader, by `config.mode`."""
        connection = await self._acquire(config, credentials)
        async with self._given_back_on_failure(connection):
            connection.begin(request_extra(config, connection.version))
        return UpstreamTransaction(self, connection, config.database or self.default_database)

    async def _acquire(self, config: TxConfig, credentials: Credentials, *,
                       check_login: bool = False) -> UpstreamConnection:
        connection = await self._connect(config, credentials, check_login)
        connection.database = config.database
        if config.timeout:
            connection.deadline = asyncio.get_running_loop().time() + config.timeout + self._stall_grace
        return connection

    async def _connect(self, config: TxConfig, credentials: Credentials, check_login: bool) -> UpstreamConnection:
        encoding = config.encoding or DEFAULT_ENCODING
        if self._router is None:
            return await self.pool.acquire(self._seed, credentials, encoding, check_login=check_login)
        for attempt in range(ROUTING_ATTEMPTS):
            address = await self._router.address(config.database, config.imp_user, config.mode, credentials,
                                                 config.bookmarks, encoding)
            try:
                return await self.pool.acquire(address, credentials, encoding, check_login=check_login)
            except CypherError as error:
                if error.code != DATABASE_UNAVAILABLE or attempt == ROUTING_ATTEMPTS - 1:
                    raise
                log.info("upstream %s unreachable (%s); routing around it", address, error.message)
                self._router.forget(address)
        raise AssertionError("unreachable")

    def note_failure(self, error: CypherError, connection: UpstreamConnection) -> None:
        """A server lost at the start of a query leaves the routing tables (a writer refusing
        writes left its table as the connection read the refusal)."""
        if self._router is not None and isinstance(error, UpstreamLost):
            self._router.forget(connection.address)

    # ---- what the proxy asks the upstream itself ---------------------------------------------

    async def databases(self, credentials: Credentials) -> list[str]:
        try:
            names = await self._system_column("SHOW DATABASES YIELD name", credentials)
        except CypherError as error:
            log.debug("SHOW DATABASES on %s failed (%s); offering the default database only", self.uri, error)
            names = []
        # A cluster lists each database once per server hosting it.
        return list(dict.fromkeys(names)) or [self.default_database]

    async def _system_column(self, query: str, credentials: Credentials) -> list[Any]:
        result = await self.run(query, {}, TxConfig(database="system", mode="r"), credentials)
        rows = await result.fetch(-1)
        await result.consume()
        return [row[0] for row in rows]

    async def _discover_default_database(self, credentials: Credentials) -> None:
        """Learn the upstream's default database once, as soon as some login is allowed to ask."""
        if self._default_known:
            return
        try:
            names = await self._system_column("SHOW DEFAULT DATABASE YIELD name", credentials)
        except CypherError as error:
            log.info("Could not ask %s for its default database (%s); assuming %r",
                     self.uri, error, self.default_database)
            # Ask again after a later login only if this attempt was refused or could not connect.
            self._default_known = error.code != DATABASE_UNAVAILABLE and not error.code.startswith(_SECURITY)
            return
        self._default_known = True
        if names:
            self.default_database = names[0]
