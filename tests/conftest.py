"""Shared fixtures: a real proxy process in front of a real embedded FalkorDB."""

from __future__ import annotations

import os

import neo4j
import pytest

from tests.harness import PASSWORD, THROUGH_NEO4J_BACKEND, USER, ProxyProcess


@pytest.fixture(scope="session")
def proxy():
    """One proxy (FalkorDB backend, throwaway data dir) shared by the integration tests.

    With THROUGH_NEO4J_BACKEND=1 in the environment, clients get a second proxy instead, whose
    Neo4j backend points at the first (proxy -> proxy -> FalkorDB).
    """
    with ProxyProcess() as process:
        if os.environ.get(THROUGH_NEO4J_BACKEND):
            with ProxyProcess(args=["--upstream", process.uri]) as chained:
                yield chained
        else:
            yield process


@pytest.fixture(scope="session")
def demo():
    """One proxy serving the Sodir demo graph (loaded once), shared by the tests that read it."""
    with ProxyProcess(command="demo") as process:
        yield process


@pytest.fixture(scope="session")
def driver(proxy):
    with neo4j.GraphDatabase.driver(proxy.uri, auth=(USER, PASSWORD)) as drv:
        yield drv


@pytest.fixture
def clean_graph(driver):
    """An empty default graph before and after the test."""
    driver.execute_query("MATCH (n) DETACH DELETE n")
    yield driver
    driver.execute_query("MATCH (n) DETACH DELETE n")
