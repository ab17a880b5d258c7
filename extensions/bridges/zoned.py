"""`datetime()` answers a zoned date-time in Neo4j; on FalkorDB it is a local date-time in UTC.

The proxy runs `datetime(...)` as `localdatetime(...)` (`spelling.py`), refusing zones other than
UTC (`temporal.py`), so the value is the right instant in UTC; only its type is lost, because
FalkorDB has a single date-time type. Where the query itself says which one a returned column
is, the proxy gives it back as Neo4j would: a RETURN item `datetime(...)`, or a parameter sent
as a date-time in UTC (`RETURN $at`), directly or through WITH aliases, comes back zoned in
UTC. A date-time read from the graph comes back as the kind its property key was written with
(`extensions/temporal/kinds.py`).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any

from neo4j.time import DateTime

from core.backend import MappedRows, Result

from ..cypher import ast as A
from ..cypher.tokens import after_first
from .rule import Context, Edit, Rule


def zoned_columns(ret: A.Return, ctx: Context) -> list[Edit]:
    """Note the final RETURN's columns that are zoned date-times (`Context.zoned`), also through
    WITH aliases (`WITH datetime() AS now ... RETURN now`)."""
    if len(ctx.query.parts) != 1 or ctx.query.parts[0].clauses[-1] is not ret or ret.star:
        return []
    bound: dict[str, A.Expr] = {}
    for clause in ctx.query.parts[0].clauses[:-1]:
        if isinstance(clause, A.With):
            bound = {**(bound if clause.star else {}),
                     **{_name(item): _source(item.expr, bound) for item in clause.items if _name(item)}}
    for index, item in enumerate(ret.items):
        expr = _source(item.expr, bound)
        if isinstance(expr, A.FunctionCall) and expr.lower_name == "datetime":
            ctx.zoned[index] = None
        elif isinstance(expr, A.Parameter):
            ctx.zoned[index] = expr.name
    return []


def _name(item: A.ReturnItem) -> str | None:
    return item.alias or (item.expr.name if isinstance(item.expr, A.Variable) else None)


def _source(expr: A.Expr, bound: dict[str, A.Expr]) -> A.Expr:
    """What a variable projected by earlier WITHs stands for."""
    return bound.get(expr.name, expr) if isinstance(expr, A.Variable) else expr


def utc_columns(zoned: dict[int, str | None], params: dict[str, Any]) -> list[int]:
    """The columns to return zoned in this run: `datetime(...)` ones, and parameters sent in UTC."""
    return [index for index, name in zoned.items() if name is None or _in_utc(params.get(name))]


def _in_utc(value: Any) -> bool:
    return isinstance(value, (_dt.datetime, DateTime)) and value.tzinfo is not None \
        and value.utcoffset() == _dt.timedelta(0)


def _zoned(value: Any) -> Any:
    if isinstance(value, DateTime) and value.tzinfo is None:
        return value.replace(tzinfo=_dt.timezone.utc)
    return value


class ZonedColumns(MappedRows):
    """`result` with the local date-times of `columns` given back zoned in UTC."""

    def __init__(self, result: Result, columns: list[int]):
        super().__init__(result)
        self._columns = columns

    def map_row(self, row: list[Any]) -> None:
        for index in self._columns:
            row[index] = _zoned(row[index])


RULES = (Rule(A.Return, zoned_columns, ("datetime", "$"), r"datetime\s*\(|" + after_first(r"return\b", r"\$")),)
