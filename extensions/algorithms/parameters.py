"""Algorithm parameters: names (with their Neo4j GDS spellings), defaults, checks.

A procedure's parameter map is merged over its defaults by the planner (which also rejects
unknown names with a did-you-mean); `resolve` folds the aliases into the canonical names, checks
each value's type and range with a message that teaches, and splits the result into the
`Subgraph` to project and the options the kernel reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from core.errors import argument_error

from .projection import Subgraph


@dataclass(frozen=True)
class Param:
    """One canonical parameter: its default, what it accepts, and other names for it."""

    name: str
    default: Any
    check: Callable[[str, str, Any], Any]          # (procedure, name, value) -> normalised value
    aliases: tuple[str, ...] = ()


def _describe(value: Any) -> str:
    kind = {bool: "Boolean", int: "Integer", float: "Float", str: "String", list: "List",
            dict: "Map"}.get(type(value), type(value).__name__)
    return f"{value!r} ({kind})"


def _fail(procedure: str, name: str, value: Any, expected: str):
    raise argument_error(f"{procedure}() parameter {name} must be {expected}, got {_describe(value)}.")


def names(procedure: str, name: str, value: Any) -> tuple[str, ...]:
    """A label / type name or a list of them ('*' = all)."""
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        _fail(procedure, name, value, "a name or a list of names")
    return () if "*" in items else tuple(dict.fromkeys(items))


_DIRECTIONS = {"out": "out", "in": "in", "both": "both",
               "natural": "out", "reverse": "in", "undirected": "both"}     # GDS orientations


def direction(procedure: str, name: str, value: Any) -> str:
    if not isinstance(value, str) or value.lower() not in _DIRECTIONS:
        _fail(procedure, name, value, "'out', 'in' or 'both' (GDS: NATURAL, REVERSE, UNDIRECTED)")
    return _DIRECTIONS[value.lower()]


def text(procedure: str, name: str, value: Any) -> str:
    if not isinstance(value, str) or not value:
        _fail(procedure, name, value, "a string")
    return value


def flag(procedure: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        _fail(procedure, name, value, "true or false")
    return value


def number(low: float, high: float | None = None, *, open_high: bool = False):
    """A float check for low < value (<= / <) high."""
    def check(procedure: str, name: str, value: Any) -> float:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and value > low
        ok = ok and (high is None or (value < high if open_high else value <= high))
        if not ok:
            bound = "" if high is None else f" and {'below' if open_high else 'at most'} {high:g}"
            _fail(procedure, name, value, f"a number above {low:g}{bound}")
        return float(value)
    return check


def count(procedure: str, name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        _fail(procedure, name, value, "a positive integer")
    return value


def integer(procedure: str, name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        _fail(procedure, name, value, "an integer")
    return value


#: The subgraph parameters every algorithm accepts (direction's default is per algorithm).
SUBGRAPH = (
    Param("node_type", None, names, ("labels", "nodeLabels")),
    Param("relationship", None, names, ("connection_types", "relationshipTypes")),
    Param("weight_property", None, text, ("relationshipWeightProperty",)),
    Param("where", None, text),
    Param("refresh", False, flag),
)


def direction_param(default: str) -> Param:
    return Param("direction", default, direction, ("orientation",))


DAMPING = Param("damping_factor", 0.85, number(0.0, 1.0, open_high=True), ("dampingFactor",))
MAX_ITERATIONS = Param("max_iterations", 100, count, ("maxIterations",))
TOLERANCE = Param("tolerance", 1e-6, number(0.0))
RESOLUTION = Param("resolution", 1.0, number(0.0), ("gamma",))
NORMALIZED = Param("normalized", False, flag)
SAMPLE_SIZE = Param("sample_size", None, count, ("samplingSize",))
SEED = Param("seed", None, integer, ("randomSeed", "samplingSeed"))


def defaults(params: tuple[Param, ...]) -> dict[str, Any]:
    """Every accepted name -> default (aliases default to None: 'not given')."""
    out: dict[str, Any] = {}
    for param in params:
        out[param.name] = param.default
        out.update(dict.fromkeys(param.aliases))
    return out


def resolve(procedure: str, params: tuple[Param, ...], given: dict[str, Any]) -> tuple[Subgraph, dict[str, Any]]:
    """The planner's merged parameter map -> (subgraph, checked options by canonical name)."""
    options: dict[str, Any] = {}
    for param in params:
        value = given.get(param.name, param.default)
        for alias in param.aliases:
            if given.get(alias) is not None:
                value, name = given[alias], alias
                break
        else:
            name = param.name
        options[param.name] = None if value is None else param.check(procedure, name, value)
    subgraph = Subgraph(labels=options.pop("node_type") or (), types=options.pop("relationship") or (),
                        weight_property=options.pop("weight_property"), where=options.pop("where"))
    options["weighted"] = subgraph.weight_property is not None
    return subgraph, options
