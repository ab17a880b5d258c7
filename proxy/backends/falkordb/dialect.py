"""FalkorDB's dialect: it does none of `core.dialect.Capability` natively, so every bridge rule,
compat entry and planner stand-in applies; nodes are found by their integer ids."""

from core.dialect import Dialect

FALKORDB = Dialect(
    "falkordb", frozenset(), integer_ids=True,
    procedure_list="CALL dbms.procedures() YIELD name, mode RETURN name, mode",
    function_list="CALL dbms.functions() YIELD name, internal, aggregation RETURN name, internal, aggregation")
