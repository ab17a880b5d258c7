"""neo4j-graphrag's entity resolution (SinglePropertyExactMatchResolver: apoc.refactor.mergeNodes)
on entities the script writes. Usage: python resolver_client.py BOLT_URI; prints one JSON object."""

from __future__ import annotations

import asyncio
import json
import sys

import neo4j
from neo4j_graphrag.components.resolver import SinglePropertyExactMatchResolver


def main() -> None:
    with neo4j.GraphDatabase.driver(sys.argv[1], auth=("neo4j", "password")) as driver:
        driver.execute_query(
            "CREATE (a:__Entity__:Person {name: 'Ada', born: 1815}), (b:__Entity__:Person {name: 'Ada', city: 'London'}), "
            "(c:__Entity__:Person {name: 'Charles'}), (d:__Entity__:Place {name: 'Ada'}), "
            "(a)-[:KNOWS]->(c), (b)-[:KNOWS]->(c), (b)-[:LIVED_IN]->(d)")
        stats = asyncio.run(SinglePropertyExactMatchResolver(driver).run())
    print(json.dumps({"resolved": stats.number_of_nodes_to_resolve, "created": stats.number_of_created_nodes}))


if __name__ == "__main__":
    main()
