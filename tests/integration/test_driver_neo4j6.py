"""The whole Python driver suite again, under the neo4j 6.x driver (installed apart in .cache/neo4j6):
over Bolt, and over the Query API with an http:// URI."""

from __future__ import annotations

import pytest

from tests.harness import DRIVER_OVER_HTTP, NEO4J6_PATH, run_driver_suite

pytestmark = pytest.mark.skipif(not (NEO4J6_PATH / "neo4j").exists(),
                                reason="neo4j 6.x not installed: run `make install`")


def test_driver_suite_under_neo4j6():
    done = run_driver_suite(PYTHONPATH=str(NEO4J6_PATH), EXPECT_NEO4J_MAJOR="6")
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


def test_driver_suite_over_http_under_neo4j6():
    done = run_driver_suite(PYTHONPATH=str(NEO4J6_PATH), EXPECT_NEO4J_MAJOR="6", **{DRIVER_OVER_HTTP: "1"})
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
