"""The Neo4j backend (`--upstream`): the proxy's own Bolt client, pooled and routed, relaying
pass-through records as bytes. `backend.py` is the entry point; see its docstring."""

from proxy.backends.neo4j.backend import Neo4jBackend
from proxy.backends.neo4j.errors import DATABASE_UNAVAILABLE

__all__ = ["DATABASE_UNAVAILABLE", "Neo4jBackend"]
