"""deploy/'s bill permission files grant exactly what each cost source declares, and the
sources declare what they call (read-only: no write action anywhere)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from gpuplan.providers.aws import cost_explorer as aws_ce
from gpuplan.providers.azure import cost_management as azure_cost
from gpuplan.providers.gcp import billing_export as gcp_bigquery

DEPLOY = Path(__file__).resolve().parents[3] / "deploy"


def test_aws_policy_is_the_cost_explorer_read() -> None:
    doc = json.loads((DEPLOY / "aws-bill-policy.json").read_text(encoding="utf-8"))
    granted = {a for s in doc["Statement"] for a in s["Action"]}
    # sts:GetCallerIdentity needs no grant (AWS allows it to every identity).
    assert granted == set(aws_ce.PERMISSIONS) - {"sts:GetCallerIdentity"}
    assert all(a.split(":")[1].startswith(("Get", "Describe", "List")) for a in granted)


def test_gcp_roles_are_the_declared_ones() -> None:
    doc = yaml.safe_load((DEPLOY / "gcp-bill-roles.yaml").read_text(encoding="utf-8"))
    assert tuple(doc["roles"]) == gcp_bigquery.PERMISSIONS


def test_azure_role_is_the_query_action() -> None:
    doc = json.loads((DEPLOY / "azure-bill-role.json").read_text(encoding="utf-8"))
    assert doc["Actions"] == [p for p in azure_cost.PERMISSIONS if "/" in p]
    assert (
        "Microsoft.CostManagement/query"
        in azure_cost.CostManagementSource(
            "00000000-0000-0000-0000-000000000000", token=_NoToken()
        )._url
    )


class _NoToken:
    def get_token(self, *scopes: str, **kwargs: object) -> object:
        raise AssertionError("no call is made here")


def test_aws_cur_policy_reads_only_the_export() -> None:
    from gpuplan.providers.aws import cur_export as aws_cur

    doc = json.loads((DEPLOY / "aws-bill-cur-policy.json").read_text(encoding="utf-8"))
    granted = {a for s in doc["Statement"] for a in s["Action"]}
    assert granted == set(aws_cur.PERMISSIONS)
    assert all(s["Resource"] != "*" for s in doc["Statement"])
    assert all("/data/" in s["Resource"] for s in doc["Statement"] if "s3:GetObject" in s["Action"])
