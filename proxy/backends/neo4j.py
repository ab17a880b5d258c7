"""The Neo4j backend: Cypher goes to a Neo4j server, cluster or Aura through the official async driver.

The proxy holds one driver with no credentials of its own. Each client's auth token is passed
as session-level auth (Bolt 5.1+ re-authentication), so the upstream decides who may read
what and the proxy stores no passwords. Records are pulled lazily, in the driver's
`fetch_size` batches; a record of plain values (the common case) is relayed as the driver's
own tuple, and only graph entities are converted to the proxy's value model (`proxy.values`).

Auto-commit queries reuse idle driver sessions per (credentials, database, mode,
impersonated user) instead of opening one per query: a session is reused only when the
bookmarks the client sent are among the session's own last bookmarks, so causal chaining holds.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

from neo4j import (
    READ_ACCESS,
    WRITE_ACCESS,
    AsyncGraphDatabase,
    AsyncResult,
    AsyncSession,
    AsyncTransaction,
    Auth,
    Bookmarks,
    Query,
    ResultSummary,
    graph,
)
from neo4j.exceptions import (
    DriverError,
    Neo4jError,
    ResultConsumedError,
    ServiceUnavailable,
    SessionExpired,
)

from core import values
from core.backend import (
    STAT_KEYS,
    Backend,
    Result,
    Summary,
    Transaction,
    TxConfig,
)
from core.errors import CypherError

log = logging.getLogger(__name__)

DATABASE_UNAVAILABLE = "Neo.TransientError.General.DatabaseUnavailable"
_SECURITY = "Neo.ClientError.Security."
_UNKNOWN_GQL_STATUS = "50N42"      # what the driver fills in when the server sent no GQLSTATUS
_COUNTER_ATTRIBUTES = {key: key.replace("-", "_") for key in STAT_KEYS}
_PLAIN = frozenset({type(None), bool, int, float, str, bytes, bytearray})
IDLE_SESSIONS = 8            # idle auto-commit sessions kept per session key
SESSION_KEYS = 256           # session keys (credentials x database x mode x user) kept at most


# --- errors ---------------------------------------------------------------------------------

def to_cypher_error(error: Exception, uri: str) -> CypherError:
    """The `CypherError` a client sees for a driver exception: the upstream's own code and message."""
    if isinstance(error, Neo4jError):
        return _from_neo4j_error(error)
    if isinstance(error.__cause__, Neo4jError):     # e.g. "Transaction failed" wrapping the statement's error
        return _from_neo4j_error(error.__cause__)
    if isinstance(error, (ServiceUnavailable, SessionExpired)):
        return CypherError(DATABASE_UNAVAILABLE, f"Cannot reach the upstream Neo4j at {uri}: {error}")
    return CypherError(DATABASE_UNAVAILABLE, f"The connection to the upstream Neo4j at {uri} failed: {error}")


def _from_neo4j_error(error: Neo4jError) -> CypherError:
    code = error.code or "Neo.DatabaseError.General.UnknownError"
    message = error.message or str(error)
    with warnings.catch_warnings():                 # the driver marks the GQL accessors as a preview
        warnings.simplefilter("ignore")
        status, description = error.gql_status, error.gql_status_description
    if status == _UNKNOWN_GQL_STATUS:               # a pre-5.7 server: let CypherError derive them from the code
        return CypherError(code, message)
    return CypherError(code, message, gql_status=status, description=description.removesuffix(f". {message}"))


@contextlib.contextmanager
def upstream_errors(uri: str) -> Iterator[None]:
    """Re-raise driver exceptions raised inside the block as `CypherError`s."""
    try:
        yield
    except (Neo4jError, DriverError) as error:
        raise to_cypher_error(error, uri) from error


async def _close_quietly(session: AsyncSession) -> None:
    with contextlib.suppress(Neo4jError, DriverError):
        await session.close()


# --- values and summaries -------------------------------------------------------------------

def to_proxy_row(record) -> list[Any]:
    """A driver record as a row of proxy values (plain values are taken as they are)."""
    if _PLAIN.issuperset(map(type, record)):
        return list(record)
    return [to_proxy_value(value) for value in record]


def to_proxy_value(value: Any) -> Any:
    """A driver value in the proxy's value model.

    Graph entities become `proxy.values` dataclasses; temporal and spatial values are
    already the model's types and pass through, as do scalars. Lists and maps recurse.
    """
    if type(value) in _PLAIN:
        return value
    if isinstance(value, list):
        return [to_proxy_value(item) for item in value]
    if isinstance(value, dict):
        return {key: to_proxy_value(item) for key, item in value.items()}
    if isinstance(value, graph.Node):
        return _node(value)
    if isinstance(value, graph.Relationship):
        return _relationship(value)
    if isinstance(value, graph.Path):
        return values.Path([_node(n) for n in value.nodes], [_relationship(r) for r in value.relationships])
    return value


# `Entity.id` warns on every read that it is deprecated, but Bolt clients still get the legacy id:
# read the driver's `_id` instead.
def _node(node: graph.Node) -> values.Node:
    # The driver keeps labels as a frozenset: sort them so the proxy's output is deterministic.
    return values.Node(node._id, sorted(node.labels), dict(node.items()), node.element_id)


def _relationship(rel: graph.Relationship) -> values.Relationship:
    start, end = rel.start_node, rel.end_node
    return values.Relationship(rel._id, start._id, end._id, rel.type, dict(rel.items()), rel.element_id,
                               start.element_id, end.element_id)


def to_summary(summary: ResultSummary, database: str, bookmark: str | None = None) -> Summary:
    """The proxy's `Summary` of a driver `ResultSummary`; `database` is used when the server named none."""
    stats = {key: count for key, attribute in _COUNTER_ATTRIBUTES.items()
             if (count := getattr(summary.counters, attribute))}
    return Summary(
        database=summary.database or database,
        query_type=summary.query_type or "r",
        stats=stats,
        bookmark=bookmark,
        plan=summary.plan,
        profile=summary.profile,
        notifications=list(summary.notifications or ()),
    )


async def _bookmark(session: AsyncSession) -> str | None:
    raw = (await session.last_bookmarks()).raw_values
    return min(raw) if raw else None


# --- results and transactions ---------------------------------------------------------------

class Neo4jResult(Result):
    """A driver result, pulled `n` records at a time.

    An auto-commit result holds its session and hands it to `release(session, bookmarks)` once
    consumed (bookmarks None: it failed, close it).
    """

    def __init__(self, result: AsyncResult, uri: str, database: str, session: AsyncSession | None = None,
                 on_update: Callable[[], None] | None = None,
                 release: Callable[[AsyncSession, frozenset | None], Any] | None = None):
        self.keys = list(result.keys())
        self._result = result
        self._uri = uri
        self._database = database
        self._session = session
        self._on_update = on_update       # called once if the summary shows the graph changed
        self._release = release
        self._summary: Summary | None = None
        self._error: CypherError | None = None

    async def fetch(self, n: int) -> list[list[Any]]:
        if self._error is not None:
            raise self._error
        if self._summary is not None:
            return []
        try:
            records = [record async for record in self._result] if n < 0 else await self._result.fetch(n)
        except (Neo4jError, DriverError) as error:
            self._error = to_cypher_error(error, self._uri)
            await self._close(None)
            raise self._error from error
        return [to_proxy_row(record) for record in records]

    async def consume(self) -> Summary:
        if self._error is not None:
            raise self._error
        if self._summary is None:
            bookmarks = None
            try:
                with upstream_errors(self._uri):
                    self._summary, bookmarks = await self._read_summary()
            except CypherError as error:
                self._error = error
                raise
            finally:
                await self._close(bookmarks)
        return self._summary

    async def _read_summary(self) -> tuple[Summary, frozenset | None]:
        try:
            summary = await self._result.consume()
        except ResultConsumedError:     # its transaction ended first: commit/rollback discard open results
            return Summary(database=self._database), None
        bookmarks = None
        if self._session is not None:
            bookmarks = frozenset((await self._session.last_bookmarks()).raw_values)
        converted = to_summary(summary, self._database, min(bookmarks) if bookmarks else None)
        if converted.contains_updates and self._on_update is not None:
            self._on_update()
        return converted, bookmarks

    async def _close(self, bookmarks: frozenset | None) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            if self._release is not None and bookmarks is not None:
                self._release(session, bookmarks)
            else:
                await _close_quietly(session)


class Neo4jTransaction(Transaction):
    """An explicit transaction in its own driver session."""

    def __init__(self, session: AsyncSession, tx: AsyncTransaction, uri: str, database: str,
                 on_end_after_write: Callable[[], None]):
        self._session = session
        self._tx = tx
        self._uri = uri
        self._database = database
        self._on_end_after_write = on_end_after_write

    async def run(self, query: str, params: dict[str, Any]) -> Result:
        with upstream_errors(self._uri):
            result = await self._tx.run(query, params)
        return Neo4jResult(result, self._uri, self._database, on_update=self._mark_written)

    def _mark_written(self) -> None:
        self.wrote = True

    async def commit(self) -> str | None:
        try:
            with upstream_errors(self._uri):
                await self._tx.commit()
                return await _bookmark(self._session)
        finally:
            await self._end()

    async def rollback(self) -> None:
        try:
            with upstream_errors(self._uri):
                await self._tx.rollback()
        finally:
            await self._end()

    async def _end(self) -> None:
        await _close_quietly(self._session)
        if self.wrote:
            self._on_end_after_write()


# --- the backend ----------------------------------------------------------------------------

class Neo4jBackend(Backend):
    """Forwards every query to the Neo4j at `uri` (bolt://, neo4j://, bolt+s://, neo4j+s:// ...)."""

    kind = "neo4j"

    def __init__(self, uri: str, *, state_ttl: float | None = 60.0):
        super().__init__()
        self.uri = uri
        self.state_ttl = state_ttl          # other clients may write to the upstream
        self.default_database = "neo4j"
        self._driver = None
        self._default_known = False
        self._idle: OrderedDict[tuple, list[tuple[AsyncSession, frozenset]]] = OrderedDict()

    async def start(self) -> None:
        if self._driver is None:
            self._driver = AsyncGraphDatabase.driver(self.uri, auth=None, user_agent="cypher-proxy")
            await self._discover_default_database(None)

    async def stop(self) -> None:
        if self._driver is not None:
            driver, self._driver = self._driver, None
            idle, self._idle = self._idle, OrderedDict()
            for sessions in idle.values():
                for session, _ in sessions:
                    await _close_quietly(session)
            await driver.close()

    async def authenticate(self, auth: dict[str, Any]) -> Auth:
        token = Auth(auth.get("scheme"), auth.get("principal"), auth.get("credentials"), auth.get("realm"),
                     **(auth.get("parameters") or {}))
        with upstream_errors(self.uri):
            async with self._driver.session(auth=token, database="system") as session:
                # The public `driver.verify_authentication()` turns the server's failure into False,
                # losing the code a client needs (Unauthorized vs TokenExpired vs CredentialsExpired).
                await session._verify_authentication()
        await self._discover_default_database(token)
        return token

    async def run(self, query: str, params: dict[str, Any], config: TxConfig, credentials: Any) -> Result:
        key = _session_key(config, credentials)
        session = self._idle_session(key, config.bookmarks) or self._session(config, credentials)
        try:
            with upstream_errors(self.uri):
                result = await session.run(Query(query, metadata=config.metadata, timeout=config.timeout)
                                           if config.metadata or config.timeout else query, params)
        except BaseException:
            await _close_quietly(session)
            raise
        database = config.database or self.default_database
        return Neo4jResult(result, self.uri, database, session, on_update=lambda: self.note_write(database),
                           release=lambda done, bookmarks: self._keep_idle(key, done, bookmarks))

    def _idle_session(self, key: tuple, bookmarks: tuple[str, ...]) -> AsyncSession | None:
        """An idle session for `key` that has seen every bookmark the client sent, if any."""
        sessions = self._idle.get(key)
        for i, (session, known) in enumerate(sessions or ()):
            if known.issuperset(bookmarks):
                del sessions[i]
                return session
        return None

    def _keep_idle(self, key: tuple, session: AsyncSession, bookmarks: frozenset) -> None:
        sessions = self._idle.setdefault(key, [])
        self._idle.move_to_end(key)
        if len(sessions) < IDLE_SESSIONS:
            sessions.append((session, bookmarks))
        while len(self._idle) > SESSION_KEYS:     # idle sessions hold no connection: just drop them
            self._idle.popitem(last=False)

    async def begin(self, config: TxConfig, credentials: Any) -> Transaction:
        session = self._session(config, credentials)
        try:
            with upstream_errors(self.uri):
                tx = await session.begin_transaction(metadata=config.metadata, timeout=config.timeout)
        except BaseException:
            await _close_quietly(session)
            raise
        database = config.database or self.default_database
        return Neo4jTransaction(session, tx, self.uri, database, lambda: self.note_write(database))

    async def databases(self, credentials: Any) -> list[str]:
        try:
            names = await self._system_column("SHOW DATABASES YIELD name", credentials)
        except (Neo4jError, DriverError) as error:
            log.debug("SHOW DATABASES on %s failed (%s); offering the default database only", self.uri, error)
            names = []
        # A cluster lists each database once per server hosting it.
        return list(dict.fromkeys(names)) or [self.default_database]

    def _session(self, config: TxConfig, credentials: Any) -> AsyncSession:
        return self._driver.session(
            database=config.database or None,
            bookmarks=Bookmarks.from_raw_values(config.bookmarks),
            default_access_mode=READ_ACCESS if config.mode == "r" else WRITE_ACCESS,
            impersonated_user=config.imp_user,
            auth=credentials,
        )

    async def _system_column(self, query: str, credentials: Auth | None) -> list[Any]:
        async with self._driver.session(database="system", auth=credentials,
                                        default_access_mode=READ_ACCESS) as session:
            result = await session.run(query)
            return [record[0] async for record in result]

    async def _discover_default_database(self, credentials: Auth | None) -> None:
        """Learn the upstream's default database once, as soon as some login is allowed to ask."""
        if self._default_known:
            return
        try:
            names = await self._system_column("SHOW DEFAULT DATABASE YIELD name", credentials)
        except (Neo4jError, DriverError) as error:
            log.info("Could not ask %s for its default database (%s); assuming %r",
                     self.uri, error, self.default_database)
            # Ask again after a later login only if this attempt was refused or could not connect.
            self._default_known = isinstance(error, Neo4jError) and not (error.code or "").startswith(_SECURITY)
            return
        self._default_known = True
        if names:
            self.default_database = names[0]


def _session_key(config: TxConfig, credentials: Auth | None) -> tuple:
    """Sessions are shared by queries with equal auth tokens, database, access mode and user."""
    auth = None if credentials is None else repr(sorted(vars(credentials).items()))
    return auth, config.database, config.mode, config.imp_user
