"""Module and function sizes in the shells and the planner: modules under 400 lines,
functions at most 60 (issue 27). Checked from the source with ``ast``, so a split that
goes back together fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "gpuplan"
CHECKED = sorted(
    {
        *(ROOT / "cli").glob("*.py"),
        *(ROOT / "tui").glob("*.py"),
        *(ROOT / "core" / "planner").glob("*.py"),
        *(ROOT / "usecases" / "planner").glob("estimate*.py"),
        ROOT / "core" / "catalog" / "query.py",
    }
)
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def long_functions(source: str) -> list[str]:
    """``name (n lines)`` for every function or method over the limit."""
    return [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]


def test_the_checked_set_is_the_shells_and_the_planner() -> None:
    names = {p.relative_to(ROOT).as_posix() for p in CHECKED}
    assert {"tui/fleet.py", "cli/catalog_cmd.py", "usecases/planner/estimate.py"} <= names
    assert len(names) > 60


@pytest.mark.parametrize("path", CHECKED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_module_and_functions_are_small(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    assert source.count("\n") < MAX_MODULE_LINES
    assert long_functions(source) == []


def test_a_long_function_is_found() -> None:
    body = "".join(f"    x{i} = {i}\n" for i in range(MAX_FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}") == [f"f ({MAX_FUNCTION_LINES + 1} lines)"]
    assert long_functions("def g():\n    return 1\n") == []
