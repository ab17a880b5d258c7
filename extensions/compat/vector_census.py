"""Whether the graph may hold a stored vector, so that `size(n.key)` needs no probe when it holds none.

stored_vectors.py answers `size()`, subscripts and slices of a property holding FalkorDB's
`vecf32` with a probe: the query's reading clauses, run again, reading the vectors. It cannot tell
from the text which keys hold vectors, so every `size(n.name)` of a string or a list paid that
probe, again after every write and for every new set of parameters. Most graphs hold no vector
at all. This census asks the database once (a scan that stops at the first vector: 0.7 s for a
million nodes) and keeps the answer through any number of writes until a statement that may
store a vector runs (`Backend.vectors_written`: on FalkorDB a write whose text has `vecf32`; any
other write can only copy a vector already stored, and there is none). From then on, and in a
transaction that has written (its writes are its own), the probes run as before.

Not per key and graph state: that scan reads every node after each write, where the probe a
query like `MATCH (n:P {id: $id}) RETURN size(n.name)` pays is one index seek (measured 2.8x
against 1.2x on 52,000 nodes, a write before each query; bench/bench_vectors.py).

The "none" holds: the flag is set before the statement storing a vector runs, nodes and
relationships are scanned in one query (one view of the graph), and the property keys the scan
tests are read again after it (a vector copied meanwhile under a new key is not missed). Were it
ever wrong, FalkorDB's own error for `size()` of a Vectorf32 would reach the client, never a
wrong number.
"""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from ..cypher.render import name as quote

_KEYS = "CALL db.propertyKeys() YIELD propertyKey RETURN propertyKey"
#: The most property keys the scan tests one by one.
MAX_KEYS = 32
#: Nodes, then relationships: FalkorDB traverses every node to scan relationships (9 ms for 2,000
#: nodes and none), so only when its counters say there are some.
_ENTITIES = ("MATCH (e)", "CALL db.meta.stats() YIELD relCount WITH relCount WHERE relCount > 0 MATCH ()-[e]->()")


@dataclass
class Census:
    """What is known of one database's vectors; `scans` counts the queries that found it out."""

    anywhere: bool | None = None        # a vector under any key (None: not asked yet)
    scans: int = 0


_censuses: WeakKeyDictionary = WeakKeyDictionary()


def census(backend, database: str) -> Census:
    """The census of `database` on `backend` (one per backend object and database)."""
    return _censuses.setdefault(backend, {}).setdefault(database, Census())


async def may_hold_vector(runner) -> bool:
    """Whether an entity the queries of `runner` see may hold a vector."""
    backend, database = runner.backend, runner.database
    if runner.graph_state() is None or backend.vectors_written(database):
        return True
    known = census(backend, database)
    if known.anywhere is None:
        keys = await _keys(runner, known)
        found = await _found(runner, known, _holds_vector(keys))
        if not found and await _keys(runner, known) != keys:
            return True                                     # a key came meanwhile: ask again next time
        known.anywhere = found
    return known.anywhere or backend.vectors_written(database)


def _holds_vector(keys: list[str]) -> str:
    """The condition that entity `e` holds a vector: one test per property key the graph has
    (0.7 s for 1M nodes of 3 keys), or, past MAX_KEYS, a test of each key it holds (2.9 s)."""
    if len(keys) > MAX_KEYS:
        return "any(k IN keys(e) WHERE typeOf(e[k]) = 'Vectorf32')"
    return " OR ".join([f"typeOf(e.{quote(key)}) = 'Vectorf32'" for key in keys]) or "false"


async def _keys(runner, known: Census) -> list[str]:
    return sorted(row[0] for row in await _read(runner, known, _KEYS))


async def _found(runner, known: Census, condition: str) -> bool:
    """Whether a node or a relationship meets `condition`: one query (one view of the graph),
    whose scans stop at the first."""
    return bool(await _read(runner, known, " UNION ALL ".join(
        f"{entities} WHERE {condition} RETURN 1 AS found LIMIT 1" for entities in _ENTITIES)))


async def _read(runner, known: Census, query: str) -> list[list]:
    known.scans += 1
    result = await runner.run(query, {})
    rows = await result.fetch(-1)
    await result.consume()
    return rows
