"""Fuzz fixtures: one folder of hostile files per session, and an offline environment.

Lifecycle commands run against ``GPUPLAN_FAKE_FLEET`` (no cloud, no network); the
ledger, the user catalog and every XDG folder point into the temporary folder.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.e2e.fuzz import corpus


@dataclass(frozen=True)
class Hostile:
    root: Path
    files: dict[str, Path]
    policies: dict[str, Path]
    jobs: dict[str, Path]
    traces: dict[str, Path]
    fleet: Path
    good_policy: Path


@pytest.fixture(scope="session")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Hostile:
    root = tmp_path_factory.mktemp("hostile")
    good = root / "good-policy.yaml"
    good.write_text(corpus.VALID_POLICY, encoding="utf-8")
    return Hostile(
        root=root,
        files=corpus.bad_files(root),
        policies=corpus.bad_policies(root),
        jobs=corpus.bad_job_files(root),
        traces=corpus.bad_trace_dirs(root),
        fleet=corpus.fake_fleet(root),
        good_policy=good,
    )


@pytest.fixture(autouse=True)
def offline_env(
    hostile: Hostile, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(hostile.fleet))
    monkeypatch.setenv("GPUPLAN_DB", str(tmp_path / "ledger.sqlite3"))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.setenv(name, str(tmp_path / "home"))
    monkeypatch.delenv("GPUPLAN_CATALOG_DIR", raising=False)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "fuzz-secret-never-printed")
    yield tmp_path
