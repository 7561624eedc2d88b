"""GCP actual spend from the Cloud Billing export in BigQuery (``google-cloud-bigquery``).

One parameterised query per range over the standard usage cost export
(``gcp_billing_export_v1_<ACCOUNT>``): per day, project, team label, SKU and machine
type (``system_labels`` ``compute.googleapis.com/machine_spec``) the cost, and each
credit type beside it (``credits`` is an array of type and amount). GPU time is its own
SKU (``Nvidia ... GPU running in ...``) beside the VM's cores and RAM; committed-use
discounts arrive as credits of type ``COMMITTED_USAGE_DISCOUNT*``, sustained-use and
negotiated discounts and promotions as other credit types. Amounts are in the billing
account's currency: divided by ``currency_conversion_rate`` they are US dollars. The
export lags a few hours to a day. The job runs in the table's project
(``roles/bigquery.jobUser`` there, ``roles/bigquery.dataViewer`` on the dataset).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from typing import TYPE_CHECKING, Any

from gpuplan.core.audit.bill.lines import CostKind, CostLine, checked_usd
from gpuplan.providers.base import ProviderError

if TYPE_CHECKING:
    from google.cloud.bigquery import Client
    from pydantic import BaseModel

    from gpuplan.core.policy.bill_settings import BillSettings
    from gpuplan.providers.billing.base import CostSource

PERMISSIONS = ("roles/bigquery.jobUser", "roles/bigquery.dataViewer")
MAX_ROWS = 200_000
_MACHINE_SPEC = "compute.googleapis.com/machine_spec"
_QUERY = """
WITH usage_rows AS (
  SELECT DATE(usage_start_time) AS day, project.id AS project,
    IFNULL((SELECT value FROM UNNEST(labels) WHERE key = @team LIMIT 1), '') AS team,
    sku.description AS sku,
    IFNULL((SELECT value FROM UNNEST(system_labels) WHERE key = @spec LIMIT 1), '') AS machine,
    cost, credits, IFNULL(NULLIF(currency_conversion_rate, 0), 1) AS rate
  FROM `{table}`
  WHERE usage_start_time >= TIMESTAMP(@since) AND usage_start_time < TIMESTAMP(@until)
    AND _PARTITIONTIME >= TIMESTAMP_SUB(TIMESTAMP(@since), INTERVAL 1 DAY)
)
SELECT day, project, team, sku, machine, 'COST' AS line,
  CAST(SUM(cost / rate) AS NUMERIC) AS usd FROM usage_rows
GROUP BY day, project, team, sku, machine
UNION ALL
SELECT day, project, team, sku, machine, c.type AS line,
  CAST(SUM(c.amount / rate) AS NUMERIC) AS usd
FROM usage_rows, UNNEST(credits) AS c
GROUP BY day, project, team, sku, machine, line
"""
COMMITMENT_CREDITS = ("COMMITTED_USAGE_DISCOUNT", "COMMITTED_USAGE_DISCOUNT_DOLLAR_BASE")
_DISK_SKUS = ("PD Capacity", "Storage PD", "SSD backed PD", "Balanced PD", "Hyperdisk",
              "Snapshot")  # fmt: skip


def kind_of(line: str, sku: str, machine: str) -> CostKind:
    if line in COMMITMENT_CREDITS:
        return CostKind.COMMITMENT
    if line != "COST":
        return CostKind.DISCOUNT
    if any(word in sku for word in _DISK_SKUS):
        return CostKind.DISK
    if machine and ("GPU" in sku or "Instance Core" in sku or "Instance Ram" in sku):
        return CostKind.INSTANCE
    return CostKind.OTHER


class BillingExportSource:
    """The billing account's export table: every project it bills (scope = the table's
    project, where the export lives)."""

    provider = "gcp"
    permissions: tuple[str, ...] = PERMISSIONS

    def __init__(self, table: str, *, endpoint: str | None = None,
                 client: Client | None = None) -> None:  # fmt: skip
        self.table = table
        self.scope = table.split(".")[0]
        self._endpoint = endpoint
        self._client = client

    def _bigquery(self) -> Client:
        if self._client is None:
            from google.api_core.client_options import ClientOptions
            from google.cloud import bigquery

            options = ClientOptions(api_endpoint=self._endpoint) if self._endpoint else None
            self._client = bigquery.Client(project=self.scope, client_options=options)
        return self._client

    def daily_costs(self, since: date, until: date, team_label: str) -> list[CostLine]:
        from google.api_core import exceptions as gexc
        from google.auth import exceptions as auth_exc
        from google.cloud import bigquery

        config = bigquery.QueryJobConfig(
            query_parameters=[
                bigquery.ScalarQueryParameter("team", "STRING", team_label),
                bigquery.ScalarQueryParameter("spec", "STRING", _MACHINE_SPEC),
                bigquery.ScalarQueryParameter("since", "DATE", since),
                bigquery.ScalarQueryParameter("until", "DATE", until),
            ]
        )
        try:
            rows = self._bigquery().query_and_wait(
                _QUERY.format(table=self.table), job_config=config, max_results=MAX_ROWS + 1
            )
            lines = [self._line(row) for row in rows]
            if len(lines) > MAX_ROWS:  # never a silently cut month: refuse, say what to do
                raise ProviderError(f"gcp: billing export answered over {MAX_ROWS:,} groups; "
                                    "sync fewer days (--since)")  # fmt: skip
            return lines
        except (gexc.GoogleAPIError, auth_exc.GoogleAuthError) as exc:
            # The message's first line: the API's words (no credential travels in a URL).
            reason = str(getattr(exc, "message", None) or type(exc).__name__).splitlines()[0]
            raise ProviderError(f"gcp: billing export query on {self.table}: {reason}") from None
        except (ValueError, TypeError, KeyError) as exc:
            raise ProviderError(f"gcp: billing export row unreadable: {exc}") from None

    def _line(self, row: Any) -> CostLine:
        line, sku, machine = str(row["line"]), str(row["sku"] or ""), str(row["machine"] or "")
        kind = kind_of(line, sku, machine)
        typed = kind in (CostKind.INSTANCE, CostKind.COMMITMENT)
        day = row["day"] if isinstance(row["day"], date) else date.fromisoformat(str(row["day"]))
        return CostLine("gcp", str(row["project"] or self.scope), day, kind,
                        checked_usd(row["usd"], "gcp: billing export cost"),
                        machine if typed else "", str(row["team"] or ""),
                        (sku if line == "COST" else f"{line}/{sku}")[:120])  # fmt: skip


def bill_sources(
    section: BaseModel | None, bill: BillSettings, environ: Mapping[str, str]
) -> tuple[list[CostSource], list[str]]:
    """The billing export's cost source when ``bill.gcp_billing_table`` is set (the
    :class:`~gpuplan.providers.cloud_entry.CloudEntry` hook); a problem line naming the
    setting when the policy has a GCP scope without it."""
    from gpuplan.providers.gcp.bill_settings import GcpBill

    found = bill.section("gcp")
    keys = found if isinstance(found, GcpBill) else GcpBill()
    table = keys.gcp_billing_table
    if table is None:
        if section is None:
            return [], []
        return [], [
            "gcp: set bill.gcp_billing_table (the Cloud Billing export in BigQuery) to read "
            "GCP actuals"
        ]
    return [BillingExportSource(table, endpoint=keys.bigquery_endpoint)], []
