"""cypher-proxy: a Neo4j-compatible Bolt/HTTP server that adds Cypher extensions."""

__version__ = "0.1.0"
