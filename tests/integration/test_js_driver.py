"""The JavaScript neo4j-driver 5.x from npm against the proxy."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.harness import PASSWORD, USER

JS_DIR = Path(__file__).resolve().parent.parent / "js"

pytestmark = pytest.mark.skipif(
    not (JS_DIR / "node_modules" / "neo4j-driver").exists() or not shutil.which("node"),
    reason="neo4j-driver not installed: run `make install`")


def test_js_driver_round_trip(proxy):
    done = subprocess.run(["node", "roundtrip.mjs", proxy.uri, USER, PASSWORD], cwd=JS_DIR,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for scheme in ("bolt", "neo4j"):
        assert out[scheme]["agent"].startswith("Neo4j/5")
        assert out[scheme]["keys"] == ["one", "s"] and out[scheme]["one"] == 1 and out[scheme]["s"] == "ü"
    assert out["node"] == {"labels": ["JS"], "v": 1}
    assert out["rel"] == "R" and out["pathLength"] == 1
    assert out["date"] == "2024-02-29"
    assert out["count"] == 2
    assert out["error"] == "Neo.ClientError.Statement.SyntaxError"
    assert out["deleted"] == 2
