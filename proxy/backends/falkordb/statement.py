"""One client query as the embedded database will run it, analysed once: the RESP command
(GRAPH.QUERY, GRAPH.RO_QUERY, GRAPH.EXPLAIN, GRAPH.PROFILE), the text with its parameters, and
whether it may write, may change the schema, creates or deletes."""

from __future__ import annotations

import re
from typing import Any

from core.errors import CypherError, syntax_error
from proxy.backends.falkordb.guards import check_query
from proxy.backends.falkordb.guards import code_only as _code_only
from proxy.backends.falkordb.params import inline_params, lift_long_strings, placeholders
from proxy.backends.falkordb.upkeep import CREATES, DELETES, merged_types, written_names
from proxy.backends.falkordb.values import encode_params

_WRITE = re.compile(r"(?<![\w.$])(?:CREATE|MERGE|SET|DELETE|REMOVE|DROP|CALL\s+db\.idx\.)(?!\w)", re.I)
_SCHEMA = re.compile(r"(?<![\w.$])(?:INDEX|CONSTRAINT|CALL\s+db\.idx\.)(?!\w)", re.I)
_PREFIX = re.compile(r"\s*(EXPLAIN|PROFILE)(?!\w)", re.I)


class Statement:
    """One client query, analysed once: command, text to send and whether it may write.

    `may_write` is the text scan's guess; reads go as GRAPH.RO_QUERY, so FalkorDB itself
    refuses a write the scan missed (`as_write` then re-sends it as one). PROFILE executes the
    query and has no read-only form, so it always counts as a write.
    """

    def __init__(self, query: str, params: dict[str, Any] | None, mode: str):
        lifted = lift_long_strings(query, params)
        query, params = lifted.query, lifted.params
        check_query(query, params)                # what FalkorDB will read: long strings lifted
        code = _code_only(query)
        end = len(code.rstrip())
        if end and code[end - 1] == ";":          # `RETURN 1; ` / `RETURN 1; // done`: one statement (Neo4j)
            query, code = query[:end - 1], code[:end - 1]
        prefix = _PREFIX.match(code)
        self.body = query
        command = "QUERY"
        if prefix:
            command = prefix.group(1).upper()
            self.body = query[prefix.end():]
            code = code[prefix.end():]
        if command == "EXPLAIN":                  # Neo4j plans without values (mcp-neo4j-cypher relies on it)
            params = {**placeholders(self.body, code), **(params or {})}
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
        self.column = lambda key: lifted.column(inlined.column(key))
        self.text = encode_params(inlined.params) + self.body
        try:
            self.text.encode()
        except UnicodeEncodeError as exc:
            raise CypherError("Neo.ClientError.Statement.TypeError",
                              f"The query or its parameters contain {exc.object[exc.start]!r}, which is "
                              "not valid Unicode text (a lone surrogate).") from None
        self.schema = bool(_SCHEMA.search(code))
        self.may_write = command == "PROFILE" or (command == "QUERY" and mode != "r" and bool(_WRITE.search(code)))
        self.command = "GRAPH.RO_QUERY" if command == "QUERY" and not self.may_write else f"GRAPH.{command}"
        self.deletes, self.creates = bool(DELETES.search(code)), bool(CREATES.search(code))
        self.params = inlined.params

    def names(self) -> set[str] | None:
        """The names this statement may add to the graph (`falkordb.upkeep.written_names`)."""
        return written_names(self.body, self.params)

    def merged_types(self) -> set[str]:
        """The relationship types its MERGE clauses name (`falkordb.upkeep.merged_types`)."""
        return merged_types(self.body)

    def as_write(self) -> "Statement":
        """The same statement, sent as a write (FalkorDB refused it as a read)."""
        clone = object.__new__(Statement)
        clone.__dict__.update(self.__dict__, may_write=True, command="GRAPH.QUERY")
        return clone
