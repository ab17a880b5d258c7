"""What a backend's database does natively, and the forms the proxy writes for it: its dialect.

Each backend owns one `Dialect` (`proxy/backends/*/dialect.py`); the planner, the bridge rules
and the compat registry ask it, never the backend's name (the pattern of the driver's
`supports_*` attributes and sqlglot's `Dialect` flags):

- `dialect.has(Capability.X)`: the database does X itself. Where it does not, the proxy stands
  in: a bridge rule rewrites the query (`extensions/bridges/`, each rule names the capability
  it stands in for), a compat entry answers the procedure or command (`extensions/compat/`,
  `stands_in_for`), the planner computes the answer or checks the query itself;
- binding forms: how the rewritten query finds a node's computed value (`node_index`,
  `element_id`; docs/falkordb-notes.md, "binding computed values");
- catalog queries: how to ask the database for its own procedures and functions, where the
  proxy lists them beside the ones it serves.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Capability(Enum):
    """Something a database may do natively; where it does not, the proxy stands in."""

    #: Reads Cypher as Neo4j does: every construct means what it means on Neo4j (else the bridge
    #: rules rewrite it), the variables are checked (`cypher/semantics.py`), `CYPHER` options taken.
    NEO4J_CYPHER = "neo4j cypher"
    #: Neo4j's temporal values exactly: nanosecond fractions, zones, and a stored date-time's kind
    #: (zoned or local) kept (else `temporal/` answers and records them).
    EXACT_TEMPORALS = "exact temporals"
    #: Labels and types from expressions, `:$(expr)` (else the proxy probes their values).
    DYNAMIC_LABELS = "dynamic labels"
    #: Lists stored as vectors and compared by Neo4j's procedures and functions
    #: (`db.create.setNodeVectorProperty`, `vector.similarity.*`).
    VECTORS = "vectors"
    #: Neo4j's built-in procedures (`dbms.*`, `db.*`, `tx.*`, the vector and fulltext index
    #: procedures) and its SHOW commands.
    PROCEDURES = "procedures"
    #: Cypher's index and constraint commands, and the constraints enforced.
    SCHEMA_COMMANDS = "schema commands"
    #: The APOC library's procedures and functions.
    APOC = "apoc"
    #: Parameters that hold nodes and relationships (else only literals: maps, lists, scalars).
    ENTITY_PARAMETERS = "entity parameters"


@dataclass(frozen=True)
class Dialect:
    """One backend's dialect: its name (for messages), what it does natively, its binding forms
    and its catalog queries."""

    name: str
    native: frozenset[Capability]
    #: Nodes are found by an integer `id(n)` that indexes a list parameter in constant time
    #: (FalkorDB, whose map lookups are linear; element ids are `str(id)`); else by
    #: `elementId(n)` keying a hashed map (Neo4j).
    integer_ids: bool
    #: Lists the database's own procedures as (name, mode) rows and functions as (name, internal,
    #: aggregation) rows, where the proxy lists them beside its own (None: the listing is native).
    procedure_list: str | None = None
    function_list: str | None = None

    def has(self, capability: Capability) -> bool:
        """Whether the database does `capability` itself."""
        return capability in self.native

    def node_index(self, node: str) -> str:
        """The index of node `node` in a bound parameter: `id(n)` (list index) or `elementId(n)` (map key)."""
        return f"id({node})" if self.integer_ids else f"elementId({node})"

    def element_id(self, node: str) -> str:
        """The node's element id as the client sees it (with integer ids: the id as a string)."""
        return f"toString(id({node}))" if self.integer_ids else f"elementId({node})"
