"""The layers of DESIGN.md "Parts" hold: no module imports from a layer above its own, and no
sibling packages or modules import each other in a cycle. The contracts are import-linter's, in
pyproject.toml ([tool.importlinter]); a broken one prints the offending imports.

import-linter runs in its own process: it configures logging with `dictConfig`, which would
disable the loggers of every module this test process has imported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_LINT = ("import sys; from importlinter.cli import lint_imports; "
         "sys.exit(lint_imports(config_filename='pyproject.toml', no_cache=True, no_logo=True))")


def test_import_contracts_are_kept():
    check = subprocess.run([sys.executable, "-c", _LINT], cwd=ROOT, capture_output=True, text=True,
                           timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
