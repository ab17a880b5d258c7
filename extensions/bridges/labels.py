"""Label and relationship-type expressions (`:A|B`, `:!A`, `:A&B`, `:%`, `:$(expr)`) as boolean
predicates of single-name tests, for FalkorDB, which reads only `:A:B` on nodes and `:A|B` on
relationships in a pattern: `spelling.py` moves node label expressions into the MATCH's WHERE,
`uniqueness.py` relationship type expressions (it names every relationship of a MATCH)."""

from __future__ import annotations

from ..cypher import ast as A
from ..cypher.render import name as quote_name
from ..cypher.render import render
from ..cypher.render import string as quote_string


def label_predicate(var: str, labels: A.LabelExpr) -> str:
    """A boolean Cypher predicate equivalent to `var:labels` using only single-label tests."""
    return _predicate(labels, lambda label: f"{var}:{quote_name(label)}", f"labels({var})", f"size(labels({var})) > 0")


def type_predicate(var: str, types: A.LabelExpr) -> str:
    """A boolean Cypher predicate equivalent to `[var:types]`: a relationship has exactly one
    type, so `A&B` never holds and `%` always does."""
    return _predicate(types, lambda name: f"type({var}) = {quote_string(name)}", f"[type({var})]", "true")


def _predicate(labels: A.LabelExpr, test, names: str, wildcard: str) -> str:
    """`labels` as a boolean expression of `test(name)` per label, the entity's label list
    `names` (dynamic labels) and `wildcard` (`%`)."""
    if isinstance(labels, A.LabelName):
        return test(labels.name)
    if isinstance(labels, A.LabelWildcard):
        return wildcard
    if isinstance(labels, A.LabelNot):
        return f"NOT ({_predicate(labels.operand, test, names, wildcard)})"
    if isinstance(labels, A.DynamicLabel):       # MATCH (n:$(expr)): labels computed from the row
        values = render(labels.expr)
        listed = f"(CASE typeOf({values}) WHEN 'List' THEN {values} ELSE [{values}] END)"
        return f"{labels.mode}(__l IN {listed} WHERE __l IN {names})"
    op = "OR" if isinstance(labels, A.LabelOr) else "AND"
    return (f"({_predicate(labels.left, test, names, wildcard)} {op} "
            f"{_predicate(labels.right, test, names, wildcard)})")
