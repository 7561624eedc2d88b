"""GCP's keys of the policy's ``bill`` section: the Cloud Billing export in BigQuery.

The GCP registry entry names the model (``bill_keys``); its keys sit in ``bill`` beside
the common ones (``team_label``, ``gap_percent``). Pydantic only (no Google SDK).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import WithJsonSchema

from gpuplan.core.policy.fields import HttpUrl, text_check
from gpuplan.core.policy.section import Section

_TABLE = r"^[a-z][a-z0-9-]{4,28}[a-z0-9]\.[A-Za-z0-9_]{1,1024}\.[A-Za-z0-9_]{1,1024}$"
BigQueryTable = Annotated[
    str,
    text_check(
        _TABLE,
        "a BigQuery table PROJECT.DATASET.TABLE (the billing export, e.g. "
        "my-billing.billing.gcp_billing_export_v1_012345_6789AB_CDEF01)",
    ),
    WithJsonSchema({"type": "string", "pattern": _TABLE}),
]


class GcpBill(Section):
    """Where GCP actuals are read: the billing export table in BigQuery."""

    gcp_billing_table: BigQueryTable | None = None
    """The Cloud Billing export table in BigQuery (standard usage cost export); none: GCP
    actuals are not read."""
    bigquery_endpoint: HttpUrl | None = None
    """BigQuery API endpoint (private service connect); none: the public endpoint."""
