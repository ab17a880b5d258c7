"""What the Neo4j-semantics bridges cost on the demo graph, as ratios measured in the same run:

- `=~` (translated to `string.matchRegEx`) against FalkorDB's own `STARTS WITH`/`CONTAINS` giving
  the same rows, over every node;
- a 900 KB string literal sent as written (the proxy lifts it into a parameter) against the same
  value sent as a parameter by the client;
- EXPLAIN with the plan notifications against `RETURN 1`.
"""

from __future__ import annotations

import neo4j

from bench import median_seconds
from tests.harness import PASSWORD, USER, ProxyProcess

PAIRS = {
    "=~ '(?i)troll.*' vs toLower() STARTS WITH": (
        "MATCH (n) WHERE n.title =~ '(?i)troll.*' RETURN count(n)",
        "MATCH (n) WHERE toLower(n.title) STARTS WITH 'troll' RETURN count(n)"),
    "=~ '.*SOUTH.*' vs CONTAINS": (
        "MATCH (n) WHERE n.title =~ '.*SOUTH.*' RETURN count(n)",
        "MATCH (n) WHERE n.title CONTAINS 'SOUTH' RETURN count(n)"),
    "=~ $pattern vs toLower() STARTS WITH": (
        "MATCH (n) WHERE n.title =~ $pattern RETURN count(n)",
        "MATCH (n) WHERE toLower(n.title) STARTS WITH 'troll' RETURN count(n)"),
}
LITERAL = "x" * 900_000


def main() -> None:
    with ProxyProcess(command="demo") as proc, neo4j.GraphDatabase.driver(proc.uri, auth=(USER, PASSWORD)) as driver, \
            driver.session() as session:
        def count(query: str, **params) -> int:
            return session.run(query, params).single()[0]

        for name, (bridged, native) in PAIRS.items():
            assert count(bridged, pattern="(?i)troll.*") == count(native), name
            slow = median_seconds(lambda: count(bridged, pattern="(?i)troll.*"), 15)
            fast = median_seconds(lambda: count(native), 15)
            print(f"{name:44s} {slow / fast:5.2f}x  ({slow * 1000:.1f} ms vs {fast * 1000:.1f} ms)")
        literal = median_seconds(lambda: count(f"RETURN size('{LITERAL}')"), 7)
        param = median_seconds(lambda: count("RETURN size($s)", s=LITERAL), 7)
        print(f"{'900 KB literal (lifted) vs the same parameter':44s} {literal / param:5.2f}x  "
              f"({literal * 1000:.1f} ms vs {param * 1000:.1f} ms)")
        explain = median_seconds(lambda: session.run("EXPLAIN MATCH (a:Field), (b:Company) RETURN a, b").consume(), 20)
        one = median_seconds(lambda: session.run("RETURN 1").consume(), 20)
        print(f"{'EXPLAIN with a cartesian notification vs RETURN 1':44s} {explain / one:5.2f}x  "
              f"({explain * 1000:.2f} ms vs {one * 1000:.2f} ms)")
