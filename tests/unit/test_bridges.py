"""FalkorDB bridges for Neo4j semantics (extensions/bridges), each run through the planner on a
real FalkorDB and compared with a hand-written query that gives Neo4j's answer."""

from __future__ import annotations

import pytest

from extensions.planner.planner import ExtensionPlanner
from core.errors import CypherError
from proxy.backends.falkordb.dialect import FALKORDB
from tests.unit.test_planner_support import RecordingRunner, registry, rows

AUTH = {"scheme": "basic", "principal": "neo4j", "credentials": "password"}
GRAPH = ("CREATE (:P {name: 'Anna', code: 'AB-12'})-[:KNOWS]->(:P {name: 'bob', code: 'x'}), "
         "(:P {name: 'Åse', code: 'CD-7'}), (:P {code: 'no name'}), (:Q {name: 42})")


@pytest.fixture(scope="module")
async def runner(embedded):
    return RecordingRunner(embedded, await embedded.authenticate(AUTH))


@pytest.fixture
async def graph(runner):
    await rows(await runner.run("MATCH (n) DETACH DELETE n", {}))
    await rows(await runner.run(GRAPH, {}))
    return runner


@pytest.fixture(scope="module")
def planner():
    return ExtensionPlanner(registry(), dialect=FALKORDB)


async def run(planner, runner, query, params=None):
    return await rows(await planner.execute(query, params or {}, runner))


REGEX = [
    ("MATCH (n:P) WHERE n.name =~ '(?i)a.*' RETURN n.name ORDER BY n.name",
     "MATCH (n:P) WHERE toLower(n.name) STARTS WITH 'a' RETURN n.name ORDER BY n.name"),
    ("MATCH (n:P) WHERE n.code =~ '[A-Z]{2}-\\\\d+' RETURN n.code ORDER BY n.code",
     "MATCH (n:P) WHERE n.code IN ['AB-12', 'CD-7'] RETURN n.code ORDER BY n.code"),
    ("MATCH (n:P) WHERE NOT n.name =~ 'b.*' RETURN n.name ORDER BY n.name",
     "MATCH (n:P) WHERE n.name IN ['Anna', 'Åse'] RETURN n.name ORDER BY n.name"),
    ("MATCH (n) RETURN n.name =~ '.*' AS m ORDER BY m",           # 42 and a missing name: null
     "UNWIND [true, true, true, null, null] AS m RETURN m ORDER BY m"),
    ("RETURN null =~ 'a' AS a, 1 =~ '1' AS b, 'a' =~ 'A' AS c, 'cat' =~ '.*\\\\bcat\\\\b.*' AS d",
     "RETURN null AS a, null AS b, false AS c, true AS d"),
    ("MATCH (n:P) WHERE elementId(n) =~ '\\\\d+' RETURN count(n)", "MATCH (n:P) RETURN count(n)"),
    ("MATCH (n:P) WHERE n.name =~ $pattern RETURN n.name", "RETURN 'bob'"),
    ("MATCH (n:P) WHERE n.name =~ '(?i).*' + $part + '.*' RETURN n.name", "RETURN 'Anna'"),
    ("MATCH (n:P) WHERE n.name =~ $missing_is_null RETURN n.name", "MATCH (n) WHERE false RETURN n"),
]


@pytest.mark.parametrize("neo4j_query, falkordb_query", REGEX)
async def test_regex_bridge(planner, graph, neo4j_query, falkordb_query):
    params = {"pattern": "b.b", "part": "NN", "missing_is_null": None}
    assert await run(planner, graph, neo4j_query, params) == await rows(await graph.run(falkordb_query, {}))


@pytest.mark.parametrize("query, params, code, words", [
    ("RETURN 'a' =~ '(' AS m", {}, "Neo.ClientError.Statement.SemanticError", "Invalid Regex: Unclosed group"),
    ("RETURN 'a' =~ $p AS m", {"p": "[z-a]"}, "Neo.ClientError.Statement.SemanticError", "Illegal character range"),
    ("RETURN 'é' =~ '\\\\X' AS m", {}, "Neo.ClientError.Statement.UnsupportedOperationError", "grapheme"),
    ("MATCH (n:P) RETURN n.name =~ n.code AS m", {}, "Neo.ClientError.Statement.UnsupportedOperationError",
     "literal or a parameter"),
    ("RETURN 'a' =~ $nope AS m", {}, "Neo.ClientError.Statement.ParameterMissing", "nope"),
])
async def test_regex_errors(planner, graph, query, params, code, words):
    with pytest.raises(CypherError) as failure:
        await run(planner, graph, query, params)
    assert failure.value.code == code and words in failure.value.message


async def test_regex_explain_plans_without_parameters(planner, graph):
    result = await planner.execute("EXPLAIN MATCH (n:P) WHERE n.name =~ $p RETURN n", {}, graph)
    assert (await result.consume()).plan is not None


async def test_named_path_in_create(planner, graph):
    created = await run(planner, graph, "MATCH (a:P {name: 'Anna'}) CREATE p = (a)-[:LIKES]->(:Thing {k: 1}) "
                                        "RETURN length(p) AS len, [x IN nodes(p) | labels(x)[0]] AS labels, "
                                        "type(relationships(p)[0]) AS type")
    assert created == [[1, ["P", "Thing"], "LIKES"]]
    single = await run(planner, graph, "CREATE p = (:Solo) RETURN length(p), size(nodes(p))")
    assert single == [[0, 1]]
    result = await planner.execute("CREATE p = (a:Left)<-[:TO]-(:Right) RETURN *", {}, graph)
    assert sorted(result.keys) == ["a", "p"]                  # no helper variable leaks into RETURN *
    (record,) = await rows(result)
    path = record[result.keys.index("p")]
    assert [list(n.labels) for n in path.nodes] == [["Left"], ["Right"]]
    two = await run(planner, graph, "CREATE p = (:A2)-[:R]->(:B2), q = (:C2) RETURN length(p) + length(q)")
    assert two == [[1]]
    await run(planner, graph, "UNWIND [1, 2] AS i FOREACH (x IN [i] | CREATE p = (:Each {i: x}))")
    assert await rows(await graph.run("MATCH (n:Each) RETURN count(n)", {})) == [[2]]


LANGCHAIN = ("MERGE (s:Session {id: $session_id}) WITH s OPTIONAL MATCH (s)-[lm:LAST_MESSAGE]->(last_message) "
             "CREATE (s)-[:LAST_MESSAGE]->(new:Message) SET new += {type: $type, content: $content} "
             "WITH new, lm, last_message WHERE last_message IS NOT NULL CREATE (last_message)-[:NEXT]->(new) "
             "DELETE lm")


async def test_langchain_chat_history_keeps_every_message(planner, graph):
    for content in ("hello", "how are you?", "fine"):
        await run(planner, graph, LANGCHAIN, {"session_id": "s1", "type": "human", "content": content})
    chain = await rows(await graph.run(
        "MATCH (s:Session {id: 's1'})-[:LAST_MESSAGE]->(last) MATCH p = (first:Message)-[:NEXT*0..]->(last) "
        "WHERE NOT ()-[:NEXT]->(first) RETURN [m IN nodes(p) | [m.type, m.content]]", {}))
    assert chain == [[[["human", "hello"], ["human", "how are you?"], ["human", "fine"]]]]


async def test_filter_after_a_write_sees_the_write(planner, graph):
    kept = await run(planner, graph, "MATCH (n:P) SET n.seen = true WITH n WHERE n.seen RETURN count(n)")
    assert kept == [[4]]
    star = await run(planner, graph, "MATCH (n:P) SET n.rank = 1 WITH * WHERE n.rank = 1 RETURN count(*)")
    assert star == [[4]]
    assert await rows(await graph.run("MATCH (n:P) WHERE n.seen AND n.rank = 1 RETURN count(n)", {})) == [[4]]


@pytest.mark.parametrize("query", [
    "OPTIONAL MATCH (q:Unknown) WITH q WHERE q IS NOT NULL RETURN q",
    "OPTIONAL MATCH (q:Unknown) WITH DISTINCT q WHERE q IS NOT NULL RETURN q",
    "OPTIONAL MATCH (q:Unknown) WITH * WHERE q IS NOT NULL RETURN q",
])
async def test_optional_match_filtered_later_gives_no_row(planner, graph, query):
    assert await run(planner, graph, query) == []


async def test_filter_without_write_or_optional_is_left_for_index_seeks(planner):
    assert planner.plan("MATCH (n:P) WITH n WHERE n.name = 'x' RETURN n") is None


@pytest.mark.parametrize("query", [
    "CREATE (:E {at: datetime('2024-01-01T10:00:00+02:00')})",
    "CREATE (:E {at: datetime('2024-06-01T10:00:00[Europe/London]')})",
    "CREATE (:E {at: datetime({year: 2024, month: 1, day: 1, timezone: 'America/New_York'})})",
])
async def test_zoned_datetime_is_refused_not_changed(planner, graph, query):
    with pytest.raises(CypherError) as failure:
        await run(planner, graph, query)
    assert failure.value.code == "Neo.ClientError.Statement.UnsupportedOperationError"
    assert "time zone" in failure.value.message and "UTC" in failure.value.message
    assert await rows(await graph.run("MATCH (e:E) RETURN count(e)", {})) == [[0]]


async def test_zoned_datetime_error_teaches_the_utc_instant(planner, graph):
    with pytest.raises(CypherError) as failure:
        await run(planner, graph, "CREATE (:E {at: datetime('2024-01-01T10:00:00+02:00')})")
    assert "datetime('2024-01-01T08:00:00Z')" in failure.value.message
    with pytest.raises(CypherError) as failure:
        await run(planner, graph, "CREATE (:E {at: datetime($at)})", {"at": "2024-07-01T12:00:00-05:00"})
    assert "-05:00" in failure.value.message and "2024-07-01T17:00:00Z" in failure.value.message


async def test_utc_and_zoneless_datetimes_run(planner, graph):
    got = await run(planner, graph, "RETURN datetime('2024-01-01T10:00:00Z').hour AS a, "
                                    "datetime('2024-01-01T10:00:00').hour AS b, datetime($at).hour AS c",
                    {"at": "2024-01-01T10:00:00+00:00"})
    assert got == [[10, 10, 10]]
