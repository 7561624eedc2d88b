"""A cost API that answers nonsense or refuses: one line naming the cloud and the call,
the other sources still synced, nothing half-written."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests
from azure.core.credentials import AccessToken

from gpuplan.ledger import Ledger
from gpuplan.providers.aws.cost_explorer import CostExplorerSource
from gpuplan.providers.azure.cost_management import CostManagementSource
from gpuplan.providers.base import ProviderError
from gpuplan.providers.gcp.billing_export import BillingExportSource
from gpuplan.usecases.audit import bill
from gpuplan.usecases.policy import load_policy
from tests.fakes import bill_world as w
from tests.fakes.bill_apis import BigQueryFake, CostManagementFake
from tests.fakes.http import serve

DAY, NEXT = date(2026, 12, 1), date(2026, 12, 2)


@pytest.mark.parametrize("amount", ["NaN", "Infinity", "1e400", "12abc"])
def test_cost_explorer_amounts_must_be_finite(aws_env: None, amount: str) -> None:
    from moto import mock_aws

    bad = copy.deepcopy(w.CE_USAGE)
    bad["ResultsByTime"][0]["Groups"][0]["Metrics"]["UnblendedCost"]["Amount"] = amount  # type: ignore[index]
    with mock_aws():
        requests.post("http://motoapi.amazonaws.com/moto-api/static/ce/cost-and-usage-results",
                      json={"results": [bad, w.CE_OTHER]}, timeout=5)  # fmt: skip
        source = CostExplorerSource(boto3.Session(region_name="us-east-1"))
        with pytest.raises(ProviderError, match=r"^aws: Cost Explorer UnblendedCost: expected a"):
            source.daily_costs(DAY, NEXT, "team")


def _bq(fake: BigQueryFake, base: str) -> BillingExportSource:
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import bigquery as bq

    client = bq.Client(project="billing-proj", credentials=AnonymousCredentials(),
                       client_options=ClientOptions(api_endpoint=base))  # fmt: skip
    return BillingExportSource("billing-proj.billing.export_v1", client=client)


def test_bigquery_refusal_is_one_line() -> None:
    fake = BigQueryFake(fields=w.BQ_FIELDS, rows=w.BQ_ROWS)
    fake.fail("jobs.query", 403)
    with serve(fake) as base, pytest.raises(ProviderError) as err:
        _bq(fake, base).daily_costs(DAY, NEXT, "team")
    assert str(err.value).startswith("gcp: billing export query on billing-proj.billing.export_v1")
    assert "\n" not in str(err.value)


def test_bigquery_nonsense_amount_is_refused() -> None:
    rows = [list(r) for r in w.BQ_ROWS]
    rows[0][6] = "1e999"
    fake = BigQueryFake(fields=[(n, "STRING") for n, _ in w.BQ_FIELDS], rows=rows)
    with serve(fake) as base, pytest.raises(ProviderError, match="expected a finite amount"):
        _bq(fake, base).daily_costs(DAY, NEXT, "team")


class _Token:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("t", int((datetime.now(UTC) + timedelta(hours=1)).timestamp()))


@pytest.fixture
def az(ca_file: Path, monkeypatch: pytest.MonkeyPatch, test_ca: Any) -> Iterator[Any]:
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca_file))
    fake = CostManagementFake(answers={"TagKey": w.AZ_USAGE})
    with serve(fake, test_ca) as base:
        yield fake, CostManagementSource(w.AZ_SUB, _Token(), arm_endpoint=base, retry_total=0)


def test_azure_refusal_keeps_the_previous_bill(az: Any, tmp_path: Path, write_policy: Any) -> None:
    fake, source = az
    policy = load_policy(write_policy(
        f"version: 1\nname: z\nscope: {{azure: {{subscriptions: [{w.AZ_SUB}]}}}}\n"
        "idle: {allow_data_loss: false}\n"
    ))  # fmt: skip
    with Ledger(tmp_path / "l.db") as ledger:
        first = bill.sync(policy, ledger, [source], now=w.NOW, since=DAY)
        assert not first.problems and ledger.count("bill_lines") == 4
        fake.fail("costManagement.query", 403)
        second = bill.sync(policy, ledger, [source], now=w.NOW, since=DAY)
        assert second.problems == [f"azure: Cost Management query on {w.AZ_SUB}: 403"]
        assert ledger.count("bill_lines") == 4  # the earlier sync's rows are still whole


def test_azure_nonsense_date_is_refused(az: Any) -> None:
    fake, source = az
    columns = w.AZ_USAGE[0]
    fake.answers["TagKey"] = (columns, [[1.0, 1, "yesterday", "team", "ml", "NC6", "USD"]])
    with pytest.raises(ProviderError, match="UsageDate 'yesterday' is not a date"):
        source.daily_costs(DAY, NEXT, "team")


def test_bigquery_over_the_row_cap_is_refused_not_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    from gpuplan.providers.gcp import billing_export as gcp_bigquery

    monkeypatch.setattr(gcp_bigquery, "MAX_ROWS", 3)  # our own cap, not the SDK
    fake = BigQueryFake(fields=w.BQ_FIELDS, rows=w.BQ_ROWS)
    with serve(fake) as base, pytest.raises(ProviderError, match="over 3 groups"):
        _bq(fake, base).daily_costs(DAY, NEXT, "team")
