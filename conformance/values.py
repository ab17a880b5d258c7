"""One comparable form for values from the neo4j driver, the falkordb client and TCK literals.

`normalise(v)` returns a hashable, type-tagged tuple tree, so rows can be compared as multisets
(`collections.Counter`) without `True == 1` or `nan != nan` getting in the way:
nodes by labels + properties, relationships by type + properties, paths by both lists, floats to
15 significant digits (FalkorDB's precision), temporals by ISO text, durations by
(months, days, seconds, nanoseconds), points in FalkorDB's map form `{latitude, longitude}` (the
form the falkordb client returns), maps with sorted keys.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import falkordb
import neo4j.graph
import neo4j.spatial
import neo4j.time

from conformance.literals import NodeLit, PathLit, RelLit

__all__ = ["normalise", "normalise_rows", "rows_equal"]


def _float(x: float) -> tuple:
    return ("f", format(x, ".15g"))


def _duration(v) -> tuple:
    if hasattr(v, "nanoseconds"):                                  # neo4j.time.Duration
        return ("duration", v.months, v.days, v.seconds, v.nanoseconds)
    months = getattr(v, "years", 0) * 12 + getattr(v, "months", 0)  # dateutil relativedelta
    seconds = getattr(v, "hours", 0) * 3600 + getattr(v, "minutes", 0) * 60 + getattr(v, "seconds", 0)
    return ("duration", months, getattr(v, "days", 0), seconds, getattr(v, "microseconds", 0) * 1000)


def _temporal(v, as_string: bool) -> tuple | str:
    if hasattr(v, "to_native"):
        v = v.to_native()                              # neo4j.time -> datetime (microseconds)
    if isinstance(v, dt.datetime) and v.utcoffset() == dt.timedelta(0):
        v = v.replace(tzinfo=None)      # FalkorDB datetimes have no zone; the client says UTC
    text = v.isoformat()
    return text if as_string else (type(v).__name__, text)


_GRAPH_TYPES = [(neo4j.graph.Node, "Node"), (neo4j.graph.Relationship, "Relationship"),
                (neo4j.graph.Path, "Path"), (falkordb.Node, "Node"), (falkordb.Edge, "Edge"),
                (falkordb.Path, "Path"), (NodeLit, "NodeLit"), (RelLit, "RelLit"), (PathLit, "PathLit")]


def _props(v) -> dict:
    """Properties of a NodeLit/RelLit or falkordb Node/Edge (`.properties`) or neo4j entity (items)."""
    props = getattr(v, "properties", None)
    return props if isinstance(props, dict) else dict(v.items())


def _graph(v, *options):
    """Nodes, relationships and paths of any of the three sources; None for anything else."""
    kind = next((name for cls, name in _GRAPH_TYPES if isinstance(v, cls)), None)
    if kind in ("Node", "NodeLit"):
        return ("node", tuple(sorted(v.labels or ())), normalise(_props(v), *options))
    if kind in ("Relationship", "Edge", "RelLit"):
        rel_type = v.relation if kind == "Edge" else v.type
        return ("rel", rel_type, normalise(_props(v), *options))
    if kind in ("Path", "PathLit"):
        nodes, rels = (v.nodes(), v.edges()) if callable(v.nodes) else (v.nodes, v.relationships)
        return ("path", tuple(_graph(n, *options) for n in nodes),
                tuple(_graph(r, *options) for r in rels))
    return None


def normalise(v, temporal_as_string: bool = False, unordered_lists: bool = False):
    """The comparable form of one value (see the module docstring).

    temporal_as_string: temporals become plain ISO strings (to meet TCK cells, which write them as
    strings). unordered_lists: list items are sorted (TCK "ignoring element order for lists").
    """
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, bool):
        return ("b", v)
    if isinstance(v, int):
        return ("i", v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, neo4j.time.Duration) or type(v).__name__ == "relativedelta":
        return _duration(v)
    if isinstance(v, neo4j.spatial.Point):           # a tuple subclass: test before lists
        return normalise({"latitude": v[1], "longitude": v[0]} if len(v) == 2
                         else {"x": v[0], "y": v[1], "z": v[2]}, temporal_as_string, unordered_lists)
    if isinstance(v, (list, tuple)):
        items = [normalise(x, temporal_as_string, unordered_lists) for x in v]
        return ("l", tuple(sorted(items, key=repr) if unordered_lists else items))
    if isinstance(v, dict):
        return ("m", tuple(sorted((str(k), normalise(x, temporal_as_string, unordered_lists))
                                  for k, x in v.items())))
    if isinstance(v, (dt.date, dt.time, neo4j.time.Date, neo4j.time.Time, neo4j.time.DateTime)):
        return _temporal(v, temporal_as_string)
    graph = _graph(v, temporal_as_string, unordered_lists)
    if graph is not None:
        return graph
    return ("?", type(v).__name__, repr(v))


def normalise_rows(rows, **options) -> list[tuple]:
    return [tuple(normalise(x, **options) for x in row) for row in rows]


def rows_equal(a: list[tuple], b: list[tuple], ordered: bool = False) -> bool:
    """Equal as sequences (ordered) or as multisets."""
    return a == b if ordered else Counter(a) == Counter(b)
