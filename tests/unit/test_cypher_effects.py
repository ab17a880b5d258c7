"""What a query does (`extensions.cypher.effects`), and how the FalkorDB statement sends it
(`proxy.backends.falkordb.statement`): a write keyword counts only where it is a clause, every
write clause counts, and text the parser refuses falls back to a keyword scan."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.errors import CypherError
from extensions.cypher.effects import READS, effects, of_tree, scanned
from extensions.cypher.parser import parse
from proxy.backends.falkordb.guards import AGGREGATE_IN_ITERATION
from proxy.backends.falkordb.statement import Statement, analysed

KEYWORDS = ["CREATE", "MERGE", "SET", "DELETE", "REMOVE", "DROP", "CALL", "INDEX", "CONSTRAINT",
            "detach delete", "on create set", "db.idx.fulltext.createNodeIndex"]
#: A read with one hole where a keyword may stand in a string, comment, name, key or parameter.
HIDING_PLACES = [
    "MATCH (n) WHERE n.name = '{}' RETURN n",
    'RETURN "{} (n)" AS s',
    "MATCH (n) RETURN n // {} (m)",
    "MATCH (n) /* {} (m) */ RETURN n",
    "MATCH (n) RETURN n.`{}` AS `{}`",
    "MATCH (n:`{}`)-[:`{}`]->(m) RETURN m",
    "RETURN {{`{}`: 1}} AS map",
    "MATCH (n) WHERE n.name = $`{}` RETURN n",
]
#: Bare words where Cypher allows a keyword as a name.
NAME_PLACES = [
    "MATCH (n) RETURN n.{} AS x",
    "RETURN {{{}: 1}} AS map",
    "MATCH (n:{}) RETURN n",
    "MATCH (n) WHERE n.x = ${} RETURN n",
]


@given(st.sampled_from(HIDING_PLACES), st.sampled_from(KEYWORDS))
def test_a_keyword_in_a_string_comment_quoted_name_or_parameter_never_counts(place, keyword):
    query = place.format(keyword, keyword)
    assert effects(query).writes is False
    assert Statement(query, {keyword: 1}, "w").command == "GRAPH.RO_QUERY"


@given(st.sampled_from(NAME_PLACES), st.sampled_from(["create", "merge", "set", "delete", "remove", "Set"]))
def test_a_keyword_used_as_a_name_never_counts(place, keyword):
    does = effects(place.format(keyword))
    assert does.parsed and not does.writes


#: Updating clauses on a bound `n`, and what each counts as.
UPDATES = {
    "CREATE (m:L {{k: {v}}})": "creates",
    "MERGE (m:L {{k: {v}}})": "merges",
    "MERGE (m:L) ON CREATE SET m.k = {v}": "sets",
    "SET n.k = {v}": "sets",
    "SET n:L": "sets",
    "SET n += {{k: {v}}}": "sets",
    "REMOVE n.k": "sets",
    "REMOVE n:L": "sets",
    "DELETE n": "deletes",
    "DETACH DELETE n": "deletes",
}
#: Where an updating clause may stand: a subquery, a FOREACH, a later UNION part, behind a prefix.
NESTINGS = ["MATCH (n) {}", "MATCH (n) CALL {{ WITH n {} }} RETURN 1", "MATCH (n) FOREACH (x IN [1] | {})",
            "RETURN 1 AS z UNION MATCH (n) {} RETURN 1 AS z", "EXPLAIN MATCH (n) {}", "CYPHER 5 MATCH (n) {} ;"]
SCHEMA_COMMANDS = ["CREATE INDEX FOR (n:L) ON (n.k)", "CREATE TEXT INDEX i IF NOT EXISTS FOR (n:L) ON (n.k)",
                   "DROP INDEX i", "DROP CONSTRAINT c IF EXISTS", "CREATE INDEX ON :L(k)",
                   "CREATE CONSTRAINT c FOR (n:L) REQUIRE n.k IS UNIQUE"]


@given(st.sampled_from(sorted(UPDATES)), st.sampled_from(NESTINGS), st.integers(0, 10**6))
def test_every_updating_clause_counts_wherever_it_stands(clause, nesting, value):
    does = effects(nesting.format(clause.format(v=value)))
    assert does.parsed and does.writes and getattr(does, UPDATES[clause])


@given(st.sampled_from(SCHEMA_COMMANDS), st.sampled_from(["{}", "EXPLAIN {}", "CYPHER 5 {};"]))
def test_every_schema_command_counts(command, nesting):
    does = effects(nesting.format(command))
    assert does.parsed and does.writes and does.schema


def test_merges_name_their_relationship_types_and_calls_their_procedures():
    does = effects("MATCH (a), (b) MERGE (a)-[:KNOWS]->(b) MERGE (b)-[r:`Odd type`]->(a) "
                   "WITH a CALL db.labels() YIELD label RETURN a, label")
    assert does.merged_types == {"KNOWS", "Odd type"} and does.procedures == {"db.labels"}
    assert not does.deletes and not does.schema


def test_text_without_a_write_keyword_is_a_read_without_parsing():
    assert effects("MATCH (n) RETURN n") is READS
    assert effects("MATCH (n RETURN") is READS              # no keyword: no parse, nothing to refuse


@pytest.mark.parametrize("query, flags", [
    ("MATCH (n) SET n.x = 1 RETURN n ORDER", {"sets"}),
    ("MERGE (n) RETURN n ORDER", {"creates", "merges"}),
    ("MATCH (n) DELETE n RETURN n ORDER", {"deletes"}),
    ("MATCH (n) CREATE FULLTEXT INDEX FOR oops", {"creates", "schema"}),
    ("MATCH (n) DROP n", {"schema"}),
    ("RETURN 'SET' AS x ORDER", set()),
])
def test_text_the_parser_refuses_falls_back_to_a_keyword_scan(query, flags):
    does = effects(query)
    assert not does.parsed and does == scanned(query)
    assert {name for name in ("creates", "merges", "sets", "deletes", "schema") if getattr(does, name)} == flags


@pytest.mark.parametrize("query, command, schema", [
    ("MATCH (n:Set) RETURN n", "GRAPH.RO_QUERY", False),
    ("RETURN 1 AS index", "GRAPH.RO_QUERY", False),
    ("CALL db.idx.fulltext.queryNodes('L', 'x') YIELD node RETURN node", "GRAPH.RO_QUERY", False),
    ("CALL db.idx.fulltext.createNodeIndex('L', 'p')", "GRAPH.QUERY", True),
    ("CALL db.idx.fulltext.drop('L')", "GRAPH.QUERY", True),
    ("CREATE INDEX FOR (n:L) ON (n.p)", "GRAPH.QUERY", True),
    ("MATCH (n) SET n.x = 1", "GRAPH.QUERY", False),
    ("EXPLAIN CREATE (n)", "GRAPH.EXPLAIN", False),
    ("PROFILE MATCH (n) RETURN n", "GRAPH.PROFILE", False),
])
def test_the_statement_sends_what_the_analysis_found(query, command, schema):
    statement = Statement(query, {}, "w")
    assert (statement.command, statement.schema) == (command, schema)


def test_a_read_only_session_sends_writes_as_reads():
    assert Statement("CREATE (n)", {}, "r").command == "GRAPH.RO_QUERY"


def test_one_analysis_per_text_whatever_the_parameters():
    query = "MATCH (n) WHERE n.k = $k RETURN n"
    assert analysed(query, {"k": 1}) is analysed(query, {"k": 2}) is analysed(query, None)
    long = "RETURN '" + "x" * 5000 + "' AS s"
    assert analysed(long, {}).lifted.params == {"__s0": "x" * 5000}
    clashing = analysed(long, {"__s0": 1})                       # the client's own `$__s0`
    assert clashing.lifted.params == {"__s1": "x" * 5000}
    assert Statement(long, {}, "w").column("$__s0") == "'" + "x" * 5000 + "'"


def test_an_aggregate_in_a_list_iteration_waits_for_the_planner_and_is_refused_after_it():
    query = "MATCH (n) RETURN [x IN [1, 2] WHERE count(*) > 0] AS xs"
    analysed(query, {}).check({}, before_planning=True)          # the planner may split it
    with pytest.raises(CypherError, match=AGGREGATE_IN_ITERATION[:30]):
        Statement(query, {}, "w")                                # unchanged: refused


@given(st.sampled_from(sorted(UPDATES) + SCHEMA_COMMANDS), st.sampled_from(NESTINGS + HIDING_PLACES))
def test_the_keyword_scan_never_finds_less_than_the_tree(statement, shape):
    """What lets a text without a keyword skip the parse, and the fallback over-estimate."""
    query = shape.format(statement.format(v=1), "x")
    try:
        tree = parse(query)
    except CypherError:
        return                                      # (a schema command in a clause's place)
    found, scan = of_tree(tree), scanned(query)
    for flag in ("creates", "merges", "sets", "deletes", "schema"):
        assert getattr(scan, flag) or not getattr(found, flag), flag
    assert found.procedures <= scan.procedures
