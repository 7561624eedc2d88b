"""AWS's section of a policy (``scope.aws``): its model, rules and scope test.

The accounts and regions a policy governs, the rules across its keys and which instances
it leaves out. The AWS registry entry names the model.

Pydantic only (no boto3): policies are checked without the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Discriminator, Field, Tag, WithJsonSchema

from gpuplan.core.catalog.regions import provider_region_problem
from gpuplan.core.policy.fields import Identifier, selection_kind, text_check, union_tag
from gpuplan.core.policy.section import CloudSection, Section, SubPath
from gpuplan.providers.aws.facts import AWS

if TYPE_CHECKING:
    from gpuplan.core.lifecycle.instances import GpuInstance

ACCOUNT_PATTERN = r"^\d{12}$"
AwsAccountId = Annotated[
    str,
    text_check(ACCOUNT_PATTERN, "a 12-digit AWS account id in quotes, such as '111122223333'"),
    WithJsonSchema({"type": "string", "pattern": ACCOUNT_PATTERN}),
]
"""An AWS account id: exactly 12 digits, written as text (YAML would drop leading zeros)."""
OU_PATTERN = r"^ou-[0-9a-z]{4,32}-[0-9a-z]{8,32}$"
OrgUnitId = Annotated[
    str,
    text_check(OU_PATTERN, "an AWS organisational unit id such as 'ou-ab12-cd345678'"),
    WithJsonSchema({"type": "string", "pattern": OU_PATTERN}),
]
ROLE_NAME_PATTERN = r"^(?:[A-Za-z0-9+=,.@_-]{1,64}/)*[A-Za-z0-9+=,.@_-]{1,64}$"
RoleName = Annotated[
    str,
    text_check(
        ROLE_NAME_PATTERN,
        "an IAM role name (letters, digits and +=,.@_- , at most 64; a path may lead: 'ops/x')",
    ),
    WithJsonSchema({"type": "string", "pattern": ROLE_NAME_PATTERN}),
]


class OrgUnits(Section):
    """Accounts under AWS organisational units."""

    ous: list[OrgUnitId] = Field(min_length=1)
    """OU ids (``ou-...``): the accounts directly under each, and under its child OUs."""


AccountSelection = Annotated[
    Annotated[Literal["all"], Tag(union_tag("all"))]
    | Annotated[list[AwsAccountId], Field(min_length=1), Tag(union_tag("accounts"))]
    | Annotated[OrgUnits, Tag(union_tag("mapping"))],
    Discriminator(
        lambda value: selection_kind(value, "accounts"),
        custom_error_type="aws_accounts",
        custom_error_message="expected all, a list of 12-digit account ids, or {ous: [ou-...]}",
    ),
]
"""``all``, a list of account ids, or ``{ous: [...]}``."""


class AwsScope(CloudSection):
    """AWS accounts and regions this policy governs."""

    regions: list[Identifier] = Field(min_length=1)
    """Regions to list, e.g. ``us-east-1``."""
    profile: str | None = None
    """A named profile from the AWS config; default: the standard credential chain."""
    role_arn: str | None = Field(default=None, pattern=r"^arn:aws[a-z-]*:iam::\d{12}:role/.+$")
    """A role to assume before listing or acting (cross-account); with ``accounts``, the
    role that lists the organisation and assumes ``role_name`` in each member account."""
    accounts: AccountSelection | None = None
    """Member accounts of the AWS Organization to govern, each through ``role_name``:
    ``all`` (every ACTIVE account), a list of 12-digit ids in quotes, or ``{ous: [ou-...]}``
    (accounts under those organisational units, recursively). None: the caller's own
    account only."""
    role_name: RoleName | None = None
    """The role assumed in each member account (``OrganizationAccountAccessRole`` or a
    dedicated read-and-stop role); required with ``accounts``."""
    exclude_accounts: list[AwsAccountId] = Field(default_factory=list)
    """Account ids left out of ``accounts`` (the management account, a sandbox)."""

    def problems(self) -> list[tuple[SubPath, str]]:
        """Member accounts need ``role_name``; ``role_name`` and ``exclude_accounts`` need
        ``accounts``; every region is AWS's."""
        found: list[tuple[SubPath, str]] = []
        for index, region in enumerate(self.regions):
            why = provider_region_problem(AWS, region)
            if why:
                found.append((("regions", index), why))
        if self.accounts is not None and self.role_name is None:
            found.append(
                (
                    ("accounts",),
                    "needs role_name: the role gpuplan assumes in each member account "
                    "(e.g. OrganizationAccountAccessRole)",
                )
            )
        for key in ("role_name", "exclude_accounts"):
            if self.accounts is None and getattr(self, key):
                found.append(((key,), "only applies with accounts (all, a list, ous)"))
        return found

    def out_of_scope(self, instance: GpuInstance) -> str | None:
        if instance.region not in self.regions:
            return f"region {instance.region} is not in scope.aws.regions"
        if instance.account in self.exclude_accounts:
            return f"account {instance.account} is in scope.aws.exclude_accounts"
        if isinstance(self.accounts, list) and instance.account not in self.accounts:
            return f"account {instance.account} is not in scope.aws.accounts"
        return None
