"""Plugins (compat's rewrites, the planner's late labels) touch the plan being built only through
`extensions.plan_builder.PlanBuilder`: every `planner` parameter of theirs is typed by it, and
what they read or call on it is one of its members. The import contracts (test_layers.py) keep
them from importing the planner; this keeps them from reaching into the object it hands them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from extensions import plan_builder

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = sorted([*(ROOT / "extensions" / "compat").glob("*.py"), ROOT / "extensions" / "planner" / "late.py",
                  ROOT / "extensions" / "plan_builder.py"])
MEMBERS = {name for name in vars(plan_builder.PlanBuilder) if not name.startswith("_")}


def _functions(tree: ast.Module):
    """Module-level functions and the functions nested in them (methods take other objects)."""
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield from (n for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)))


def _typed_by_protocol(arg: ast.arg) -> bool:
    return isinstance(arg.annotation, ast.Name) and arg.annotation.id == "PlanBuilder"


def _reaches(path: Path) -> list[str]:
    """`function: planner.attr` for each use of a plan outside the protocol, or an untyped plan."""
    found = []
    for function in _functions(ast.parse(path.read_text())):
        params = [*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs]
        plans = {a.arg for a in params if _typed_by_protocol(a)}
        found += [f"{function.name}: untyped {a.arg}" for a in params
                  if a.arg == "planner" and not _typed_by_protocol(a)]
        found += [f"{function.name}: {node.value.id}.{node.attr}" for node in ast.walk(function)
                  if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id in plans and node.attr not in MEMBERS]
    return found


@pytest.mark.parametrize("path", PLUGINS, ids=lambda p: p.stem)
def test_plugins_use_the_plan_only_through_the_protocol(path):
    assert _reaches(path) == []


def test_the_check_sees_a_plugin_reaching_past_the_protocol(tmp_path):
    plugin = tmp_path / "plugin.py"
    plugin.write_text("def plan(planner: PlanBuilder, i):\n"
                      "    def render(values):\n        return planner.steps\n"
                      "    planner.add_edit((0, 0, planner.fresh()))\n\n"
                      "def other(planner, i):\n    return planner\n")
    assert _reaches(plugin) == ["plan: planner.steps", "other: untyped planner"]


def test_the_planner_is_a_plan_builder():
    """`PartPlanner` has every member the protocol names (what mypy would check)."""
    from itertools import count

    from extensions.cypher.parser import parse
    from extensions.planner.probe import PartPlanner
    from extensions.registry import Registry
    from proxy.backends.falkordb.dialect import FALKORDB

    text = "MATCH (n) RETURN n"
    part = PartPlanner(text, parse(text).parts[0], Registry(), FALKORDB, [], count())
    assert [name for name in sorted(MEMBERS) if not hasattr(part, name)] == []
