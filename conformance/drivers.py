"""Official drivers against the endpoint: neo4j Python 5.x (the venv), 6.x (.cache/neo4j6) and the
JavaScript driver (tests/js), each over bolt:// and neo4j:// with auto-commit, committed and
rolled-back transactions, graph values and a syntax error.

Each driver runs in its own process (`driver_script.py`, `tests/js/roundtrip.mjs`) and prints
JSON observations; the checks here compare them with what Neo4j would answer.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conformance.report import Section
from tests.harness import NEO4J6_PATH, REPO, run_with_neo4j6

SCRIPT = Path(__file__).with_name("driver_script.py").relative_to(REPO)
JS_DIR = REPO / "tests" / "js"
TIMEOUT = 120


def _observations(done: subprocess.CompletedProcess) -> dict:
    if done.returncode != 0 or not done.stdout.strip():
        raise ValueError(f"exit {done.returncode}: {done.stderr.strip()[-300:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _python_checks(section: Section, label: str, out: dict) -> None:
    for scheme in ("bolt", "neo4j"):
        got = out.get(scheme, {})
        section.check(f"{label} {scheme}:// connect + RETURN", got.get("row") == [1, "ü"]
                      and got.get("keys") == ["one", "s"],
                      got.get("error") or f"Bolt {'.'.join(map(str, got.get('protocol', [])))}")
    section.check(f"{label} auto-commit write", out.get("autocommit") == 1, str(out.get("autocommit")))
    section.check(f"{label} tx commit kept, rollback undone", out.get("committed") == [1, 2, 3],
                  str(out.get("committed")))
    section.check(f"{label} node/relationship/path values",
                  out.get("graph") == [["ConformanceDriver"], {"v": 2}, "R", 1, True], str(out.get("graph")))
    section.check(f"{label} syntax error code, session usable after",
                  out.get("syntax_error") == "Neo.ClientError.Statement.SyntaxError"
                  and out.get("after_error") == 7, str(out.get("syntax_error")))


def _js_checks(section: Section, out: dict) -> None:
    for scheme in ("bolt", "neo4j"):
        got = out.get(scheme, {})
        section.check(f"JS {scheme}:// connect + RETURN", got.get("one") == 1 and got.get("s") == "ü",
                      f"Bolt {got.get('protocol')}")
    section.check("JS tx commit kept, rollback undone", out.get("count") == 2, str(out.get("count")))
    section.check("JS node/relationship/path/date values",
                  out.get("node") == {"labels": ["JS"], "v": 1} and out.get("rel") == "R"
                  and out.get("pathLength") == 1 and out.get("date") == "2024-02-29")
    section.check("JS syntax error code", out.get("error") == "Neo.ClientError.Statement.SyntaxError",
                  str(out.get("error")))
    section.check("JS counters (nodesDeleted)", out.get("deleted") == 2, str(out.get("deleted")))


def run_drivers(section: Section, uri: str, user: str, password: str) -> None:
    args = [str(SCRIPT), uri, user, password]
    runs = [("Python 5.x", lambda: subprocess.run([sys.executable, *args], capture_output=True, check=False,
                                                  text=True, timeout=TIMEOUT, cwd=REPO))]
    if (NEO4J6_PATH / "neo4j").exists():
        runs.append(("Python 6.x", lambda: run_with_neo4j6(args, timeout=TIMEOUT)))
    else:
        section.skip("Python 6.x driver", f"{NEO4J6_PATH} missing (run `make install`)")
    for label, run in runs:
        try:
            out = _observations(run())
        except (ValueError, subprocess.TimeoutExpired) as exc:
            section.check(f"{label} driver round trip", False, str(exc))
            continue
        section.note(f"{label}: neo4j {out.get('version')}")
        _python_checks(section, label, out)
    if not (JS_DIR / "node_modules" / "neo4j-driver").exists() or shutil.which("node") is None:
        section.skip("JS driver", "node or tests/js/node_modules missing (run `make install`)")
        return
    try:
        out = _observations(subprocess.run(["node", "tests/js/roundtrip.mjs", uri, user, password],
                                           capture_output=True, text=True, timeout=TIMEOUT, cwd=REPO,
                                           check=False))
    except (ValueError, subprocess.TimeoutExpired) as exc:
        section.check("JS driver round trip", False, str(exc))
        return
    _js_checks(section, out)
