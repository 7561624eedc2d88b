"""The per-cloud action table (core/lifecycle/actions.py): one place for every action's steps."""

from __future__ import annotations

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.actions import (
    ACTIONS,
    Call,
    ProviderStep,
    Refusal,
    Steps,
    entry,
    offered_by,
    provider_action,
    provider_call,
)
from gpuplan.core.lifecycle.instances import ACTING, RESTORING, Action
from gpuplan.core.policy import IdleAction


def test_every_cloud_has_a_row_for_every_acting_action() -> None:
    # The GPU clouds' rows (refusals: they are catalog-only) come with their registry
    # entries, as a plugin's would: load the registry, whatever ran before this test.
    from gpuplan.usecases.clouds import registry as cloud_registry  # noqa: F401

    assert set(ACTIONS) == set(Provider)
    assert all(set(rows) >= set(ACTING) for rows in ACTIONS.values())
    # Start (gpuplan schedule) is offered by the clouds gpuplan manages, and by Kubernetes
    # workloads (scale back, resume, unstop); elsewhere refused.
    kube = Provider.named("kubernetes")
    assert set(offered_by(Action.START)) == {Provider.AWS, Provider.GCP, Provider.AZURE, kube}
    assert all(set(rows) <= {*ACTING, *RESTORING} for rows in ACTIONS.values())


def test_azure_stop_is_a_deallocate_in_one_place() -> None:
    assert provider_action(Provider.AZURE, Action.STOP) is Action.DEALLOCATE
    assert provider_call(Provider.AZURE, Action.STOP) is Call.DEALLOCATE
    assert IdleAction.STOP.for_provider(Provider.AZURE) is Action.DEALLOCATE  # reads it
    assert provider_action(Provider.AWS, Action.STOP) is Action.STOP


def test_a_refused_action_is_typed_with_its_reason() -> None:
    found = entry(Provider.AWS, Action.SUSPEND)
    assert isinstance(found, Refusal) and found.reason == "not an action of this cloud"
    assert provider_call(Provider.AWS, Action.SUSPEND) is None
    assert provider_action(Provider.AWS, Action.SUSPEND) is Action.SUSPEND  # then skipped
    assert offered_by(Action.SUSPEND) == (Provider.GCP,)
    assert offered_by(Action.HIBERNATE) == (Provider.AWS,)


def test_an_action_ends_with_an_acting_call() -> None:
    with pytest.raises(ValueError, match="last step"):
        Steps((ProviderStep(Call.STOP, "StopInstances"), ProviderStep(Call.SNAPSHOT, "x")))
    two = Steps((ProviderStep(Call.SNAPSHOT, "CreateSnapshots"), ProviderStep(Call.STOP, "Stop")))
    assert two.do is Action.STOP and two.how == "CreateSnapshots, then Stop"
