"""One Bolt connection after the handshake: the server state machine over a `Session`.

Two tasks per connection. The reader frames messages and queues them; it sees a
RESET the moment it arrives, interrupts the work in progress (it cancels the processor
while that is inside a handler) and makes everything queued before the RESET answer
IGNORED (RESET "jumps the queue"). The processor takes messages in order, acts on the
session and writes the responses; it is the only writer.

Responses are coalesced: they collect in an output buffer that is written when no
pipelined request is waiting (RUN + PULL arrive together and leave as one write: one
system call where there were three) or when it passes `FLUSH_SIZE`. Results stream in
batches with `drain()` between writes, so a huge result never sits in the proxy's memory.

A BEGIN with a RUN pipelined behind it (queued when BEGIN is handled: sent in the same write, as
the Python driver's `execute_query` does) is answered after that RUN is handled: the backend may send BEGIN with the transaction's first
request, so BEGIN costs no round trip of its own (`Transaction.begun`), and its answer is only
known once the RUN has gone out. Answers are buffered, so BEGIN's is put ahead of the RUN's; a
refused BEGIN gets its FAILURE and the RUN is IGNORED, as the database did. Answering BEGIN at
once instead would be a guess: a client would see BEGIN's refusal (a bad bookmark, an unknown
database, a refused impersonation) as its RUN's, and `begin_transaction()` would not raise it.
"""

from __future__ import annotations

import asyncio
import enum
import itertools
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from core.backend import Result, TxConfig
from proxy.bolt import messages as m
from proxy.bolt.chunking import MessageTooLarge, chunk, read_message, skip_message
from proxy.bolt.capabilities import Capabilities
from proxy.bolt.failures import failure_metadata
from proxy.bolt.limits import BoltLimits, query_size, too_large
from core.errors import CypherError, DatabaseLost, database_error, protocol_error
from proxy.packstream import Packer, PackStreamError, record_encoding, unpack_message
from proxy.session import Session

log = logging.getLogger("proxy.bolt")

BATCH = 1000                 # records fetched from the backend at a time
FLUSH_SIZE = 1 << 16         # bytes of responses buffered before they are written and drained
QUEUE_LIMIT = 10_000         # pipelined messages buffered before the reader waits
CLOSE_TIMEOUT = 10.0         # seconds allowed for rolling back on close
DECODE_IN_THREAD = 1 << 20   # messages larger than this are decoded off the event loop

_connection_ids = itertools.count(1)


class _Requests(asyncio.Queue):
    """The framed requests `(signature, bytes)` waiting for the processor, with a look at the next
    one: a RUN with its PULL queued behind it may go to the backend with that PULL."""

    def next_signature(self) -> int | None:
        return self._queue[0][0] if self._queue else None     # (asyncio.Queue's own deque)


class State(enum.Enum):
    NEGOTIATION = "NEGOTIATION"          # handshake done, HELLO expected
    AUTHENTICATION = "AUTHENTICATION"    # 5.1+: LOGON expected
    READY = "READY"
    STREAMING = "STREAMING"
    TX_READY = "TX_READY"
    TX_STREAMING = "TX_STREAMING"
    FAILED = "FAILED"
    DEFUNCT = "DEFUNCT"


#: Requests each state accepts (GOODBYE is handled by the reader in every state).
#: COMMIT needs every stream of the transaction consumed first (server-state.adoc:
#: TX_STREAMING does not accept COMMIT); ROLLBACK is accepted with open streams.
_ACCEPTS = {
    State.NEGOTIATION: {m.HELLO},
    State.AUTHENTICATION: {m.LOGON, m.RESET},
    State.READY: {m.RUN, m.BEGIN, m.ROUTE, m.TELEMETRY, m.LOGOFF, m.RESET},
    State.STREAMING: {m.PULL, m.DISCARD, m.RESET},
    State.TX_READY: {m.RUN, m.COMMIT, m.ROLLBACK, m.RESET},
    State.TX_STREAMING: {m.RUN, m.PULL, m.DISCARD, m.ROLLBACK, m.RESET},
    State.FAILED: {m.RESET},          # everything else is IGNORED before it gets here
}
#: The state after a request succeeds, where the state and the request decide it (the driver's
#: `_STATE_TRANSITIONS`). The others decide in their handlers: HELLO (LOGON follows on 5.1+),
#: RESET (back to READY, or AUTHENTICATION if not logged in), PULL and DISCARD (the stream ends
#: when no result is left open); a failure goes to FAILED (`_fail`), closing to DEFUNCT.
_AFTER = {
    (State.AUTHENTICATION, m.LOGON): State.READY,
    (State.READY, m.LOGOFF): State.AUTHENTICATION,
    (State.READY, m.RUN): State.STREAMING,
    (State.TX_READY, m.RUN): State.TX_STREAMING,
    (State.TX_STREAMING, m.RUN): State.TX_STREAMING,
    (State.READY, m.BEGIN): State.TX_READY,
    (State.TX_READY, m.COMMIT): State.READY,
    (State.TX_READY, m.ROLLBACK): State.READY,
    (State.TX_STREAMING, m.ROLLBACK): State.READY,
}
#: Requests only some Bolt versions know: the capability each needs.
_NEEDS = {m.LOGON: "logon", m.LOGOFF: "logon", m.TELEMETRY: "telemetry"}


class ProtocolViolation(Exception):
    """A message the state machine cannot accept: FAILURE Request.Invalid, then close."""


@dataclass(slots=True)
class OpenResult:
    """A result the client has not finished pulling."""

    result: Result
    had_records: bool = False
    lookahead: list[list[Any]] = field(default_factory=list)


def _ms_since(start: float) -> int:
    return int((time.monotonic() - start) * 1000)


def _address(sockname: Any) -> str:
    host, port = sockname[0], sockname[1]
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class BoltConnection:
    """Serves one negotiated Bolt connection until GOODBYE, EOF or a protocol violation."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 session: Session, version: tuple[int, int], *, manifest: bool = False,
                 routing_address: str | None = None, limits: BoltLimits = BoltLimits(),
                 peer: str | None = None):
        self._reader = reader
        self._writer = writer
        self._session = session
        self._version = version
        self._capabilities = Capabilities.of(version)
        self._manifest = manifest
        self._routing_address = routing_address
        self._limits = limits
        self._peer = peer
        self._unauthenticated_since = time.monotonic()
        self._unauthenticated_bytes = 0
        self._packer = Packer(version)
        self._utc_patch = False
        self._encoding = record_encoding(version)
        self._notifications: dict[str, Any] | None = None     # HELLO's notification filters
        self.connection_id = f"bolt-{next(_connection_ids)}"
        self._state = State.NEGOTIATION
        self._queue = _Requests(QUEUE_LIMIT)
        self._pending_resets = 0       # > 0: the spec's INTERRUPTED state (queued messages IGNORED)
        self._processor: asyncio.Task | None = None
        self._busy = False             # the processor is inside a handler (a RESET may cancel it)
        self._interrupted = False      # ... and has been cancelled by one
        self._closing = False          # the connection is ending: the processor stops after its handler
        self._out: list[bytes] = []    # responses not written yet
        self._out_size = 0
        self._results: dict[int, OpenResult] = {}
        self._begin_due = False        # BEGIN's answer waits for the RUN queued behind it (`_begin`)
        self._last_qid = -1
        self._next_qid = 0
        self._handlers = {
            m.HELLO: self._hello, m.LOGON: self._logon, m.LOGOFF: self._logoff,
            m.RUN: self._run, m.BEGIN: self._begin, m.COMMIT: self._commit,
            m.ROLLBACK: self._rollback, m.PULL: self._pull, m.DISCARD: self._discard,
            m.ROUTE: self._route, m.TELEMETRY: self._telemetry, m.RESET: self._reset,
        }

    # ---- the two tasks -------------------------------------------------------------

    async def serve(self) -> None:
        """Run until the connection ends; never raises (only cancellation propagates)."""
        reader = asyncio.create_task(self._read_loop())
        processor = self._processor = asyncio.create_task(self._process_loop())
        try:
            await asyncio.wait({reader, processor}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._closing = True           # also ends a processor whose handler swallowed the cancellation
            tasks = (reader, processor)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for task in tasks:
                if not task.cancelled() and task.exception() is not None:
                    log.error("%s: connection task failed", self.connection_id,
                              exc_info=task.exception())
            await self._close()

    async def _read_loop(self) -> None:
        """Frame messages; RESET and GOODBYE interrupt the current work at once.

        Until the client has logged in, messages are read one at a time (each processed before
        the next is read), within `auth_timeout` and `max_unauthenticated_bytes` in all."""
        try:
            while True:
                if self._session.authenticated:
                    data = await self._read_authenticated()
                else:
                    data = await self._read_unauthenticated()
                    if data is None:
                        return
                if isinstance(data, CypherError):
                    await self._queue.put((None, data))
                    continue
                signature = data[1] if len(data) >= 2 and data[0] & 0xF0 == 0xB0 else None
                if signature == m.GOODBYE:
                    return
                if signature == m.RESET:
                    self._pending_resets += 1
                    self._interrupt()
                await self._queue.put((signature, data))
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass                          # the client went away

    async def _read_authenticated(self) -> bytes | CypherError:
        """The next message, or the FAILURE for one over `max_message_size` (read past, unkept)."""
        try:
            return await read_message(self._reader, self._limits.max_message_size)
        except MessageTooLarge as exc:
            size = await skip_message(self._reader, exc)
            log.warning("%s: skipped a message of %d bytes (--max-message-size %d)",
                        self.connection_id, size, self._limits.max_message_size)
            return too_large("message", size, self._limits.max_message_size, "--max-message-size",
                             "Send large data in several queries (UNWIND $rows with a few "
                             "thousand rows per query).")

    async def _read_unauthenticated(self) -> bytes | None:
        """The next message of a client that has not logged in yet; None: close the connection."""
        limits = self._limits
        try:                                          # (the event loop's clock is time.monotonic)
            async with asyncio.timeout_at(self._unauthenticated_since + limits.auth_timeout):
                await self._queue.join()
                if not self._session.authenticated:
                    budget = limits.max_unauthenticated_bytes - self._unauthenticated_bytes
                    data = await read_message(self._reader, budget)
        except TimeoutError:
            log.info("%s: %s did not log in within %g s; closing", self.connection_id, self._peer,
                     limits.auth_timeout)
            return None
        except MessageTooLarge:
            log.warning("%s: %s sent more than %d bytes before logging in; closing",
                        self.connection_id, self._peer, limits.max_unauthenticated_bytes)
            return None
        if self._session.authenticated:           # the message just processed was the login
            return await self._read_authenticated()
        self._unauthenticated_bytes += len(data)
        return data

    def _interrupt(self) -> None:
        """Cancel the handler in progress (a RESET arrived behind it)."""
        if self._busy and not self._interrupted:
            self._interrupted = True
            self._processor.cancel()

    async def _process_loop(self) -> None:
        """Handle queued messages in order until one of them ends the connection."""
        queue = self._queue
        task = asyncio.current_task()
        try:
            while True:
                if queue.empty():
                    await self._flush()
                signature, data = await queue.get()
                try:                                  # task_done: the login-time reader waits on it
                    if signature == m.RESET:
                        self._pending_resets -= 1
                    elif self._pending_resets:
                        self._send(m.IGNORED)
                        if self._begin_due:             # ... and the BEGIN waiting for this RUN
                            self._begin_due = False
                            self._send(m.IGNORED)
                        continue
                    if isinstance(data, CypherError):   # a message over the size limit, read past
                        self._fail(data)
                        continue
                    handle = self._handle_behind_begin if self._begin_due else self._handle
                    self._busy = True
                    try:
                        keep = await handle(signature, data)
                    except asyncio.CancelledError:
                        # Interrupted by a RESET behind it (which drops results), unless the
                        # connection itself is being closed.
                        if self._closing or not self._interrupted or task.uncancel():
                            raise
                        keep = True
                        self._send(m.IGNORED)
                    else:
                        # Some awaits swallow a cancellation that races with their result
                        # (asyncio.wait_for in 3.11): the handler then simply finished.
                        if self._interrupted:
                            task.uncancel()
                    finally:
                        self._busy = self._interrupted = False
                    if not keep or self._closing:
                        await self._flush()
                        return
                finally:
                    queue.task_done()
        except (ConnectionError, OSError):
            return

    # ---- dispatch --------------------------------------------------------------------

    async def _handle(self, signature: int | None, data: bytes) -> bool:
        """Act on one request and answer it; False means close the connection."""
        try:
            if self._state is State.FAILED and signature != m.RESET and signature in m.NAMES:
                self._send(m.IGNORED)
                return True
            fields = await self._decode(signature, data)
            before = self._state
            await self._handlers[signature](fields)
            self._state = _AFTER.get((before, signature), self._state)
            return True
        except ProtocolViolation as exc:
            log.info("%s: protocol violation: %s", self.connection_id, exc)
            self._fail(protocol_error(str(exc)))
            return False
        except DatabaseLost as exc:
            log.warning("%s: %s; closing the client's connection", self.connection_id, exc.message)
            return False
        except CypherError as exc:
            self._fail(exc)
            return signature not in (m.HELLO, m.LOGON)
        except PackStreamError as exc:
            log.warning("%s: cannot encode a response: %s", self.connection_id, exc)
            self._fail(database_error(f"The result holds a value Bolt cannot carry: {exc}"))
            return True
        except (ConnectionError, OSError):
            return False
        except Exception:
            log.exception("%s: %s failed", self.connection_id, m.name(signature or 0))
            self._fail(database_error("An unexpected error occurred in the proxy; "
                                      "see the proxy's log for details."))
            return signature not in (m.HELLO, m.LOGON)

    async def _handle_behind_begin(self, signature: int | None, data: bytes) -> bool:
        """Handle the RUN pipelined behind a BEGIN (`_begin`), then put BEGIN's answer ahead of
        the RUN's: SUCCESS, or BEGIN's refusal with the RUN's answer replaced by IGNORED."""
        self._begin_due = False
        mark = len(self._out)
        try:
            keep = await self._handle(signature, data)
            await self._session.begun()
        except asyncio.CancelledError:       # a RESET behind them: BEGIN IGNORED too (the RUN by the caller)
            self._unsend(mark)
            self._send(m.IGNORED)
            raise
        except DatabaseLost as exc:
            log.warning("%s: %s; closing the client's connection", self.connection_id, exc.message)
            return False
        except CypherError as refusal:
            self._unsend(mark)
            await self._drop_results()
            self._fail(refusal)
            self._send(m.IGNORED)
            return keep
        answer = chunk(self._packer.pack_message(m.SUCCESS, [self._begin_metadata()]))
        self._out.insert(mark, answer)
        self._out_size += len(answer)
        return keep

    async def _decode(self, signature: int | None, data: bytes) -> list[Any]:
        if signature not in self._handlers:
            raise ProtocolViolation(f"unknown message signature "
                                    f"{'(not a structure)' if signature is None else m.name(signature)}")
        if signature not in _ACCEPTS.get(self._state, ()) or \
                (signature in _NEEDS and not getattr(self._capabilities, _NEEDS[signature])):
            raise ProtocolViolation(f"{m.name(signature)} is not allowed in state {self._state.value} "
                                    f"(Bolt {self._version[0]}.{self._version[1]})")
        if signature == m.RUN and len(data) - query_size(data) > self._limits.max_parameter_size:
            raise too_large("query's parameters", len(data) - query_size(data),
                            self._limits.max_parameter_size, "--max-parameter-size",
                            "Send large data in batches (UNWIND $rows with a few thousand rows "
                            "per query).")
        try:
            if len(data) > DECODE_IN_THREAD:
                _, fields = await asyncio.to_thread(unpack_message, data, self._version, self._utc_patch)
            else:
                _, fields = unpack_message(data, self._version, self._utc_patch)
            m.check_fields(signature, fields)
        except (PackStreamError, CypherError) as exc:
            raise ProtocolViolation(f"malformed {m.name(signature)}: {exc}") from exc
        return fields

    def _send(self, signature: int, *fields: Any) -> None:
        self._buffer(chunk(self._packer.pack_message(signature, list(fields))))

    def _buffer(self, data: bytes) -> None:
        self._out.append(data)
        self._out_size += len(data)

    def _unsend(self, mark: int) -> None:
        """Drop the answers buffered since `len(self._out)` was `mark`."""
        del self._out[mark:]
        self._out_size = sum(map(len, self._out))

    async def _flush(self) -> None:
        """Write the buffered responses in one go and wait until the socket takes them."""
        if self._out:
            data = self._out[0] if len(self._out) == 1 else b"".join(self._out)
            self._out.clear()
            self._out_size = 0
            self._writer.write(data)
        await self._writer.drain()

    def _fail(self, error: CypherError) -> None:
        self._state = State.FAILED        # open results stay until the RESET that must follow
        self._send(m.FAILURE, failure_metadata(error, self._capabilities))

    # ---- connection setup ------------------------------------------------------------

    async def _hello(self, fields: list[Any]) -> None:
        extra = fields[0]
        if self._capabilities.utc_patch and "utc" in (extra.get("patch_bolt") or ()):
            self._utc_patch = True
            self._packer = Packer(self._version, utc_patch=True)
            self._encoding = record_encoding(self._version, True)
        self._notifications = m.notification_filters(extra)
        routing = extra.get("routing")
        if self._routing_address is None and isinstance(routing, dict) and routing.get("address"):
            self._routing_address = str(routing["address"])
        if not self._capabilities.logon:
            await self._session.logon(m.auth_token(extra), source=self._peer)
            self._state = State.READY
        else:
            self._state = State.AUTHENTICATION
        self._send(m.SUCCESS, m.hello_metadata(self._capabilities, self.connection_id,
                                               manifest=self._manifest,
                                               patches=["utc"] if self._utc_patch else []))

    async def _logon(self, fields: list[Any]) -> None:
        await self._session.logon(m.auth_token(fields[0]), source=self._peer)
        self._send(m.SUCCESS, {})

    async def _logoff(self, fields: list[Any]) -> None:
        await self._session.logoff()
        self._unauthenticated_since, self._unauthenticated_bytes = time.monotonic(), 0
        self._send(m.SUCCESS, {})

    async def _reset(self, fields: list[Any]) -> None:
        await self._release()
        self._state = State.READY if self._session.authenticated else State.AUTHENTICATION
        self._send(m.SUCCESS, {})

    async def _telemetry(self, fields: list[Any]) -> None:
        self._send(m.SUCCESS, {})

    async def _route(self, fields: list[Any]) -> None:
        database, _imp_user = m.route_database(fields[2])
        backend = self._session.backend
        database = database or backend.default_database
        # Names ignore case, as in Neo4j; the table names the database as asked (drivers key it so).
        if database.lower() != "system" and database.lower() not in {
                name.lower() for name in await backend.databases(self._session.credentials)}:
            raise CypherError("Neo.ClientError.Database.DatabaseNotFound",
                              f"Database does not exist. Database name: '{database}'.")
        address = self._routing_address or _address(self._writer.get_extra_info("sockname"))
        self._send(m.SUCCESS, m.routing_table(database, address))

    # ---- queries and transactions ----------------------------------------------------

    async def _run(self, fields: list[Any]) -> None:
        query, params, extra = fields
        start = time.monotonic()
        if self._state is State.READY:
            config = self._tx_config(extra)
            config.pull_with_run = self._queue.next_signature() == m.PULL
            result = await self._session.run(query, params, config)
            database = config.database or self._session.backend.default_database
            qid = -1
        else:
            result = await self._session.run(query, params)
            database = self._session.database
            qid, self._next_qid = self._next_qid, self._next_qid + 1
        self._results[qid] = OpenResult(result)
        self._last_qid = qid
        meta: dict[str, Any] = {"fields": list(result.keys), "t_first": _ms_since(start)}
        if qid >= 0:
            meta["qid"] = qid
        if self._capabilities.db_in_success:
            meta["db"] = database
        self._send(m.SUCCESS, meta)

    async def _begin(self, fields: list[Any]) -> None:
        """Open the transaction; answered now, or with the RUN pipelined behind it
        (`_handle_behind_begin`): the backend then sends BEGIN upstream with that RUN."""
        pipelined = self._queue.next_signature() == m.RUN
        await self._session.begin(self._tx_config(fields[0]), wait=not pipelined)
        self._next_qid = 0
        if pipelined:
            self._begin_due = True
        else:
            self._send(m.SUCCESS, self._begin_metadata())

    def _begin_metadata(self) -> dict[str, Any]:
        return {"db": self._session.database} if self._capabilities.db_in_success else {}

    def _tx_config(self, extra: dict[str, Any]) -> TxConfig:
        return m.tx_config(extra, notifications=self._notifications, encoding=self._encoding)

    async def _commit(self, fields: list[Any]) -> None:
        bookmark = await self._session.commit()
        self._send(m.SUCCESS, {"bookmark": bookmark} if bookmark else {})

    async def _rollback(self, fields: list[Any]) -> None:
        await self._drop_results()
        await self._session.rollback()
        self._send(m.SUCCESS, {})

    async def _pull(self, fields: list[Any]) -> None:
        await self._stream(fields[0], send=True)

    async def _discard(self, fields: list[Any]) -> None:
        await self._stream(fields[0], send=False)

    async def _stream(self, extra: dict[str, Any], *, send: bool) -> None:
        """PULL (send=True) or DISCARD up to n records of one open result."""
        n, qid = m.pull_args(extra)
        key = self._last_qid if qid == -1 else qid
        open_ = self._results.get(key)
        if open_ is None:
            raise protocol_error(f"There is no open result with qid {qid}.")
        start = time.monotonic()
        if await self._advance(open_, n, send):
            self._send(m.SUCCESS, {"has_more": True})
            return
        del self._results[key]
        summary = await open_.result.consume()
        in_tx = self._state is State.TX_STREAMING
        if not self._results:
            self._state = State.TX_READY if in_tx else State.READY
        self._send(m.SUCCESS, m.stream_end_metadata(
            self._capabilities, summary, in_tx=in_tx, has_fields=bool(open_.result.keys),
            had_records=open_.had_records, t_last=_ms_since(start)))

    async def _advance(self, open_: OpenResult, n: int, send: bool) -> bool:
        """Move n records (-1: all) past the client, writing them if `send`; True if more remain."""
        if send and open_.result.framed_encoding == self._encoding and not open_.lookahead:
            return await self._relay(open_, n)
        if n < 0 and not send:            # DISCARD all: only learn whether there was any row
            if not (open_.had_records or open_.lookahead):
                open_.had_records = bool(await open_.result.fetch(1))
            return False
        want = n
        while want != 0:
            size = BATCH if want < 0 else min(want, BATCH)
            rows, open_.lookahead = open_.lookahead or await open_.result.fetch(size), []
            if not rows:
                return False
            open_.had_records = True
            if send:
                self._buffer(self._packer.pack_records(rows, chunk))
                if self._out_size >= FLUSH_SIZE:
                    await self._flush()
            if want > 0:
                want -= len(rows)
        open_.lookahead = await open_.result.fetch(1)
        return bool(open_.lookahead)

    async def _relay(self, open_: OpenResult, n: int) -> bool:
        """Write n records (-1: all) as the framed bytes the backend received them in (the
        client reads their encoding); True if more remain."""
        want = n
        while True:
            framed, count, more = await open_.result.fetch_framed(want)
            if count:
                open_.had_records = True
                self._buffer(framed)
                if self._out_size >= FLUSH_SIZE:
                    await self._flush()
                if want > 0:
                    want -= count
            if not more or want == 0:
                return more

    async def _drop_results(self) -> None:
        """Give up every open result, so the backend releases what it holds for them (an
        upstream Neo4j connection, rolling back an auto-commit query; a buffered FalkorDB reply)."""
        results, self._results = list(self._results.values()), {}
        for open_ in results:
            try:
                await open_.result.abandon()
            except Exception:             # it failed already, or its transaction has ended
                log.debug("%s: discarding an open result failed", self.connection_id, exc_info=True)

    async def _release(self) -> None:
        """Drop open results and roll back an open transaction (RESET, LOGOFF, close)."""
        await self._drop_results()
        await self._session.reset()

    # ---- shutdown ----------------------------------------------------------------------

    async def _close(self) -> None:
        """Roll back whatever is open and close the socket; errors are logged, not raised."""
        self._state = State.DEFUNCT
        try:
            await asyncio.wait_for(self._release(), CLOSE_TIMEOUT)
        except Exception:
            log.exception("%s: rollback on close failed", self.connection_id)
        try:
            self._writer.close()
            await asyncio.wait_for(self._writer.wait_closed(), CLOSE_TIMEOUT)
        except Exception:
            pass
