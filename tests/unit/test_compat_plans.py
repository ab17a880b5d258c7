"""Plans of the compatibility shims (what the planner sends FalkorDB instead of Neo4j's syntax),
and the index/constraint catalogue built from FalkorDB's own listings. End-to-end behaviour is
in tests/integration/test_compat_e2e.py and test_stock_tools.py."""

from __future__ import annotations

import asyncio
from dataclasses import replace

import pytest

from core.dialect import Capability
from extensions import bridges
from extensions.planner.catalog import build_registry
from extensions.compat.schema_catalog import Definition, NameStore, read_catalog
from extensions.planner.late import LateStep
from extensions.planner.planner import ExtensionPlanner
from extensions.registry import ArgKind, Extension, GraphContext, Registry
from proxy.backends.falkordb.dialect import FALKORDB
from proxy.backends.neo4j.dialect import NEO4J


@pytest.fixture(scope="module")
def planners(tmp_path_factory):
    registry = build_registry(tmp_path_factory.mktemp("compat"))
    return {dialect.name: ExtensionPlanner(registry, dialect=dialect) for dialect in (FALKORDB, NEO4J)}


def test_entries_and_rules_follow_the_capability_they_stand_in_for(planners):
    """A Neo4j without APOC gets the APOC shims and rules, and nothing else the proxy stands in for."""
    registry = planners["neo4j"].registry
    without_apoc = replace(NEO4J, native=NEO4J.native - {Capability.APOC})
    assert registry.virtual("apoc.meta.data", NEO4J) is None
    assert registry.virtual("apoc.meta.data", without_apoc) is not None
    assert registry.rewrite("apoc.merge.node", without_apoc) is not None
    assert registry.virtual("dbms.components", without_apoc) is None
    assert registry.virtual("dbms.components", FALKORDB) is not None
    assert {word for word, _ in bridges.triggers(NEO4J)} == {"std"}          # the alias every backend gets
    assert {word for word, _ in bridges.triggers(without_apoc)} == {"std", "apoc.", " in ", "apoc.any.property"}


def test_std_is_stdev_on_every_backend_unless_an_extension_takes_the_name(planners):
    """The alias is a bridge rule every dialect gets (bridges/aliases.py), on a Neo4j without
    APOC too, where the APOC functions are rewritten into Neo4j's Cypher instead."""
    query = "UNWIND [1, 2] AS x RETURN std(x) AS s, apoc.coll.toSet([x]) AS t"
    without_apoc = ExtensionPlanner(planners["neo4j"].registry, dialect=replace(NEO4J, native=NEO4J.native - {Capability.APOC}))
    for planner in (*planners.values(), without_apoc):
        assert "RETURN stDev(x) AS s" in planner.plan(query).text
    own = Extension("std", (ArgKind.VALUE,), 1, lambda rows: [len(rows)] * len(rows))
    assert "stDev" not in ExtensionPlanner(Registry([own]), dialect=FALKORDB).plan(query).text


def test_cypher_options_are_stripped_for_falkordb_only(planners):
    assert planners["falkordb"].plan("CYPHER 25 MATCH (n) RETURN n").text == "MATCH (n) RETURN n"
    assert planners["neo4j"].plan("CYPHER 25 MATCH (n) RETURN n") is None


def test_show_binds_rows_and_runs_where_and_return_in_the_database(planners):
    plan = planners["falkordb"].plan("SHOW INDEXES YIELD name, type WHERE type = 'VECTOR' RETURN name")
    assert plan.text.startswith("UNWIND $__v0 AS __r0 WITH __r0[1] AS name, __r0[4] AS type")
    assert plan.text.endswith("WITH * WHERE type = 'VECTOR' RETURN name")
    local = planners["falkordb"].plan("SHOW PROCEDURES").local
    assert local.columns == ["name", "description", "mode", "worksOnSystem"]
    assert planners["neo4j"].plan("SHOW INDEXES") is None                 # Neo4j answers its own


def test_schema_commands_run_by_the_proxy_on_falkordb_only(planners):
    plan = planners["falkordb"].plan("CREATE CONSTRAINT c IF NOT EXISTS FOR (n:L) REQUIRE n.id IS UNIQUE")
    assert type(plan.command[1]).__name__ == "CreateConstraint"
    assert planners["neo4j"].plan("CREATE CONSTRAINT c IF NOT EXISTS FOR (n:L) REQUIRE n.id IS UNIQUE") is None
    assert planners["falkordb"].plan("CREATE INDEX ON :L(p)") is None     # FalkorDB's own syntax


def test_vector_property_transactions_and_final_unit_subquery(planners):
    plan = planners["falkordb"].plan(
        "UNWIND $data AS row CALL (row) { MERGE (c:Chunk {id: row.id}) WITH c, row "
        "CALL db.create.setNodeVectorProperty(c, 'embedding', row.embedding) SET c.text = row.text } "
        "IN TRANSACTIONS OF 1000 ROWS")
    assert plan.text == ("UNWIND $data AS row WITH row MERGE (c:Chunk {id: row.id}) WITH c, row "
                         "SET c.embedding = vecf32(row.embedding) SET c.text = row.text")
    similarity = planners["falkordb"].plan("MATCH (n) RETURN vector.similarity.cosine(n.e, $q) AS s").text
    assert "(1.0 - vec.cosineDistance(([__v IN [n.e] WHERE typeOf(__v) = 'Vectorf32' | __v] + " in similarity
    assert similarity.endswith("| vecf32(__v)])[0], vecf32($q)) / 2.0) AS s")


def test_apoc_merge_node_renders_one_branch_per_label_set(planners):
    plan = planners["falkordb"].plan("UNWIND $rows AS row CALL apoc.merge.node([row.type], {id: row.id}, "
                                     "row.props, {}) YIELD node RETURN node")
    (step,) = plan.steps
    assert isinstance(step, LateStep)
    assert step.probe == "UNWIND $rows AS row\nRETURN DISTINCT [row.type] AS __value"
    text = step.render([["Person"], ["Org"], None])
    assert "MERGE (__m:Person {id: row.id}) ON CREATE SET __m += row.props" in text
    assert "[row.type] = ['Org']" in text and "MATCH (node) WHERE node.id = row.id" in text


def test_dynamic_set_label_probe_leaves_out_the_writes_before_it(planners):
    plan = planners["falkordb"].plan("UNWIND $data AS row MERGE (s:E {id: row.id}) SET s += row.p "
                                     "WITH s, row SET s:$(row.type) RETURN s")
    (step,) = plan.steps
    assert step.probe.startswith("UNWIND $data AS row\nWITH row\nUNWIND (CASE typeOf(row.type)")
    assert step.render(["A", "B"]).count("FOREACH") == 2


class _Graph:
    """FalkorDB's db.indexes() / db.constraints() rows, as the catalogue reads them."""

    def __init__(self, indexes, constraints):
        self.indexes, self.constraints = indexes, constraints

    async def read(self, query, params):
        return self.indexes if "db.indexes" in query else self.constraints


def test_catalog_names_what_falkordb_backs(tmp_path):
    names = NameStore(tmp_path / "names.json")
    names.put("neo4j", "docs", Definition("INDEX", "VECTOR", "NODE", ("Doc",), ("emb",)))
    names.put("neo4j", "gone", Definition("INDEX", "RANGE", "NODE", ("Gone",), ("x",)))
    names.put("neo4j", "uid", Definition("CONSTRAINT", "UNIQUE", "NODE", ("User",), ("id",)))
    falkor = _Graph([["Doc", ["emb", "t"], {"emb": ["VECTOR"], "t": ["FULLTEXT"]},
                      {"emb": {"dimension": 4, "similarityFunction": "euclidean"}}, "NODE",
                      "[Indexing] 10/200: UNDER CONSTRUCTION"],
                     ["User", ["id"], {"id": ["RANGE"]}, {}, "NODE", "OPERATIONAL"]],
                    [["UNIQUE", "User", ["id"], "NODE", "OPERATIONAL"]])
    catalog = asyncio.run(read_catalog(GraphContext("neo4j", 1, falkor.read), names))
    by_name = {e.name: e for e in catalog.indexes}
    assert by_name["docs"].options["indexConfig"] == {"vector.dimensions": 4,
                                                      "vector.similarity_function": "EUCLIDEAN"}
    assert (by_name["docs"].state, by_name["uid"].state) == ("POPULATING", "ONLINE")
    assert "gone" not in by_name                                # FalkorDB no longer backs it
    assert by_name["uid"].owner == "uid" and [c.name for c in catalog.constraints] == ["uid"]
    (fulltext,) = [e for e in catalog.indexes if e.definition.kind == "FULLTEXT"]
    assert fulltext.name.startswith("index_") and fulltext.definition.properties == ("t",)
    names.put("neo4j", "docs", None)
    assert "docs" not in NameStore(tmp_path / "names.json").load("neo4j")
