"""AWS end to end on moto: per-GPU CloudWatch agent series and EC2 CPU over a day, read in
one batch, audited: one GPU of eight busy is found and right-sized."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import boto3
import pytest
from freezegun import freeze_time

from gpuplan.core.audit.split import AuditRule
from gpuplan.core.policy.models import AuditSettings
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.aws.provider import AwsAdapter
from gpuplan.usecases.audit.live import audit_fleet

END = datetime(2026, 12, 2, 10, tzinfo=UTC)
START = END - timedelta(days=1)
HOURS = [START + timedelta(hours=h, minutes=20) for h in range(24)]
TOTAL_MIB = 40960.0


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[boto3.Session]:
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in (("AWS_ACCESS_KEY_ID", "t"), ("AWS_SECRET_ACCESS_KEY", "t"),
                        ("AWS_DEFAULT_REGION", "us-east-1"),
                        ("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")):  # fmt: skip
        monkeypatch.setenv(name, value)
    from moto import mock_aws

    with mock_aws():
        yield boto3.Session(region_name="us-east-1")


def _row(name: str, dims: list[dict[str, str]], at: datetime, value: float) -> dict[str, Any]:
    return {"MetricName": name, "Dimensions": dims, "Timestamp": at, "Value": value}


def test_one_of_eight_on_moto(aws: boto3.Session) -> None:
    ec2, cw = aws.client("ec2"), aws.client("cloudwatch")
    with freeze_time(START - timedelta(days=1)):
        launched = ec2.run_instances(
            ImageId="ami-12345678", MinCount=1, MaxCount=1, InstanceType="p4d.24xlarge"
        )
    iid = launched["Instances"][0]["InstanceId"]
    rows = []
    for gpu in range(8):
        dims = [{"Name": "InstanceId", "Value": iid}, {"Name": "index", "Value": str(gpu)}]
        for at in HOURS:
            rows.append(_row("nvidia_smi_utilization_gpu", dims, at, 95.0 if gpu == 0 else 0.0))
            rows.append(_row("nvidia_smi_memory_used", dims, at, 30000.0 if gpu == 0 else 0.0))
            rows.append(_row("nvidia_smi_memory_total", dims, at, TOTAL_MIB))
    for i in range(0, len(rows), 500):
        cw.put_metric_data(Namespace="CWAgent", MetricData=rows[i : i + 500])
    cpu = [_row("CPUUtilization", [{"Name": "InstanceId", "Value": iid}], at, 8.0) for at in HOURS]
    cw.put_metric_data(Namespace="AWS/EC2", MetricData=cpu)
    catalog = load_catalog()
    provider = AwsAdapter("us-east-1", ec2_client=ec2, cloudwatch_client=cw, catalog=catalog)
    calls: list[str] = []
    cw.meta.events.register("before-call.*.*", lambda model, **_: calls.append(model.name))
    result = audit_fleet([provider], catalog, AuditRule(), AuditSettings(), start=START, end=END,
                         period_minutes=60)  # fmt: skip
    assert calls == ["ListMetrics"] * 3 + ["GetMetricData"]
    (audit,) = result.audits
    assert audit.split.paid == audit.subject.hourly_usd * 24
    assert abs(audit.split.busy - audit.split.paid * Decimal("0.95") / 8) < Decimal("0.01")
    kinds = [a.kind.value for a in audit.advice]
    assert kinds == ["one-busy-gpu"]
    assert audit.resize is not None and audit.resize.need.gpus == 1
    assert audit.resize.offer.gpu_memory_gb >= 30000 / 1024
