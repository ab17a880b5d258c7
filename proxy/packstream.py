"""PackStream v1: the binary value encoding inside Bolt messages.

`Packer` turns the proxy's value model (`core.values`: plain Python scalars,
`neo4j.time` / `neo4j.spatial` values, Python `datetime` values, and the
Node/Relationship/Path dataclasses) into PackStream bytes for one Bolt
version; `unpack_message` / `unpack` do the reverse and hydrate structures
back into the same value model.

It sits on the hot path of every record, so the code favours speed where it
counts: exact-type dispatch before any `isinstance`, precompiled `struct`
formats, output built in one `bytearray`, long lists of floats (vectors) packed
by numpy in one pass, and a decoder that walks a `bytes`
object with an integer cursor, decoding the common one-byte values (tiny
ints, short strings) inline without a recursive call.

Input from the network is untrusted: every failure (truncation, unknown
marker, bad UTF-8, wrong structure fields, nesting deeper than
`MAX_DEPTH`, sizes larger than the remaining bytes) raises `PackStreamError`.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from functools import lru_cache
from struct import Struct, error as _StructError

import numpy as np
import pytz

from neo4j.spatial import CartesianPoint, Point, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

from core.values import Node, Path, Relationship, zone_id

__all__ = ["MAX_DEPTH", "PackStreamError", "Packer", "Structure", "record_encoding", "unpack", "unpack_message"]

MAX_DEPTH = 256
"""Deepest nesting of lists/maps/structures accepted in either direction."""


class PackStreamError(ValueError):
    """Malformed PackStream input, or a value that PackStream cannot encode."""


@dataclass(slots=True)
class Structure:
    """A structure whose tag this codec does not hydrate, kept as is."""

    tag: int
    fields: list


# --- constants ---------------------------------------------------------------

_EPOCH_ORDINAL = 719163  # date(1970, 1, 1).toordinal()
_NANOS_PER_DAY = 86_400_000_000_000
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_MAX_SIZE = 2**31 - 1  # PackStream caps every size at a signed 32-bit int

_M8_I8 = Struct(">Bb").pack
_M8_I16 = Struct(">Bh").pack
_M8_I32 = Struct(">Bi").pack
_M8_I64 = Struct(">Bq").pack
_M8_F64 = Struct(">Bd").pack
_M8_U8 = Struct(">BB").pack
_M8_U16 = Struct(">BH").pack
_M8_U32 = Struct(">BI").pack

_I8 = Struct(">b").unpack_from
_I16 = Struct(">h").unpack_from
_I32 = Struct(">i").unpack_from
_I64 = Struct(">q").unpack_from
_F64 = Struct(">d").unpack_from
_U16 = Struct(">H").unpack_from
_U32 = Struct(">I").unpack_from

# Tags (as ints) of the structures this codec knows.
_NODE, _REL, _UNBOUND_REL, _PATH = 0x4E, 0x52, 0x72, 0x50
_DATE, _TIME, _LOCAL_TIME, _LOCAL_DATETIME, _DURATION = 0x44, 0x54, 0x74, 0x64, 0x45
_DATETIME, _DATETIME_ZONE_ID = 0x49, 0x69
_LEGACY_DATETIME, _LEGACY_DATETIME_ZONE_ID = 0x46, 0x66
_POINT_2D, _POINT_3D = 0x58, 0x59

_SRID_CLASSES = {7203: (CartesianPoint, 2), 9157: (CartesianPoint, 3),
                 4326: (WGS84Point, 2), 4979: (WGS84Point, 3)}


# --- encoding ----------------------------------------------------------------

_FLOAT = {float}
#: A PackStream float: the marker, then the big-endian double.
_MARKED_F64 = np.dtype([("marker", "u1"), ("value", ">f8")])


def _pack_floats(values) -> bytes:
    """A list's floats in one numpy pass (a vector read back is thousands of them)."""
    packed = np.empty(len(values), _MARKED_F64)
    packed["marker"] = 0xC1
    packed["value"] = values
    return packed.tobytes()


def _write_size(out: bytearray, n: int, tiny: int | None, m8: int, what: str) -> None:
    """Append the marker + size for a string/list/map (tiny=None: bytes)."""
    if n < 16 and tiny is not None:
        out.append(tiny | n)
    elif n < 0x100:
        out += _M8_U8(m8, n)
    elif n < 0x10000:
        out += _M8_U16(m8 + 1, n)
    elif n <= _MAX_SIZE:
        out += _M8_U32(m8 + 2, n)
    else:
        raise PackStreamError(f"{what} of size {n} exceeds PackStream's limit of {_MAX_SIZE}")


def _offset_seconds(offset: _dt.timedelta, value) -> int:
    if offset.microseconds:
        raise PackStreamError(f"Bolt cannot carry a sub-second UTC offset ({offset}) in {value!r:.200}")
    return offset.days * 86400 + offset.seconds


def _date_fields(packer, v):
    return _DATE, [v.toordinal() - _EPOCH_ORDINAL]


def _neo_date_fields(packer, v):
    return _DATE, [v.to_ordinal() - _EPOCH_ORDINAL]


def _time_struct(nanos: int, offset, value):
    if offset is None:
        return _LOCAL_TIME, [nanos]
    return _TIME, [nanos, _offset_seconds(offset, value)]


def _time_fields(packer, v):
    nanos = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000_000 + v.microsecond * 1000
    return _time_struct(nanos, v.utcoffset(), v)


def _neo_time_fields(packer, v):
    return _time_struct(v.ticks, v.utcoffset() if v.tzinfo is not None else None, v)


def _datetime_struct(packer, days: int, v, nanos: int, native: _dt.datetime):
    local = days * 86400 + v.hour * 3600 + v.minute * 60 + v.second
    tz = v.tzinfo
    if tz is None:
        return _LOCAL_DATETIME, [local, nanos]
    offset = _offset_seconds(tz.utcoffset(native), v)
    zone = zone_id(tz)
    if packer._utc:
        seconds = local - offset
        if zone is None:
            return _DATETIME, [seconds, nanos, offset]
        return _DATETIME_ZONE_ID, [seconds, nanos, zone]
    if zone is None:
        return _LEGACY_DATETIME, [local, nanos, offset]
    return _LEGACY_DATETIME_ZONE_ID, [local, nanos, zone]


def _datetime_fields(packer, v):
    nanos = v.microsecond * 1000 + getattr(v, "nanosecond", 0)  # pandas.Timestamp has nanoseconds
    return _datetime_struct(packer, v.toordinal() - _EPOCH_ORDINAL, v, nanos, v)


def _neo_datetime_fields(packer, v):
    # The offset is asked of a native datetime: zoneinfo misreads neo4j.time.DateTime.
    native = v.to_native() if v.tzinfo is not None else None
    return _datetime_struct(packer, v.to_ordinal() - _EPOCH_ORDINAL, v, v.nanosecond, native)


def _duration_fields(packer, v):
    return _DURATION, [v.months, v.days, v.seconds, v.nanoseconds]


def _timedelta_fields(packer, v):
    return _DURATION, [0, v.days, v.seconds, v.microseconds * 1000 + getattr(v, "nanoseconds", 0)]


def _point_fields(packer, v):
    coords = [float(c) for c in v]
    if len(coords) == 2:
        return _POINT_2D, [v.srid, *coords]
    if len(coords) == 3:
        return _POINT_3D, [v.srid, *coords]
    raise PackStreamError(f"a point needs 2 or 3 coordinates, got {len(coords)}: {v!r:.200}")


def _node_fields(packer, v: Node):
    if packer._element_ids:
        return _NODE, [v.id, v.labels, v.properties, v.element_id]
    return _NODE, [v.id, v.labels, v.properties]


def _relationship_fields(packer, v: Relationship):
    if packer._element_ids:
        return _REL, [v.id, v.start_id, v.end_id, v.type, v.properties,
                      v.element_id, v.start_element_id, v.end_element_id]
    return _REL, [v.id, v.start_id, v.end_id, v.type, v.properties]


def _path_fields(packer, v: Path):
    """Neo4j's path form: unique nodes, unique unbound rels, and the index walk."""
    nodes, rels = v.nodes, v.relationships
    if len(nodes) != len(rels) + 1:
        raise PackStreamError(f"a path with {len(rels)} relationships needs {len(rels) + 1} nodes, "
                              f"got {len(nodes)}")
    node_index: dict[int, int] = {}
    unique_nodes = []
    for node in nodes:
        if node.id not in node_index:
            node_index[node.id] = len(unique_nodes)
            unique_nodes.append(node)
    rel_index: dict[int, int] = {}
    unique_rels = []
    indices = []
    for i, rel in enumerate(rels):
        if rel.id not in rel_index:
            rel_index[rel.id] = len(unique_rels)
            fields = [rel.id, rel.type, rel.properties]
            if packer._element_ids:
                fields.append(rel.element_id)
            unique_rels.append(Structure(_UNBOUND_REL, fields))
        position = rel_index[rel.id] + 1
        indices.append(position if rel.start_id == nodes[i].id else -position)
        indices.append(node_index[nodes[i + 1].id])
    return _PATH, [unique_nodes, unique_rels, indices]


# Exact type -> encoder(packer, value) returning (tag, fields).
_STRUCT_ENCODERS = {
    Node: _node_fields, Relationship: _relationship_fields, Path: _path_fields,
    Date: _neo_date_fields, Time: _neo_time_fields, DateTime: _neo_datetime_fields,
    Duration: _duration_fields,
    _dt.date: _date_fields, _dt.time: _time_fields, _dt.datetime: _datetime_fields,
    _dt.timedelta: _timedelta_fields,
    CartesianPoint: _point_fields, WGS84Point: _point_fields, Point: _point_fields,
}
# Subclasses (pandas.Timestamp, user Point types, ...) are matched in this order:
# datetime before date because it subclasses date.
_STRUCT_SUBCLASS_ENCODERS = [(cls, _STRUCT_ENCODERS[cls]) for cls in (
    Node, Relationship, Path, DateTime, Date, Time, Duration,
    _dt.datetime, _dt.date, _dt.time, _dt.timedelta, Point)]


class Packer:
    """Encodes values for one Bolt connection's version (and UTC patch)."""

    __slots__ = ("_element_ids", "_utc")

    def __init__(self, bolt_version: tuple[int, int] = (5, 0), utc_patch: bool = False):
        self._element_ids = tuple(bolt_version) >= (5, 0)
        self._utc = self._element_ids or utc_patch

    def pack(self, value) -> bytes:
        """One value as PackStream bytes."""
        out = bytearray()
        self._write(out, value, 0)
        return bytes(out)

    def pack_message(self, signature: int, fields: list) -> bytes:
        """A whole Bolt message (a structure with `signature`), not yet chunked."""
        out = bytearray()
        self._write_struct(out, signature, fields, 0)
        return bytes(out)

    def pack_records(self, rows, chunk) -> bytes:
        """Bolt RECORD messages for `rows`, framed, in one buffer (the streaming hot path).

        A record that fits one chunk is framed in place; a bigger one by `chunk(message)`.
        """
        out = bytearray()
        write = self._write
        for row in rows:
            start = len(out)
            out += b"\x00\x00\xb1\x71"
            write(out, row, 1)
            size = len(out) - start - 2
            if size <= 0xFFFF:
                out[start] = size >> 8
                out[start + 1] = size & 0xFF
                out += b"\x00\x00"
            else:
                message = bytes(out[start + 2:])
                del out[start:]
                out += chunk(message)
        return bytes(out)

    def _write_struct(self, out: bytearray, tag: int, fields, depth: int) -> None:
        if len(fields) > 15 or not 0 <= tag <= 0xFF:
            raise PackStreamError(f"a structure needs a one-byte tag and at most 15 fields, "
                                  f"got tag {tag!r:.200} with {len(fields)} fields")
        if depth >= MAX_DEPTH:
            raise PackStreamError(f"value nested deeper than {MAX_DEPTH} levels")
        out += _M8_U8(0xB0 | len(fields), tag)
        write = self._write
        depth += 1
        for item in fields:
            write(out, item, depth)

    def _write(self, out: bytearray, v, depth: int) -> None:
        t = type(v)
        if t is str:
            b = v.encode()
            n = len(b)
            if n < 16:
                out.append(0x80 | n)
            else:
                _write_size(out, n, 0x80, 0xD0, "string")
            out += b
        elif t is int:
            if -16 <= v < 128:
                out.append(v & 0xFF)
            elif -128 <= v < 128:
                out += _M8_I8(0xC8, v)
            elif -0x8000 <= v < 0x8000:
                out += _M8_I16(0xC9, v)
            elif -0x80000000 <= v < 0x80000000:
                out += _M8_I32(0xCA, v)
            elif _INT64_MIN <= v <= _INT64_MAX:
                out += _M8_I64(0xCB, v)
            else:
                raise PackStreamError(f"integer {v} does not fit PackStream's signed 64 bits")
        elif t is float:
            out += _M8_F64(0xC1, v)
        elif v is None:
            out.append(0xC0)
        elif t is bool:
            out.append(0xC3 if v else 0xC2)
        elif t is dict:
            if depth >= MAX_DEPTH:
                raise PackStreamError(f"value nested deeper than {MAX_DEPTH} levels")
            n = len(v)
            if n < 16:
                out.append(0xA0 | n)
            else:
                _write_size(out, n, 0xA0, 0xD8, "map")
            write = self._write
            depth += 1
            for key, item in v.items():
                if type(key) is not str:
                    raise PackStreamError(f"map keys must be strings, got {type(key).__name__} {key!r:.200}")
                b = key.encode()
                if len(b) < 16:  # short keys inline: saves a call per entry
                    out.append(0x80 | len(b))
                    out += b
                else:
                    write(out, key, depth)
                write(out, item, depth)
        elif t is list or t is tuple:
            if depth >= MAX_DEPTH:
                raise PackStreamError(f"value nested deeper than {MAX_DEPTH} levels")
            n = len(v)
            if n < 16:
                out.append(0x90 | n)
            else:
                _write_size(out, n, 0x90, 0xD4, "list")
                if type(v[0]) is float and set(map(type, v)) == _FLOAT:
                    out += _pack_floats(v)
                    return
            write = self._write
            depth += 1
            for item in v:
                write(out, item, depth)
        elif t is bytes or t is bytearray:
            _write_size(out, len(v), None, 0xCC, "byte array")
            out += v
        elif t is Structure:
            self._write_struct(out, v.tag, v.fields, depth)
        else:
            encoder = _STRUCT_ENCODERS.get(t)
            if encoder is None:
                self._write_other(out, v, depth)
            else:
                tag, fields = encoder(self, v)
                self._write_struct(out, tag, fields, depth)

    def _write_other(self, out: bytearray, v, depth: int) -> None:
        """Subclasses and numpy values: the slow path, off the exact-type dispatch."""
        for cls, encoder in _STRUCT_SUBCLASS_ENCODERS:
            if isinstance(v, cls):
                tag, fields = encoder(self, v)
                self._write_struct(out, tag, fields, depth)
                return
        self._write(out, _coerce(v), depth)


def _coerce(v):
    """The core Python value for a subclass or numpy value (bool before int: it subclasses int)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if isinstance(v, str):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v)
    if isinstance(v, (list, tuple)):
        return list(v)
    if isinstance(v, dict):
        return dict(v)
    if isinstance(v, np.ndarray):
        return v.tolist()
    raise PackStreamError(f"cannot encode a value of type {type(v).__name__}: {v!r:.200}")


# --- decoding ----------------------------------------------------------------

class _Truncated(Exception):
    """Internal: a read ran past the end of the input."""


def _read(data: bytes, p: int, depth: int, hydrators: dict):
    """Decode the value at `p`; return it and the position after it."""
    m = data[p]
    p += 1
    if m < 0x80:
        return m, p
    if m < 0xC0:
        high = m & 0xF0
        if high == 0x80:
            q = p + m - 0x80
            return data[p:q].decode(), q
        if high == 0xA0:
            return _read_map(data, p, m - 0xA0, depth, hydrators)
        if high == 0x90:
            return _read_list(data, p, m - 0x90, depth, hydrators)
        return _read_struct(data, p + 1, data[p], m - 0xB0, depth, hydrators)
    if m >= 0xF0:
        return m - 0x100, p
    if m == 0xC1:
        return _F64(data, p)[0], p + 8
    if m <= 0xC3:
        return _CONSTANTS[m], p
    if m == 0xC9:
        return _I16(data, p)[0], p + 2
    if m == 0xCA:
        return _I32(data, p)[0], p + 4
    if m == 0xCB:
        return _I64(data, p)[0], p + 8
    if m == 0xC8:
        return _I8(data, p)[0], p + 1
    return _read_sized(data, p, m, depth, hydrators)


_CONSTANTS = {0xC0: None, 0xC2: False, 0xC3: True}
_SIZED = {0xCC: ("bytes", 1), 0xCD: ("bytes", 2), 0xCE: ("bytes", 4),
          0xD0: ("string", 1), 0xD1: ("string", 2), 0xD2: ("string", 4),
          0xD4: ("list", 1), 0xD5: ("list", 2), 0xD6: ("list", 4),
          0xD8: ("map", 1), 0xD9: ("map", 2), 0xDA: ("map", 4)}


def _read_sized(data: bytes, p: int, m: int, depth: int, hydrators: dict):
    """Values whose size follows the marker in 1, 2 or 4 bytes (and unknown markers)."""
    sized = _SIZED.get(m)
    if sized is None:
        raise PackStreamError(f"unknown PackStream marker 0x{m:02X} at byte {p - 1}")
    kind, width = sized
    if width == 1:
        n = data[p]
    elif width == 2:
        n = _U16(data, p)[0]
    else:
        n = _U32(data, p)[0]
    p += width
    if kind == "string":
        return data[p:p + n].decode(), p + n
    if kind == "bytes":
        return data[p:p + n], p + n
    if kind == "list":
        return _read_list(data, p, n, depth, hydrators)
    return _read_map(data, p, n, depth, hydrators)


def _check_container(data: bytes, p: int, n: int, min_bytes: int, depth: int, what: str) -> None:
    if depth >= MAX_DEPTH:
        raise PackStreamError(f"PackStream value nested deeper than {MAX_DEPTH} levels")
    if n * min_bytes > len(data) - p:
        raise PackStreamError(f"{what} declares {n} entries but only {len(data) - p} bytes follow")


# In the two loops below, tiny ints and tiny strings (most keys and many values) are
# decoded inline: a Python call per value is the decoder's main cost.

def _read_list(data: bytes, p: int, n: int, depth: int, hydrators: dict):
    if n > 15 or depth >= MAX_DEPTH:
        _check_container(data, p, n, 1, depth, "list")
    items = []
    append = items.append
    depth += 1
    for _ in range(n):
        m = data[p]
        if m < 0x80:
            append(m)
            p += 1
        elif m < 0x90:
            q = p + m - 0x7F
            append(data[p + 1:q].decode())
            p = q
        else:
            v, p = _read(data, p, depth, hydrators)
            append(v)
    return items, p


def _read_map(data: bytes, p: int, n: int, depth: int, hydrators: dict):
    if n > 15 or depth >= MAX_DEPTH:
        _check_container(data, p, n, 2, depth, "map")
    entries = {}
    depth += 1
    for _ in range(n):
        m = data[p]
        if 0x80 <= m < 0x90:
            q = p + m - 0x7F
            key = data[p + 1:q].decode()
            p = q
        else:
            key, p = _read(data, p, depth, hydrators)
            if type(key) is not str:
                raise PackStreamError(f"map keys must be strings, got {type(key).__name__} {key!r:.200}")
        m = data[p]
        if m < 0x80:
            entries[key] = m
            p += 1
        elif m < 0x90:
            q = p + m - 0x7F
            entries[key] = data[p + 1:q].decode()
            p = q
        else:
            entries[key], p = _read(data, p, depth, hydrators)
    return entries, p


def _read_struct(data: bytes, p: int, tag: int, n: int, depth: int, hydrators: dict):
    fields, p = _read_list(data, p, n, depth, hydrators)
    if p > len(data):
        raise _Truncated
    hydrator = hydrators.get(tag)
    if hydrator is None:
        return Structure(tag, fields), p
    return hydrator(fields), p


# --- hydration: structure fields -> value model --------------------------------

_NUMBER = (float, int)


def _hydrator(name: str, types: tuple, build, optional: int = 0):
    """Wrap `build(*fields)` with arity/type checks and error translation.

    The last `optional` fields may be missing (pre-5.0 Node/Relationship).
    """
    arities = range(len(types) - optional, len(types) + 1)
    usual_types = tuple(expected[0] for expected in types)  # one comparison in the common case

    def hydrate(fields: list):
        if len(fields) not in arities:
            raise PackStreamError(f"{name} structure needs {len(types)} fields, got {len(fields)}: "
                                  f"{fields!r:.200}")
        if tuple(map(type, fields)) != usual_types[:len(fields)]:
            for value, expected in zip(fields, types):
                if type(value) not in expected:
                    raise PackStreamError(f"{name} structure field {value!r:.200} should be "
                                          f"{' or '.join(t.__name__ for t in expected)}")
        try:
            return build(*fields)
        except PackStreamError:
            raise
        except (ValueError, OverflowError, TypeError, KeyError) as e:
            raise PackStreamError(f"invalid {name} structure {fields!r:.200}: {e}") from None

    return hydrate


@lru_cache(maxsize=256)
def _fixed_offset(seconds: int) -> _dt.timezone:
    if seconds % 60:
        raise PackStreamError(f"UTC offset {seconds} s is not whole minutes, which neo4j.time "
                              f"cannot represent")
    return _dt.timezone(_dt.timedelta(seconds=seconds))


@lru_cache(maxsize=256)
def _named_zone(zone_id: str):
    try:
        return pytz.timezone(zone_id)
    except pytz.UnknownTimeZoneError:
        raise PackStreamError(f"unknown time zone id {zone_id!r:.200}") from None


def _local_datetime(seconds: int, nanos: int, tz=None) -> DateTime:
    days, secs = divmod(seconds, 86400)
    d = _dt.date.fromordinal(_EPOCH_ORDINAL + days)
    return DateTime(d.year, d.month, d.day, secs // 3600, secs // 60 % 60, secs % 60, nanos, tzinfo=tz)


def _time_of_day(nanos: int, tz=None) -> Time:
    if not 0 <= nanos < _NANOS_PER_DAY:
        raise PackStreamError(f"time of day {nanos} ns is outside 0..{_NANOS_PER_DAY - 1}")
    secs, ns = divmod(nanos, 1_000_000_000)
    return Time(secs // 3600, secs // 60 % 60, secs % 60, ns, tzinfo=tz)


def _point(srid: int, *coords) -> Point:
    cls, dims = _SRID_CLASSES.get(srid, (None, len(coords)))
    if dims != len(coords):
        raise PackStreamError(f"SRID {srid} needs {dims} coordinates, got {len(coords)}")
    if cls is None:
        point = Point(float(c) for c in coords)
        point.srid = srid
        return point
    return cls(float(c) for c in coords)


def _node(node_id, labels, properties, element_id=None) -> Node:
    for label in labels:
        if type(label) is not str:
            raise PackStreamError(f"node labels must be strings, got {label!r:.200}")
    return Node(node_id, labels, properties, str(node_id) if element_id is None else element_id)


def _relationship(rel_id, start_id, end_id, rel_type, properties,
                  element_id=None, start_element_id=None, end_element_id=None) -> Relationship:
    return Relationship(rel_id, start_id, end_id, rel_type, properties,
                        str(rel_id) if element_id is None else element_id,
                        str(start_id) if start_element_id is None else start_element_id,
                        str(end_id) if end_element_id is None else end_element_id)


def _path(nodes: list, rels: list, indices: list) -> Path:
    """Rebuild the node/relationship sequence from Neo4j's index walk."""
    if not nodes or any(type(n) is not Node for n in nodes):
        raise PackStreamError(f"a path needs a non-empty list of nodes, got {nodes!r:.200}")
    for r in rels:
        if type(r) is not Structure or r.tag != _UNBOUND_REL or len(r.fields) not in (3, 4):
            raise PackStreamError(f"path relationships must be UnboundRelationship structures, "
                                  f"got {r!r:.200}")
    if len(indices) % 2 or any(type(i) is not int for i in indices):
        raise PackStreamError(f"path indices must be an even-length list of integers, got {indices!r:.200}")
    seq_nodes = [nodes[0]]
    seq_rels = []
    for k in range(0, len(indices), 2):
        r, n = indices[k], indices[k + 1]
        if not (r and abs(r) <= len(rels) and 0 <= n < len(nodes)):
            raise PackStreamError(f"path index pair ({r}, {n}) is out of range")
        prev, nxt = seq_nodes[-1], nodes[n]
        start, end = (prev, nxt) if r > 0 else (nxt, prev)
        rel_id, rel_type, properties, *rest = rels[abs(r) - 1].fields
        if type(rel_id) is not int or type(rel_type) is not str or type(properties) is not dict:
            raise PackStreamError(f"malformed UnboundRelationship {rels[abs(r) - 1]!r:.200}")
        element_id = rest[0] if rest else str(rel_id)
        seq_rels.append(Relationship(rel_id, start.id, end.id, rel_type, properties,
                                     element_id, start.element_id, end.element_id))
        seq_nodes.append(nxt)
    return Path(seq_nodes, seq_rels)


_I, _S, _L, _D = (int,), (str,), (list,), (dict,)

_COMMON_HYDRATORS = {
    _NODE: _hydrator("Node", (_I, _L, _D, _S), _node, optional=1),
    _REL: _hydrator("Relationship", (_I, _I, _I, _S, _D, _S, _S, _S), _relationship, optional=3),
    _PATH: _hydrator("Path", (_L, _L, _L), _path),
    _DATE: _hydrator("Date", (_I,), lambda days: Date.from_ordinal(_EPOCH_ORDINAL + days)),
    _TIME: _hydrator("Time", (_I, _I), lambda nanos, offset: _time_of_day(nanos, _fixed_offset(offset))),
    _LOCAL_TIME: _hydrator("LocalTime", (_I,), _time_of_day),
    _LOCAL_DATETIME: _hydrator("LocalDateTime", (_I, _I), _local_datetime),
    _DURATION: _hydrator("Duration", (_I, _I, _I, _I), lambda months, days, seconds, nanos: Duration(
        months=months, days=days, seconds=seconds, nanoseconds=nanos)),
    _POINT_2D: _hydrator("Point2D", (_I, _NUMBER, _NUMBER), _point),
    _POINT_3D: _hydrator("Point3D", (_I, _NUMBER, _NUMBER, _NUMBER), _point),
}

# Bolt >= 5.0, or 4.3/4.4 with the "utc" patch: DateTime seconds are UTC.
_UTC_HYDRATORS = {
    **_COMMON_HYDRATORS,
    _DATETIME: _hydrator("DateTime", (_I, _I, _I), lambda seconds, nanos, offset: _local_datetime(
        seconds + offset, nanos, _fixed_offset(offset))),
    _DATETIME_ZONE_ID: _hydrator("DateTimeZoneId", (_I, _I, _S), lambda seconds, nanos, zone_id:
                                 _local_datetime(seconds, nanos, pytz.utc).as_timezone(_named_zone(zone_id))),
}

# Older Bolt: DateTime seconds are the local wall-clock time.
_LEGACY_HYDRATORS = {
    **_COMMON_HYDRATORS,
    _LEGACY_DATETIME: _hydrator("DateTime", (_I, _I, _I), lambda seconds, nanos, offset: _local_datetime(
        seconds, nanos, _fixed_offset(offset))),
    _LEGACY_DATETIME_ZONE_ID: _hydrator("DateTimeZoneId", (_I, _I, _S), lambda seconds, nanos, zone_id:
                                        _named_zone(zone_id).localize(_local_datetime(seconds, nanos))),
}


def record_encoding(bolt_version: tuple[int, int], utc_patch: bool = False) -> str:
    """The name of the record encoding a Bolt version (and UTC patch) uses: two connections with
    the same name encode every value alike, so RECORD bytes from one are valid on the other.

    Nodes and relationships gained element ids in 5.0, DateTimes are UTC from 5.0 (or with the
    4.x patch), and 6.0 adds the Vector and UnsupportedType structures."""
    if tuple(bolt_version) >= (6, 0):
        return "bolt6"
    if tuple(bolt_version) >= (5, 0):
        return "bolt5"
    return "bolt4-utc" if utc_patch else "bolt4"


def _hydrators_for(bolt_version: tuple[int, int], utc_patch: bool) -> dict:
    return _UTC_HYDRATORS if utc_patch or tuple(bolt_version) >= (5, 0) else _LEGACY_HYDRATORS


def _decode(data, what: str, read, hydrators: dict):
    """Run `read` over the whole input, translating every failure to PackStreamError."""
    if type(data) is not bytes:
        data = bytes(data)
    try:
        value, p = read(data, hydrators)
    except (IndexError, _StructError, _Truncated):
        raise PackStreamError(f"truncated PackStream data ({len(data)} bytes)") from None
    except UnicodeDecodeError as e:
        raise PackStreamError(f"string is not valid UTF-8: {e}") from None
    if p != len(data):
        if p > len(data):
            raise PackStreamError(f"truncated PackStream data ({len(data)} bytes)")
        raise PackStreamError(f"{len(data) - p} unexpected bytes after the {what} at byte {p}")
    return value


def _read_message(data: bytes, hydrators: dict):
    if not data:
        raise PackStreamError("empty Bolt message")
    marker = data[0]
    if marker & 0xF0 != 0xB0:
        raise PackStreamError(f"a Bolt message must be a structure, got marker 0x{marker:02X}")
    fields, p = _read_list(data, 2, marker & 0x0F, 0, hydrators)
    return (data[1], fields), p


def _read_value(data: bytes, hydrators: dict):
    return _read(data, 0, 0, hydrators)


def unpack_message(data: bytes | bytearray | memoryview, bolt_version: tuple[int, int] = (5, 0),
                   utc_patch: bool = False) -> tuple[int, list]:
    """Decode one whole (de-chunked) Bolt message into (signature, fields)."""
    return _decode(data, "message", _read_message, _hydrators_for(bolt_version, utc_patch))


def unpack(data: bytes | bytearray | memoryview, bolt_version: tuple[int, int] = (5, 0),
           utc_patch: bool = False):
    """Decode exactly one PackStream value."""
    return _decode(data, "value", _read_value, _hydrators_for(bolt_version, utc_patch))
