"""Actions as recorded steps, in process on the in-memory fake and a ledger file.

A one-step action writes its ``actions`` row alone, as before steps existed; a
composite action (the test-only snapshot-then-stop of :mod:`tests.ledger.composite_child`)
also writes one ``action_steps`` row per step. Kills between steps are in
``tests/ledger/test_composite_kill.py``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.actions import ACTIONS, Call, ProviderStep, Steps, described
from gpuplan.core.lifecycle.instances import Action, GpuInstance
from gpuplan.ledger import Ledger
from gpuplan.providers.fake import FakeAdapter
from gpuplan.usecases.clouds.adapters import CloudEntry
from gpuplan.usecases.clouds.entries import ENTRIES
from gpuplan.usecases.lifecycle.steps import calls_for
from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle
from tests.ledger.composite_child import NOW, POLICY, SNAPSHOT_THEN_STOP, fake, instance, run

IID = "i-0steps"
STEPS = "SELECT step, provider_call, state, detail FROM action_steps ORDER BY id"
ROWS = "SELECT instance_id, action, outcome, detail FROM actions ORDER BY id"


@pytest.fixture
def provider(tmp_path: Path) -> FakeAdapter:
    path = tmp_path / "fleet.json"
    body = {"instances": [instance(IID)], "utilisation_percent": {IID: 1.0}}
    path.write_text(json.dumps(body), encoding="utf-8")
    return fake(path)


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with Ledger(db) as ledger:
        return [tuple(r) for r in ledger.select(sql)]


def test_a_one_step_action_writes_its_action_row_alone(
    provider: FakeAdapter, tmp_path: Path
) -> None:
    db = tmp_path / "l.db"
    with Ledger(db) as ledger:
        result = run_stop_idle(POLICY, [provider], apply=True, now=NOW, ledger=ledger)
    assert [o.outcome.value for o in result.outcomes] == ["stopped"]
    assert rows(db, ROWS) == [(IID, "stop", "stopped", "")]
    assert rows(db, STEPS) == []
    assert [c.method for c in provider.calls if c.method in ("snapshot", "stop")] == ["stop"]


def test_a_composite_action_records_each_step_before_and_after_its_call(
    provider: FakeAdapter, tmp_path: Path
) -> None:
    db = str(tmp_path / "l.db")
    result = run(db, provider, NOW)
    assert [o.outcome.value for o in result.outcomes] == ["stopped"]
    assert [c.method for c in provider.calls if c.method in ("snapshot", "stop")] == [
        "snapshot",
        "stop",
    ]
    assert provider.snapshots == {IID: [f"snap-{IID}-1"]}
    assert rows(Path(db), ROWS) == [(IID, "stop", "stopped", "")]
    assert rows(Path(db), STEPS) == [
        (1, "snapshot", "done", f"snapshot snap-{IID}-1"),
        (2, "stop", "done", ""),
    ]


def test_a_failed_step_leaves_the_later_steps_undone(provider: FakeAdapter, tmp_path: Path) -> None:
    provider.failures["snapshot"] = "throttled"
    db = str(tmp_path / "l.db")
    result = run(db, provider, NOW)
    assert [(o.outcome.value, o.detail) for o in result.outcomes] == [("failed", "throttled")]
    assert result.failed
    assert provider.calls_to("stop") == [] and provider.instances[IID].state.value == "running"
    assert rows(Path(db), ROWS) == [(IID, "stop", "failed", "throttled")]
    assert rows(Path(db), STEPS) == [
        (1, "snapshot", "failed", "throttled"),
        (2, "stop", "not done", "snapshot failed"),
    ]


@pytest.mark.parametrize("cloud", ENTRIES, ids=lambda e: e.provider.value)
def test_the_registry_entries_say_what_the_action_table_says(cloud: CloudEntry) -> None:
    # The entry's steps are the cloud's row of core/lifecycle/actions.py: what it carries out and
    # what it refuses, with the reason, read from that one table.
    assert cloud.steps == ACTIONS[cloud.provider]
    said = {a: f"refused: {why}" for a, why in cloud.refusals.items()} | cloud.actions
    assert described(cloud.provider) == said


def test_adding_an_action_names_files_that_exist() -> None:
    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Adding an action", 1)[1].split("\n## ", 1)[0]
    named = set(re.findall(r"`((?:gpuplan|tests)/[\w/]+\.py)`", section))
    assert (
        "gpuplan/core/lifecycle/actions.py" in named
        and "tests/ledger/test_composite_kill.py" in named
    )
    assert sorted(p for p in named if not (root / p).exists()) == []


def test_the_steps_are_the_policy_actions_where_they_amount_to_the_call() -> None:
    azure = GpuInstance.model_validate({**instance("vm-1"), "provider": "azure"})
    snapshot_then_deallocate = {
        Provider.AZURE: {
            Action.STOP: Steps(
                (ProviderStep(Call.SNAPSHOT, "snap"), ProviderStep(Call.DEALLOCATE, "dealloc"))
            )
        }
    }
    got = calls_for(azure, Action.STOP, Action.DEALLOCATE, snapshot_then_deallocate)
    assert got == (Call.SNAPSHOT, Call.DEALLOCATE)
    aws = GpuInstance.model_validate(instance("i-1"))
    # Hibernate fallen back to stop: the stop's steps, not the hibernate's.
    assert calls_for(aws, Action.HIBERNATE, Action.STOP, SNAPSHOT_THEN_STOP) == (
        Call.SNAPSHOT,
        Call.STOP,
    )
    assert calls_for(aws, Action.STOP, Action.STOP, ACTIONS) == (Call.STOP,)
