"""A result read from the upstream: relayed as framed RECORD bytes, or decoded where needed.

`UpstreamResult` is the Neo4j backend's `Result`. The Bolt front end asks it for
`fetch_framed(n)` when the client reads the same record encoding as the upstream connection
(`framed_encoding`): the RECORD messages go to the client as the bytes they arrived in. Everyone
else (an extension's probe, the HTTP API, a client on another Bolt generation) calls
`fetch(n)`, which decodes the same bytes. Only the summary (the final SUCCESS) is always
decoded: the front end writes its own, with the bookmark, `db` and notifications the proxy owns.

The RUN was sent with a first PULL behind it (`FIRST_PULL` records) when the client's own PULL
was on its way, so a short query costs the client one round trip to the upstream, not two; a PULL
that asks for fewer takes them from the same reply, the rest stays in the socket until it is
asked for. A RUN that came alone goes alone: given up before any PULL (`abandon`, on RESET or a
closed connection), an auto-commit query is RESET upstream, so Neo4j rolls it back.

A result shares its connection with others in an explicit transaction: `Link.claim` makes the
result that is mid-reply read the rest of it into its own buffer (`park`) before another
request goes out.

An extension's independent probes (`read_together`) are not results: each is a RUN and a PULL of
all its records, all of them written at once and read back in order, decoded: one round trip
to the upstream for both sides of a separated probe.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from core.backend import STAT_KEYS, Result, Summary
from proxy.backends.neo4j.client import Ignored, UpstreamConnection, message_end
from proxy.backends.neo4j.errors import UpstreamLost
from proxy.bolt import messages as m
from core.errors import CypherError

#: Records asked for with the RUN (the drivers' default fetch size).
FIRST_PULL = 1000
_STAT_KEYS = frozenset(STAT_KEYS)
_COMPLETION = frozenset({"00000", "00001", "02000"})


class Link(Protocol):
    """What a result needs from whoever holds its upstream connection."""

    connection: UpstreamConnection

    async def claim(self, result: "UpstreamResult") -> None:
        """Make the connection free for `result`'s next request."""

    async def done(self, result: "UpstreamResult") -> None:
        """`result` has read its last response (or failed)."""

    async def abandon(self, result: "UpstreamResult") -> None:
        """The client gave `result` up before its end (`Result.abandon`)."""


class UpstreamResult(Result):
    """The records and summary of one upstream RUN."""

    def __init__(self, link: Link, keys: list[str], database: str, *, qid: int = -1, pulling: bool = True,
                 on_update: Callable[[], None] | None = None):
        self.keys = keys
        self._link = link
        self._connection = link.connection
        self.framed_encoding = self._connection.encoding
        self._database = database
        self._qid = qid
        self._on_update = on_update        # called once if the summary shows the graph changed
        self._pulling = pulling            # a PULL's reply is still arriving (the first went with RUN)
        self._has_more = not pulling       # another PULL may follow (none was sent yet, or has_more)
        self._parked = b""                 # records read past while another result needed the connection
        self._parked_count = 0
        self._summary: Summary | None = None
        self._error: CypherError | None = None

    @property
    def open(self) -> bool:
        return self._summary is None and self._error is None

    # ---- records ---------------------------------------------------------------------

    async def fetch_framed(self, n: int) -> tuple[bytes, int, bool]:
        if self._error is not None:
            raise self._error
        try:
            return await self._fetch_framed(n)
        except UpstreamLost as error:
            await self._lost(error)
            raise

    async def _fetch_framed(self, n: int) -> tuple[bytes, int, bool]:
        parts: list[bytes] = []
        count = 0
        if self._parked_count:
            framed, count = self._unpark(n)
            parts.append(framed)
        while (n < 0 or count < n) and self.open:
            if not self._pulling:
                if not self._has_more:
                    break
                await self._request(m.PULL, n - count if n > 0 else -1)
            framed, k, end = await self._connection.records(n - count if n > 0 else -1)
            parts.append(framed)
            count += k
            if end is not None:
                await self._ended(end)
            if n < 0 and count:            # hand over what has arrived; the caller asks again
                break
        more = bool(self._parked_count) or (self.open and (self._pulling or self._has_more))
        return b"".join(parts), count, more

    async def fetch(self, n: int) -> list[list[Any]]:
        rows: list[list[Any]] = []
        while n < 0 or len(rows) < n:
            framed, count, more = await self.fetch_framed(n - len(rows) if n > 0 else -1)
            rows += self._connection.decode_records(framed)
            if not more:
                break
        return rows

    async def park(self) -> None:
        """Read the rest of the PULL in progress into this result's own buffer."""
        try:
            while self._pulling and self.open:
                framed, count, end = await self._connection.records(-1)
                self._parked += framed
                self._parked_count += count
                if end is not None:
                    await self._ended(end)
        except UpstreamLost as error:
            await self._lost(error)
            raise

    def _unpark(self, n: int) -> tuple[bytes, int]:
        if n < 0 or n >= self._parked_count:
            taken, count = self._parked, self._parked_count
        else:
            p = 0
            for _ in range(n):
                p = message_end(self._parked, p)[0]
            taken, count = self._parked[:p], n
        self._parked = self._parked[len(taken):]
        self._parked_count -= count
        return taken, count

    # ---- the end -----------------------------------------------------------------------

    async def consume(self) -> Summary:
        if self._error is not None:
            raise self._error
        self._parked, self._parked_count = b"", 0
        try:
            await self._read_to_end()
        except UpstreamLost as error:
            await self._lost(error)
            raise
        if self._error is not None:
            raise self._error
        return self._summary

    async def _read_to_end(self) -> None:
        while self.open:
            if self._pulling:
                while (end := (await self._connection.records(-1))[2]) is None:
                    pass
                await self._ended(end)
            elif self._has_more:
                await self._request(m.DISCARD, -1)
                try:
                    meta: Any = await self._connection.response()
                except (CypherError, Ignored) as error:
                    meta = error
                self._pulling = False
                await self._ended(meta)

    async def abandon(self) -> None:
        if self.open:
            self.end_with(Summary(database=self._database))
            await self._link.abandon(self)

    def end_with(self, summary: Summary) -> None:
        """The transaction ended before the result was read: nothing more comes from upstream."""
        if self.open:
            self._summary = summary
            self._parked, self._parked_count = b"", 0

    async def _request(self, signature: int, n: int) -> None:
        await self._link.claim(self)
        extra = {"n": n} if self._qid < 0 else {"n": n, "qid": self._qid}
        self._connection.send(signature, extra)
        await self._connection.flush()
        self._pulling = signature == m.PULL

    async def _lost(self, error: UpstreamLost) -> None:
        if self.open:
            self._error = error
            await self._link.done(self)

    async def _ended(self, end: Any) -> None:
        """Take the response that ended a PULL's or DISCARD's records."""
        self._pulling = False
        if isinstance(end, dict) and end.get("has_more"):
            self._has_more = True
            return
        self._has_more = False
        if isinstance(end, dict):
            self._summary = to_summary(end, self._database)
            if self._summary.contains_updates and self._on_update is not None:
                self._on_update()
        else:
            self._error = end if isinstance(end, CypherError) else CypherError(
                "Neo.ClientError.Transaction.TransactionTerminated",
                "The transaction failed earlier; nothing more runs in it.")
        await self._link.done(self)


async def read_together(connection: UpstreamConnection, queries: list[tuple[str, dict[str, Any]]],
                        extra: dict[str, Any]) -> tuple[list[list[list[Any]]], bool]:
    """The rows of independent read-only queries, each a RUN (with `extra`) and a PULL of all its
    records, all sent in one write and their replies read in order; and whether any of them
    changed the graph. In auto-commit each RUN is a transaction of its own; in an explicit
    transaction they run in order in it. Their SUCCESS messages are read past undecoded unless
    they report writes. The first FAILURE raises (the upstream IGNOREs the requests behind it),
    after a RESET has read what is still due."""
    for query, params in queries:
        connection.send(m.RUN, query, params, extra)
        connection.send(m.PULL, {"n": -1})
    await connection.flush()
    answers: list[list[list[Any]]] = []
    wrote = False
    try:
        for _ in queries:
            await connection.response(wanted=())
            rows: list[list[Any]] = []
            end = None
            while end is None:
                framed, _, end = await connection.records(-1, wanted=(b"stats",))
                rows += connection.decode_records(framed)
            if not isinstance(end, dict):
                raise end
            answers.append(rows)
            wrote = wrote or bool(end) and to_summary(end, "").contains_updates
    except CypherError:
        if connection.failed and not connection.broken:
            await connection.reset()
        raise
    return answers, wrote


def to_summary(meta: dict[str, Any], database: str) -> Summary:
    """The proxy's `Summary` of a final PULL/DISCARD SUCCESS (`database`: if it names none)."""
    stats = meta.get("stats") or {}
    return Summary(
        database=str(meta.get("db") or database),
        query_type=str(meta.get("type") or "r"),
        stats={key: count for key, count in stats.items() if key in _STAT_KEYS and count},
        bookmark=meta.get("bookmark"),
        plan=meta.get("plan"),
        profile=meta.get("profile"),
        notifications=notifications(meta),
    )


def notifications(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """A summary's notifications: `notifications` up to Bolt 5.4, the GQL `statuses` from 5.6
    (minus the completion status, which the front end writes itself)."""
    if "notifications" in meta:
        return list(meta["notifications"] or ())
    found = []
    for status in meta.get("statuses") or ():
        if status.get("gql_status") in _COMPLETION or not status.get("neo4j_code"):
            continue
        record = status.get("diagnostic_record") or {}
        note = {"code": status["neo4j_code"], "title": status.get("title", ""),
                "description": status.get("description", ""),
                "severity": record.get("_severity", "INFORMATION"),
                "category": record.get("_classification", "GENERIC"),
                "gql_status": status.get("gql_status"),
                "status_description": status.get("status_description")}
        if "_position" in record:
            note["position"] = record["_position"]
        found.append(note)
    return found
