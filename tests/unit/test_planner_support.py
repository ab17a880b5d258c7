"""Shared by the planner tests: a stand-in `ts_avg`, a test algorithm, the seed graph, and a
runner that records what reaches the backend. (No tests here.)

The stand-in computes monthly averages from a dict keyed by the node's `id` property, so the
expected answers can be computed by hand in Python, independently of the planner.
"""

from __future__ import annotations

from statistics import mean
from typing import Any

from extensions.registry import (
    ArgKind,
    Extension,
    NodeRef,
    Procedure,
    PropertyRef,
    Registry,
    VirtualProcedure,
)
from core.backend import TxConfig
from core.errors import argument_error


def _monthly() -> dict[str, dict[tuple[int, int], float]]:
    """P1: every month 2014-2024 (summer lower); P2: 2018-2022, all zero in 2019; P3: other field."""
    data: dict[str, dict[tuple[int, int], float]] = {"P1": {}, "P2": {}, "P3": {}}
    for year in range(2014, 2025):
        for month in range(1, 13):
            data["P1"][(year, month)] = 100.0 + year - 2014 - (30.0 if month in (6, 7, 8) else 0.0) + month / 7
    for year in range(2018, 2023):
        for month in range(1, 13):
            data["P2"][(year, month)] = 0.0 if year == 2019 else 50.0 + (month % 5) * 3.3
    for month in range(1, 13):
        data["P3"][(2020, month)] = 7.0
    return data


MONTHLY = _monthly()
CHANNELS = ("prd_oe_net",)
CALLS: list[int] = []          # batch sizes seen by the stand-in, to check "once per extension"


def _bound(value: Any, end: bool) -> tuple[int, int] | None:
    if value is None:
        return None
    parts = [int(p) for p in str(value).split("-")]
    if len(parts) == 1:
        return (parts[0], 12 if end else 1)
    return (parts[0], parts[1])


def ts_avg_value(key: str, channel: str, start: Any = None, end: Any = ..., *, single: bool) -> float | None:
    """The reference computation (also used by the tests to compute expectations)."""
    if channel not in CHANNELS:
        raise argument_error(f"Unknown channel '{channel}'. Available: {', '.join(CHANNELS)}")
    low = _bound(start, end=False)
    high = _bound(start if single else end, end=True)
    values = [v for (y, m), v in MONTHLY.get(key, {}).items()
              if (low is None or (y, m) >= low) and (high is None or (y, m) <= high)]
    return mean(values) if values else None


def _ts_avg(rows) -> list[Any]:
    CALLS.append(len(rows))
    out = []
    for row in rows:
        ref: PropertyRef = row[0]
        out.append(ts_avg_value(ref.node.properties["id"], ref.key, *row[1:], single=len(row) <= 2))
    return out


def _degree_query(params: dict, node_id: str) -> str:
    label = params["label"]
    return (f"MATCH (n:{label}) OPTIONAL MATCH (n)--(m) "
            f"RETURN {node_id.format('n')} AS node, count(m) AS degree")


def _degree(params: dict, rows) -> dict[Any, tuple]:
    return {node: (float(degree) * params["scale"],) for node, degree in rows if degree >= params["min"]}


def _label(rows) -> list[str]:
    return [f"{row[0].labels[0]}:{row[0].properties.get('id')}" if isinstance(row[0], NodeRef) else f"v:{row[0]}"
            for row in rows]


async def _numbers(ctx, args) -> list[list[Any]]:
    """test.numbers(n): rows (i, 'n<i>') for i in 1..n, plus who asked and with what metadata."""
    n = args[0] if args else 3
    return [[i, f"n{i}", ctx.user, ctx.metadata] for i in range(1, n + 1)]


def registry() -> Registry:
    return Registry([
        Extension("ts_avg", (ArgKind.PROPERTY, ArgKind.VALUE, ArgKind.VALUE), 1, _ts_avg,
                  node_properties=("id",), signature="ts_avg(n.channel, start?, end?)"),
        Extension("tag", (ArgKind.NODE_OR_VALUE,), 1, _label, node_properties=("id",),
                  signature="tag(node_or_value)"),
        Procedure("test_degree", {"label": "ProductionProfile", "scale": 1.0, "min": 0},
                  ("node", "score"), _degree_query, _degree,
                  signature="CALL test_degree({label, scale, min}) YIELD node, score"),
        VirtualProcedure("test.numbers", ("value", "name", "user", "metadata"), _numbers,
                         signature="test.numbers(n = 3) :: (value, name, user, metadata)"),
    ])



GRAPH = """CREATE (t:Field {title: 'TROLL'}), (o:Field {title: 'OSEBERG'}),
  (:ProductionProfile {id: 'P1'})-[:OF_FIELD]->(t), (:ProductionProfile {id: 'P2'})-[:OF_FIELD]->(t),
  (:ProductionProfile {id: 'P3'})-[:OF_FIELD]->(o)"""


def seed_expected() -> dict[str, Any]:
    """The seed query's answer, computed by hand."""
    ratios = []
    for key in ("P1", "P2"):
        for year in range(2015, 2025):
            yearly = ts_avg_value(key, "prd_oe_net", str(year), single=True)
            summer = ts_avg_value(key, "prd_oe_net", f"{year}-6", f"{year}-8", single=False)
            if yearly is not None and yearly > 0:
                ratios.append(summer / yearly)
    from statistics import stdev
    avg = mean(ratios)
    return {"mean_ratio": avg, "std_ratio": stdev(ratios), "n_years": len(ratios), "mean_reduction": 1.0 - avg}


class RecordingRunner:
    """A runner over a real backend (or a transaction) that records every query it sends."""

    def __init__(self, backend, credentials=None, tx=None):
        self.backend = backend
        self.in_transaction = tx is not None
        self._credentials, self._tx = credentials, tx
        self.queries: list[tuple[str, dict]] = []
        self.database = backend.default_database
        self.user, self.metadata = "tester", {"app": "tests"}

    def graph_state(self):
        return None

    def read_version(self):
        return self.backend.read_version(self.database)

    def excluding_writes(self, writes):
        return self.backend.excluding_writes(None)

    async def run(self, query: str, params: dict):
        self.queries.append((query, params))
        if self._tx is not None:
            return await self._tx.run(query, params)
        return await self.backend.run(query, params, TxConfig(), self._credentials)


async def rows(result) -> list[list[Any]]:
    records = await result.fetch(-1)
    await result.consume()
    return records
