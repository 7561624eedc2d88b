"""The policy's ``bill`` section: where each cloud's bill is read, whose team, and when
the gap between estimate and bill is a problem (``gpuplan bill``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

from pydantic import WithJsonSchema

from gpuplan.core.policy.fields import HttpUrl, Percent, TagName, Usd, _text
from gpuplan.core.policy.section import Section

_TABLE = r"^[a-z][a-z0-9-]{4,28}[a-z0-9]\.[A-Za-z0-9_]{1,1024}\.[A-Za-z0-9_]{1,1024}$"
BigQueryTable = Annotated[
    str,
    _text(
        _TABLE,
        "a BigQuery table PROJECT.DATASET.TABLE (the billing export, e.g. "
        "my-billing.billing.gcp_billing_export_v1_012345_6789AB_CDEF01)",
    ),
    WithJsonSchema({"type": "string", "pattern": _TABLE}),
]

_S3 = r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[A-Za-z0-9!_.*'()/=-]{1,900}$"
S3Location = Annotated[
    str,
    _text(_S3, "an S3 location s3://BUCKET/PREFIX/EXPORT-NAME (a CUR 2.0 Data Export)"),
    WithJsonSchema({"type": "string", "pattern": _S3}),
]


class BillSettings(Section):
    """``gpuplan bill``: actual spend from each cloud's cost API beside gpuplan's estimate."""

    team_label: TagName = "team"
    """Tag or label whose value names the team on the bill (on AWS an activated cost
    allocation tag; on GCP a resource label; on Azure a tag)."""
    gap_percent: Percent = 10.0
    """``gpuplan bill reconcile``: an unexplained or unseen amount for one instance type and
    day is a problem when over this share of the estimate (and over ``gap_min_usd``)."""
    gap_min_usd: Usd = Decimal(25)
    """...and over this many dollars, so that small types do not page anyone."""
    aws_cur_export: S3Location | None = None
    """A CUR 2.0 Data Export (CSV, gzip) to read AWS actuals from instead of Cost Explorer:
    ``s3://BUCKET/PREFIX/EXPORT-NAME`` (the folder holding ``data/``); the scalable path
    for large organisations. None: Cost Explorer."""
    gcp_billing_table: BigQueryTable | None = None
    """The Cloud Billing export table in BigQuery (standard usage cost export); none: GCP
    actuals are not read."""
    bigquery_endpoint: HttpUrl | None = None
    """BigQuery API endpoint (private service connect); none: the public endpoint."""
