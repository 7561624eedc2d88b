"""Azure's section of a policy (``scope.azure``): its model, rules and scope test.

The subscriptions (listed or discovered) and resource groups a policy governs, the rules
across its keys and which instances it leaves out. The Azure registry entry names the
model.

Pydantic only (no Azure SDK): policies are checked without the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Discriminator, Field, Tag, WithJsonSchema

from gpuplan.core.policy.fields import (
    HttpUrl,
    Identifier,
    selection_kind,
    text_check,
    union_tag,
)
from gpuplan.core.policy.section import CloudSection, SubPath

if TYPE_CHECKING:
    from gpuplan.core.lifecycle.instances import GpuInstance

GUID_PATTERN = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
SubscriptionId = Annotated[
    str,
    text_check(
        GUID_PATTERN,
        "an Azure subscription id (a GUID such as 00000000-0000-0000-0000-000000000000)",
    ),
    WithJsonSchema({"type": "string", "format": "uuid"}),
]
MANAGEMENT_GROUP_PATTERN = r"^[A-Za-z0-9_().-]{1,90}$"
ManagementGroupId = Annotated[
    str,
    text_check(
        MANAGEMENT_GROUP_PATTERN,
        "an Azure management group id (letters, digits and _().- , at most 90)",
    ),
    WithJsonSchema({"type": "string", "pattern": MANAGEMENT_GROUP_PATTERN}),
]

SubscriptionSelection = Annotated[
    Annotated[Literal["all"], Tag(union_tag("all"))]
    | Annotated[list[SubscriptionId], Field(min_length=1), Tag(union_tag("subscriptions"))],
    Discriminator(
        lambda value: selection_kind(value, "subscriptions"),
        custom_error_type="azure_subscriptions",
        custom_error_message="expected all or a list of subscription ids (GUIDs)",
    ),
]
"""``all`` or a list of subscription ids."""


class AzureScope(CloudSection):
    """Azure subscriptions (and optionally resource groups) this policy governs."""

    subscriptions: SubscriptionSelection | None = None
    """Subscription ids (GUIDs), or ``all``: every enabled subscription the identity can
    read."""
    management_groups: list[ManagementGroupId] = Field(default_factory=list, min_length=1)
    """Management group ids: every enabled subscription under them, at any depth."""
    resource_groups: list[Identifier] = Field(default_factory=list)
    """Resource groups to keep; empty: every group."""
    arm_endpoint: HttpUrl | None = None
    """Azure Resource Manager endpoint (sovereign clouds); default: the public cloud."""
    metrics_endpoint: HttpUrl | None = None
    """Azure Monitor metrics endpoint; default: the public cloud."""

    def problems(self) -> list[tuple[SubPath, str]]:
        """Subscriptions are listed (or ``all``) or found under management groups, one way."""
        if self.subscriptions is not None and self.management_groups:
            return [
                (
                    ("management_groups",),
                    "subscriptions and management_groups exclude each other: use one",
                )
            ]
        if self.subscriptions is None and not self.management_groups:
            return [
                (
                    (),
                    "names no subscription: give subscriptions (a list or all) or "
                    "management_groups",
                )
            ]
        return []

    def out_of_scope(self, instance: GpuInstance) -> str | None:
        # Discovered subscriptions are known only to the builder, which lists nothing else.
        listed = self.subscriptions
        if isinstance(listed, list) and instance.account.lower() not in {s.lower() for s in listed}:
            return f"subscription {instance.account} is not in scope.azure.subscriptions"
        return None
