"""The rows of an algorithm CALL a query needs: the top k by its value, or those past a threshold.

`CALL pagerank({...}) YIELD node, score RETURN node.name, score ORDER BY score DESC LIMIT 10`
reads ten rows of a million. Binding every score so that the database can order them cost
0.9 s of a warm 1M-node call; instead the planner binds only the rows that can reach the result,
and the database still does the filtering, ordering and limit it always does, so the answer is
its own (ties at the cut included):

- Thresholds: a conjunct of the YIELD's WHERE comparing the value to a constant (`score > 0.01`,
  `$min <= score`, `community = 3`) is applied in Python first: a row failing it fails the WHERE.
- Top k: when the clause right after the CALL is a WITH or RETURN that maps rows one to one (no
  aggregation, no DISTINCT), sorts first by the value and has a LIMIT (and maybe a SKIP), and the
  YIELD's WHERE holds nothing but such thresholds, the rows kept are those whose value is at
  least the (skip + limit)-th largest (at most the smallest, ascending). Every row of the first
  skip + limit has such a value; rows carried in from before the CALL repeat each algorithm row
  and keep that true.
Rows whose value is NaN (a null: a node without the text) fail every threshold and pass every
top k: wherever the database orders them, the rows with a number that can reach the result are
still those at or past the cut among the numbers. Anything else (a MATCH between, an ORDER BY on
another key first, a LIMIT that is not a non-negative integer) binds every row, as before.

An extension call whose value depends on one node only (`text_score(n, 'name', $q) AS s`) is
reduced the same way when it is a whole item of a WITH/RETURN (`plan_projection`): the rows of
that projection are those of the MATCH before it, one per row, so the same cut keeps every row
that can reach the result.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..cypher.constants import constant
from ..cypher import ast as A

_FLIPPED = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "=": "="}
_COMPARE = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge, "=": operator.eq}


@dataclass(frozen=True)
class Top:
    descending: bool
    skip: A.Expr | None
    limit: A.Expr


@dataclass(frozen=True)
class Reduction:
    """What a query keeps of an algorithm's rows: value bounds (op, constant) and maybe a top k."""

    bounds: tuple[tuple[str, A.Expr], ...] = ()
    top: Top | None = None

    def keep(self, values: np.ndarray, params: dict[str, Any]) -> np.ndarray | None:
        """A mask of the rows to bind (None: all of them)."""
        if values.dtype == object:
            return None
        mask = np.ones(len(values), dtype=bool)
        for op, expr in self.bounds:
            bound = _constant(expr, params)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                mask &= _COMPARE[op](values, bound)
        rows = self._top_rows(params)
        if rows == 0:
            mask[:] = False
        elif rows is not None:
            missing = np.isnan(values) if values.dtype.kind == "f" else np.zeros(len(values), dtype=bool)
            candidates = values[mask & ~missing]
            if rows < len(candidates):
                if self.top.descending:
                    mask &= missing | (values >= np.partition(candidates, len(candidates) - rows)[len(candidates) - rows])
                else:
                    mask &= missing | (values <= np.partition(candidates, rows - 1)[rows - 1])
        return None if mask.all() else mask

    def resolved(self, params: dict[str, Any]) -> tuple:
        """The constants this reduction reads in a run (what a cached reduction is keyed by)."""
        exprs = [expr for _, expr in self.bounds]
        if self.top is not None:
            exprs += [self.top.skip, self.top.limit]
        return tuple(repr(_constant(expr, params)) for expr in exprs if expr is not None)

    def _top_rows(self, params: dict[str, Any]) -> int | None:
        """skip + limit when both are non-negative integers (else the database says what is wrong)."""
        if self.top is None:
            return None
        counts = [_constant(expr, params) for expr in (self.top.skip, self.top.limit) if expr is not None]
        if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
            return None
        return sum(counts)


def plan(clause: A.CallProcedure, following: A.Clause | None, value: str, text: str,
         aggregating: bool) -> Reduction | None:
    """The reduction of the rows of `clause`, whose value column is named `value` (None: none);
    `aggregating`: whether `following` aggregates."""
    conjuncts = _conjuncts(clause.where) if clause.where is not None else []
    bounds = tuple(bound for c in conjuncts if (bound := _bound(c, value)) is not None)
    only_bounds = len(bounds) == len(conjuncts)
    top = _top(following, value, text) if only_bounds and not aggregating else None
    if not bounds and top is None:
        return None
    return Reduction(bounds, top)


def plan_projection(clause: A._Projection, item: A.ReturnItem, text: str) -> Reduction | None:
    """The reduction of the rows of a WITH/RETURN by `item` (not DISTINCT nor aggregating, the
    caller checks the latter): bounds from the conjuncts of a WITH's WHERE that compare it to a
    constant when nothing cuts rows before that WHERE (no SKIP, no LIMIT), else the top k when
    it is the first sort key and there is no WHERE."""
    if clause.distinct:
        return None
    name = item.name(text)
    where = getattr(clause, "where", None)
    if where is not None:
        if clause.skip is not None or clause.limit is not None:
            return None
        bounds = tuple(bound for c in _conjuncts(where) if (bound := _bound(c, name)) is not None)
        return Reduction(bounds) if bounds else None
    if not clause.order_by or not _is(clause.order_by[0].expr, name) or not _limited(clause):
        return None
    return Reduction(top=Top(clause.order_by[0].descending, clause.skip, clause.limit))


def _conjuncts(expr: A.Expr) -> list[A.Expr]:
    if isinstance(expr, A.BinaryOp) and expr.op == "AND":
        return _conjuncts(expr.left) + _conjuncts(expr.right)
    return [expr]


def _bound(expr: A.Expr, value: str) -> tuple[str, A.Expr] | None:
    """(op, constant) for `value op constant` or `constant op value`."""
    if not isinstance(expr, A.BinaryOp) or expr.op not in _FLIPPED:
        return None
    if _is(expr.left, value) and _is_constant(expr.right):
        return expr.op, expr.right
    if _is(expr.right, value) and _is_constant(expr.left):
        return _FLIPPED[expr.op], expr.left
    return None


def _top(clause: A.Clause | None, value: str, text: str) -> Top | None:
    if not isinstance(clause, (A.With, A.Return)) or not clause.order_by or not _limited(clause):
        return None
    first = clause.order_by[0]
    if not isinstance(first.expr, A.Variable):
        return None
    named = [item for item in clause.items if item.name(text) == first.expr.name]
    if named and not _is(named[0].expr, value):
        return None                            # the sort key is another column of that name
    if not named and first.expr.name != value:
        return None
    return Top(first.descending, clause.skip, clause.limit)


def _limited(clause: A._Projection) -> bool:
    """Whether a projection keeps its first (skip + limit) rows, both constants, and has no DISTINCT."""
    return clause.limit is not None and not clause.distinct and all(map(_is_constant, (clause.skip, clause.limit)))


def _is(expr: A.Expr, name: str) -> bool:
    return isinstance(expr, A.Variable) and expr.name == name


def _is_constant(expr: A.Expr | None) -> bool:
    return expr is None or isinstance(expr, (A.Literal, A.Parameter))


def _constant(expr: A.Expr, params: dict[str, Any]) -> Any:
    try:
        return constant(expr, params)
    except Exception:                  # a missing parameter: the database reports it
        return None
