"""One comparable form for values from the neo4j driver, the falkordb client and TCK literals.

`normalise(v)` returns a hashable, type-tagged tuple tree, so rows can be compared as multisets
(`collections.Counter`) without `True == 1` or `nan != nan` getting in the way:
nodes by labels + properties, relationships by type + properties, paths by both lists, floats to
15 significant digits (FalkorDB's precision; `-0.0` equals `0.0`, as in Cypher), temporals and
durations by the text Neo4j prints for them (`neo4j_text`: `12:31` without seconds, nanoseconds
in groups of three, `PT-0.001S`), points in FalkorDB's map form `{latitude, longitude}` (the
form the falkordb client returns), maps with sorted keys.

Printing like Neo4j is what lets a TCK cell, which writes a temporal as the string Neo4j's
`toString()` gives, meet a driver value without truncating it to Python's microseconds.
"""

from __future__ import annotations

import datetime as dt
from collections import Counter

import falkordb
import neo4j.graph
import neo4j.spatial
import neo4j.time

from conformance.literals import NodeLit, PathLit, RelLit
from extensions.temporal import values as temporal_values

__all__ = ["cypher_text", "duration_text", "neo4j_text", "normalise", "normalise_rows", "rows_equal"]


def _float(x: float) -> tuple:
    return ("f", format(x + 0.0, ".15g"))          # + 0.0 turns -0.0 into 0.0


def _date_text(year: int, month: int, day: int) -> str:
    sign = "-" if year < 0 else "+" if year > 9999 else ""
    return f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"


def _time_text(hour: int, minute: int, second: int, nanos: int) -> str:
    text = f"{hour:02d}:{minute:02d}"
    return text + (f":{second:02d}{temporal_values.fraction(nanos)}" if second or nanos else "")


def _offset_text(offset: dt.timedelta) -> str:
    seconds = int(offset.total_seconds())
    if seconds == 0:
        return "Z"
    sign, seconds = ("-" if seconds < 0 else "+"), abs(seconds)
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}"
    return text + (f":{seconds % 60:02d}" if seconds % 60 else "")


def _zone_name(tzinfo) -> str | None:
    """The zone id of a named zone (pytz `.zone`, zoneinfo `.key`), None for a fixed offset.
    The driver hydrates offset 0 as pytz's UTC zone, so `UTC` counts as the offset `Z` (the TCK
    has no value in the zone named UTC)."""
    name = getattr(tzinfo, "zone", None) or getattr(tzinfo, "key", None)
    return None if name == "UTC" else name


def _nanosecond(v) -> int:
    return v.nanosecond if hasattr(v, "nanosecond") else v.microsecond * 1000


def _duration_parts(v) -> tuple[int, int, int, int]:
    """(months, days, seconds, nanoseconds) of a neo4j Duration or a dateutil relativedelta."""
    if hasattr(v, "nanoseconds"):
        return v.months, v.days, v.seconds, v.nanoseconds
    months = v.years * 12 + v.months
    seconds = v.hours * 3600 + v.minutes * 60 + v.seconds
    return months, v.days, seconds, v.microseconds * 1000


def duration_text(months: int, days: int, seconds: int, nanos: int) -> str:
    """A duration as Neo4j prints it (`P1Y2M3DT4H5M6.5S`, `PT-0.001S`, `PT0S`): the temporal
    library's text, from the amounts the drivers give."""
    return temporal_values.duration_text(temporal_values.Duration(months, days, seconds, nanos))


def neo4j_text(v) -> str:
    """A temporal or duration (neo4j driver, Python datetime or relativedelta) as Neo4j's
    `toString()` prints it."""
    if isinstance(v, neo4j.time.Duration) or type(v).__name__ == "relativedelta":
        return duration_text(*_duration_parts(v))
    if isinstance(v, (neo4j.time.DateTime, dt.datetime)):
        date = _date_text(v.year, v.month, v.day)
        text = f"{date}T{_time_text(v.hour, v.minute, v.second, _nanosecond(v))}"
    elif isinstance(v, (neo4j.time.Date, dt.date)):
        return _date_text(v.year, v.month, v.day)
    else:
        text = _time_text(v.hour, v.minute, v.second, _nanosecond(v))
    if v.tzinfo is None:
        return text
    offset = v.utcoffset()
    zone = _zone_name(v.tzinfo)
    return text + _offset_text(offset) + (f"[{zone}]" if zone else "")


def _temporal(v, as_string: bool) -> tuple | str:
    if isinstance(v, dt.datetime) and v.tzinfo is not None and v.utcoffset() == dt.timedelta(0):
        v = v.replace(tzinfo=None)      # FalkorDB datetimes have no zone; the client says UTC
    text = neo4j_text(v)
    return text if as_string else (type(v).__name__.lower(), text)


def _duration(v, as_string: bool) -> tuple | str:
    return neo4j_text(v) if as_string else ("duration", *_duration_parts(v))


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
        return _duration(v, temporal_as_string)
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


def cypher_text(v) -> str:
    """A value as a TCK cell writes it (`(:L {k: 1})`, `[:T]`, `<(:A)-[:T]->(:B)>`, `'text'`,
    temporals as their quoted Neo4j text), for reports."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, str):
        return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list) or type(v) is tuple:           # not Duration, Point (tuples too)
        return "[" + ", ".join(cypher_text(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {cypher_text(x)}" for k, x in v.items()) + "}"
    form = normalise(v, temporal_as_string=True)
    if isinstance(form, str):
        return cypher_text(form)
    return _entity_text(form) if form[0] in ("node", "rel", "path") else repr(v)


def _entity_text(form: tuple) -> str:
    """A normalised node, relationship or path in TCK syntax."""
    if form[0] == "path":
        nodes, rels = form[1], form[2]
        return "<" + _entity_text(nodes[0]) + "".join(
            f"-{_entity_text(r)}-{_entity_text(n)}" for r, n in zip(rels, nodes[1:])) + ">"
    name = "".join(f":{label}" for label in form[1]) if form[0] == "node" else f":{form[1]}"
    props = ", ".join(f"{key}: {_form_text(value)}" for key, value in form[2][1])
    inner = " ".join(part for part in (name, props and f"{{{props}}}") if part)
    return f"({inner})" if form[0] == "node" else f"[{inner}]"


def _form_text(form) -> str:
    """A normalised property value back in TCK syntax."""
    if form is None or isinstance(form, str):
        return cypher_text(form)
    tag, *rest = form
    if tag == "l":
        return "[" + ", ".join(_form_text(x) for x in rest[0]) + "]"
    if tag == "m":
        return "{" + ", ".join(f"{k}: {_form_text(x)}" for k, x in rest[0]) + "}"
    return str(rest[0]).lower() if tag == "b" else str(rest[-1])
