"""The seed question on the demo graph, through the real driver, checked against pandas.

"How much smaller is the TROLL field's production typically during the summer months
compared with the rest of the year?" - describe() + one query.
"""

from __future__ import annotations

import math

import neo4j
import pytest

from proxy.demo import SEED_QUERY
from tests.harness import PASSWORD, USER
from tests.seed import expected_seed_answer


def test_demo_prints_how_to_connect_before_ready(demo):
    before_ready = "".join(demo.output[:next(i for i, line in enumerate(demo.output)
                                               if line.startswith("ready: "))])
    assert f"URI:       {demo.uri}" in before_ready
    assert f"user:      {USER}" in before_ready and f"password:  {PASSWORD}" in before_ready
    assert "ts_avg(p.prd_oe_net" in before_ready


def test_seed_query_matches_pandas(demo):
    expected = expected_seed_answer()
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        records, summary, keys = driver.execute_query(SEED_QUERY)
    assert keys == ["mean_ratio", "std_ratio", "n_years", "mean_reduction"]
    row = records[0]
    assert row["n_years"] == expected["n_years"] == 10
    for key in ("mean_ratio", "std_ratio", "mean_reduction"):
        assert math.isclose(row[key], expected[key], rel_tol=1e-9), (key, row[key], expected[key])
    assert 0 < row["mean_reduction"] < 0.5          # summer production is lower, not absent


def test_seed_query_explain(demo):
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        summary = driver.execute_query("EXPLAIN " + SEED_QUERY).summary
    assert summary.plan is not None
    assert summary.query_type == "r"


def test_unknown_channel_teaches(demo):
    with neo4j.GraphDatabase.driver(demo.uri, auth=(USER, PASSWORD)) as driver:
        with pytest.raises(neo4j.exceptions.ClientError) as info:
            driver.execute_query("MATCH (f:Field {title: 'TROLL'})<-[:OF_FIELD]-(p:ProductionProfile) "
                                 "RETURN ts_avg(p.production) AS avg")
    assert info.value.code == "Neo.ClientError.Statement.ArgumentError"
    assert "Unknown channel 'production' on ProductionProfile" in info.value.message
    assert "prd_oe_net" in info.value.message
