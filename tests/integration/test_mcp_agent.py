"""An agent framework's own MCP client against /mcp: langchain-mcp-adapters loads the tools and a
scripted chat model (no network) runs them in a ReAct loop on the demo graph. The adapters need
mcp 1.x, so the script runs in its own environment (`.cache/mcp-agent`, made by `make install`)."""

from __future__ import annotations

import json
import math
import subprocess

from proxy.demo import SEED_QUERY
from tests.harness import PASSWORD, REPO, USER
from tests.seed import expected_seed_answer

AGENT_PYTHON = REPO / ".cache" / "mcp-agent" / "bin" / "python"
SCRIPT = REPO / "tests" / "mcp_agent" / "langchain_agent.py"


def test_langchain_loads_and_runs_the_tools(demo):
    assert AGENT_PYTHON.exists(), "the MCP agent environment is missing: run `make install`"
    done = subprocess.run([str(AGENT_PYTHON), str(SCRIPT), demo.http_uri, USER, PASSWORD, SEED_QUERY],
                          capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-4000:]
    out = json.loads(done.stdout)
    assert out["tools"] == ["explain-cypher", "get-schema", "read-cypher", "write-cypher"]
    assert out["openai_parameters"]["read-cypher"] == ["database", "format", "params", "query"]
    schema, seed, broken = out["steps"]
    assert schema["status"] == "success" and "ProductionProfile (124; ts)" in schema["text"]
    keys, values = (json.loads(line) for line in seed["text"].splitlines())
    assert seed["status"] == "success" and math.isclose(
        dict(zip(keys, values))["mean_reduction"], expected_seed_answer()["mean_reduction"], rel_tol=1e-9)
    assert broken["status"] == "error"
    assert broken["text"].startswith("Neo.ClientError.Statement.SyntaxError: Invalid input 'R'")
    assert out["answer"] == "About 8% lower in summer."
