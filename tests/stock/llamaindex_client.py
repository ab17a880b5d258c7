"""llama-index's Neo4j graph stores as a RAG pipeline uses them: Neo4jPropertyGraphStore (schema,
upsert of entities and chunks with embeddings, relations, get, triplets, vector search, Cypher)
and the legacy Neo4jGraphStore (triplets and the relation map). Usage: python
llamaindex_client.py BOLT_URI; prints one JSON object, each step's answer or its error."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from llama_index.core.graph_stores.types import EntityNode, Relation  # noqa: E402
from llama_index.core.vector_stores.types import (FilterOperator, MetadataFilter, MetadataFilters,  # noqa: E402
                                                  VectorStoreQuery)
from llama_index.graph_stores.neo4j import Neo4jGraphStore, Neo4jPropertyGraphStore  # noqa: E402

from tests.stock.embedding import embed  # noqa: E402

ENTITIES = [("Ada Lovelace", "PERSON", "wrote the first program"), ("Charles Babbage", "PERSON", "designed engines"),
            ("Analytical Engine", "MACHINE", "a mechanical computer"), ("London", "CITY", "capital")]
RELATIONS = [("Ada Lovelace", "WORKED_WITH", "Charles Babbage"), ("Charles Babbage", "DESIGNED", "Analytical Engine"),
             ("Ada Lovelace", "LIVED_IN", "London")]


def step(out: dict, name: str, action) -> None:
    try:
        out[name] = action()
    except Exception as error:  # noqa: BLE001 - the test reports which step failed and how
        out[name] = {"error": f"{type(error).__name__}: {error}"[:1500]}


def property_graph(uri: str, out: dict) -> None:
    store = Neo4jPropertyGraphStore(username="neo4j", password="password", url=uri, refresh_schema=True)
    nodes = [EntityNode(name=name, label=label, properties={"about": about, "empty": None},
                        embedding=embed(name)) for name, label, about in ENTITIES]
    ids = {n.name: n.id for n in nodes}
    step(out, "upsert_nodes", lambda: store.upsert_nodes(nodes) or "ok")
    step(out, "upsert_relations", lambda: store.upsert_relations(
        [Relation(label=t, source_id=ids[a], target_id=ids[b], properties={"since": 1840}) for a, t, b in RELATIONS])
        or "ok")
    step(out, "get", lambda: sorted((n.name, n.label, n.properties.get("about")) for n in store.get(ids=[ids["London"],
                                                                                                          ids["Ada Lovelace"]])))
    step(out, "triplets", lambda: sorted((a.name, r.label, b.name)
                                         for a, r, b in store.get_triplets(entity_names=["Ada Lovelace"])))
    step(out, "triplets_typed", lambda: sorted((a.name, r.label, b.name, r.properties.get("since")) for a, r, b in
                                               store.get_triplets(entity_names=["Charles Babbage"],
                                                                  relation_names=["WORKED_WITH", "DESIGNED"])))
    step(out, "rel_map", lambda: sorted((a.name, r.label, b.name) for a, r, b in store.get_rel_map(
        store.get(ids=[ids["Charles Babbage"]]), depth=2, limit=30)))
    step(out, "vector", lambda: [(n.name, s) for n, s in zip(*store.vector_query(
        VectorStoreQuery(query_embedding=embed("Ada Lovelace"), similarity_top_k=2)))])
    not_ada = MetadataFilters(filters=[MetadataFilter(key="about", value="wrote the first program",
                                                      operator=FilterOperator.NE)])
    step(out, "vector_filtered", lambda: [(n.name, s) for n, s in zip(*store.vector_query(
        VectorStoreQuery(query_embedding=embed("Ada Lovelace"), similarity_top_k=2, filters=not_ada)))])
    step(out, "cypher", lambda: store.structured_query(
        "MATCH (p:PERSON)-[r]->(x) RETURN p.name AS p, type(r) AS r, x.name AS x ORDER BY p, r"))
    step(out, "schema", lambda: store.get_schema_str(refresh=True))
    store.close()


def enhanced_schema(uri: str, out: dict) -> None:
    """The enhanced schema reads sizes and sample values of every property, the vectors too."""
    store = Neo4jPropertyGraphStore(username="neo4j", password="password", url=uri, enhanced_schema=True)
    step(out, "enhanced_embedding", lambda: next(p for p in store.structured_schema["node_props"]["PERSON"]
                                                 if p["property"] == "embedding"))
    step(out, "enhanced_schema", lambda: store.get_schema_str())
    store.close()


def legacy(uri: str, out: dict) -> None:
    store = Neo4jGraphStore(username="neo4j", password="password", url=uri, node_label="LegacyEntity")
    for subj, rel, obj in RELATIONS:
        store.upsert_triplet(subj, rel, obj)
    step(out, "legacy_get", lambda: sorted(store.get("Ada Lovelace")))
    step(out, "legacy_rel_map", lambda: {k: sorted(v) for k, v in store.get_rel_map(["Ada Lovelace"], depth=2).items()})
    step(out, "legacy_schema", lambda: store.get_schema(refresh=True))


def main() -> None:
    out: dict = {}
    property_graph(sys.argv[1], out)
    step(out, "enhanced", lambda: enhanced_schema(sys.argv[1], out))
    legacy(sys.argv[1], out)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
