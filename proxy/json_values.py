"""Cypher values <-> JSON, in the three shapes Neo4j's HTTP APIs use.

- Query API plain JSON: scalars as JSON, temporal values as ISO-8601 text, points as WKT,
  entities as `{elementId, labels, properties}` objects, paths as alternating lists.
- Query API typed JSON (`application/vnd.neo4j.query`): every value is
  `{"$type": T, "_value": v}`; integers and floats travel as text.
- The transactional endpoint (`/db/{db}/tx`): a row holds entities as their property maps
  and points as GeoJSON-like objects; `meta` says what each entity was, and the `graph`
  format lists the distinct nodes and relationships of a row.

Each shape is a walk that turns a value into JSON-ready lists, maps and scalars (points
are tuples, so `json.dumps` alone would write them as lists); scalars pass through as is.
"""

from __future__ import annotations

import base64
import datetime as _dt
import json
import numbers
from collections.abc import Callable
from typing import Any

from neo4j.spatial import Point
from neo4j.time import Date, DateTime, Duration, Time

from core.errors import CypherError
from proxy import iso
from core.values import Node, Path, Relationship

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1

# Python type -> (typed JSON name, Cypher meta type of the transactional endpoint, text form).
# Date-times and times are told apart by their tzinfo, in `_temporal`.
_TEMPORAL: dict[type, tuple[str, str, Callable[[Any], str]]] = {
    Date: ("Date", "date", iso.format_date),
    _dt.date: ("Date", "date", iso.format_date),
    Duration: ("Duration", "duration", iso.format_duration),
    _dt.timedelta: ("Duration", "duration", iso.format_duration),
}


def _time_name(value: Time | _dt.time) -> tuple[str, str]:
    return ("LocalTime", "localtime") if value.tzinfo is None else ("Time", "time")


def _datetime_name(value: DateTime | _dt.datetime) -> tuple[str, str]:
    kind = iso.datetime_kind(value)
    return kind, "localdatetime" if kind == "LocalDateTime" else "datetime"


def _exact_or_base(table: dict[type, Any], value: Any) -> Any:
    """The handler of the value's exact type, else of its first base class in table order
    (pandas.Timestamp, numpy floats, user Point classes)."""
    handler = table.get(type(value))
    if handler is None:
        handler = next((h for cls, h in table.items() if isinstance(value, cls)), None)
    return handler


def _temporal(value: Any) -> tuple[str, str, str] | None:
    """(typed name, meta type, ISO text) of a temporal value; None for anything else."""
    if isinstance(value, (DateTime, _dt.datetime)):
        typed, meta = _datetime_name(value)
        return typed, meta, iso.format_datetime(value)
    if isinstance(value, (Time, _dt.time)):
        typed, meta = _time_name(value)
        return typed, meta, iso.format_time(value)
    spec = _exact_or_base(_TEMPORAL, value)
    return None if spec is None else (spec[0], spec[1], spec[2](value))


def _bytes(value: bytes | bytearray) -> str:
    return base64.b64encode(bytes(value)).decode("ascii")


class UnsupportedValue(TypeError):
    """A value the HTTP APIs have no JSON form for."""


# ---- plain JSON: Query API and transactional endpoint -----------------------------------

_NATIVE = frozenset({type(None), bool, int, float, str})
Walk = Callable[[Any], Any]


def _path_elements(path: Path) -> list[Any]:
    """Node, relationship, node, ...: the order Neo4j lists a path's parts in."""
    out: list[Any] = [path.nodes[0]]
    for rel, node in zip(path.relationships, path.nodes[1:]):
        out += (rel, node)
    return out


def _scalar_text(value: Any) -> Any:
    """The JSON form both plain encoders share for byte and numpy values."""
    if isinstance(value, (bytes, bytearray)):
        return _bytes(value)
    if isinstance(value, numbers.Integral):      # numpy scalars
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    raise UnsupportedValue(f"a {type(value).__name__} value has no JSON form")


def _plain_walker(entity: Callable[[Any, Walk], Any], point: Callable[[Point], Any]) -> Walk:
    """A value -> JSON-ready converter; `entity` shapes nodes, relationships and paths."""
    def walk(value: Any) -> Any:
        kind = type(value)
        if kind in _NATIVE:
            return value
        if kind is list:
            return [walk(x) for x in value]
        if kind is dict:
            return {k: walk(x) for k, x in value.items()}
        if isinstance(value, (Node, Relationship, Path)):
            return entity(value, walk)
        if isinstance(value, Point):          # points and durations are tuples: before lists
            return point(value)
        temporal = _temporal(value)
        if temporal is not None:
            return temporal[2]
        if isinstance(value, (list, tuple)):
            return [walk(x) for x in value]
        if isinstance(value, dict):
            return {k: walk(x) for k, x in value.items()}
        return _scalar_text(value)
    return walk


def _query_api_entity(value: Any, walk: Walk) -> Any:
    if isinstance(value, Node):
        return {"elementId": value.element_id, "labels": value.labels, "properties": walk(value.properties)}
    if isinstance(value, Relationship):
        return {"elementId": value.element_id, "startNodeElementId": value.start_element_id,
                "endNodeElementId": value.end_element_id, "type": value.type,
                "properties": walk(value.properties)}
    return [walk(part) for part in _path_elements(value)]


def _row_entity(value: Any, walk: Walk) -> Any:
    if isinstance(value, Path):
        return [walk(part.properties) for part in _path_elements(value)]
    return walk(value.properties)


_CRS = {7203: ("cartesian", "sr-org/7203"), 9157: ("cartesian-3d", "sr-org/9157"),
        4326: ("wgs-84", "epsg/4326"), 4979: ("wgs-84-3d", "epsg/4979")}


def geojson_point(value: Point) -> dict[str, Any]:
    """The transactional endpoint's point: GeoJSON coordinates plus Neo4j's CRS object."""
    name, ref = _CRS.get(value.srid, (f"srid-{value.srid}", f"epsg/{value.srid}"))
    return {"type": "Point", "coordinates": [float(c) for c in value],
            "crs": {"srid": value.srid, "name": name, "type": "link",
                    "properties": {"href": f"http://spatialreference.org/ref/{ref}/ogcwkt/", "type": "ogcwkt"}}}


#: Query API plain JSON: entities as objects, points as WKT text.
plain_value = _plain_walker(_query_api_entity, iso.format_point)
#: Transactional endpoint `row`: entities as their property maps, points as GeoJSON.
row_value = _plain_walker(_row_entity, geojson_point)


# ---- Query API, typed JSON ---------------------------------------------------------------

def _typed(name: str, value: Any) -> dict[str, Any]:
    return {"$type": name, "_value": value}


def _typed_float(value: float) -> dict[str, Any]:
    return _typed("Float", repr(float(value)).replace("nan", "NaN").replace("inf", "Infinity"))


def _typed_node(value: Node) -> dict[str, Any]:
    return _typed("Node", {"_element_id": value.element_id, "_labels": value.labels,
                           "_properties": typed_map(value.properties)})


def _typed_relationship(value: Relationship) -> dict[str, Any]:
    return _typed("Relationship", {
        "_element_id": value.element_id, "_start_node_element_id": value.start_element_id,
        "_end_node_element_id": value.end_element_id, "_type": value.type,
        "_properties": typed_map(value.properties)})


#: Exact type -> encoder; a subclass takes the first base listed (points before tuples).
_TYPED: dict[type, Callable[[Any], dict[str, Any]]] = {
    type(None): lambda v: _typed("Null", None),
    bool: lambda v: _typed("Boolean", v),
    int: lambda v: _typed("Integer", str(v)),
    float: _typed_float,
    str: lambda v: _typed("String", v),
    bytes: lambda v: _typed("Base64", _bytes(v)),
    bytearray: lambda v: _typed("Base64", _bytes(v)),
    Node: _typed_node,
    Relationship: _typed_relationship,
    Path: lambda v: _typed("Path", [typed_value(x) for x in _path_elements(v)]),
    Point: lambda v: _typed("Point", iso.format_point(v)),
    dict: lambda v: _typed("Map", typed_map(v)),
    list: lambda v: _typed("List", [typed_value(x) for x in v]),
    tuple: lambda v: _typed("List", [typed_value(x) for x in v]),
}


def typed_value(value: Any) -> dict[str, Any]:
    """One value as `{"$type", "_value"}` (recursively)."""
    encode = _TYPED.get(type(value))
    if encode is not None:
        return encode(value)
    temporal = _temporal(value)              # before the subclass lookup: durations are tuples
    if temporal is not None:
        return _typed(temporal[0], temporal[2])
    encode = _exact_or_base(_TYPED, value)
    if encode is not None:
        return encode(value)
    if isinstance(value, numbers.Integral):      # numpy integers
        return _typed("Integer", str(int(value)))
    raise UnsupportedValue(f"a {type(value).__name__} value has no typed JSON form")


def typed_map(values: dict[str, Any]) -> dict[str, Any]:
    return {k: typed_value(v) for k, v in values.items()}


# ---- transactional endpoint: meta, graph --------------------------------------------

def meta(value: Any) -> Any:
    """What the transactional endpoint's `meta` says about one value."""
    if type(value) in _NATIVE:
        return None
    if isinstance(value, Node):
        return {"id": value.id, "elementId": value.element_id, "type": "node", "deleted": False}
    if isinstance(value, Relationship):
        return {"id": value.id, "elementId": value.element_id, "type": "relationship", "deleted": False}
    if isinstance(value, Path):
        return [meta(part) for part in _path_elements(value)]
    if isinstance(value, Point):              # points and durations are tuples: before lists
        return {"type": "point"}
    temporal = _temporal(value)
    if temporal is not None:
        return {"type": temporal[1]}
    if isinstance(value, (list, tuple)):
        return [meta(x) for x in value]
    return None


def graph(row: list[Any]) -> dict[str, list[dict[str, Any]]]:
    """The distinct nodes and relationships anywhere in a row (ids as strings, as Neo4j sends)."""
    nodes: dict[str, Node] = {}
    rels: dict[str, Relationship] = {}

    def visit(value: Any) -> None:
        if type(value) in _NATIVE:
            return
        if isinstance(value, Node):
            nodes.setdefault(value.element_id, value)
        elif isinstance(value, Relationship):
            rels.setdefault(value.element_id, value)
        elif isinstance(value, Path):
            for part in _path_elements(value):
                visit(part)
        elif isinstance(value, (list, tuple)):
            for x in value:
                visit(x)
        elif isinstance(value, dict):
            for x in value.values():
                visit(x)

    visit(row)
    return {
        "nodes": [{"id": str(n.id), "elementId": n.element_id, "labels": n.labels,
                   "properties": row_value(n.properties)} for n in nodes.values()],
        "relationships": [{"id": str(r.id), "elementId": r.element_id, "type": r.type,
                           "startNode": str(r.start_id), "startNodeElementId": r.start_element_id,
                           "endNode": str(r.end_id), "endNodeElementId": r.end_element_id,
                           "properties": row_value(r.properties)} for r in rels.values()],
    }


def dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON of JSON-ready values. Non-finite floats come out as NaN/Infinity."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


# ---- typed JSON parameters -> values ----------------------------------------------------

def _integer(raw: Any) -> int:
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise ValueError("an Integer is sent as text, e.g. \"42\"")
    value = int(raw)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(f"{value} is outside the 64-bit integer range")
    return value


def _float(text: Any) -> float:
    if not isinstance(text, str):
        raise ValueError("a Float is sent as text, e.g. \"1.5\"")
    return float(text.replace("Infinity", "inf"))


def _expect(kind: type, convert: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def decode(raw: Any) -> Any:
        if not isinstance(raw, kind):
            raise ValueError(f"expected a JSON {kind.__name__}")
        return convert(raw)
    return decode


_DECODERS: dict[str, Callable[[Any], Any]] = {
    "Null": lambda raw: None,
    "Boolean": _expect(bool, bool),
    "Integer": _integer,
    "Float": _float,
    "String": _expect(str, str),
    "Base64": _expect(str, lambda raw: base64.b64decode(raw, validate=True)),
    "List": _expect(list, lambda raw: [typed_parameter(x) for x in raw]),
    "Map": _expect(dict, lambda raw: {k: typed_parameter(v) for k, v in raw.items()}),
    "Date": iso.parse_date,
    "Time": iso.parse_time,
    "LocalTime": iso.parse_time,
    "OffsetDateTime": iso.parse_datetime,
    "ZonedDateTime": iso.parse_datetime,
    "LocalDateTime": iso.parse_datetime,
    "Duration": iso.parse_duration,
    "Point": iso.parse_point,
}


def typed_parameter(raw: Any) -> Any:
    """One typed-JSON parameter value as a Python value; plain JSON passes through unchanged.

    Raises `CypherError` (Request.InvalidFormat) naming the type and what was wrong.
    """
    if isinstance(raw, list):
        return [typed_parameter(x) for x in raw]
    if not isinstance(raw, dict):
        return raw
    if "$type" not in raw:
        return {k: typed_parameter(v) for k, v in raw.items()}
    name = raw.get("$type")
    decode = _DECODERS.get(name) if isinstance(name, str) else None
    if decode is None:
        raise invalid_format(f"Unknown parameter type {name!r:.60}; typed JSON parameters use one of "
                             f"{', '.join(_DECODERS)}.")
    try:
        return decode(raw.get("_value"))
    except CypherError:
        raise
    except (ValueError, TypeError, iso.IsoError) as exc:
        raise invalid_format(f"Invalid {name} parameter {raw.get('_value')!r:.100}: {exc}") from None


def invalid_format(message: str) -> CypherError:
    return CypherError("Neo.ClientError.Request.InvalidFormat", message)
