"""Existence checks appended to write statements (run on FalkorDB in
tests/integration/test_clause_semantics.py)."""

from __future__ import annotations

import pytest

from extensions.planner.existence import with_checks
from core.errors import CypherError

TITLE = ("ticket_title", "NODE", "Ticket", "title")
YEAR = ("since_year", "RELATIONSHIP", "SINCE", "year")


@pytest.mark.parametrize("query, checked", [
    ("CREATE (:Ticket {id: 1})", [TITLE]),
    ("MATCH (n) SET n:Ticket", [TITLE]),
    ("MATCH (n) REMOVE n.title", [TITLE]),
    ("MATCH (a), (b) MERGE (a)-[:SINCE]->(b)", [YEAR]),
    ("MATCH (n) SET n += $props", [TITLE, YEAR]),
    ("CREATE (:Other {title: null}) SET n.name = 'x'", []),
    ("MATCH (n:Ticket) DETACH DELETE n", []),
])
def test_only_the_constraints_a_statement_could_break_are_checked(query, checked):
    result = with_checks(query, (TITLE, YEAR))
    assert (list(result.constraints) if result else []) == checked


def test_rows_are_carried_through_the_check():
    checked = with_checks("UNWIND [1, 2] AS i CREATE (t:Ticket {id: i}) RETURN t.id, i AS n ORDER BY t.id", (TITLE,))
    assert checked.returns
    assert checked.text.startswith("UNWIND [1, 2] AS i CREATE (t:Ticket {id: i}) WITH t.id AS __c0, i AS n "
                                   "ORDER BY t.id WITH collect([__c0, n]) AS __rows OPTIONAL MATCH (__e0:Ticket) "
                                   "WHERE __e0.title IS NULL")
    assert checked.text.endswith("UNWIND __rows AS __r RETURN __r[0] AS `t.id`, __r[1] AS n")
    plain = with_checks("CREATE (:Ticket)", (TITLE,))
    assert not plain.returns and plain.text.endswith("RETURN __rows")


@pytest.mark.parametrize("query", ["CREATE (t:Ticket) RETURN *",
                                   "CREATE (t:Ticket) RETURN t UNION MATCH (t) RETURN t"])
def test_unchecked_shapes_are_refused(query):
    with pytest.raises(CypherError, match="NOT NULL constraints"):
        with_checks(query, (TITLE,))
