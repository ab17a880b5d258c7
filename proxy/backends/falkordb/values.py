"""FalkorDB's RESP dialect <-> the proxy's value model.

Outbound: parameters become FalkorDB's `CYPHER name=literal ...` query header. Only literals
are accepted there (no function calls, no expressions: `date('..')`, `point({..})`, `0.0/0.0`
all fail), so temporal, point and NaN parameters go into the query text instead
(`falkordb.params`); bytes are rejected with an error that says how to pass them. Strings escape only `\\` and `'`: FalkorDB does not interpret `\\uXXXX`,
so other characters travel as raw UTF-8; NUL cannot travel at all.

Inbound: the `--compact` reply (`[type, value]` cells, labels / types / property keys as schema
ids) becomes `core.values`. Floats arrive as `%.15g` text, so they keep 15 significant digits;
a vector's elements arrive as RESP3 doubles (exact), parsed by hiredis.
Temporals arrive as whole epoch seconds (sub-second precision is lost by the server); local
date-times are returned naive (the falkordb client wrongly makes them UTC-aware). Also here:
statistics lines and EXPLAIN/PROFILE plans (server errors: `falkordb.errors`).
"""

from __future__ import annotations

import datetime as _dt
import math
import re
import sys
from itertools import chain
from typing import Any

import orjson

from neo4j.time import Date, DateTime, Duration, Time

from proxy.backends.falkordb.guards import check_map_size
from core.errors import CypherError
from core.values import Node, Path, Relationship, WGS84Point

TYPE_ERROR = "Neo.ClientError.Statement.TypeError"

# ---------------------------------------------------------------- parameters -> header


def encode_params(params: dict[str, Any] | None) -> str:
    """`CYPHER a=1 b='x' ` (with the trailing space), or "" when there are no parameters."""
    if not params:
        return ""
    parts = [f"{quote_name(name, name)}={to_literal(value, name)}" for name, value in params.items()]
    return "CYPHER " + " ".join(parts) + " "


def to_literal(value: Any, name: str = "p") -> str:
    """One parameter value as a literal FalkorDB's header parser accepts; `name` is for errors.

    Temporal, point and NaN values never get here: `falkordb.params` writes them into the query.
    Exact types dispatch through a table (bound extension values are lists and maps of tens of
    thousands of numbers); subclasses take the slower `isinstance` path.
    """
    encode = _LITERALS.get(type(value))
    if encode is not None:
        return encode(value, name)
    return _subclass_literal(value, name)


def _float_literal(value: float, name: str) -> str:
    if value in _INFINITIES:
        return "1e999" if value > 0 else "-1e999"
    return repr(value)


def _string_literal(value: str, name: str) -> str:
    if "\x00" in value:
        raise param_error(name, "a string containing the NUL character", "FalkorDB strings cannot hold U+0000")
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _list_literal(value: list | tuple, name: str) -> str:
    if finite_numbers(value):                   # the common bound forms, as JSON (the same literals)
        try:
            return orjson.dumps(value).decode()
        except orjson.JSONEncodeError:          # an integer beyond 64 bits
            pass
    literals = _LITERALS
    return "[" + ",".join([literals[t](v, name) if (t := type(v)) in literals else _subclass_literal(v, name)
                           for v in value]) + "]"


def finite_numbers(value: list | tuple) -> bool:
    """Whether `value` holds only finite numbers and nulls, or lists of them (extension values
    bound per node, a grid): tens of thousands of them are checked and written without a Python
    call per number."""
    types = set(map(type, value))
    if not types <= _NUMBERS:
        if not types <= _LISTS:
            return False
        value = list(chain.from_iterable(v for v in value if v is not None))
        if not set(map(type, value)) <= _NUMBERS:
            return False
    try:                                        # NaN or an infinity anywhere makes the sum non-finite
        return math.isfinite(sum(filter(None, value)))
    except OverflowError:
        return False


def _map_literal(value: dict, name: str) -> str:
    check_map_size(value, name)
    literals = _LITERALS
    return "{" + ",".join([f"{quote_name(str(k), name)}:"
                           f"{literals[t](v, name) if (t := type(v)) in literals else _subclass_literal(v, name)}"
                           for k, v in value.items()]) + "}"


def _subclass_literal(value: Any, name: str) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(int(value))
    if isinstance(value, float):
        return _float_literal(float(value), name)
    if isinstance(value, str):
        return _string_literal(str(value), name)
    if isinstance(value, (list, tuple)):
        return _list_literal(value, name)
    if isinstance(value, dict):
        return _map_literal(value, name)
    raise _unsupported(value, name)


_INFINITIES = (math.inf, -math.inf)
_NUMBERS = frozenset({int, float, type(None)})
_LISTS = frozenset({list, tuple, type(None)})
_LITERALS = {
    type(None): lambda value, name: "null",
    bool: lambda value, name: "true" if value else "false",
    int: lambda value, name: str(value),
    float: _float_literal,
    str: _string_literal,
    list: _list_literal,
    tuple: _list_literal,
    dict: _map_literal,
}


def quote_name(key: str, param: str) -> str:
    """A map key or parameter name, backtick-quoted; `param` is for errors."""
    if "`" in key or "\x00" in key:
        raise param_error(param, f"the map key or name {key!r}",
                          "FalkorDB cannot quote names containing a backtick or NUL")
    return f"`{key}`"


def _unsupported(value: Any, name: str) -> CypherError:
    if isinstance(value, (bytes, bytearray, memoryview)):
        return param_error(name, "a byte array", "FalkorDB has no byte array type; "
                           "send it as a list of integers or a base64 string")
    return param_error(name, f"a {type(value).__name__}", "FalkorDB parameters are null, booleans, "
                       "numbers, strings, lists and maps")


def param_error(name: str, what: str, advice: str) -> CypherError:
    """The TypeError for parameter `name`, a value FalkorDB cannot take, and what to do instead."""
    return CypherError(TYPE_ERROR, f"Parameter ${name} is {what}, which FalkorDB cannot take as a "
                                   f"parameter: {advice}.")

# ---------------------------------------------------------------- compact reply -> values


class SchemaMiss(Exception):
    """A label, type or property id is newer than the cached schema: refresh and decode again."""


class Schema:
    """One graph's id -> name tables (labels, relationship types, property keys)."""

    def __init__(self, labels: list[str] = (), types: list[str] = (), keys: list[str] = ()):
        self.labels, self.types, self.keys = list(labels), list(types), list(keys)

    def name(self, table: list[str], idx: int) -> str:
        try:
            return table[idx]
        except IndexError:
            raise SchemaMiss(idx) from None


_EPOCH = _dt.datetime(1970, 1, 1)
_EPOCH_ORDINAL = _EPOCH.toordinal()


def decode_row(row: list, schema: Schema) -> list[Any]:
    return _decode_cells(row, schema)


def decode(cell: list, schema: Schema) -> Any:
    """One `[type, value]` cell of a compact reply."""
    kind, raw = cell
    if kind == 2:
        return raw.decode("utf-8", "replace")
    if kind in (3, 1):
        return raw
    return _DECODERS[kind](raw, schema)


def _decode_cells(cells: list, schema: Schema) -> list[Any]:
    """`decode` over a row or a list, with integers, strings and nulls handled inline (the hot path)."""
    out = []
    append = out.append
    for kind, raw in cells:
        if kind == 3 or kind == 1:
            append(raw)
        elif kind == 2:
            append(raw.decode("utf-8", "replace"))
        else:
            append(_DECODERS[kind](raw, schema))
    return out


def _node(raw: list, schema: Schema) -> Node:
    node_id, label_ids, props = raw
    return Node(node_id, [schema.name(schema.labels, i) for i in label_ids],
                _props(props, schema), str(node_id))


def _edge(raw: list, schema: Schema) -> Relationship:
    edge_id, type_id, src, dst, props = raw
    return Relationship(edge_id, src, dst, schema.name(schema.types, type_id), _props(props, schema),
                        str(edge_id), str(src), str(dst))


def _props(props: list, schema: Schema) -> dict[str, Any]:
    return {schema.name(schema.keys, key): decode((kind, raw), schema) for key, kind, raw in props}


def _map(raw: list, schema: Schema) -> dict[str, Any]:
    return {raw[i].decode("utf-8", "replace"): decode(raw[i + 1], schema) for i in range(0, len(raw), 2)}


def _float(raw: bytes, schema: Schema) -> float:
    """`%.15g` text; the largest doubles round up past the largest finite one (1.79769313486232e308)
    and are returned as that, not as infinity."""
    value = float(raw)
    if math.isinf(value) and not raw.lower().endswith(b"inf"):
        return math.copysign(sys.float_info.max, value)
    return value


def _vector(raw: list, schema: Schema) -> list[float]:
    """A `vecf32`'s elements: RESP3 doubles, already floats as hiredis parsed them (`stream.py`),
    taken as they are; text (a RESP2 reply) is parsed."""
    if not raw or type(raw[0]) is float:
        return raw
    return [float(v) for v in raw]


def _date(raw: int, schema: Schema) -> Date:
    try:
        return Date.from_ordinal(_EPOCH_ORDINAL + raw // 86400)
    except (ValueError, OverflowError):
        raise _out_of_range("date", raw) from None


def _local_datetime(raw: int, schema: Schema) -> DateTime:
    try:
        return DateTime.from_native(_EPOCH + _dt.timedelta(seconds=raw))
    except (ValueError, OverflowError):
        raise _out_of_range("local date-time", raw) from None


def _out_of_range(kind: str, raw: int) -> CypherError:
    year = _calendar(raw)[0]
    return CypherError("Neo.ClientError.Statement.ArgumentError",
                       f"The query computed a {kind} in the year {year:,}; Bolt clients (and the "
                       "embedded FalkorDB's own date functions) handle the years 1 to 9999 only.")


def _calendar(seconds: int) -> tuple[int, int, int, int]:
    """(year, month, day, second of the day) `seconds` after 1970-01-01, however far: the
    proleptic Gregorian calendar repeats every 400 years (146,097 days)."""
    days, second = divmod(seconds, 86400)
    cycles, days = divmod(days, 146_097)
    moment = _EPOCH + _dt.timedelta(days=days)
    return moment.year + 400 * cycles, moment.month, moment.day, second


def _local_time(raw: int, schema: Schema) -> Time:
    hours, rest = divmod(raw % 86400, 3600)
    return Time(hours, *divmod(rest, 60))


def _duration(raw: int, schema: Schema) -> Duration:
    """FalkorDB stores a duration as seconds after 1970-01-01 of "epoch + duration"; reading the
    calendar components back the same way gives what its own `toString()` shows (P1Y2M3DT5S)."""
    if raw < 0:
        days = int(raw / 86400)            # FalkorDB counts a day as 86,400 s; truncate toward 0
        return Duration(days=days, seconds=raw - days * 86400)
    year, month, day, second = _calendar(raw)
    return Duration(months=(year - 1970) * 12 + month - 1, days=day - 1, seconds=second)


def stored_duration(months: int, days: int, seconds: int) -> Duration | None:
    """The duration FalkorDB gives back for one built from these parts (it keeps the instant
    1970-01-01 + duration, see `_duration`), or None when that instant is outside its calendar."""
    years, month = divmod(months, 12)
    try:
        start = _dt.date(1970 + years, month + 1, 1).toordinal() - _EPOCH_ORDINAL
    except ValueError:
        return None
    return _duration((start + days) * 86400 + seconds, None)


_DECODERS = {
    4: lambda raw, schema: raw == b"true",
    5: _float,
    6: _decode_cells,
    7: _edge,
    8: _node,
    9: lambda raw, schema: Path(decode(raw[0], schema), decode(raw[1], schema)),
    10: _map,
    11: lambda raw, schema: WGS84Point((float(raw[1]), float(raw[0]))),
    12: _vector,
    13: _local_datetime,
    14: _date,
    15: _local_time,
    16: _duration,
}

# ---------------------------------------------------------------- statistics


_STAT_NAMES = {
    "Nodes created": "nodes-created", "Nodes deleted": "nodes-deleted",
    "Relationships created": "relationships-created", "Relationships deleted": "relationships-deleted",
    "Properties set": "properties-set", "Properties removed": "properties-set",
    "Labels added": "labels-added", "Labels removed": "labels-removed",
    "Indices created": "indexes-added", "Indices deleted": "indexes-removed",
    "Constraints created": "constraints-added", "Constraints deleted": "constraints-removed",
}


def parse_stats(lines: list[bytes]) -> dict[str, int]:
    """FalkorDB's "Nodes created: 1" lines -> Bolt statistics (only non-zero keys)."""
    stats: dict[str, int] = {}
    for line in lines:
        name, _, value = line.decode().partition(": ")
        key = _STAT_NAMES.get(name)
        if key and value:
            stats[key] = stats.get(key, 0) + int(float(value.split()[0]))
    return {k: v for k, v in stats.items() if v}

# ---------------------------------------------------------------- plans


#: Plan operators that change data; schema operators contain "Index" or "Constraint".
WRITE_OPERATORS = frozenset({"Create", "Merge", "MergeCreate", "Update", "Delete"})
_IDENTIFIER = re.compile(r"[(\[]([A-Za-z_][A-Za-z0-9_]*)")


def parse_plan(reply: list[bytes] | bytes, *, profile: bool = False) -> dict[str, Any]:
    """GRAPH.EXPLAIN / GRAPH.PROFILE text (one operator per line, indented 4 per level) ->
    Neo4j's plan shape `{operatorType, identifiers, arguments, children}`."""
    lines = [reply] if isinstance(reply, bytes) else reply
    root: dict[str, Any] | None = None
    stack: list[tuple[int, dict[str, Any]]] = []
    for raw in lines:
        line = raw.decode()
        depth = (len(line) - len(line.lstrip(" "))) // 4
        op = _operator(line.strip(), profile)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            stack[-1][1]["children"].append(op)
        else:
            root = op
        stack.append((depth, op))
    return root or _operator("Results", profile)


def _operator(text: str, profile: bool) -> dict[str, Any]:
    name, *details = [part.strip() for part in text.split(" | ")]
    op: dict[str, Any] = {"operatorType": name, "identifiers": [], "arguments": {}, "children": []}
    if profile and details and details[-1].startswith("Records produced"):
        counters = dict(item.split(": ") for item in details.pop().split(", "))
        op["rows"] = int(counters.get("Records produced", 0))
        op["dbHits"] = 0
        op["time"] = int(float(counters.get("Execution time", "0").split()[0]) * 1_000_000)   # ns
        op["arguments"].update({"Rows": op["rows"], "DbHits": 0, "Time": op["time"]})
    if details:
        op["arguments"]["Details"] = " | ".join(details)
        op["identifiers"] = list(dict.fromkeys(_IDENTIFIER.findall(details[0])))
    return op


def plan_query_type(plan: dict[str, Any]) -> str:
    """Neo4j's query type for a plan: "s" schema, "w"/"rw" when it writes, else "r"."""
    names = set(_operator_names(plan))
    if any("Index" in n or "Constraint" in n for n in names):
        return "s"
    if names & WRITE_OPERATORS:
        return "rw" if plan["operatorType"] == "Results" else "w"
    return "r"


def _operator_names(plan: dict[str, Any]):
    yield plan["operatorType"]
    for child in plan["children"]:
        yield from _operator_names(child)
