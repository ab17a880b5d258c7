"""The whole Python driver suite again, under the neo4j 6.x driver (installed apart in .cache/neo4j6)."""

from __future__ import annotations

import pytest

from tests.harness import NEO4J6_PATH, run_with_neo4j6

pytestmark = pytest.mark.skipif(not (NEO4J6_PATH / "neo4j").exists(),
                                reason="neo4j 6.x not installed: run `make install`")


def test_driver_suite_under_neo4j6():
    done = run_with_neo4j6(["-m", "pytest", "-q", "-p", "no:cacheprovider",
                            "tests/integration/test_driver_python.py"])
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
