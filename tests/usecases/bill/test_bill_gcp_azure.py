"""GCP (the billing export through google-cloud-bigquery against a BigQuery REST fake)
and Azure (Cost Management through azure-core against an ARM fake): the same story as on
AWS, and the reconciliation names each gap."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import trustme
from azure.core.credentials import AccessToken

from gpuplan.core.audit.bill.lines import CostKind
from gpuplan.core.audit.bill.reconcile import GapKind
from gpuplan.ledger import Ledger
from gpuplan.providers.azure.cost_management import CostManagementSource, vm_size
from gpuplan.providers.gcp.billing_export import BillingExportSource
from gpuplan.usecases.audit import bill
from gpuplan.usecases.policy import load_policy
from tests.fakes import bill_world as w
from tests.fakes.bill_apis import BigQueryFake, CostManagementFake
from tests.fakes.http import serve

GCP_POLICY = """\
version: 1
name: team-g
scope:
  gcp: {projects: [ml-proj]}
idle: {allow_data_loss: false}
bill:
  gap_percent: 10
  gap_min_usd: 50
  gcp_billing_table: billing-proj.billing.gcp_billing_export_v1_012345_6789AB_CDEF01
"""
AZ_POLICY = f"""\
version: 1
name: team-z
scope:
  azure: {{subscriptions: [{w.AZ_SUB}]}}
idle: {{allow_data_loss: false}}
bill: {{gap_percent: 10, gap_min_usd: 50}}
"""


@pytest.fixture
def bigquery() -> Iterator[tuple[BigQueryFake, BillingExportSource]]:
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery as bq

    fake = BigQueryFake(fields=w.BQ_FIELDS, rows=w.BQ_ROWS)
    with serve(fake) as base:
        client = bq.Client(project="billing-proj", credentials=AnonymousCredentials(),
                           client_options=ClientOptions(api_endpoint=base))  # fmt: skip
        table = "billing-proj.billing.gcp_billing_export_v1_012345_6789AB_CDEF01"
        yield fake, BillingExportSource(table, client=client)


class _Token:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("t", int((datetime.now(UTC) + timedelta(hours=1)).timestamp()))


@pytest.fixture
def cost_management(
    test_ca: trustme.CA, ca_file: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[CostManagementFake, CostManagementSource]]:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca_file))  # trust the fake's certificate
    fake = CostManagementFake(answers={"TagKey": w.AZ_USAGE, "PricingModel": w.AZ_COVERED,
                                       "ChargeType": w.AZ_OTHER})  # fmt: skip
    with serve(fake, test_ca) as base:  # TLS: the bearer policy sends tokens over https only
        yield fake, CostManagementSource(w.AZ_SUB, _Token(), arm_endpoint=base, retry_total=0)


def test_billing_export_lines_through_the_real_client(
    bigquery: tuple[BigQueryFake, BillingExportSource],
) -> None:
    fake, source = bigquery
    lines = source.daily_costs(date(2026, 12, 1), date(2026, 12, 2), "team")
    assert fake.calls["jobs.query"] == 1 and fake.calls["jobs.getQueryResults"] == 1  # paged
    params = {p["name"]: p["parameterValue"]["value"] for p in fake.queries[0]["queryParameters"]}
    assert params["team"] == "team" and params["since"] == "2026-12-01"
    assert "gcp_billing_export_v1_012345_6789AB_CDEF01" in fake.queries[0]["query"]
    kinds = {(x.kind, x.instance_type, x.usd) for x in lines}
    assert (CostKind.COMMITMENT, "a2-highgpu-1g", Decimal("-30.00")) in kinds
    assert (CostKind.DISCOUNT, "", Decimal("-3.50")) in kinds
    assert (CostKind.DISK, "", Decimal("5.00")) in kinds
    assert len(lines) == len(w.BQ_ROWS)


def test_gcp_reconciliation_names_each_gap(
    bigquery: tuple[BigQueryFake, BillingExportSource], tmp_path: Path, write_policy: Any
) -> None:
    policy = load_policy(write_policy(GCP_POLICY))
    with Ledger(tmp_path / "l.db") as ledger:
        w.seed_ledger(ledger, policy.name, "gcp", w.GCP_PRICES, account="ml-proj")
        out = bill.sync(policy, ledger, [bigquery[1]], now=w.NOW, since=date(2026, 12, 1))
        assert not out.problems
        result = bill.reconcile(policy, ledger, now=w.NOW, since=date(2026, 12, 1))
    rows = {r.instance_type: r for r in result.rows}
    a2 = rows["a2-highgpu-1g"]
    assert [(g.kind, g.usd) for g in a2.gaps] == [(GapKind.COMMITMENT, Decimal("30.00"))]
    assert rows["g2-standard-8"].gaps == ()  # billed what was estimated
    assert [g.kind for g in rows["a3-highgpu-8g"].gaps] == [GapKind.UNSEEN]
    assert rows["(disks)"].gaps[0].kind is GapKind.DISK
    assert rows["(discounts and credits)"].billed_usd == Decimal("-3.50")
    assert result.problems == [
        "gcp 2026-12-01: $88.49 billed on a3-highgpu-8g instances gpuplan never saw"
    ]


def test_azure_meters_to_sizes() -> None:
    assert vm_size("NC24ads A100 v4") == "Standard_NC24ads_A100_v4"
    assert vm_size("ND96isr H100 v5 Spot") == "Standard_ND96isr_H100_v5"
    assert vm_size("P30 LRS Disk") == ""


def test_azure_reconciliation_names_each_gap(
    cost_management: tuple[CostManagementFake, CostManagementSource], tmp_path: Path,
    write_policy: Any,
) -> None:  # fmt: skip
    fake, source = cost_management
    policy = load_policy(write_policy(AZ_POLICY))
    with Ledger(tmp_path / "l.db") as ledger:
        w.seed_ledger(ledger, policy.name, "azure", w.AZURE_PRICES, account=w.AZ_SUB)
        out = bill.sync(policy, ledger, [source], now=w.NOW, since=date(2026, 12, 1))
        assert not out.problems, out.problems
        result = bill.reconcile(policy, ledger, now=w.NOW, since=date(2026, 12, 1))
    assert fake.calls["costManagement.query"] == 4  # the usage query pages once
    assert fake.tokens and set(fake.tokens) == {"t"}
    assert {b["dataset"]["grouping"][0]["type"] for b in fake.bodies} == {"TagKey", "Dimension"}
    rows = {r.instance_type: r for r in result.rows}
    a100 = rows["Standard_NC24ads_A100_v4"]
    assert [(g.kind, g.usd) for g in a100.gaps] == [(GapKind.COMMITMENT, Decimal("20.10"))]
    a10 = rows["Standard_NV36ads_A10_v5"]
    assert a10.gaps[0].kind is GapKind.UNSEEN and a10.gaps[0].usd == Decimal("-76.80")
    assert [g.kind for g in rows["Standard_ND96isr_H100_v5"].gaps] == [GapKind.UNSEEN]
    assert rows["(disks)"].billed_usd == Decimal("4.80")
    assert rows["(discounts and credits)"].billed_usd == Decimal("-12.50")
    assert result.problems == [
        "azure 2026-12-01: $61.44 billed on Standard_ND96isr_H100_v5 instances gpuplan never saw",
        "azure 2026-12-01: $76.80 billed on Standard_NV36ads_A10_v5 instances gpuplan never saw",
    ]
