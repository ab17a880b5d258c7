"""One real query per FalkorDB error family: the client gets the code Neo4j uses for it.

The table is `proxy.backends.falkordb.errors.RULES`; before it, all of these but a handful
reached clients as `Neo.DatabaseError.General.UnknownError`.
"""

from __future__ import annotations

import pytest
from neo4j.exceptions import ClientError

SYNTAX = "Neo.ClientError.Statement.SyntaxError"

FAMILIES = [
    ("RETURN 1 +", SYNTAX),                                                   # the parser
    ("RETURN x", SYNTAX),                                                     # undefined variable
    ("RETURN foo(1)", SYNTAX),                                                # unknown function
    ("RETURN 99999999999999999999", SYNTAX),                                  # integer literal overflow
    ("RETURN 1e400", SYNTAX),                                                 # float literal overflow
    ("RETURN 1 MATCH (n) RETURN n", SYNTAX),                                  # clause after RETURN
    ("RETURN 1; RETURN 2", SYNTAX),                                           # two statements
    ("MATCH (n)", SYNTAX),                                                    # no RETURN
    ("CREATE (a)-[:R]->(b) MATCH (c) RETURN c", SYNTAX),                      # WITH required
    ("WITH 1 RETURN 1", SYNTAX),                                              # unaliased WITH
    ("RETURN count(count(1))", SYNTAX),                                       # nested aggregation
    ("RETURN abs(1, 2)", SYNTAX),                                             # argument count
    ("RETURN 1 AS a UNION RETURN 2 AS b", SYNTAX),                            # UNION columns
    ("CREATE (a)-[:A|B]->(b)", SYNTAX),                                       # CREATE pattern rules
    ("CALL db.labels() YIELD nope RETURN nope", SYNTAX),                      # procedure outputs
    ("WITH [1] AS l UNWIND l AS l RETURN l", SYNTAX),                         # redeclared variable
    ("MATCH p = shortestPath((a)-[*]->(b)) RETURN p", "Neo.ClientError.Statement.UnsupportedOperationError"),
    ("CREATE (n {p: {a: 1}})", "Neo.ClientError.Statement.TypeError"),        # property value type
    ("RETURN split('a', 1)", "Neo.ClientError.Statement.TypeError"),          # type mismatch
    ("RETURN range(1, 10, 0)", "Neo.ClientError.Statement.ArgumentError"),
    ("RETURN percentileCont(1, 2.0)", "Neo.ClientError.Statement.ArgumentError"),
    ("RETURN substring('abc', -1)", "Neo.ClientError.Statement.ArgumentError"),
    # (a literal `LIMIT -1` is a SyntaxError, as in Neo4j: cypher/semantics.py)
    ("UNWIND [1] AS x RETURN x LIMIT toInteger('-1')", "Neo.ClientError.Statement.ArgumentError"),
    ("RETURN point({x: 1, y: 2})", "Neo.ClientError.Statement.ArgumentError"),
    ("MERGE (n:P {id: null})", "Neo.ClientError.Statement.SemanticError"),
    ("RETURN 1 / 0", "Neo.ClientError.Statement.ArithmeticError"),
    ("RETURN $missing", "Neo.ClientError.Statement.ParameterMissing"),
    ("CALL foo.bar()", "Neo.ClientError.Procedure.ProcedureNotFound"),
    ("CALL db.idx.fulltext.createNodeIndex()", "Neo.ClientError.Procedure.ProcedureCallFailed"),
    ("DROP INDEX ON :NoSuchLabel(x)", "Neo.ClientError.Schema.IndexNotFound"),
]


@pytest.mark.parametrize("query, code", FAMILIES)
def test_falkordb_errors_carry_neo4j_codes(driver, query, code):
    with pytest.raises(ClientError) as info:
        driver.execute_query(query)
    assert info.value.code == code, info.value.message


def test_an_existing_index_is_an_equivalent_schema_rule(clean_graph):
    clean_graph.execute_query("CREATE INDEX FOR (n:ErrIdx) ON (n.x)")
    try:
        with pytest.raises(ClientError) as info:
            clean_graph.execute_query("CREATE INDEX FOR (n:ErrIdx) ON (n.x)")
        assert info.value.code == "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists"
    finally:
        clean_graph.execute_query("DROP INDEX ON :ErrIdx(x)")
