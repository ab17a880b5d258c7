"""Conversion of the official driver's values, summaries and errors into the proxy's model.

Driver objects are built with the driver's own hydration code (what it runs on Bolt
structures it receives), so these are the exact objects a live upstream produces.
"""

from __future__ import annotations

import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st
from neo4j import ResultSummary
from neo4j._codec.hydration.v2 import HydrationHandler
from neo4j.addressing import Address
from neo4j.api import ServerInfo, Version
from neo4j.exceptions import (
    ConfigurationError,
    Neo4jError,
    ResultFailedError,
    ServiceUnavailable,
    TransactionError,
)
from neo4j.spatial import CartesianPoint, WGS84Point
from neo4j.time import Date, DateTime, Duration, Time

from proxy.backends.neo4j import (
    DATABASE_UNAVAILABLE,
    to_cypher_error,
    to_proxy_value,
    to_summary,
)
from core.errors import CypherError
from core.values import Node, Path, Relationship
from proxy.bolt.capabilities import Capabilities
from proxy.bolt.failures import failure_metadata

URI = "bolt://upstream.example:7687"


@pytest.fixture
def hydrator():
    """The driver's graph hydrator for one result (nodes are shared within it, as on the wire)."""
    return HydrationHandler().new_hydration_scope()._graph_hydrator


def test_node(hydrator):
    node = hydrator.hydrate_node(7, ["Person", "Actor"], {"name": "Ann", "born": Date(1970, 1, 2)}, "4:db:7")
    assert to_proxy_value(node) == Node(7, ["Actor", "Person"], {"name": "Ann", "born": Date(1970, 1, 2)}, "4:db:7")


def test_relationship_keeps_both_endpoints(hydrator):
    rel = hydrator.hydrate_relationship(3, 1, 2, "KNOWS", {"since": 2001}, "5:db:3", "4:db:1", "4:db:2")
    assert to_proxy_value(rel) == Relationship(3, 1, 2, "KNOWS", {"since": 2001}, "5:db:3", "4:db:1", "4:db:2")


def test_path_follows_relationship_direction(hydrator):
    a = hydrator.hydrate_node(1, ["A"], {}, "4:db:1")
    b = hydrator.hydrate_node(2, ["B"], {}, "4:db:2")
    c = hydrator.hydrate_node(3, ["C"], {}, "4:db:3")
    r1 = hydrator.hydrate_unbound_relationship(10, "R", {}, "5:db:10")
    r2 = hydrator.hydrate_unbound_relationship(11, "S", {"w": 1.5}, "5:db:11")
    # (a)-[:R]->(b)<-[:S]-(c): the second hop is traversed against its direction.
    path = hydrator.hydrate_path([a, b, c], [r1, r2], [1, 1, -2, 2])
    assert to_proxy_value(path) == Path(
        [Node(1, ["A"], {}, "4:db:1"), Node(2, ["B"], {}, "4:db:2"), Node(3, ["C"], {}, "4:db:3")],
        [Relationship(10, 1, 2, "R", {}, "5:db:10", "4:db:1", "4:db:2"),
         Relationship(11, 3, 2, "S", {"w": 1.5}, "5:db:11", "4:db:3", "4:db:2")],
    )


def test_graph_values_inside_lists_and_maps(hydrator):
    node = hydrator.hydrate_node(1, ["A"], {"x": [1, 2]}, "4:db:1")
    converted = to_proxy_value({"nodes": [node, None], "nested": {"n": node}})
    expected = Node(1, ["A"], {"x": [1, 2]}, "4:db:1")
    assert converted == {"nodes": [expected, None], "nested": {"n": expected}}


def test_reading_legacy_ids_raises_no_deprecation_warning(hydrator):
    rel = hydrator.hydrate_relationship(3, 1, 2, "KNOWS", {}, "5:db:3", "4:db:1", "4:db:2")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        to_proxy_value(rel)


temporal_and_spatial = st.one_of(
    st.dates().map(Date.from_native),
    st.datetimes().map(DateTime.from_native),
    st.times().map(Time.from_native),
    st.builds(Duration, months=st.integers(-1000, 1000), days=st.integers(-1000, 1000),
              seconds=st.integers(-10**6, 10**6), nanoseconds=st.integers(0, 999_999_999)),
    st.builds(lambda x, y: CartesianPoint((x, y)), st.floats(allow_nan=False), st.floats(allow_nan=False)),
    st.builds(lambda lon, lat: WGS84Point((lon, lat)), st.floats(-180, 180), st.floats(-90, 90)),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(),
                    st.binary(), temporal_and_spatial)
plain_values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=5), inner, max_size=4)), max_leaves=20)


@given(plain_values)
def test_values_without_graph_entities_pass_through_unchanged(value):
    converted = to_proxy_value(value)
    assert converted == value
    assert type(converted) is type(value)


def _summary(**metadata) -> ResultSummary:
    server = ServerInfo(Address(("upstream.example", 7687)), Version(5, 4))
    return ResultSummary(server.address, had_key=True, had_record=True, metadata={"server": server, **metadata})


def test_summary_keeps_only_non_zero_counters_with_bolt_keys():
    summary = _summary(db="movies", type="w", stats={
        "nodes-created": 2, "properties-set": 3, "labels-added": 0, "contains-updates": True})
    converted = to_summary(summary, "neo4j", bookmark="bm:1")
    assert converted.database == "movies"
    assert converted.query_type == "w"
    assert converted.stats == {"nodes-created": 2, "properties-set": 3}
    assert converted.bookmark == "bm:1"
    assert converted.contains_updates


def test_summary_passes_plan_profile_and_notifications_through():
    plan = {"operatorType": "ProduceResults@neo4j", "args": {"planner": "COST"}, "identifiers": ["n"],
            "children": [{"operatorType": "AllNodesScan@neo4j", "args": {}, "identifiers": ["n"], "children": []}]}
    notification = {"code": "Neo.ClientNotification.Statement.CartesianProduct", "title": "t",
                    "description": "d", "severity": "INFORMATION", "position": {"offset": 0, "line": 1, "column": 1}}
    converted = to_summary(_summary(type="r", plan=plan, profile=plan, notifications=[notification]), "neo4j")
    assert converted.plan == plan and converted.profile == plan
    assert converted.notifications == [notification]
    assert converted.stats == {} and converted.bookmark is None


def test_summary_without_database_uses_the_fallback():
    converted = to_summary(_summary(type="s"), "fallback")
    assert (converted.database, converted.query_type, converted.notifications) == ("fallback", "s", [])


def test_error_keeps_upstream_code_and_message():
    error = Neo4jError._hydrate_neo4j(code="Neo.ClientError.Statement.SyntaxError", message="Invalid input 'X'")
    converted = to_cypher_error(error, URI)
    assert (converted.code, converted.message) == ("Neo.ClientError.Statement.SyntaxError", "Invalid input 'X'")
    assert converted.gql_status == "42001"          # derived from the code: the upstream sent none


def test_error_keeps_upstream_gql_status():
    error = Neo4jError._hydrate_gql(
        gql_status="42I06", message="Invalid input 'X'", neo4j_code="Neo.ClientError.Statement.SyntaxError",
        description="error: syntax error or access rule violation - invalid input. Invalid input 'X'",
        diagnostic_record={"_classification": "CLIENT_ERROR"})
    converted = to_cypher_error(error, URI)
    assert converted.gql_status == "42I06"
    assert failure_metadata(converted, Capabilities.of((5, 7)))["description"] == (
        "error: syntax error or access rule violation - invalid input. Invalid input 'X'")


def test_unauthorized_passes_through():
    error = Neo4jError._hydrate_neo4j(code="Neo.ClientError.Security.Unauthorized",
                                      message="The client is unauthorized due to authentication failure.")
    converted = to_cypher_error(error, URI)
    assert converted.code == "Neo.ClientError.Security.Unauthorized"
    assert converted.message == "The client is unauthorized due to authentication failure."


def test_error_wrapped_by_the_driver_reports_the_cause():
    cause = Neo4jError._hydrate_neo4j(code="Neo.ClientError.Statement.ArithmeticError", message="/ by zero")
    for wrapper in (TransactionError(None, "Transaction failed"), ResultFailedError(None, "failed")):
        wrapper.__cause__ = cause
        assert to_cypher_error(wrapper, URI).code == "Neo.ClientError.Statement.ArithmeticError"


@pytest.mark.parametrize("error", [ServiceUnavailable("Couldn't connect to upstream.example:7687"),
                                   ConfigurationError("Session level authentication is not supported")])
def test_driver_errors_name_the_upstream(error):
    converted = to_cypher_error(error, URI)
    assert isinstance(converted, CypherError)
    assert converted.code == DATABASE_UNAVAILABLE
    assert URI in converted.message and str(error) in converted.message
