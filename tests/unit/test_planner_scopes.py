"""The planner's scopes (extensions/planner/scopes.py): the AST's (`ast.bindings`) plus what the
planner knows of some clauses, clause by clause."""

from __future__ import annotations

import pytest

from extensions.cypher.parser import parse
from extensions.planner.catalog import build_registry
from extensions.planner.scopes import scope_after


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    return build_registry(tmp_path_factory.mktemp("scopes"))


def scopes(query: str, registry) -> list[dict[str, str]]:
    """The scope after each clause of the query's only part."""
    out, scope = [], {}
    for clause in parse(query).parts[0].clauses:
        scope = scope_after(clause, scope, query, registry)
        out.append(scope)
    return out


def test_the_ast_kinds(registry):
    after = scopes("MATCH p = (a)-[r]->(b)-[rs*]->(c) UNWIND [1] AS u WITH a, r AS rel, u + 1 AS v RETURN a AS x, v",
                   registry)
    assert after[0] == {"p": "path", "a": "node", "r": "relationship", "b": "node", "rs": "relationship_list",
                        "c": "node"}
    assert after[2] == {"a": "node", "rel": "relationship", "v": "value"}
    assert after[3] == {"x": "node", "v": "value"}                  # a RETURN keeps kinds as a WITH does


def test_a_pattern_says_what_a_variable_bound_as_a_value_is(registry):
    after = scopes("MATCH (n) WITH collect(n) AS ns UNWIND ns AS x MATCH (x)-->(y) RETURN x", registry)
    assert after[2]["x"] == "value" and after[3]["x"] == "node"


def test_an_algorithm_yields_a_node_also_from_a_call_body(registry):
    after = scopes("CALL pagerank({}) YIELD node AS n, score CALL { CALL degree({}) YIELD node RETURN node } "
                   "RETURN n, node", registry)
    assert after[0] == {"n": "node", "score": "value"}
    assert after[1]["node"] == "node"
    assert scopes("CALL pagerank({}) RETURN 1", registry)[0] == {"node": "node", "score": "value"}


def test_show_yields_and_search_scores_are_values(registry):
    assert scopes("SHOW INDEXES YIELD name RETURN name", registry)[0] == {"name": "value"}
    after = scopes("CYPHER 25 MATCH (d:Doc) SEARCH d IN (VECTOR INDEX idx FOR $q LIMIT 3) SCORE AS s RETURN d, s",
                   registry)
    assert after[0] == {"d": "node", "s": "value"}
