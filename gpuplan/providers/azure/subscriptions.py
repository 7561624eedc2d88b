"""Azure subscription discovery: ``subscriptions: all`` and ``management_groups``.

``all`` is every subscription the identity can read (``subscriptions.list``, one call
per page), in a state where VMs can run: Enabled, Warned or PastDue; Disabled and
Deleted subscriptions run nothing and are left out. ``management_groups`` is every
subscription under those groups at any depth, from one ``descendants`` call (per page)
per group (azure-mgmt-managementgroups), checked against the same subscription list: a
subscription under a group that this identity cannot read is a problem line naming it,
never a silent gap; a group that cannot be read is one too, and the other groups still
count. Subscription ids come out sorted and once each.

Listing, not Azure Resource Graph: discovery costs one or two calls either way, and the
listing APIs are strongly consistent, need no extra package or Resource Graph quota
(15 queries per 5 s per user), and answer with the same ARM endpoint and credential as
the per-subscription adapters (sovereign clouds included). Resource Graph would pay off
for listing the VMs themselves (one query across subscriptions instead of one
``listAll`` each), but its power state lags the VM by up to minutes and each VM still
needs its subscription's adapter for metrics and actions; that trade is left to the
concurrent survey. Permissions: deploy/azure-discovery-role.json.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from gpuplan.providers.base import ProviderError
from gpuplan.providers.found import FoundScopes

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential

T = TypeVar("T")
RUNNING_STATES = frozenset({"enabled", "warned", "pastdue"})
"""Subscription states in which VMs can run (and bill)."""


def discover(
    credential: TokenCredential,
    *,
    arm_endpoint: str,
    management_groups: Sequence[str] = (),
    retry_total: int = 6,
) -> FoundScopes:
    """Every readable running subscription, or those under ``management_groups``.

    Raises ProviderError when the subscription list itself cannot be read.
    """
    options: dict[str, Any] = {
        "base_url": arm_endpoint,
        "credential_scopes": [f"{arm_endpoint}/.default"],
        "retry_total": retry_total,
    }
    readable = _readable(credential, options)
    running = {s for s, state in readable.items() if state in RUNNING_STATES}
    if not management_groups:
        return FoundScopes(sorted(running))
    out = FoundScopes()
    under: dict[str, str] = {}
    for group in management_groups:
        found = _guard(
            f"azure management group {group}: cannot list its descendants",
            functools.partial(_descendants, credential, options, group),
            out.problems,
        )
        for sub in found or ():
            under.setdefault(sub, group)
    for sub, group in sorted(under.items()):
        if sub not in readable:
            out.problems.append(
                f"azure {sub}: under management group {group} but not readable by this "
                "identity (no role assignment reaches it)"
            )
    out.ids = sorted(s for s in under if s in running)
    return out


def _readable(credential: TokenCredential, options: dict[str, Any]) -> dict[str, str]:
    """Subscription id (lower case) -> state (lower case) for every one the identity reads."""
    from azure.mgmt.resource.subscriptions import SubscriptionClient

    client = SubscriptionClient(credential, **options)
    problems: list[str] = []
    listed = _guard(
        "azure: cannot list subscriptions",
        lambda: [(s.subscription_id, s.state) for s in client.subscriptions.list()],
        problems,
    )
    if listed is None:
        raise ProviderError(problems[0])
    return {str(sub).lower(): _text(state).lower() for sub, state in listed if sub}


def _descendants(credential: TokenCredential, options: dict[str, Any], group: str) -> list[str]:
    from azure.mgmt.managementgroups import ManagementGroupsMgmtClient

    client = ManagementGroupsMgmtClient(credential, **options)
    return [
        str(item.name).lower()
        for item in client.management_groups.get_descendants(group)
        if str(item.id or "").lower().startswith("/subscriptions/") and item.name
    ]


def _guard(what: str, call: Callable[[], T], problems: list[str]) -> T | None:
    from azure.core import exceptions as aexc

    try:
        return call()
    except aexc.ClientAuthenticationError as exc:
        problems.append(f"{what}: not authenticated ({_first(exc)})")
    except aexc.HttpResponseError as exc:
        problems.append(f"{what}: {exc.status_code} {_first(exc)}")
    except aexc.AzureError as exc:
        problems.append(f"{what}: {_first(exc)}")
    return None


def _text(value: object) -> str:
    return str(getattr(value, "value", value) or "")


def _first(exc: Exception) -> str:
    """The first line of an SDK message (they run to many lines of JSON)."""
    text = str(getattr(exc, "message", None) or exc)
    return text.strip().splitlines()[0][:300] if text.strip() else type(exc).__name__
