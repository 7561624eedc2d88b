"""AWS's keys of the policy's ``bill`` section: where ``gpuplan bill`` reads AWS actuals.

The AWS registry entry names the model (``bill_keys``); its keys sit in ``bill`` beside
the common ones (``team_label``, ``gap_percent``). Pydantic only (no boto3).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import WithJsonSchema

from gpuplan.core.policy.fields import text_check
from gpuplan.core.policy.section import Section

_S3 = r"^s3://[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]/[A-Za-z0-9!_.*'()/=-]{1,900}$"
S3Location = Annotated[
    str,
    text_check(_S3, "an S3 location s3://BUCKET/PREFIX/EXPORT-NAME (a CUR 2.0 Data Export)"),
    WithJsonSchema({"type": "string", "pattern": _S3}),
]


class AwsBill(Section):
    """Where AWS actuals are read: Cost Explorer, or a CUR 2.0 export."""

    aws_cur_export: S3Location | None = None
    """A CUR 2.0 Data Export (CSV, gzip) to read AWS actuals from instead of Cost Explorer:
    ``s3://BUCKET/PREFIX/EXPORT-NAME`` (the folder holding ``data/``); the scalable path
    for large organisations. None: Cost Explorer."""
