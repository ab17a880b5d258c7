"""The APOC census in Neo4j's Cypher (compat/apoc_upstream.py): the plans of the planner that
serves it behind a Neo4j without APOC, and the type names read with `valueType()`. End to end
(proxy -> a Neo4j stand-in without APOC) in tests/integration/test_apoc_upstream.py."""

from __future__ import annotations

import re

import pytest

from extensions.bridges import apoc_functions
from extensions.compat import apoc_upstream
from extensions.compat.graph_schema import NEO4J_READS
from extensions.planner.catalog import build_registry
from extensions.planner.planner import ExtensionPlanner
from proxy.backends.neo4j.dialect import NEO4J

#: FalkorDB's own functions, which a Neo4j query must not call.
FALKORDB_ONLY = re.compile(r"\b(?:list\.dedup|list\.sort|string\.join|typeOf|vecf32|db\.meta\.stats)\s*\(", re.I)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    return ExtensionPlanner(build_registry(tmp_path_factory.mktemp("apoc")), dialect=apoc_upstream.lacking_apoc(NEO4J))


@pytest.mark.parametrize("function", [f for f in apoc_functions.listed() if f.name != "apoc.coll.sort"],
                         ids=lambda f: f.name)
def test_every_served_function_becomes_neo4j_cypher(served, function):
    arity = min(apoc_functions.NEO4J_FORMS.get(function.name.lower(), function.forms))
    args = ", ".join(f"$a{i}" for i in range(arity))
    plan = served.plan(f"RETURN {function.name}({args}) AS x")
    assert "apoc." not in plan.text.lower() and not FALKORDB_ONLY.search(plan.text), plan.text


def test_the_schema_procedures_are_answered_and_writes_rewritten(served):
    assert served.plan("CALL apoc.meta.data() YIELD label RETURN label").steps
    merge = served.plan("UNWIND $rows AS row CALL apoc.merge.node([row.t], {id: row.id}) YIELD node RETURN node")
    assert "apoc." not in merge.text.lower() and merge.steps


def test_a_neo4j_with_apoc_gets_apoc_unchanged(tmp_path_factory):
    native = ExtensionPlanner(build_registry(tmp_path_factory.mktemp("native")), dialect=NEO4J)
    assert native.plan("RETURN apoc.coll.toSet([1, 1]) AS s") is None
    assert native.plan("CALL apoc.meta.data()") is None


@pytest.mark.parametrize("value_type, name, elements", [
    ("STRING NOT NULL", "String", []),
    ("LIST<INTEGER NOT NULL> NOT NULL", "List", ["Integer"]),
    ("LIST<INTEGER NOT NULL | STRING NOT NULL> NOT NULL", "List", ["Integer", "String"]),
    ("LIST<NOTHING> NOT NULL", "List", []),
    ("ZONED DATETIME NOT NULL", "ZonedDatetime", []),
    ("LOCAL DATETIME NOT NULL", "Datetime", []),
])
def test_neo4j_type_names_as_the_shims_read_them(value_type, name, elements):
    assert NEO4J_READS.type_name(value_type) == name
    assert NEO4J_READS.element_names(value_type) == elements
