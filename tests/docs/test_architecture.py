"""docs/architecture.md names only what exists, and its module map is the code's.

The page once named ``usecases/providers.py``, ``usecases/fleet.py``, ``core/fleet.py``
and a ``Fleet`` type long after they were gone. Every backticked path is checked on
disk and every backticked dotted name (``core.policy.models.Scope``) is imported and
looked up; the generated module map must match ``scripts/gen_architecture.py``.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("gpuplan", "core", "usecases", "providers", "loaders", "ledger", "cli", "tui")
TOKEN = re.compile(r"`([^`\s]+)`")
PATH = re.compile(r"^[\w./-]+\.(py|csv|json|md|yaml|txt)$|^[\w./-]+/$")
SEARCHED = ("gpuplan", "tests", "scripts", "docs", "pricing", "policies", "deploy")
DOTTED = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$")


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gen_architecture", ROOT / "scripts" / "gen_architecture.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tokens() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return sorted(set(TOKEN.findall(text)))


def path_exists(token: str) -> bool:
    """A path relative to the repository or to gpuplan/; a bare file name anywhere."""
    if token.count("/") == 0 or token == "gpuplan/":
        return (ROOT / token).exists() or any(any((ROOT / top).rglob(token)) for top in SEARCHED)
    bases = (ROOT, ROOT / "gpuplan", ROOT / "tests")
    return any((base / token).exists() for base in bases)


def dotted_exists(token: str) -> bool:
    """Import the longest module prefix, then look up the rest as attributes."""
    parts = token.split(".")
    if parts[0] != "gpuplan":
        parts = ["gpuplan", *parts]
    for cut in range(len(parts), 1, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for name in parts[cut:]:
            if not hasattr(obj, name):
                # A pydantic model's or dataclass's field is named on the class.
                fields = getattr(obj, "model_fields", None) or getattr(
                    obj, "__dataclass_fields__", {}
                )
                return name in fields
            obj = getattr(obj, name)
        return True
    return False


def test_module_map_is_generated_from_the_code() -> None:
    gen = _generator()
    current = DOC.read_text(encoding="utf-8")
    assert current == gen.spliced(current), "run: python scripts/gen_architecture.py"


def test_the_map_lists_every_module() -> None:
    current = DOC.read_text(encoding="utf-8")
    for module in (ROOT / "gpuplan").rglob("*.py"):
        if module.name != "__init__.py" and "__pycache__" not in module.parts:
            assert f"| `{module.name}` |" in current, module


@pytest.mark.parametrize("token", [t for t in _tokens() if PATH.match(t) and "<" not in t])
def test_every_named_path_exists(token: str) -> None:
    assert path_exists(token), f"docs/architecture.md names {token!r}, which does not exist"


@pytest.mark.parametrize(
    "token",
    [t for t in _tokens() if DOTTED.match(t) and t.split(".")[0] in PACKAGES and not PATH.match(t)],
)
def test_every_named_module_and_object_exists(token: str) -> None:
    assert dotted_exists(token), f"docs/architecture.md names {token!r}, which does not exist"


@pytest.mark.parametrize("gone", ["usecases/providers.py", "core/fleet.py", "usecases.fleet"])
def test_the_checks_catch_a_module_that_is_gone(gone: str) -> None:
    exists = path_exists(gone) if gone.endswith(".py") else dotted_exists(gone)
    assert not exists
