"""Separated probes give the values the combined probe gives (a randomised property test), and
the probe cache's keys and bounds.

A stand-in runner plays the database: it answers each probe text from one random set of
(node, year, month) rows the query prefix "produces", computing each RETURN column itself, so
the combined probe and the separated pair see the same data. The bound parameters are then
read the way the rewritten query reads them, for every row that occurs.
"""

from __future__ import annotations

import re
from types import SimpleNamespace

from hypothesis import given, settings, strategies as st

from extensions.planner.bind import Lookup
from extensions.planner.planner import ExtensionPlanner
from extensions.planner.probe_cache import ProbeCache, estimate_bytes
from extensions.registry import ArgKind, Extension, Registry
from core.backend import ListResult, Summary
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_planner_bind import read

QUERY = ("MATCH (p:P) UNWIND $years AS y UNWIND $months AS m "
         "RETURN f(p.x, y) AS a, g(p.x, y, m) AS b, h(p, 'k') AS c")
_ITEM = re.compile(r"(.+?) AS (__c\d+|__ids)(?:, |$)")


def _f(rows):
    return [None if y is None else ref.node.id * 10_000 + y for ref, y in rows]


def _g(rows):
    return [(ref.node.id, y, m) for ref, y, m in rows]


def _h(rows):
    return [f"{node.id}:{','.join(node.labels)}:{k}" for node, k in rows]


REGISTRY = Registry([
    Extension("f", (ArgKind.PROPERTY, ArgKind.VALUE), 2, _f),
    Extension("g", (ArgKind.PROPERTY, ArgKind.VALUE, ArgKind.VALUE), 3, _g),
    Extension("h", (ArgKind.NODE, ArgKind.VALUE), 2, _h),
])


def _column(expr: str, env: dict):
    """The value of one probe column for one row of the prefix (the expressions the planner writes)."""
    key = re.fullmatch(r"toString\((\w+)\)", expr)
    if key:
        value = env[key.group(1)]
        return None if value is None else str(value)
    if expr == "id(p)":
        return env["p"][0]
    if expr == "labels(p)":
        return env["p"][1]
    if expr.startswith("'"):
        return expr.strip("'")
    return env[expr]


class _Database:
    """Answers RETURN [DISTINCT] probes over `rows` (dicts of p, y, m); records the final query."""

    backend = SimpleNamespace(dialect=FALKORDB, versioned_reads=False)
    database = "neo4j"
    user = None
    metadata = None

    def __init__(self, rows: list[dict]):
        self.rows = rows
        self.final: dict | None = None
        self.probes = 0
        self.state = 1

    def graph_state(self):
        return self.state

    async def run(self, query: str, params: dict):
        head, _, tail = query.rpartition("\nRETURN ")
        if not head:                                          # the rewritten query
            self.final = params
            return ListResult([], [], Summary("neo4j"))
        self.probes += 1
        distinct = tail.startswith("DISTINCT ")
        items = _ITEM.findall(tail.removeprefix("DISTINCT "))
        if items[-1][1] == "__ids":                          # the grouped node probe
            per_node = re.fullmatch(r"collect\((?:DISTINCT )?\[(.*)\]\)", items[-1][0]).group(1).split(", ")
            groups: dict[tuple, list] = {}
            for env in self.rows:
                key = tuple(_freeze(_column(expr, env)) for expr, _ in items[:-1])
                item = [_column(expr, env) for expr in per_node]
                if item not in groups.setdefault(key, []):
                    groups[key].append(item)
            rows = [[*(_thaw(v) for v in key), items] for key, items in groups.items()]
        else:
            rows = [[_column(expr, env) for expr, _ in items] for env in self.rows]
            if distinct:
                rows = [_thaw_row(r) for r in dict.fromkeys(tuple(map(_freeze, r)) for r in rows)]
        return ListResult([name for _, name in items], rows, Summary("neo4j"))


def _freeze(value):
    return tuple(value) if isinstance(value, list) else value


def _thaw(value):
    return list(value) if isinstance(value, tuple) else value


def _thaw_row(row):
    return [_thaw(v) for v in row]


def _lookup(params: dict, name: str, node_id: int, keys: list):
    """`$name[id - base]...` as the rewritten query reads it (null outside the list)."""
    return read(Lookup(FALKORDB, name, "id(p)", tuple(keys)), params, node_id, keys)


async def _bound(rows: list[dict], split: bool) -> tuple[dict, int]:
    planner = ExtensionPlanner(REGISTRY, dialect=FALKORDB)
    step = planner.plan(QUERY).steps[0]
    assert step.split is not None
    if not split:
        step.split = None
    database = _Database(rows)
    await planner.execute(QUERY, {"years": [], "months": []}, database)
    return database.final, database.probes


nodes = st.lists(st.tuples(st.integers(0, 60), st.sampled_from([["P"], ["P", "Q"], ["Q", "P"]])),
                 min_size=1, max_size=8, unique_by=lambda n: n[0])
years = st.lists(st.one_of(st.none(), st.integers(1990, 2030)), min_size=1, max_size=5, unique=True)


@settings(max_examples=150, deadline=None)
@given(nodes, years, st.data())
async def test_separated_probe_binds_what_the_combined_probe_binds(nodes, years, data):
    months = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=3, unique=True))
    combos = [{"p": n, "y": y, "m": m} for n in nodes for y in years for m in months]
    # The prefix produces some of the combinations (correlated or not), possibly repeated.
    rows = data.draw(st.lists(st.sampled_from(combos), min_size=1, max_size=40))
    combined, probes = await _bound(rows, split=False)
    separated, split_probes = await _bound(rows, split=True)
    assert (probes, split_probes) == (1, 2)
    for env in rows:
        node_id, y, m = env["p"][0], env["y"], env["m"]
        ky, km = None if y is None else str(y), str(m)
        for name, keys in (("__ext0", [ky]), ("__ext1", [ky, km]), ("__ext2", [])):
            expected = _lookup(combined, name, node_id, keys)
            assert expected is not None or name == "__ext0"
            assert _lookup(separated, name, node_id, keys) == expected


async def test_a_correlated_product_falls_back_to_the_combined_probe():
    """Every node with its own years: the product is ~N times larger than its sides."""
    rows = [{"p": (i, ["P"]), "y": 1000 + i, "m": 1} for i in range(300)]
    bound, probes = await _bound(rows, split=True)
    assert probes == 3                           # nodes, values, then the combined probe
    assert bound["__ext0_cols"] is None                   # bound sparse: each node its own year
    assert _lookup(bound, "__ext0", 7, ["1007"]) == 7 * 10_000 + 1007
    assert _lookup(bound, "__ext0", 7, ["1008"]) is None


# ---- the probe cache


class _Runner:
    database = "neo4j"

    def __init__(self, state):
        self.state = state

    def graph_state(self):
        return self.state


def test_cache_keys_on_text_parameters_and_graph_state():
    cache = ProbeCache()
    text = "MATCH (n) WHERE n.x = $x RETURN DISTINCT id(n) AS __c0"
    key = cache.key(text, {"x": 1, "unused": 2}, _Runner(5))
    assert key == cache.key(text, {"x": 1, "unused": 3}, _Runner(5))      # parameters it does not read
    assert key != cache.key(text, {"x": 2}, _Runner(5))
    assert key != cache.key(text, {"x": 1}, _Runner(6))                   # a write happened
    assert cache.key(text, {"x": 1}, _Runner(None)) is None              # a transaction that wrote
    cache.put(key, [[1], [2]])
    assert cache.get(key) == [[1], [2]] and cache.get(cache.key(text, {"x": 1}, _Runner(6))) is None


def test_volatile_probes_are_not_cached():
    cache = ProbeCache()
    for text in ("MATCH (n) WHERE rand() < 0.5 RETURN DISTINCT id(n)",
                 "MATCH (n) WITH n, timestamp() AS t RETURN DISTINCT id(n), t",
                 "WITH datetime() AS now MATCH (n) RETURN DISTINCT id(n), now",
                 "WITH date.statement() AS d RETURN DISTINCT d"):
        assert cache.key(text, {}, _Runner(1)) is None, text
    assert cache.key("RETURN DISTINCT date('2020-01-01') AS d", {}, _Runner(1)) is not None


def test_cache_evicts_least_recently_used_by_bytes():
    rows = [[i, f"text {i}"] for i in range(1000)]
    size = estimate_bytes(rows)
    cache = ProbeCache(max_bytes=int(size * 4.5))
    for i in range(4):
        cache.put(("q", i), rows)
    cache.get(("q", 0))                            # recently used: kept
    cache.put(("q", 4), rows)
    assert cache.get(("q", 1)) is None and cache.get(("q", 0)) is rows and len(cache) == 4
    assert cache.nbytes <= cache.max_bytes
    huge = [[i, "x" * 100] for i in range(20_000)]
    cache.put(("huge", 0), huge)                   # over a quarter of the budget: not kept
    assert cache.get(("huge", 0)) is None


def test_cache_ttl_turns_keys_over(monkeypatch):
    cache = ProbeCache(ttl=10.0)
    clock = iter([100.0, 105.0, 111.0])
    monkeypatch.setattr("extensions.planner.probe_cache.time.monotonic", lambda: next(clock))
    first, same, later = (cache.key("RETURN DISTINCT 1", {}, _Runner(1)) for _ in range(3))
    assert first == same != later


async def test_cached_node_sides_are_per_property_key():
    """Two queries with one node probe text but different channels get their own arguments."""
    database = _Database([{"p": (3, ["P"]), "y": 2020, "m": 1}])
    seen = []
    registry = Registry([Extension("f", (ArgKind.PROPERTY, ArgKind.VALUE), 2,
                                   lambda rows: seen.extend(ref.key for ref, _ in rows) or [1] * len(rows))])
    planner = ExtensionPlanner(registry, dialect=FALKORDB, probe_cache=ProbeCache())
    for key in ("x", "z"):
        await planner.execute(f"MATCH (p:P) UNWIND $years AS y RETURN f(p.{key}, y) AS a", {"years": []}, database)
    assert seen == ["x", "z"]


async def test_a_warm_repeat_computes_nothing_until_the_graph_or_the_data_changes():
    database = _Database([{"p": (3, ["P"]), "y": 2020, "m": 1}, {"p": (4, ["P"]), "y": 2021, "m": 1}])
    calls, version = [], [1]
    registry = Registry([Extension("f", (ArgKind.PROPERTY, ArgKind.VALUE), 2,
                                   lambda rows: calls.append(len(rows)) or _f(rows),
                                   data_version=lambda: version[0])])
    planner = ExtensionPlanner(registry, dialect=FALKORDB, probe_cache=ProbeCache())
    query = "MATCH (p:P) UNWIND $years AS y RETURN f(p.x, y) AS a"

    async def bound():
        await planner.execute(query, {"years": []}, database)
        return database.final

    first = await bound()
    assert (await bound()) == first and calls == [4]          # the product, computed once
    version[0] = 2                                            # the extension's data changed
    assert (await bound()) == first and calls == [4, 4]
    database.state = 2                                        # a write
    database.rows.append({"p": (5, ["P"]), "y": 2020, "m": 1})
    assert _lookup(await bound(), "__ext0", 5, ["2020"]) == 5 * 10_000 + 2020 and calls == [4, 4, 6]


async def test_a_write_between_the_two_probes_binds_nothing_rather_than_failing():
    class _Racing(_Database):
        async def run(self, query: str, params: dict):
            result = await super().run(query, params)
            if "__ids" not in query and "RETURN DISTINCT" in query:      # the value probe: rows gone
                return ListResult(result.keys, [], Summary("neo4j"))
            return result

    database = _Racing([{"p": (3, ["P"]), "y": 2020, "m": 1}])
    planner = ExtensionPlanner(REGISTRY, dialect=FALKORDB)
    await planner.execute(QUERY, {"years": [], "months": []}, database)
    assert _lookup(database.final, "__ext0", 3, ["2020"]) is None
    assert _lookup(database.final, "__ext2", 3, []) is None


async def test_without_a_probe_cache_values_are_computed_again_only_for_other_probe_rows():
    """Behind a Neo4j (no probe cache) every query probes; an extension is evaluated again only
    when the probe rows or its data changed, and always when it reads the graph itself (`prepare`)."""
    database = _Database([{"p": (3, ["P"]), "y": 2020, "m": 1}])
    calls, version = [], [1]

    async def prepare(graph, rows):
        return None
    registry = Registry([
        Extension("f", (ArgKind.PROPERTY, ArgKind.VALUE), 2, lambda rows: calls.append("f") or _f(rows),
                  data_version=lambda: version[0]),
        Extension("g", (ArgKind.PROPERTY, ArgKind.VALUE), 2, lambda rows, _: calls.append("g") or _f(rows),
                  prepare=prepare)])
    planner = ExtensionPlanner(registry, dialect=FALKORDB)

    async def bound(function: str) -> dict:
        await planner.execute(f"MATCH (p:P) UNWIND $years AS y RETURN {function}(p.x, y) AS a", {"years": []},
                              database)
        return database.final

    first = await bound("f")
    assert await bound("f") == first and calls == ["f"] and database.probes == 4     # probed twice, computed once
    database.rows.append({"p": (4, ["P"]), "y": 2021, "m": 1})                    # a write the proxy did not see
    assert _lookup(await bound("f"), "__ext0", 4, ["2021"]) == 4 * 10_000 + 2021 and calls == ["f"] * 2
    version[0] = 2                                                                # the extension's data changed
    await bound("f")
    assert calls == ["f"] * 3
    await bound("g"), await bound("g")
    assert calls == ["f"] * 3 + ["g"] * 2


def test_values_are_kept_by_probe_rows_only_for_small_probes():
    from extensions.planner.computed import few_cells
    node_rows = [[["P"], [[i, f"4:x:{i}"] for i in range(10)]]]       # a row, 2 cells, 1 label, 10 nodes
    value_rows = [["2020"]]                                           # a row, 1 cell
    assert few_cells((node_rows, value_rows), 16) and not few_cells((node_rows, value_rows), 15)
    assert not few_cells(([[i] for i in range(10**5)],), 100)
