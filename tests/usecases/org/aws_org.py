"""An AWS Organization on moto whose STS refuses roles that do not exist.

moto's ``AssumeRole`` hands out credentials for any role ARN, existing or not (its
docstring says so: "the role does not need to exist"), so a missing member role would
pass unnoticed. :func:`strict_sts` makes the fake honest about the one rule these tests
need: STS answers ``AccessDenied`` (HTTP 403, the message real STS sends) unless the
role exists in the target account's IAM, as moto itself holds it. It wraps moto's STS
backend (the fake), never an SDK method: the request still goes from boto3 through
botocore's wire layer into moto and back as an error response.

moto keeps EC2 and CloudWatch state per account, keyed by the account of the credentials
(an assumed role's ARN names the account), which is what lets one moto hold three member
accounts with their own instances. The setup below assumes roles while STS is still
lenient (the way AWS's CreateAccount leaves an OrganizationAccountAccessRole behind),
creates the gpuplan role where the test wants one, and only then turns strictness on.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest

from tests.fakes.aws_world import World

ROLE = "gpuplan-reader"
MANAGEMENT = "123456789012"
"""moto's default account: the organisation's management account here."""
TRUST = (
    '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": '
    '{"AWS": "arn:aws:iam::123456789012:root"}, "Action": "sts:AssumeRole"}]}'
)


@dataclass
class Org:
    """The organisation: OU ids, member accounts by name, a World per member account."""

    root: str
    ous: dict[str, str]
    accounts: dict[str, str]
    worlds: dict[str, World] = field(default_factory=dict)
    assumed: Counter[str] = field(default_factory=Counter)
    """Role ARN -> AssumeRole calls seen while strict (allowed or refused)."""

    def world(self, name: str) -> World:
        return self.worlds[name]


def build_org(with_role: dict[str, bool], nested: str = "") -> Org:
    """An organisation with an ``ml`` OU holding the named accounts (``nested`` one sits in
    ``ml/deep``); ``with_role[name]`` says whether the account has the gpuplan role."""
    org_client = boto3.client("organizations", region_name="us-east-1")
    org_client.create_organization(FeatureSet="ALL")
    root = org_client.list_roots()["Roots"][0]["Id"]
    ml = org_client.create_organizational_unit(ParentId=root, Name="ml")["OrganizationalUnit"]
    deep = org_client.create_organizational_unit(ParentId=ml["Id"], Name="deep")
    ous = {"ml": ml["Id"], "deep": deep["OrganizationalUnit"]["Id"]}
    org = Org(root, ous, {})
    for name, has_role in with_role.items():
        status = org_client.create_account(Email=f"{name}@example.com", AccountName=name)
        account = status["CreateAccountStatus"]["AccountId"]
        target = ous["deep"] if name == nested else ous["ml"]
        org_client.move_account(AccountId=account, SourceParentId=root, DestinationParentId=target)
        org.accounts[name] = account
        session = _admin_session(account)
        if has_role:
            session.client("iam").create_role(RoleName=ROLE, AssumeRolePolicyDocument=TRUST)
        org.worlds[name] = World(session)
    return org


def _admin_session(account: str) -> boto3.Session:
    """Credentials inside ``account`` (STS still lenient: the setup's own way in)."""
    sts = boto3.client("sts", region_name="us-east-1")
    creds = sts.assume_role(
        RoleArn=f"arn:aws:iam::{account}:role/OrganizationAccountAccessRole",
        RoleSessionName="setup",
    )["Credentials"]
    return boto3.Session(
        aws_access_key_id=creds["AccessKeyId"],
        aws_secret_access_key=creds["SecretAccessKey"],
        aws_session_token=creds["SessionToken"],
        region_name="us-east-1",
    )


def strict_sts(monkeypatch: pytest.MonkeyPatch, org: Org) -> None:
    """From now on moto's STS refuses a role its target account does not hold."""
    from moto.core.exceptions import AccessDeniedError
    from moto.iam.exceptions import NotFoundException
    from moto.iam.models import iam_backends
    from moto.sts.models import STSBackend

    lenient = STSBackend.assume_role

    def assume_role(self: STSBackend, **kwargs: Any) -> Any:
        arn = str(kwargs["role_arn"])
        org.assumed[arn] += 1
        account = arn.split(":")[4]
        try:
            iam_backends[account]["aws"].get_role(arn.rsplit("/", 1)[-1])
        except NotFoundException:
            raise AccessDeniedError(
                f"arn:aws:sts::{MANAGEMENT}:user/moto", f"sts:AssumeRole on resource: {arn}"
            ) from None
        return lenient(self, **kwargs)

    monkeypatch.setattr(STSBackend, "assume_role", assume_role)
