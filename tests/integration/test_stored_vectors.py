"""Vectors stored as FalkorDB's `vecf32`, against a real embedded server: read back exactly as the
floats written (float32, widened), and `size()` of a property probed only while the graph may
hold a vector (compat/vector_census.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from core.backend import TxConfig
from extensions.compat.vector_census import census
from extensions.planner.catalog import build_registry
from extensions.planner.planner import ExtensionPlanner
from proxy.backends.falkordb.backend import FalkorDBBackend
from proxy.backends.falkordb.dialect import FALKORDB
from proxy.session import SessionRunner

AUTO = TxConfig()


async def rows(backend, query, params=None):
    result = await backend.run(query, params or {}, AUTO, None)
    return await result.fetch(-1)


async def resp2_floats(backend, query: str) -> list[float]:
    """The first cell's vector as a RESP2 client reads it: its elements' text, parsed by float()."""
    client = backend.pair.primary.client()
    try:
        reply = await client.execute_command("GRAPH.QUERY", "neo4j", query, "--compact")
    finally:
        await client.aclose()
    kind, elements = reply[1][0][0]
    assert kind == 12
    return [float(text) for text in elements]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(vector=st.lists(st.floats(width=32), max_size=2000))
@example(vector=[0.0, -0.0, float("inf"), float("-inf"), float("nan"), 1e-45, 3.4028234663852886e38, 1.0])
async def test_vectors_read_back_as_the_float32_values_written(embedded, vector):
    literal = "[" + ", ".join("0.0/0.0" if v != v else repr(v) if abs(v) != float("inf")
                              else ("1e39" if v > 0 else "-1e39") for v in vector) + "]"
    query = f"RETURN vecf32({literal}) AS v"
    (got,), = await rows(embedded, query)
    expected = np.array(vector, dtype=np.float32).astype(np.float64).tolist()
    assert [repr(v) for v in got] == [repr(v) for v in expected]
    assert [repr(v) for v in got] == [repr(v) for v in await resp2_floats(embedded, query)]
    assert all(type(v) is float for v in got)


# ------------------------------------------------------------------ size() probes only where vectors may be

@pytest.fixture(scope="module")
def planner(tmp_path_factory):
    return ExtensionPlanner(build_registry(tmp_path_factory.mktemp("registry")), dialect=FALKORDB)


@pytest.fixture
def sent(embedded, monkeypatch):
    """The texts the backend runs (auto-commit and in transactions), in order."""
    texts: list[str] = []
    execute = embedded.execute

    async def recording(graph, statement, *args, **kwargs):
        texts.append(statement.text)
        return await execute(graph, statement, *args, **kwargs)

    monkeypatch.setattr(embedded, "execute", recording)
    return texts


async def ask(planner, runner, query: str, **params) -> list[list]:
    result = await planner.execute(query, params, runner)
    return await result.fetch(-1)


def probes(texts: list[str]) -> list[str]:
    """stored_vectors.py's probes among `texts` (they name `__v`, or read `[id(v), v.key]`)."""
    return [t for t in texts if "__v" in t or "RETURN [id(" in t]


async def test_size_of_a_key_holding_no_vector_sends_no_probe(embedded, planner, sent):
    runner = SessionRunner(embedded, AUTO, None)
    await ask(planner, runner, "MATCH (n) DETACH DELETE n")
    await ask(planner, runner, "CREATE (:Doc {name: 'abc', tags: ['x', 'y']}), (:Doc {name: 'de'})")
    known = census(embedded, "neo4j")
    query = "MATCH (d:Doc) RETURN size(d.name) AS n, size(d.tags) AS t, d.tags[0] AS first ORDER BY n"
    assert await ask(planner, runner, query) == [[2, None, None], [3, 2, "x"]]
    scans = known.scans
    await ask(planner, runner, "MATCH (d:Doc {name: 'de'}) SET d.name = 'defg'")       # no vecf32: still none
    assert await ask(planner, runner, query) == [[3, 2, "x"], [4, None, None]]
    assert await ask(planner, runner, "MATCH (d:Doc {name: $name}) RETURN size(d.name)", name="abc") == [[3]]
    assert probes(sent) == [] and known.scans == scans and not embedded.vectors_written("neo4j")


async def test_once_a_vector_is_stored_size_probes_as_before(embedded, planner, sent):
    runner = SessionRunner(embedded, AUTO, None)
    await ask(planner, runner, "MATCH (d:Doc {name: 'abc'}) CALL db.create.setNodeVectorProperty(d, 'embedding', $v)",
              v=[0.5, 1.5, 2.5])
    assert embedded.vectors_written("neo4j")
    assert await ask(planner, runner, "MATCH (d:Doc) RETURN size(d.name) AS n ORDER BY n") == [[3], [4]]
    assert len(probes(sent)) == 1                                # no vector of another length: one round
    sent.clear()
    got = await ask(planner, runner, "MATCH (d:Doc) RETURN d.name, size(d.embedding), d.embedding[1] ORDER BY d.name")
    assert got == [["abc", 3, 1.5], ["defg", None, None]]
    assert len(probes(sent)) == 3                                # the lengths' rounds and the element's vectors


async def test_a_vector_written_earlier_in_the_transaction_is_read(embedded, planner, sent):
    tx = await embedded.begin(AUTO, None)
    runner = SessionRunner(embedded, AUTO, None, tx=tx)
    outside = SessionRunner(embedded, AUTO, None)
    try:
        await ask(planner, runner, "MATCH (d:Doc {name: 'defg'}) SET d.name = vecf32([1.0, 2.0])")
        assert await ask(planner, runner, "MATCH (d:Doc) RETURN size(d.name) AS n ORDER BY n") == [[2], [3]]
        assert await ask(planner, runner, "MATCH (d:Doc) WHERE size(d.name) = 2 RETURN d.name[..1]") == [[[1.0]]]
        assert await ask(planner, outside, "MATCH (d:Doc) RETURN size(d.name) AS n ORDER BY n") == [[3], [4]]
    finally:
        await tx.rollback()
    assert await ask(planner, outside, "MATCH (d:Doc) RETURN size(d.name) AS n ORDER BY n") == [[3], [4]]
    await ask(planner, outside, "MATCH (d:Doc {name: 'defg'}) SET d.name = vecf32([1.0, 2.0, 3.0, 4.0, 5.0])")
    assert await ask(planner, outside, "MATCH (d:Doc) RETURN size(d.name) AS n ORDER BY n") == [[3], [5]]


async def test_a_vector_on_a_relationship_is_found(embedded, planner, sent):
    runner = SessionRunner(embedded, AUTO, None)
    await ask(planner, runner, "MATCH (a:Doc {name: 'abc'}) CREATE (a)-[:LINK {w: vecf32([1.0, 2.0, 3.0, 4.0])}]->(a)")
    assert await ask(planner, runner, "MATCH ()-[r:LINK]->() RETURN size(r.w), r.w[-1]") == [[4, 4.0]]
    assert probes(sent)


async def test_vectors_stored_before_a_restart_are_found(tmp_path, planner):
    """A new process has seen no vecf32 write: its census finds the vectors already stored (here
    only on a relationship), so their size() is still probed and right."""
    backend = FalkorDBBackend(tmp_path, persistent=True)
    await backend.start()
    try:
        await ask(planner, SessionRunner(backend, AUTO, None),
                  "CREATE (:End {name: 'x'})-[:LINK {w: vecf32([1.0, 2.0, 3.0])}]->(:End {name: 'yz'})")
    finally:
        await backend.stop()
    backend = FalkorDBBackend(tmp_path, persistent=True)
    await backend.start()
    try:
        runner = SessionRunner(backend, AUTO, None)
        assert not backend.vectors_written("neo4j")
        assert await ask(planner, runner, "MATCH (a)-[r:LINK]->(b) RETURN size(a.name), size(b.name), size(r.w)") \
            == [[1, 2, 3]]
        assert census(backend, "neo4j").anywhere is True
    finally:
        await backend.stop()
