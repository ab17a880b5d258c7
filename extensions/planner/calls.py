"""Procedure CALLs and SHOW commands in a plan: the columns a CALL yields, which lone calls the
proxy answers without the database, and the checks of algorithm parameters."""

from __future__ import annotations

import difflib

from core.dialect import Dialect
from core.errors import argument_error

from ..cypher import ast as A
from .plan import LocalCall
from ..plan_builder import yielded
from ..registry import Procedure, Registry, VirtualProcedure


def scalar_values(procedure: Procedure) -> bool:
    """A procedure that yields one value besides the node binds it as is, not as a one-item list
    (FalkorDB copies a list element when it reads it: a list of 50k lists costs ~0.2 s)."""
    return len(procedure.yields) == 2


def algorithm_value(procedure: Procedure, row: str, field: str) -> str:
    return row if scalar_values(procedure) else f"{row}[{procedure.yields.index(field) - 1}]"


def show_procedure(registry: Registry, dialect: Dialect, clause: A.Show) -> VirtualProcedure | None:
    """The virtual procedure that answers a SHOW command in `dialect`, if the proxy answers it."""
    return registry.virtual(f"SHOW {clause.what}", dialect)


def show_arguments(clause: A.Show) -> tuple:
    """What a SHOW procedure gets: the filter word ('VECTOR', 'UNIQUE', ...) and the name in
    `SHOW DATABASE name` (None when absent)."""
    argument = clause.argument if isinstance(clause.argument, A.Expr) else A.Literal(clause.argument)
    return (A.Literal(clause.kind), argument)


def local_call(registry: Registry, dialect: Dialect, query: A.Query) -> LocalCall | None:
    """A query that is nothing but `CALL virtual(...) [YIELD ...]` or `SHOW X [YIELD ...]`
    (no WHERE, no ordering, no other clause)."""
    if len(query.parts) != 1 or len(query.parts[0].clauses) != 1:
        return None
    clause = query.parts[0].clauses[0]
    if isinstance(clause, A.Show):
        return _local_show(registry, dialect, clause)
    if not isinstance(clause, A.CallProcedure) or clause.where is not None or clause.optional:
        return None
    procedure = registry.virtual(clause.name, dialect)
    if procedure is None:
        return None
    fields, names = yielded(procedure, clause)
    return LocalCall(procedure, clause.args or (), fields, [names.get(f, f) for f in fields])


def _local_show(registry: Registry, dialect: Dialect, clause: A.Show) -> LocalCall | None:
    procedure = show_procedure(registry, dialect, clause)
    if (procedure is None or clause.where is not None or clause.order_by or clause.skip is not None
            or clause.limit is not None):
        return None
    if clause.yields is None:
        fields, names = list(procedure.shown), {}
    else:
        fields, names = yielded(procedure, clause)
    return LocalCall(procedure, show_arguments(clause), fields, [names.get(f, f) for f in fields])


def check_not_optional(name: str, clause: A.CallProcedure) -> None:
    if clause.optional:
        raise argument_error(f"OPTIONAL CALL {name}() is not supported; use CALL.")


def check_parameters(procedure: Procedure, names) -> None:
    """Unknown algorithm parameter -> ArgumentError suggesting the closest name."""
    for name in names:
        if name not in procedure.parameters:
            close = difflib.get_close_matches(name, list(procedure.parameters), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise argument_error(
                f"Unknown parameter '{name}' for {procedure.name}().{hint} Parameters: "
                f"{', '.join(sorted(procedure.parameters)) or 'none'}.")
