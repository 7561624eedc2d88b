"""The deploy/ permission files for discovery grant exactly what discovery calls.

Each cloud's discovery runs against its fake; every call seen is mapped to the permission
it needs and compared with the file: a missing grant fails in production with a denial,
an extra one is privilege nobody needs.
"""

from __future__ import annotations

import fnmatch
import json
from pathlib import Path
from typing import Any

import boto3
import yaml
from google.auth.credentials import AnonymousCredentials

from gpuplan.providers.aws import organizations as orgs
from gpuplan.providers.aws.session import MemberSessions
from gpuplan.providers.azure.subscriptions import discover as discover_subscriptions
from gpuplan.providers.gcp import projects
from tests.fakes.azure_arm import ACTIONS
from tests.fakes.azure_world import AzureWorld
from tests.fakes.gcp_resource_manager import PERMISSIONS, ResourceManagerFake
from tests.fakes.http import serve
from tests.usecases.org.aws_org import ROLE, Org

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def test_aws_org_policy_matches_discovery_and_the_member_role_arn(org_only: Org) -> None:
    seen: set[str] = set()

    def record(event_name: str, **_: Any) -> None:
        _, service, operation = event_name.split(".")
        seen.add(f"{service}:{operation}")

    org = boto3.client("organizations", region_name="us-east-1")
    sts = boto3.client("sts", region_name="us-east-1")
    for client in (org, sts):
        client.meta.events.register("before-call.*.*", record)
    assert orgs.all_accounts(org)
    assert orgs.accounts_under(org, [org_only.ous["ml"]]).ids
    arn = orgs.member_role_arn("aws", org_only.accounts["alpha"], ROLE)
    session = MemberSessions(sts).session(arn)
    session.client("ec2", region_name="us-east-1").describe_instances()

    doc = json.loads((DEPLOY / "aws-org-discovery-policy.json").read_text(encoding="utf-8"))
    granted = {a for s in doc["Statement"] for a in s["Action"]}
    assert granted == seen
    assume = next(s for s in doc["Statement"] if s["Action"] == ["sts:AssumeRole"])
    assert fnmatch.fnmatchcase(arn, assume["Resource"])
    assert not any("*" in a for a in granted)
    trust = json.loads((DEPLOY / "aws-member-role-trust.json").read_text(encoding="utf-8"))
    (statement,) = trust["Statement"]
    assert statement["Action"] == "sts:AssumeRole"
    assert statement["Condition"]["StringEquals"]["sts:RoleSessionName"] == "gpuplan"


def test_gcp_discovery_role_matches_the_calls() -> None:
    rm = ResourceManagerFake()
    folder = rm.folder("organizations/1", "ml")
    rm.project(folder, "p1", team="a")
    with serve(rm) as url:
        manager = projects.make_resource_manager(url, AnonymousCredentials())  # type: ignore[no-untyped-call]
        assert projects.discover(manager, parents=["organizations/1"]).ids == ["p1"]
        assert projects.discover(manager, labels={"team": "a"}).ids == ["p1"]
    role = yaml.safe_load((DEPLOY / "gcp-discovery-role.yaml").read_text(encoding="utf-8"))
    assert sorted(role["includedPermissions"]) == sorted({PERMISSIONS[n] for n in rm.calls})


def test_azure_discovery_role_matches_the_calls(azure: AzureWorld) -> None:
    sub = "00000000-0000-0000-0000-000000000001"
    azure.fake.subscriptions[sub] = "Enabled"
    azure.fake.groups["ml"] = ""
    azure.fake.placement[sub] = "ml"
    found = discover_subscriptions(
        azure.credential, arm_endpoint=azure.url, management_groups=["ml"]
    )
    assert found.ids == [sub] and found.problems == []
    role = json.loads((DEPLOY / "azure-discovery-role.json").read_text(encoding="utf-8"))
    assert sorted(role["Actions"]) == sorted({ACTIONS[n] for n in azure.fake.calls})
    assert role["DataActions"] == [] and role["NotActions"] == []
    assert all(s.startswith("/providers/Microsoft.Management/") for s in role["AssignableScopes"])
