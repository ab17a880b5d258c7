"""Whether the graph may hold a stored vector, so that `size(n.key)` needs no probe when it holds none.

stored_vectors.py answers `size()`, subscripts and slices of a property holding FalkorDB's
`vecf32` with a probe: the query's reading clauses, run again, reading the vectors. It cannot tell
from the text which keys hold vectors, so every `size(n.name)` of a string or a list paid that
probe, again after every write and for every new set of parameters. Most graphs hold no vector at
all; this census asks the database once (a scan over every property that stops at the first
vector) and keeps the answer through any number of writes until a statement that may store a
vector runs (`Backend.vectors_written`: on FalkorDB a write whose text has `vecf32`; any other
write can only copy a vector already stored, and there is none). From then on, and in a
transaction that has written (its writes are its own), the probes run as before.

Not per key and graph state: that scan reads every node after each write, where the probe a
query like `MATCH (n:P {id: $id}) RETURN size(n.name)` pays is one index seek (measured 2.8x
against 1.2x on 52,000 nodes, a write before each query; bench/bench_vectors.py).

A "none" found before the flag is set holds (the flag is set before the statement storing a
vector runs); were it ever wrong, FalkorDB's own error for `size()` of a Vectorf32 would reach
the client, never a wrong number.
"""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

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
        known.anywhere = await _found(runner, known, "any(k IN keys(e) WHERE typeOf(e[k]) = 'Vectorf32')")
    return known.anywhere or backend.vectors_written(database)


async def _found(runner, known: Census, condition: str) -> bool:
    """Whether a node or a relationship meets `condition` (a scan that stops at the first)."""
    for entities in _ENTITIES:
        known.scans += 1
        result = await runner.run(f"{entities} WHERE {condition} RETURN 1 LIMIT 1", {})
        rows = await result.fetch(-1)
        await result.consume()
        if rows:
            return True
    return False
