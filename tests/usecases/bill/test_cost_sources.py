"""Which cost sources a policy gets, and what it is told when one is missing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
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


CHILD = (
    "import sys\n"
    "for name in ('boto3', 'botocore'): sys.modules[name] = None\n"
    "from gpuplan.usecases.audit.bill import cost_sources\n"
    "from gpuplan.usecases.policy import load_policy\n"
    "sources, problems = cost_sources(load_policy(sys.argv[1]), {})\n"
    "print([type(s).__name__ for s in sources])\n"
    "print(*problems, sep='\\n')\n"
)


def test_a_missing_extra_is_one_problem_line_and_the_other_clouds_still_run(
    tmp_path: Path,
) -> None:
    """boto3 is not installed (``None`` in a child interpreter's ``sys.modules``, which is
    what Python does for a missing package): the AWS hook's import is named as the
    extra to install; GCP's and Azure's sources are still built."""
    policy = tmp_path / "all.yaml"
    policy.write_text(f"""\
version: 1
name: all
scope:
  aws: {{regions: [us-east-1]}}
  gcp: {{projects: [ml-proj]}}
  azure: {{subscriptions: [{SUB}]}}
idle: {{allow_data_loss: false}}
bill: {{gcp_billing_table: billing-proj.billing.gcp_billing_export_v1_0A}}
""")
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(policy)],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    kinds, *problems = done.stdout.splitlines()
    assert kinds == "['BillingExportSource', 'CostManagementSource']"
    assert problems == [
        "bill (AWS Cost Explorer): needs boto3, which is not installed: pip install 'gpuplan[aws]'"
    ]
