"""The value model shared by the wire, the backends and the extensions.

Scalars are plain Python (None, bool, int, float, str, bytes, list, dict).
Temporal and spatial values use the official driver's types (`neo4j.time`,
`neo4j.spatial`): they carry nanoseconds, time zones and SRIDs exactly as
Bolt does. Python's own `datetime.date/time/datetime/timedelta` are accepted
on output too. Graph values are the small dataclasses below: backends build
them, the PackStream and JSON encoders read them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neo4j.spatial import CartesianPoint, Point, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

__all__ = [
    "CartesianPoint", "Date", "DateTime", "Duration", "Node", "Path", "Point",
    "Relationship", "Time", "WGS84Point", "zone_id",
]


def zone_id(tz) -> str | None:
    """The IANA name of a pytz or zoneinfo zone, None for a fixed offset."""
    name = getattr(tz, "zone", None) or getattr(tz, "key", None)
    return name if isinstance(name, str) else None


@dataclass(slots=True)
class Node:
    """A graph node as Bolt sends it: legacy integer id plus the 5.x element id."""

    id: int
    labels: list[str]
    properties: dict[str, Any]
    element_id: str


@dataclass(slots=True)
class Relationship:
    """A relationship with both endpoints (Bolt's bound `Relationship` structure)."""

    id: int
    start_id: int
    end_id: int
    type: str
    properties: dict[str, Any]
    element_id: str
    start_element_id: str
    end_element_id: str


@dataclass(slots=True)
class Path:
    """A path: `nodes[i]` and `nodes[i+1]` are joined by `relationships[i]`, in either direction."""

    nodes: list[Node]
    relationships: list[Relationship] = field(default_factory=list)
