"""Azure subscription discovery on the ARM wire fake: ``subscriptions: all`` and
management groups (at any depth), then stop-idle over what was found.

The tenant: ``ml`` holds ``ml-vision``; three subscriptions under them that this
identity reads (one Disabled), one under ``ml`` that it cannot read (a named problem,
never a silent gap), one outside every group, and a group it may not read.
"""

from __future__ import annotations

from typing import Any

from gpuplan.core.policy import Policy
from gpuplan.providers.azure.entry import azure_scopes
from gpuplan.usecases.clouds.adapters import BuildContext
from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle
from tests.fakes.azure_world import AzureWorld
from tests.fakes.contract import actions, policy
from tests.fakes.scenarios import NOW, TEAM

A = "00000000-0000-0000-0000-00000000000a"
B = "00000000-0000-0000-0000-00000000000b"
OFF = "00000000-0000-0000-0000-0000000000cc"
HIDDEN = "00000000-0000-0000-0000-0000000000dd"
OUTSIDE = "00000000-0000-0000-0000-0000000000ee"


def _tenant(azure: AzureWorld) -> None:
    fake = azure.fake
    # The builder's adapters poll every 15 s (production); azure-core reads the fake's
    # "Retry-After: 0" as "none given", so operations finish on the first poll here.
    fake.polls_until_done = 1
    fake.groups.update({"ml": "", "ml-vision": "ml", "finance": ""})
    fake.subscriptions.update({A: "Enabled", B: "PastDue", OFF: "Disabled", OUTSIDE: "Enabled"})
    fake.placement.update({A: "ml", B: "ml-vision", OFF: "ml-vision", HIDDEN: "ml"})
    fake.placement[OUTSIDE] = "finance"
    fake.denied_groups.add("finance")
    for sub in (A, B, OFF, OUTSIDE):
        rid = fake.add_vm(sub, "rg", f"idle-{sub[-2:]}", "Standard_NC24ads_A100_v4", tags=TEAM)
        del rid  # no agent data: unknown, never idle; these tests are about scope


def _build(azure: AzureWorld, **scope: Any) -> Any:
    pol = _policy(azure, **scope)
    return azure_scopes(BuildContext(pol, azure.catalog, None, {}), credential=azure.credential)


def _policy(azure: AzureWorld, **scope: Any) -> Policy:
    return policy({"azure": {**scope, "arm_endpoint": azure.url, "metrics_endpoint": azure.url}})


def test_every_readable_running_subscription(azure: AzureWorld) -> None:
    _tenant(azure)
    scopes = _build(azure, subscriptions="all")
    assert list(scopes) == [A, B, OUTSIDE]  # sorted; Disabled left out
    assert scopes.problems == []
    assert azure.fake.calls["subscriptions.list"] == 2  # four subscriptions, pages of two
    assert azure.fake.calls["managementGroups.descendants"] == 0


def test_management_groups_at_any_depth_and_the_gaps_are_named(azure: AzureWorld) -> None:
    _tenant(azure)
    scopes = _build(azure, management_groups=["ml", "finance"])
    assert list(scopes) == [A, B]
    assert scopes.problems == [
        "azure management group finance: cannot list its descendants: 403 "
        "(AuthorizationFailed) no access to management group finance",
        f"azure {HIDDEN}: under management group ml but not readable by this identity "
        "(no role assignment reaches it)",
    ]


def test_discovered_subscriptions_are_surveyed_and_acted_on(azure: AzureWorld) -> None:
    from tests.fakes.scenarios import CASES, samples_of

    _tenant(azure)
    idle = next(c for c in CASES if c.name == "idle")
    rids = {}
    for sub in (A, B):
        rids[sub] = azure.fake.add_vm(
            sub, "rg", f"gpu-{sub[-1]}", "Standard_NC24ads_A100_v4", tags=TEAM,
            timeCreated=idle.started.isoformat(),
        )  # fmt: skip
        for gpu, at, value in samples_of(idle):
            azure.fake.publish(rids[sub], gpu, at, value)
    pol = _policy(azure, management_groups=["ml"])
    scopes = _build(azure, management_groups=["ml"])
    result = run_stop_idle(
        pol, list(scopes.values()), apply=True, now=NOW, problems=scopes.problems
    )
    got = actions(result)
    assert got["gpu-a"] == got["gpu-b"] == "deallocated"
    assert azure.fake.power(rids[A]) == azure.fake.power(rids[B]) == "PowerState/deallocated"
    assert any(HIDDEN in p for p in result.problems) and result.failed
