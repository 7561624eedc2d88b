"""The contract every registry entry keeps, run against each of them from this one file:
AWS on moto, GCP and Azure on the wire fakes, and the in-memory fake.

- every acting action is declared by every entry: carried out (and then the adapter
  declares the capability) or refused (and then ``act`` refuses it, one line);
- a dry run changes nothing; ``apply`` acts on exactly the idle instances, tags when
  and why, and releases its lease;
- local storage that the action would erase is skipped by default;
- an intent left by a killed run is reconciled by the next run (recorded, tagged).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.core.lifecycle.idle import STOPPED_AT_TAG
from gpuplan.core.lifecycle.instances import ACTING, NEEDS, RESTORING, Action
from gpuplan.ledger import PENDING, ActionRecord, Ledger
from gpuplan.providers.base import CloudAdapter, ProviderError
from gpuplan.usecases.clouds import registry as cloud_registry
from gpuplan.usecases.clouds.adapters import CloudEntry
from gpuplan.usecases.clouds.entries import FAKE_ENTRY
from gpuplan.usecases.lifecycle.executor import LEASE_TAG
from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle
from tests.e2e.contract.conftest import BACKENDS, MANAGED, WIRE_FAKES, Backend
from tests.fakes.contract import actions, policy
from tests.fakes.scenarios import CASES, NOW

IDLE, BUSY = (next(c for c in CASES if c.name == n) for n in ("idle", "busy"))


ALL = [*cloud_registry.entries(), FAKE_ENTRY]


def test_every_registry_entry_has_a_wire_fake_and_a_backend() -> None:
    registered = [e.provider for e in MANAGED]
    assert sorted(WIRE_FAKES) == sorted(registered), "an entry without a wire fake"
    assert [*(p.value for p in registered), "fake"] == BACKENDS


@pytest.mark.parametrize(
    "entry",
    [e for e in cloud_registry.entries() if e.catalog_only],
    ids=lambda e: e.provider.value,
)
def test_a_catalog_only_entry_refuses_every_feature_with_its_reason(entry: CloudEntry) -> None:
    from gpuplan.core.clouds import Feature
    from gpuplan.core.errors import InputError
    from gpuplan.providers.cloud_entry import BuildContext

    why = entry.unsupported[Feature.FLEET]
    assert set(entry.unsupported) == set(Feature) and "catalog-only" in why
    assert entry.refusals == dict.fromkeys(ACTING, why) and entry.actions == {}
    with pytest.raises(InputError, match="catalog-only"):
        entry.scopes(BuildContext(policy({}), None, None, {}))


@pytest.mark.parametrize("entry", ALL, ids=lambda e: e.provider.value)
def test_every_acting_action_is_carried_out_or_refused_with_a_reason(entry: CloudEntry) -> None:
    assert set(ACTING) == set(Action) - {Action.NOTIFY, Action.NONE, *RESTORING}
    missing = [a.value for a in ACTING if a not in entry.actions and a not in entry.refusals]
    assert missing == [], f"{entry.provider.value}: no handler declared for {missing}"
    both = [a.value for a in ACTING if a in entry.actions and a in entry.refusals]
    assert both == [], f"{entry.provider.value}: carried out and refused: {both}"
    for action, why in entry.refusals.items():
        assert why.strip() and not why.startswith("refused"), (entry.provider, action)
        assert entry.refusal(action) == why and not entry.handles(action)


@pytest.mark.parametrize("entry", cloud_registry.entries(), ids=lambda e: e.provider.value)
def test_every_entry_is_read_by_every_table(entry: CloudEntry) -> None:
    from gpuplan.core.clouds import facts_of
    from gpuplan.usecases.catalog.refresh import default_fetchers
    from gpuplan.usecases.lifecycle.concurrency import Service, service_names

    assert facts_of(entry.provider) == entry.facts
    assert default_fetchers().get(entry.provider) is entry.prices
    for kind in Service if not entry.catalog_only else ():
        assert service_names()[(entry.provider, kind)] == entry.services[kind]
    root = Path(__file__).resolve().parents[3]
    assert entry.catalog_only or (root / entry.permission_file).is_file()
    # A platform priced from the clouds' catalogs (Kubernetes nodes) has no file of its own.
    assert (root / "pricing" / entry.catalog_file).is_file() or (
        entry.catalog_file == "" and entry.prices is None and entry.discoverer is None
    )


def listed(adapters: list[CloudAdapter]) -> dict[str, object]:
    return {i.name or i.instance_id: i for a in adapters for i in a.list_instances()}


def test_declared_actions_match_what_the_adapter_does(backend: Backend) -> None:
    backend.build(BUSY)
    (adapter,) = backend.adapters()
    (inst,) = adapter.list_instances()
    for action in ACTING:
        if backend.entry.handles(action):
            assert NEEDS[action] in adapter.capabilities, action
        else:
            with pytest.raises(ProviderError, match=f"cannot {action.value}"):
                adapter.act(inst, action)


def test_dry_run_changes_nothing_and_apply_acts_on_exactly_the_idle_ones(
    backend: Backend,
) -> None:
    backend.build(IDLE)
    backend.build(BUSY)
    pol = policy(backend.scope)
    dry = run_stop_idle(pol, backend.adapters(), apply=False, now=NOW)
    assert set(actions(dry).values()) == {"none"}
    assert all(i.state.value == "running" for i in listed(backend.adapters()).values())  # type: ignore[attr-defined]
    done = run_stop_idle(pol, backend.adapters(), apply=True, now=NOW)
    got = actions(done)
    assert got["busy"] == "none" and got["idle"] in ("stopped", "deallocated")
    after = listed(backend.adapters())
    idle, busy = after["idle"], after["busy"]
    assert not idle.state.bills_compute and busy.state.value == "running"  # type: ignore[attr-defined]
    assert STOPPED_AT_TAG in idle.labels and LEASE_TAG not in idle.labels  # type: ignore[attr-defined]


def test_local_storage_is_skipped_unless_data_loss_is_allowed(backend: Backend) -> None:
    backend.build(IDLE, local_storage=True)
    kept = run_stop_idle(policy(backend.scope), backend.adapters(), apply=True, now=NOW)
    assert actions(kept) == {"idle": "skipped"}
    assert "allow_data_loss" in kept.outcomes[0].detail
    loss = policy(backend.scope, allow_data_loss=True)
    done = run_stop_idle(loss, backend.adapters(), apply=True, now=NOW)
    assert actions(done)["idle"] in ("stopped", "deallocated")


def test_an_intent_left_by_a_killed_run_is_reconciled(backend: Backend, tmp_path: Path) -> None:
    backend.build(IDLE)
    (adapter,) = backend.adapters()
    (inst,) = adapter.list_instances()
    do = Action.DEALLOCATE if backend.entry.handles(Action.DEALLOCATE) else Action.STOP
    with Ledger(tmp_path / "l.db") as ledger:
        run_id = ledger.start_run("stop-idle", "contract", NOW, dry_run=False)
        record = ActionRecord(inst.provider.value, inst.region, inst.instance_id, do.value,
                              PENDING, NOW)  # fmt: skip
        ledger.record_action(run_id, record)
        adapter.act(inst, do)  # the cloud acted; the run was killed before recording
        later = NOW.replace(hour=NOW.hour + 1)
        result = run_stop_idle(
            policy(backend.scope), backend.adapters(), apply=True, now=later, ledger=ledger
        )
        assert [(r.instance_id, r.outcome.value) for r in result.reconciled] == [
            (inst.instance_id, "deallocated" if do is Action.DEALLOCATE else "stopped")
        ]
        assert ledger.pending_actions() == []
    assert STOPPED_AT_TAG in listed(backend.adapters())["idle"].labels  # type: ignore[attr-defined]
