"""The layers of DESIGN.md "Parts" hold: no module imports from a layer above its own, and no
sibling packages or modules import each other in a cycle. The contracts are import-linter's, in
pyproject.toml ([tool.importlinter]); a broken one prints the offending imports."""

from __future__ import annotations

from pathlib import Path

from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parents[2]


def test_import_contracts_are_kept(monkeypatch):
    monkeypatch.chdir(ROOT)                 # the packages are found from the repository root
    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True) == 0
