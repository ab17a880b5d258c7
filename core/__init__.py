"""The ground every room stands on: Neo4j-style errors (`errors`), the value model (`values`), the
interface a graph database backend implements (`backend`) and the dialect it describes itself by
(`dialect`: what it does natively, its binding forms). Imported by the wire, the planner, the
extension families, the Cypher tools and the backends alike; imports none of them
(tests/unit/test_layers.py checks it)."""
