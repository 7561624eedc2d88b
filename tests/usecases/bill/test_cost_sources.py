"""Which cost sources a policy gets, and what it is told when one is missing."""

from __future__ import annotations

from typing import Any

from gpuplan.providers.aws.cost_explorer import CostExplorerSource
from gpuplan.providers.azure.cost_management import CostManagementSource
from gpuplan.providers.gcp.billing_export import BillingExportSource
from gpuplan.usecases.audit.bill import cost_sources
from gpuplan.usecases.policy import load_policy

SUB = "00000000-0000-0000-0000-0000000000a1"


def test_each_cloud_in_scope_gets_its_source(aws_env: None, write_policy: Any) -> None:
    policy = load_policy(
        write_policy(f"""\
version: 1
name: all
scope:
  aws: {{regions: [us-east-1]}}
  gcp: {{projects: [ml-proj]}}
  azure: {{subscriptions: [{SUB}]}}
idle: {{allow_data_loss: false}}
bill: {{gcp_billing_table: billing-proj.billing.gcp_billing_export_v1_0A}}
""")
    )
    sources, problems = cost_sources(policy, {})
    assert problems == []
    assert [type(s) for s in sources] == [CostExplorerSource, BillingExportSource,
                                          CostManagementSource]  # fmt: skip
    assert sources[2].scope == SUB and sources[1].scope == "billing-proj"


def test_missing_settings_are_named(write_policy: Any) -> None:
    policy = load_policy(
        write_policy("""\
version: 1
name: g
scope:
  gcp: {projects: [ml-proj]}
  azure: {subscriptions: all}
idle: {allow_data_loss: false}
""")
    )
    sources, problems = cost_sources(policy, {})
    assert sources == []
    assert problems[0].startswith("gcp: set bill.gcp_billing_table")
    assert problems[1].startswith("azure: bill sync needs scope.azure.subscriptions")
