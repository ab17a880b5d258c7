"""Strings on indexed properties, through the proxy and the real driver on the embedded FalkorDB,
against an exact Python model (extensions/trimmed_index.py has what FalkorDB 4.16 does: its range
index trims strings, and a uniqueness constraint crashed the server on `''` or `' a'`).

Reads give Neo4j's answer for every value (a hypothesis fuzz over strings with whitespace, as
literals and parameters, on node, relationship and composite indexes); MERGE and writes under a
uniqueness constraint give Neo4j's answer or a clear error, write nothing when refused, and never
crash a server; ordinary values keep the index.
"""

from __future__ import annotations

import neo4j
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from neo4j.exceptions import ClientError, ConstraintError

from tests.harness import NO_LOCKOUT, PASSWORD, USER, ProxyProcess
from tests.integration.test_constraint_crashes import crashes
from tests.integration.test_stock_agents import STOCK, run_client

#: Stored values: untrimmed ones, their trimmed twins, non-ASCII, and numbers.
STORED = ["", " ", " a", "a ", "a", "\ta", "a\n", "\x0ba", "a\x0c", "\u00a0a", "é", "b", "a b", 5, 0]
UNSUPPORTED = "Neo.ClientError.Statement.UnsupportedOperationError"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    data = tmp_path_factory.mktemp("trimmed") / "data"
    with ProxyProcess(data_dir=data, args=NO_LOCKOUT) as proc, \
            neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver:
        for schema in ("INDEX s_k FOR (n:S) ON (n.k)", "INDEX r_k FOR ()-[r:R]-() ON (r.k)",
                       "INDEX h_k FOR (n:H) ON (n.k)", "INDEX hr_k FOR ()-[r:HR]-() ON (r.k)",
                       "INDEX c_ab FOR (n:C) ON (n.a, n.b)", "CONSTRAINT u_k FOR (n:U) REQUIRE n.k IS UNIQUE"):
            driver.execute_query(f"CREATE {schema}")
        driver.execute_query("CALL db.awaitIndexes()")
        driver.execute_query("UNWIND $vs AS v CREATE (:S {k: v}), (:C {a: v, b: 1}), ()-[:R {k: v}]->()", vs=STORED)
        yield proc, driver, data / "falkordb"
        assert crashes(data / "falkordb") == 0


def answer(driver, query: str, **params) -> list:
    return sorted((repr(r[0]) for r in driver.execute_query(query, params).records))


def model(op: str, value) -> list:
    """Neo4j's answer over STORED: equality exact; ranges between strings only, by code point."""
    def holds(stored) -> bool:
        if op in ("=", "map"):
            return stored == value
        if op == "IN":
            return stored in (value, "b")
        if not isinstance(stored, str):
            return False
        return stored < value if op == "<" else value <= stored < "b" if op == "chain" else stored >= value
    return sorted(repr(s) for s in STORED if holds(s))


def literal(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


QUERIES = {"map": "MATCH (n:S {k: X}) RETURN n.k", "=": "MATCH (n:S) WHERE n.k = X RETURN n.k",
           "IN": "MATCH (n:S) WHERE n.k IN [X, 'b'] RETURN n.k", "<": "MATCH (n:S) WHERE n.k < X RETURN n.k",
           ">=": "MATCH (n:S) WHERE X <= n.k RETURN n.k", "chain": "MATCH (n:S) WHERE X <= n.k < 'b' RETURN n.k"}
ALSO = {"map": ["MATCH ()-[r:R {k: X}]->() RETURN r.k", "MATCH (n:C {a: X, b: 1}) RETURN n.a"],
        "=": ["MATCH ()-[r:R]->() WHERE r.k = X RETURN r.k", "MATCH (n:C) WHERE n.a = X AND n.b = 1 RETURN n.a"]}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=st.text(alphabet=" \t\na\x0bb\u00a0é", max_size=3) | st.sampled_from(["a", " a", "", "b"]),
       op=st.sampled_from(sorted(QUERIES)), as_parameter=st.booleans())
def test_reads_answer_as_neo4j(served, value, op, as_parameter):
    _, driver, _ = served
    for query in [QUERIES[op], *ALSO.get(op, [])]:
        text = query.replace("X", "$v" if as_parameter else literal(value))
        assert answer(driver, text, v=value) == model(op, value), text


def test_numbers_and_a_value_computed_while_running(served):
    _, driver, _ = served
    assert answer(driver, "MATCH (n:S) WHERE n.k >= $v RETURN n.k", v=0) == ["0", "5"]
    assert answer(driver, "UNWIND ['a', '', 5] AS v MATCH (n:S {k: v}) RETURN n.k") == ["''", "'a'", "5"]


def plan_operators(driver, query: str, **params) -> set[str]:
    def walk(plan):
        yield plan["operatorType"]
        for child in plan.get("children", []):
            yield from walk(child)
    return set(walk(driver.execute_query("EXPLAIN " + query, params).summary.plan))


def test_ordinary_values_keep_the_index(served):
    _, driver, _ = served
    ordinary = plan_operators(driver, "MATCH (n:S {k: $v}) RETURN n", v="a")
    assert any("Index" in op for op in ordinary), ordinary
    untrimmed = plan_operators(driver, "MATCH (n:S {k: $v}) RETURN n", v=" a")
    assert not any("Index" in op for op in untrimmed), untrimmed


LOOKUPS = ["UNWIND $vs AS v MATCH (n:H {k: v}) RETURN n.k", "UNWIND $vs AS v MATCH (n:H) WHERE n.k = v RETURN n.k",
           "UNWIND $vs AS v MATCH (n:H) WHERE n.k IN [v] RETURN n.k",
           "UNWIND $vs AS v MATCH ()-[r:HR {k: v}]->() RETURN r.k"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stored=st.lists(st.sampled_from(["a", "b", " a", "a\t", "", "é", 5, ["a"]]), max_size=4),
       looked_up=st.lists(st.sampled_from(["a", " a", "a\t", "", "é", 5]), min_size=1, max_size=3))
def test_values_known_only_while_running_answer_as_neo4j_whatever_is_stored(served, stored, looked_up):
    """A property that holds no untrimmed string keeps its index for such values
    (extensions/trimmed_keys.py); one that does is compared exactly. Each example stores anew,
    so the cached answer must follow the writes."""
    _, driver, _ = served
    driver.execute_query("MATCH (n:H) DETACH DELETE n")
    driver.execute_query("UNWIND $vs AS v CREATE (:H {k: v})-[:HR {k: v}]->(:HB)", vs=stored)
    expected = sorted(repr(v) for v in stored for w in looked_up if v == w)
    for query in LOOKUPS:
        assert answer(driver, query, vs=looked_up) == expected, query


def test_a_clean_property_keeps_the_index_until_it_holds_an_untrimmed_string(served):
    _, driver, _ = served
    driver.execute_query("MATCH (n:H) DETACH DELETE n")
    driver.execute_query("UNWIND range(1, 50) AS i CREATE (:H {k: toString(i)}), (:H {k: i})")
    assert any("Index" in op for op in plan_operators(driver, LOOKUPS[0], vs=["7"]))
    with driver.session() as session, session.begin_transaction() as tx:
        tx.run("CREATE (:H {k: ' 7'})").consume()              # written in this transaction: exact
        assert sorted(r[0] for r in tx.run(LOOKUPS[0], vs=[" 7", "7"])) == [" 7", "7"]
        tx.commit()
    assert not any("Index" in op for op in plan_operators(driver, LOOKUPS[0], vs=["7"]))
    written = driver.execute_query("CREATE (:H {k: ' 8'}) WITH 1 AS one " + LOOKUPS[0], vs=[" 8"]).records
    assert [r[0] for r in written] == [" 8"]


def count(driver, label: str) -> int:
    return driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS c").records[0]["c"]


@pytest.mark.parametrize("query, params", [
    ("MERGE (n:S {k: ''}) RETURN n", {}), ("MERGE (n:S {k: $v}) RETURN n", {"v": "a\t"}),
    ("UNWIND ['new', ' new'] AS v MERGE (n:S {k: v})", {}), ("FOREACH (v IN ['n1', ' n1'] | MERGE (:S {k: v}))", {}),
    ("UNWIND [{k: 'n2'}, {k: ''}] AS row CALL { WITH row MERGE (:S {k: row.k}) }", {}),
    ("MERGE (:S {k: trim($v) + ' '})", {"v": "n3"}),
    ("MERGE (n:S {k: 'a b'}) WITH n MERGE (m:S {k: 'a'})", {})])    # matched `a`'s trimmed twins
def test_merge_refuses_what_the_index_cannot_find_and_writes_nothing(served, query, params):
    _, driver, _ = served
    before = count(driver, "S")
    with pytest.raises(ClientError) as refused:
        driver.execute_query(query, params)
    assert refused.value.code == UNSUPPORTED and "trims strings" in refused.value.message
    assert count(driver, "S") == before


def test_merge_of_ordinary_values_matches_or_creates(served):
    _, driver, _ = served
    before = count(driver, "S")
    for _ in range(2):
        driver.execute_query("UNWIND ['m1', 'm2', 'm1'] AS v MERGE (n:S {k: v}) ON CREATE SET n.new = true")
        driver.execute_query("FOREACH (v IN ['m3', 'm3'] | MERGE (n:S {k: v}) ON CREATE SET n.new = true)")
    assert answer(driver, "MATCH (n:S) WHERE n.k IN ['m1', 'm2', 'm3'] RETURN n.k") == ["'m1'", "'m2'", "'m3'"]
    assert count(driver, "S") == before + 3
    driver.execute_query("MATCH (n:S) WHERE n.new DELETE n")


@pytest.mark.parametrize("query, params", [
    ("CREATE (:U {k: ''})", {}), ("CREATE (:U {k: $v})", {"v": " a"}), ("CREATE (n:U $p)", {"p": {"k": "\ta"}}),
    ("UNWIND ['u1', 'u2 '] AS v CREATE (:U {k: v})", {}), ("MERGE (:U {k: $v})", {"v": ""}),
    ("CREATE (n:U {k: 'u3'}) SET n.k = $v", {"v": "u3\n"}), ("CREATE (n:U {k: 'u4'}) SET n += {k: ''}", {}),
    ("CREATE (n:U {k: 'u5'}) SET n = $m", {"m": {"k": " "}}), ("FOREACH (v IN ['u6', ''] | CREATE (:U {k: v}))", {}), ("CREATE (n:Q {k: ''}) SET n:U", {})])
def test_untrimmed_strings_under_a_uniqueness_constraint_are_refused_not_crashing(served, query, params):
    _, driver, root = served
    before = count(driver, "U")
    with pytest.raises(ClientError) as refused:
        driver.execute_query(query, params)
    assert refused.value.code == UNSUPPORTED and "uniqueness constraint" in refused.value.message
    assert count(driver, "U") == before and crashes(root) == 0


def test_the_constraint_still_holds_and_unconstrained_labels_take_any_string(served):
    _, driver, _ = served
    driver.execute_query("CREATE (:U {k: 'once'})")
    with pytest.raises(ConstraintError):
        driver.execute_query("CREATE (:U {k: 'once'})")
    driver.execute_query("CREATE (n:Free {k: 'x'}) SET n.k = ' x'")
    assert answer(driver, "MATCH (n:Free) RETURN n.k") == ["' x'"]


def test_neo4j_saver_keeps_its_constraints_and_refuses_the_root_namespace(served):
    """langchain-neo4j's checkpointer with `thread_unique` kept: LangGraph's root namespace `''`
    is refused with the reason (it crashed the server before); a named namespace works."""
    proc, _, root = served
    out = run_client(STOCK, "neo4j_saver_constrained.py", proc.uri)
    code, message = out["root_error"]
    assert code == UNSUPPORTED and "uniqueness constraint" in message
    assert out["named"] is True and "thread_unique" in out["constraints"]
    assert crashes(root) == 0
