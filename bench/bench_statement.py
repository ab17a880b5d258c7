"""What the FalkorDB backend does to a client query before sending it, in Python alone: the
session's check before planning (`FalkorDBBackend.check_query`) plus the statement the backend
builds from the same text when the planner passes it through (`falkordb.statement.Statement`),
as medians per query, warm (the same text again) and cold (a literal that changes every run, so
no cache helps), for a read, a write and a typical 10-line read; next to the cold parse of the
same texts, which is what classifying by the syntax tree would cost if every text were parsed.

Runs unchanged against an older tree (its `check_query` and `Statement` take the same
arguments): `cd <other worktree> && python -m bench bench_statement` gives the before.
"""

from __future__ import annotations

from itertools import count

from bench import median_seconds
from bench.bench_parser import TYPICAL
from extensions.cypher.parser import Parser
from proxy.backends.falkordb.backend import FalkorDBBackend
from proxy.backends.falkordb.statement import Statement

QUERIES = {
    "read": "MATCH (n:Field) WHERE n.id = {i} RETURN n.name AS name",
    "write": "MERGE (n:Field {{id: {i}}}) SET n.seen = true RETURN n.id",
    "10-line read": TYPICAL.replace("{", "{{").replace("}", "}}").replace("50000", "{i}"),
}
REPEAT = 2000


def main() -> None:
    backend = object.__new__(FalkorDBBackend)           # check_query needs no running server
    params = {"prefix": "A"}
    fresh = count()

    def handled(template: str, new_text: bool):
        text = template.format(i=next(fresh) if new_text else 7)

        def run() -> None:
            query = template.format(i=next(fresh)) if new_text else text
            backend.check_query(query, params)
            Statement(query, params, "w")
        return run

    for name, template in QUERIES.items():
        warm = median_seconds(handled(template, False), REPEAT)
        cold = median_seconds(handled(template, True), REPEAT)
        parse = median_seconds(lambda: Parser(template.format(i=next(fresh))).parse_statement(), REPEAT)
        print(f"{name:<13} check + statement: warm {warm * 1e6:6.1f} µs   cold {cold * 1e6:6.1f} µs   "
              f"(a cold parse: {parse * 1e6:6.1f} µs)")


if __name__ == "__main__":
    main()
