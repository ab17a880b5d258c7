"""APOC functions that return a map whose keys come from the data, or that only the proxy can
compute (JSON parsing), on FalkorDB.

FalkorDB's Cypher builds maps only with keys written in the query (`{a: x.a}`), so
`apoc.map.clean(row.properties, [], [])` (llama-index's upsert) and
`apoc.meta.cypher.types(properties(n))` (neomodel's inspect_database) cannot be one expression.
Like dynamic labels (`late.py`), a probe first reads the distinct key lists the result will have
- the query's own reading clauses, then `RETURN DISTINCT <key list>` - and the call is rendered
as `CASE <key list> WHEN ['a', 'b'] THEN {a: ..., b: ...} ... END`, one branch per key list, so
the database still computes every value. `apoc.convert.fromJsonMap/List` are computed by the
proxy for each distinct string the probe finds: `CASE s WHEN '{"a": 1}' THEN {a: 1} ... END`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from proxy.backends.falkordb.params import to_expression
from core.errors import CypherError, argument_error

from ..bridges.apoc_functions import cypher_type
from ..cypher import ast as A
from ..cypher.render import name as quote
from ..plan_builder import PlanBuilder, reading_prefix, string
from .dbms import neo4j_cypher

_ENTITY = "keys(CASE WHEN typeOf({x}) IN ['Map', 'Node', 'Edge'] THEN {x} ELSE {{}} END)"
#: Neo4j: the keys of a map, node or relationship (anything else: Neo4j's type error).
_NEO4J_ENTITY = "keys({x})"


def _neo4j_dedup(items: str, var: str) -> str:
    """Neo4j has no `list.dedup`: the distinct keys of `items`, in order."""
    return f"reduce({var}a = [], {var}k IN {items} | CASE WHEN {var}k IN {var}a THEN {var}a ELSE {var}a + [{var}k] END)"


@dataclass(frozen=True)
class MapFunction:
    """`keys(args)`: the key list of the result (Cypher text, from the arguments' texts);
    `value(args, key)`: the value under one key."""

    name: str
    signature: str
    description: str
    arity: int
    keys: Callable[[list[str], str], str]
    value: Callable[[list[str], str, str], str]
    #: The same in Neo4j's Cypher, where it differs.
    neo4j_keys: Callable[[list[str], str], str] | None = None
    neo4j_value: Callable[[list[str], str, str], str] | None = None

    def dialect(self, neo4j: bool) -> tuple[Callable, Callable]:
        """(keys, value) in the backend's Cypher."""
        if not neo4j:
            return self.keys, self.value
        return self.neo4j_keys or self.keys, self.neo4j_value or self.value


def _clean_keys(args: list[str], var: str, entity: str = _ENTITY) -> str:
    x, keys, values = args
    return (f"[{var} IN {entity.format(x=x)} WHERE {x}[{var}] IS NOT NULL AND NOT {var} IN {keys} "
            f"AND NOT {x}[{var}] IN {values}]")


FUNCTIONS = {f.name.lower(): f for f in (
    MapFunction("apoc.map.clean",
                "apoc.map.clean(map :: MAP, keys :: LIST<STRING>, values :: LIST<ANY>) :: MAP",
                "Filters the keys and values contained in the given `LIST<ANY>` values (and null values).", 3,
                _clean_keys, lambda args, key, var: f"{args[0]}.{quote(key)}",
                lambda args, var: _clean_keys(args, var, _NEO4J_ENTITY)),
    MapFunction("apoc.map.merge", "apoc.map.merge(map1 :: MAP, map2 :: MAP) :: MAP",
                "Merges the two given `MAP` values into one `MAP` (the second one's values win).", 2,
                lambda args, var: f"list.dedup(keys({args[0]}) + keys({args[1]}))",
                lambda args, key, var: f"CASE WHEN {string(key)} IN keys({args[1]}) THEN {args[1]}.{quote(key)} "
                                       f"ELSE {args[0]}.{quote(key)} END",
                lambda args, var: _neo4j_dedup(f"keys({args[0]}) + keys({args[1]})", var)),
    MapFunction("apoc.map.removeKeys", "apoc.map.removeKeys(map :: MAP, keys :: LIST<STRING>) :: MAP",
                "Removes the given keys from the `MAP`.", 2,
                lambda args, var: f"[{var} IN keys({args[0]}) WHERE NOT {var} IN {args[1]}]",
                lambda args, key, var: f"{args[0]}.{quote(key)}"),
    MapFunction("apoc.map.fromPairs", "apoc.map.fromPairs(pairs :: LIST<LIST<ANY>>) :: MAP",
                "Creates a `MAP` from the given `LIST<LIST<ANY>>` of key-value pairs (a later pair wins).", 1,
                lambda args, var: f"list.dedup([{var} IN {args[0]} | {var}[0]])",
                lambda args, key, var: f"last([{var} IN {args[0]} WHERE {var}[0] = {string(key)} | {var}[1]])",
                lambda args, var: _neo4j_dedup(f"[{var} IN {args[0]} | {var}[0]]", var)),
    MapFunction("apoc.meta.cypher.types", "apoc.meta.cypher.types(props :: ANY) :: MAP",
                "Returns a `MAP` containing the type names of the given values.", 1,
                lambda args, var: _ENTITY.format(x=args[0]),
                lambda args, key, var: cypher_type(f"{args[0]}.{quote(key)}", var),
                lambda args, var: _NEO4J_ENTITY.format(x=args[0]),
                lambda args, key, var: cypher_type(f"{args[0]}.{quote(key)}", var, neo4j=True)),
)}


@dataclass(frozen=True)
class ValueFunction:
    """A function of one value the proxy computes (`compute`) for each distinct value the probe
    finds; the call becomes `CASE arg WHEN <value> THEN <result> ... END`."""

    name: str
    signature: str
    description: str
    compute: Callable[[Any], Any]


def _from_json(kind: type, what: str) -> Callable[[Any], Any]:
    def compute(text: Any) -> Any:
        if text is None:
            return None
        try:
            value = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise argument_error(f"Cannot read {text!r} as JSON: {exc}") from None
        if not isinstance(value, kind):
            raise argument_error(f"{text!r} is not a JSON {what}.")
        return value
    return compute


VALUE_FUNCTIONS = {f.name.lower(): f for f in (
    ValueFunction("apoc.convert.fromJsonMap", "apoc.convert.fromJsonMap(json :: STRING) :: MAP",
                  "Converts the given JSON map into a Cypher `MAP`.", _from_json(dict, "map")),
    ValueFunction("apoc.convert.fromJsonList", "apoc.convert.fromJsonList(json :: STRING) :: LIST<ANY>",
                  "Converts the given JSON list into a Cypher `LIST<STRING>`.", _from_json(list, "list")),
)}


def calls_in(clause: A.Clause) -> list[A.FunctionCall]:
    """The outermost map-building and proxy-computed APOC calls in `clause`."""
    served = FUNCTIONS.keys() | VALUE_FUNCTIONS.keys()
    found = [n for n in clause.walk() if isinstance(n, A.FunctionCall) and n.lower_name in served]
    inner = {id(m) for n in found for m in n.walk() if m is not n}
    return [n for n in found if id(n) not in inner]


def plan(planner: PlanBuilder, clause_index: int, clause: A.Clause) -> None:
    """Each call in `clause`: a probe of its distinct key lists, rendered per run."""
    for call in calls_in(clause):
        if call.lower_name in VALUE_FUNCTIONS:
            _plan_value(planner, clause_index, call, VALUE_FUNCTIONS[call.lower_name])
            continue
        function = FUNCTIONS[call.lower_name]
        if len(call.args) != function.arity:
            raise argument_error(f"{function.name}() takes {function.arity} arguments, got "
                                 f"{len(call.args)}. Usage: {function.signature}")
        args = [planner.render(arg) for arg in call.args]
        var = f"__apocKey{planner.fresh()}"
        key_list, value = function.dialect(neo4j_cypher(planner.dialect))
        keys = key_list(args, var)
        lines = _probe_prefix(planner, clause_index, call)
        lines.append(f"RETURN DISTINCT {keys} AS __value")
        marker = planner.add_late("\n".join(lines), _renderer(function, value, args, keys, var))
        planner.add_edit((*call.span, marker))


def _probe_prefix(planner: PlanBuilder, clause_index: int, call: A.FunctionCall) -> list[str]:
    """The reading clauses the probe of `call`'s values needs."""
    if not any(call.find_all(A.Variable)):
        return []
    try:
        return reading_prefix(planner, clause_index, call)
    except CypherError:
        raise argument_error(f"{call.name}() is computed from the values a probe reads first, and its "
                             "arguments use a variable the probe cannot bind (a list comprehension's, or one "
                             "written earlier in the query); UNWIND the list, or compute the argument in a WITH "
                             "from the query's input, before the call.") from None


def _plan_value(planner: PlanBuilder, clause_index: int, call: A.FunctionCall, function: ValueFunction) -> None:
    if len(call.args) != 1:
        raise argument_error(f"{function.name}() takes 1 argument on the embedded database (no JSON path), "
                             f"got {len(call.args)}. Usage: {function.signature}")
    arg = planner.render(call.args[0])
    lines = _probe_prefix(planner, clause_index, call)
    lines.append(f"RETURN DISTINCT {arg} AS __value")

    def render(values: list[Any]) -> str:
        branches = [f"WHEN {to_expression(v)} THEN {_literal(function.compute(v), function)}"
                    for v in values if v is not None]
        return f"(CASE {arg} {' '.join(branches)} END)" if branches else "null"

    planner.add_edit((*call.span, planner.add_late("\n".join(lines), render)))


def _literal(value: Any, function: ValueFunction) -> str:
    """`value` as a Cypher literal FalkorDB reads (its maps take only plain identifier keys)."""
    if isinstance(value, dict):
        bad = [k for k in value if not k.isidentifier()]
        if bad:
            raise argument_error(f"{function.name}() would build a map with the key {bad[0]!r}; the "
                                 "embedded FalkorDB builds maps only with plain identifier keys.")
        return "{" + ", ".join(f"{k}: {_literal(v, function)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_literal(v, function) for v in value) + "]"
    return to_expression(value)


def _renderer(function: MapFunction, value: Callable[[list[str], str, str], str], args: list[str], keys: str,
              var: str) -> Callable[[list[Any]], str]:
    def render(values: list[Any]) -> str:
        lists = sorted({tuple(v) for v in values if isinstance(v, list)})
        if not lists:
            return "null"
        branches = []
        for key_list in lists:
            bad = [k for k in key_list if not k.isidentifier()]
            if bad:
                raise argument_error(f"{function.name}() would build a map with the key {bad[0]!r}; the "
                                     "embedded FalkorDB builds maps only with plain identifier keys.")
            entries = ", ".join(f"{k}: {value(args, k, var)}" for k in key_list)
            branches.append(f"WHEN [{', '.join(map(string, key_list))}] THEN {{{entries}}}")
        return f"(CASE {keys} {' '.join(branches)} END)"
    return render


def listed() -> list[MapFunction | ValueFunction]:
    return sorted([*FUNCTIONS.values(), *VALUE_FUNCTIONS.values()], key=lambda f: f.name.lower())
