"""A value argument computed from one node alone (`text_score(n.description + ' ' + n.name, $q)`)
is bound by the node's id, not keyed by the value (issue 29: keyed by long texts, the map
parameter was read linearly per row, 27x the node form). Through the planner on the real
embedded database: the plan's lookup, and the answers, which must be those of the value-keyed
form.
"""

from __future__ import annotations

import pytest

from extensions.planner.planner import ExtensionPlanner
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_planner_support import GRAPH, RecordingRunner, registry, rows

AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}


@pytest.fixture(scope="module")
async def backend(embedded):
    creds = await embedded.authenticate(AUTH)
    await (await RecordingRunner(embedded, creds).run(GRAPH, {})).consume()
    return embedded, creds


@pytest.fixture
def runner(backend):
    return RecordingRunner(*backend)


def _lookup(query: str):
    (step,) = ExtensionPlanner(registry(), dialect=FALKORDB)._decide(query).steps
    (site,) = step.sites
    return site.lookup


@pytest.mark.parametrize(("query", "index"), [
    ("MATCH (p:ProductionProfile) RETURN tag(p.id + '!')", "id(p)"),
    ("MATCH (p:ProductionProfile)-[r:OF_FIELD]->() RETURN tag(type(r) + '!')", None),  # may be a list
    ("MATCH (p:ProductionProfile), (f:Field) RETURN tag(p.id + f.title)", None),     # two nodes
    ("MATCH (p:ProductionProfile) RETURN tag(p.id + toString(rand()))", None),        # differs per row
    ("MATCH (p:ProductionProfile) RETURN tag(p.id + toString(COUNT { (p)--() }))", None),
])
def test_a_value_of_one_entity_is_indexed_by_its_id(query, index):
    lookup = _lookup(query)
    assert lookup.index == index
    assert len(lookup.keys) == (0 if index else 1)          # else keyed by toString(<the value>)


async def test_values_bound_by_id_are_those_of_each_row(backend, runner):
    planner = ExtensionPlanner(registry(), dialect=FALKORDB)
    got = await rows(await planner.execute(
        "MATCH (p:ProductionProfile) OPTIONAL MATCH (p)-[:OF_FIELD]->(f:Field {title: 'TROLL'}) "
        "RETURN p.id AS id, tag(p.id + '!') AS a, tag(f.title + '?') AS b ORDER BY id", {}, runner))
    assert got == [["P1", "v:P1!", "v:TROLL?"], ["P2", "v:P2!", "v:TROLL?"], ["P3", "v:P3!", None]]
    lengths = await rows(await planner.execute(
        "MATCH (p:ProductionProfile {id: 'P1'})-[r*1..1]->() RETURN tag(toString(size(r))) AS a", {}, runner))
    assert lengths == [["v:1"]]                                  # a variable-length r is a list
    # a write between two runs is seen (the node's probe rows are keyed by the graph's state)
    await (await runner.run("MATCH (p:ProductionProfile {id: 'P3'}) SET p.id = 'P9'", {})).consume()
    again = await rows(await planner.execute("MATCH (p:ProductionProfile) RETURN tag(p.id + '!') AS a ORDER BY a",
                                             {}, runner))
    assert again == [["v:P1!"], ["v:P2!"], ["v:P9!"]]
    await (await runner.run("MATCH (p:ProductionProfile {id: 'P9'}) SET p.id = 'P3'", {})).consume()
