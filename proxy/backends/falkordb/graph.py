"""What the backend keeps per graph (database): its key, its id -> name schema cache, and what
upkeep needs to know of it."""

from __future__ import annotations

from proxy.backends.falkordb.values import Schema

SYSTEM_KEY = "__cypher_proxy_system__"   # the empty graph statements on database `system` run on


class Graph:
    """Per-graph state: the graph key and the id -> name schema cache.

    Database `system` has no graph: its statements (the SHOW commands and procedures the proxy
    answers, bound into Cypher that reads no graph) run read-only on an empty graph key."""

    def __init__(self, name: str):
        self.name = name
        self.schema = Schema()
        self.system = name.lower() == "system"
        self.key = SYSTEM_KEY if self.system else name
        #: Nodes may have been created since every label's matrix last grew (falkordb/upkeep.py).
        self.labels_may_lag = True
        #: The labels, types and property keys the primary had when last read (None: unknown).
        self.names: set[str] | None = None
