"""Shared fixtures: a real proxy process in front of a real embedded FalkorDB."""

from __future__ import annotations

import os
from pathlib import Path

import neo4j
import pytest

from proxy.backends.falkordb.backend import FalkorDBBackend

from tests.harness import DRIVER_OVER_HTTP, NO_LOCKOUT, PASSWORD, THROUGH_NEO4J_BACKEND, USER, ProxyProcess


@pytest.fixture(scope="session")
def proxy():
    """One proxy (FalkorDB backend, throwaway data dir) shared by the integration tests.

    With THROUGH_NEO4J_BACKEND=1 in the environment, clients get a second proxy instead, whose
    Neo4j backend points at the first (proxy -> proxy -> FalkorDB).
    """
    with ProxyProcess(args=NO_LOCKOUT) as process:
        if os.environ.get(THROUGH_NEO4J_BACKEND):
            with ProxyProcess(args=["--upstream", process.uri, *NO_LOCKOUT]) as chained:
                yield chained
        else:
            yield process


@pytest.fixture(scope="module")
def chained(proxy):
    """Proxy B: the Neo4j backend pointed at `proxy` (proxy -> proxy), for tests of the upstream path."""
    with ProxyProcess(args=["--upstream", proxy.uri, *NO_LOCKOUT]) as process:
        yield process


@pytest.fixture(scope="session")
def demo():
    """A proxy serving the Sodir demo graph (`cypher-proxy demo`), shared by the tests that read it."""
    with ProxyProcess(command="demo") as process:
        yield process


@pytest.fixture(scope="module")
async def embedded(tmp_path_factory):
    """An in-process embedded FalkorDB backend (no persistence) for the module's tests; when it
    stops, none of its server processes may be left."""
    backend = FalkorDBBackend(tmp_path_factory.mktemp("embedded"), persistent=False)
    await backend.start()
    yield backend
    pids = [backend.pair.primary.pid, backend.pair.replica.pid]
    await backend.stop()
    assert not any(os.path.exists(f"/proc/{pid}") and _running(pid) for pid in pids)


def _running(pid: int) -> bool:
    """False for a zombie (exited, not reaped yet)."""
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


@pytest.fixture(scope="module")
def private_demo():
    """A demo proxy of the test module's own, for tests that write to the graph (or load the
    proxy's CPU) and so must not share the session's `demo`."""
    with ProxyProcess(command="demo") as process:
        yield process


@pytest.fixture(scope="session")
def driver(proxy):
    """A driver for `proxy`; with DRIVER_OVER_HTTP=1 the neo4j 6.x driver over the Query API
    (http://, which needs the database named: it resolves no home database)."""
    if os.environ.get(DRIVER_OVER_HTTP):
        drv = neo4j.GraphDatabase.driver(proxy.http_uri, auth=(USER, PASSWORD), database="neo4j")
    else:
        drv = neo4j.GraphDatabase.driver(proxy.uri, auth=(USER, PASSWORD))
    with drv:
        yield drv


@pytest.fixture
def clean_graph(driver):
    """An empty default graph before and after the test."""
    driver.execute_query("MATCH (n) DETACH DELETE n")
    yield driver
    driver.execute_query("MATCH (n) DETACH DELETE n")
