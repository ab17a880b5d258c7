"""A result's `Summary` in the words of each HTTP API (counters, stats, plans)."""

from __future__ import annotations

from typing import Any

from core.backend import STAT_KEYS, Summary

#: Bolt stat key -> (Query API counter, transactional endpoint stat).
#: `relationship_deleted` (singular) is how Neo4j spells it on the transactional endpoint.
_NAMES = {
    "nodes-created": ("nodesCreated", "nodes_created"),
    "nodes-deleted": ("nodesDeleted", "nodes_deleted"),
    "properties-set": ("propertiesSet", "properties_set"),
    "relationships-created": ("relationshipsCreated", "relationships_created"),
    "relationships-deleted": ("relationshipsDeleted", "relationship_deleted"),
    "labels-added": ("labelsAdded", "labels_added"),
    "labels-removed": ("labelsRemoved", "labels_removed"),
    "indexes-added": ("indexesAdded", "indexes_added"),
    "indexes-removed": ("indexesRemoved", "indexes_removed"),
    "constraints-added": ("constraintsAdded", "constraints_added"),
    "constraints-removed": ("constraintsRemoved", "constraints_removed"),
    "system-updates": ("systemUpdates", "system_updates"),
}
assert set(_NAMES) == set(STAT_KEYS)


def query_api_counters(summary: Summary) -> dict[str, Any]:
    counters: dict[str, Any] = {"containsUpdates": summary.contains_updates}
    counters.update((names[0], summary.stats.get(key, 0)) for key, names in _NAMES.items())
    counters["containsSystemUpdates"] = bool(summary.stats.get("system-updates"))
    return counters


def legacy_stats(summary: Summary) -> dict[str, Any]:
    stats: dict[str, Any] = {"contains_updates": summary.contains_updates}
    stats.update((names[1], summary.stats.get(key, 0)) for key, names in _NAMES.items())
    stats["contains_system_updates"] = bool(summary.stats.get("system-updates"))
    return stats


def query_api_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """A Bolt-shaped plan (`args`, `rows`) in the Query API's words (`arguments`, `records`)."""
    out = {{"args": "arguments", "rows": "records"}.get(k, k): v for k, v in plan.items() if k != "children"}
    out["children"] = [query_api_plan(child) for child in plan.get("children") or ()]
    return out
