"""Which property keys may hold a stored vector, so that `size(n.key)` of the others needs no probe.

stored_vectors.py answers `size()`, subscripts and slices of a property holding FalkorDB's
`vecf32` with a probe: the query's reading clauses, run again, reading the vectors. It cannot tell
from the text which keys hold vectors, so every `size(n.name)` of a string or a list paid that
probe, and again after every write or with other parameters. Most keys never hold a vector; this
census asks the database once and keeps the answer while it holds:

- No vector anywhere in the graph (one scan over every property, at the first question): stays
  true through any number of writes until a statement that may store a vector runs
  (`Backend.vectors_written`: on FalkorDB a write whose text has `vecf32`; any other write can
  only copy a vector already stored).
- Otherwise per key: a scan that stops at the first vector under the key, kept until the next
  write (`Runner.graph_state`), whatever the query and its parameters.
- In a transaction that has written (its writes are its own: no state), every key may: the
  probe runs there as before, and sees the transaction's vectors.

A state is read before the scan that answers under it, so a write racing a scan only makes the
answer go stale sooner. Were a "no" ever wrong, FalkorDB's own error for `size()` of a Vectorf32
would reach the client, never a wrong number.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from weakref import WeakKeyDictionary

from ..cypher.render import name as quote

_VECTOR = "'Vectorf32'"
_ENTITIES = ("MATCH (e)", "MATCH ()-[e]->()")


@dataclass
class Census:
    """What is known of one database's vectors; `scans` counts the queries that found it out."""

    anywhere: bool | None = None        # a vector under any key (None: not asked yet)
    state: Hashable = None              # the graph state `keys` were found at
    keys: dict[str, bool] = field(default_factory=dict)
    scans: int = 0


_censuses: WeakKeyDictionary = WeakKeyDictionary()


def census(backend, database: str) -> Census:
    """The census of `database` on `backend` (one per backend object and database)."""
    return _censuses.setdefault(backend, {}).setdefault(database, Census())


async def may_hold_vector(runner, key: str) -> bool:
    """Whether an entity the queries of `runner` see may hold a vector under `key`."""
    state = runner.graph_state()
    if state is None:
        return True
    backend, database = runner.backend, runner.database
    known = census(backend, database)
    if not backend.vectors_written(database):
        if known.anywhere is None:
            known.anywhere = await _found(runner, known, "any(k IN keys(e) WHERE typeOf(e[k]) = " + _VECTOR + ")")
        if not known.anywhere and not backend.vectors_written(database):
            return False
    if known.state != state:
        known.state, known.keys = state, {}
    found = known.keys.get(key)
    if found is None:
        found = await _found(runner, known, f"typeOf(e.{quote(key)}) = {_VECTOR}")
        if known.state == state:
            known.keys[key] = found
    return found


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
