"""The Azure adapter's retry policy: every count explicit, back-off jittered, over the
wire fake (ARM answers 429/503 with ``Retry-After: 0``, 500 without)."""

from __future__ import annotations

from itertools import cycle

import pytest

from gpuplan.providers.azure.retry import BACKOFF_MAX_S, JitteredRetryPolicy, retry_policy
from gpuplan.providers.base import ProviderError
from tests.fakes.azure_world import SUB, AzureWorld

A100 = "Standard_NC24ads_A100_v4"


def test_throttling_is_retried_up_to_retry_total_not_azure_cores_status_cap(
    azure: AzureWorld,
) -> None:
    azure.fake.add_vm(SUB, "rg", "vm", A100)
    azure.fake.fail("vms.listAll", 429, 429, 503, 429, 429)  # five: past azure-core's 3
    (vm,) = azure.provider(retry_total=5).list_instances()
    assert vm.name == "vm"
    assert azure.fake.calls["vms.listAll"] == 6


def test_one_retry_too_many_is_a_named_provider_error(azure: AzureWorld) -> None:
    azure.fake.add_vm(SUB, "rg", "vm", A100)
    azure.fake.fail("vms.listAll", *[429] * 3)
    with pytest.raises(ProviderError, match=r"^azure .*: listing VMs: 429"):
        azure.provider(retry_total=2).list_instances()
    assert azure.fake.calls["vms.listAll"] == 3


def test_the_back_off_is_drawn_below_the_exponential_value() -> None:
    draws = cycle([0.0, 0.5, 1.0])  # a fixed sequence instead of random.random
    policy = JitteredRetryPolicy(rand=lambda: next(draws), retry_backoff_factor=0.8)

    def backoff(retries: int) -> float:
        history = [object()] * retries
        return policy.get_backoff_time({"history": history, "backoff": 0.8, "max_backoff": 60})

    assert [backoff(n) for n in (2, 3, 4)] == [0.0, 0.5 * 3.2, 1.0 * 6.4]
    assert backoff(1) == 0.0  # azure-core retries the first failure at once
    assert backoff(12) <= BACKOFF_MAX_S
    settings = retry_policy(6, 0.8).configure_retries({})
    assert {k: settings[k] for k in ("total", "connect", "read", "status")} == dict.fromkeys(
        ("total", "connect", "read", "status"), 6
    )
    assert (settings["backoff"], settings["max_backoff"]) == (0.8, BACKOFF_MAX_S)
