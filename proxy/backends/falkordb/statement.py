"""One client query as the embedded database will run it: the RESP command (GRAPH.QUERY,
GRAPH.RO_QUERY, GRAPH.EXPLAIN, GRAPH.PROFILE), the text with its parameters, and whether it may
write, may change the schema, creates or deletes.

What depends on the text alone is analysed once per text and cached (`analysed`): long string
literals lifted into parameters, the guards' verdict, the EXPLAIN/PROFILE prefix, and what the
query does (`extensions.cypher.effects`, from its syntax tree). The session checks a client's
query before planning (`FalkorDBBackend.check_query`) and the statement reuses that analysis
when the planner passes the text through unchanged, the common case; a rewritten text or a
probe is another text, analysed once in turn. What depends on the parameters (range bounds,
temporal values written into the text, the parameter header) is done per statement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Awaitable, Callable, TypeVar

from core.errors import CypherError, syntax_error
from extensions.cypher.effects import Effects, effects
from extensions.cypher.tokens import code_only
from proxy.backends.falkordb.errors import ACCESS_MODE
from proxy.backends.falkordb.guards import AGGREGATE_IN_ITERATION, check_query, check_ranges, problem
from proxy.backends.falkordb.params import Inlined, inline_params, lift_long_strings, placeholders
from proxy.backends.falkordb.upkeep import written_names
from proxy.backends.falkordb.values import encode_params

_PREFIX = re.compile(r"\s*(EXPLAIN|PROFILE)(?!\w)", re.I)
#: Longer texts get a smaller analysis cache.
_LONG_CHARS = 65_536


@dataclass(frozen=True, slots=True)
class Analysis:
    """What FalkorDB will read of one query text, with the client's long strings lifted."""

    lifted: Inlined                 # the text with long strings as `$__sN`, and those strings
    problem: str | None             # what the guards refuse in it (`guards.problem`)
    command: str                    # QUERY, EXPLAIN or PROFILE
    body: str                       # the text after the prefix, without a trailing `;`
    code: str                       # `body` with strings, names and comments blanked
    effects: Effects

    def check(self, params: dict[str, Any] | None, *, before_planning: bool = False) -> None:
        """Raise what FalkorDB could not survive. A client's text `before_planning` may hold an
        aggregate in a list iteration: the planner splits that (compat/apoc_functions.py), and
        a text that reaches the database with one is refused then."""
        if self.problem and not (before_planning and self.problem.startswith(AGGREGATE_IN_ITERATION)):
            raise syntax_error(self.problem)
        check_ranges(self.lifted.query, {**(params or {}), **self.lifted.params})


def analysed(query: str, params: dict[str, Any] | None) -> Analysis:
    """The analysis of `query`, cached by text (unless a parameter of the client's is named like
    the lifted strings' `$__sN`, which then take other names)."""
    if params and any(name.startswith("__s") for name in params):
        return _analyse(query, params)
    return _cached(query) if len(query) <= _LONG_CHARS else _cached_long(query)


def _analyse(query: str, params: dict[str, Any] | None = None) -> Analysis:
    lifted = lift_long_strings(query, params)
    lifted.params = {name: value for name, value in lifted.params.items() if name not in (params or {})}
    text = lifted.query
    code = code_only(text)
    end = len(code.rstrip())
    if end and code[end - 1] == ";":          # `RETURN 1; ` / `RETURN 1; // done`: one statement (Neo4j)
        text, code = text[:end - 1], code[:end - 1]
    prefix = _PREFIX.match(code)
    command = prefix.group(1).upper() if prefix else "QUERY"
    start = prefix.end() if prefix else 0
    return Analysis(lifted, problem(lifted.query), command, text[start:], code[start:], effects(lifted.query))


_cached = lru_cache(maxsize=2048)(_analyse)
_cached_long = lru_cache(maxsize=8)(_analyse)


def changes_schema(procedures: frozenset) -> bool:
    """A CALL of FalkorDB's that creates or drops an index (`db.idx.fulltext.createNodeIndex`,
    `db.idx.fulltext.drop`); its `db.idx.*.query*` procedures read."""
    return any(name.startswith("db.idx.") and ".query" not in name for name in procedures)


class Statement:
    """One client query, ready to send: command, text and whether it may write.

    `may_write` comes from the query's syntax tree (`extensions.cypher.effects`; a keyword scan
    for text the proxy's parser refuses). Reads go as GRAPH.RO_QUERY, so FalkorDB itself refuses
    a write the analysis missed (`as_write` then re-sends it as one, `read_first`). PROFILE
    executes the query and has no read-only form, so it always counts as a write.
    """

    def __init__(self, query: str, params: dict[str, Any] | None, mode: str):
        analysis = analysed(query, params)
        analysis.check(params)                  # what FalkorDB will read: long strings lifted
        params = {**(params or {}), **analysis.lifted.params}
        self.body, command, code = analysis.body, analysis.command, analysis.code
        if command == "EXPLAIN":                # Neo4j plans without values (mcp-neo4j-cypher relies on it)
            params = {**placeholders(self.body, code), **params}
        inlined = inline_params(self.body, code, params)
        if inlined.renames:
            self.body = inlined.query
            try:
                check_query(self.body)
            except CypherError as exc:
                raise syntax_error(f"{exc.message} (FalkorDB takes temporal, point and NaN parameters "
                                   "only as expressions in the query text, so they count here: send "
                                   "large ones as ISO 8601 strings and convert in the query, e.g. "
                                   "date(r.on).)") from None
        self.column = lambda key: analysis.lifted.column(inlined.column(key))
        self.text = encode_params(inlined.params) + self.body
        try:
            self.text.encode()
        except UnicodeEncodeError as exc:
            raise CypherError("Neo.ClientError.Statement.TypeError",
                              f"The query or its parameters contain {exc.object[exc.start]!r}, which is "
                              "not valid Unicode text (a lone surrogate).") from None
        does = analysis.effects
        self.schema = does.schema or changes_schema(does.procedures)
        writes = does.writes or self.schema
        self.may_write = command == "PROFILE" or (command == "QUERY" and mode != "r" and writes)
        self.command = "GRAPH.RO_QUERY" if command == "QUERY" and not self.may_write else f"GRAPH.{command}"
        self.deletes, self.creates = does.deletes, does.creates
        self.params = inlined.params
        self._merged_types = does.merged_types

    def names(self) -> set[str] | None:
        """The names this statement may add to the graph (`falkordb.upkeep.written_names`)."""
        return written_names(self.body, self.params)

    def merged_types(self) -> set[str]:
        """The relationship types its MERGE clauses name (empty when the proxy's parser cannot
        read the text)."""
        return set(self._merged_types)

    def as_write(self) -> "Statement":
        """The same statement, sent as a write (FalkorDB refused it as a read)."""
        clone = object.__new__(Statement)
        clone.__dict__.update(self.__dict__, may_write=True, command="GRAPH.QUERY")
        return clone


R = TypeVar("R")


async def read_first(statement: Statement, mode: str, read: Callable[[Statement], Awaitable[R]],
                     write: Callable[[Statement], Awaitable[R]]) -> R:
    """Run `statement` with `write` (writer lock taken) if it may write, else with `read`; a read
    FalkorDB refuses as a write (an AccessMode error: the analysis missed it) runs again with
    `write`, unless the client asked for a read-only transaction (`mode` 'r'), which gets the
    error as Neo4j gives it."""
    if not statement.may_write:
        try:
            return await read(statement)
        except CypherError as exc:
            if exc.code != ACCESS_MODE or mode == "r":
                raise
            statement = statement.as_write()
    return await write(statement)
