"""Benchmark (not a test): API calls and wall time of one ``stop-idle`` dry run on moto.

For 10, 100 and 1,000 GPU instances in one region (g5.xlarge, one GPU each, 12
datapoints per GPU as the CloudWatch agent publishes them), counts every API call the
adapter makes (botocore ``before-call`` events, one per call or paginator page) and the
wall time of the survey + plan. Metric calls must grow with ceil(series / 500), never
with instances. Writes ``benchmarks/results/stop_idle.md``.

Run: ``python scripts/bench_stop_idle.py`` (about 8 minutes, nearly all of it moto
scanning 12,000 datapoints at 1,000 instances; in-process, no network).
"""

from __future__ import annotations

import math
import os
import platform
import sys
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

os.environ.update(
    AWS_ACCESS_KEY_ID="bench",
    AWS_SECRET_ACCESS_KEY="bench",
    AWS_DEFAULT_REGION="us-east-1",
    MOTO_EC2_LOAD_DEFAULT_AMIS="false",
)
for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
    os.environ.pop(name, None)

import boto3  # noqa: E402
from moto import mock_aws  # noqa: E402

from gpuplan.core.lifecycle.idle import IdleRule, period_starts  # noqa: E402
from gpuplan.core.policy import Policy  # noqa: E402
from gpuplan.providers.aws.provider import AwsAdapter  # noqa: E402
from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle  # noqa: E402

SIZES = (10, 100, 1000)
OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "stop_idle.md"


def populate(session: boto3.Session, n: int, now: datetime) -> None:
    ec2 = session.client("ec2")
    cw = session.client("cloudwatch")
    ids: list[str] = []
    while len(ids) < n:
        batch = min(100, n - len(ids))
        res = ec2.run_instances(
            ImageId="ami-12345678", MinCount=batch, MaxCount=batch, InstanceType="g5.xlarge"
        )
        ids.extend(i["InstanceId"] for i in res["Instances"])
    periods = period_starts(IdleRule(), now)
    data = [
        {
            "MetricName": "nvidia_smi_utilization_gpu",
            "Dimensions": [
                {"Name": "InstanceId", "Value": iid},
                {"Name": "index", "Value": "0"},
                {"Name": "name", "Value": "NVIDIA A10G"},
                {"Name": "host", "Value": f"ip-{n}-{k}"},
            ],
            "Timestamp": start + timedelta(seconds=30),
            "Value": 1.0 if k % 2 else 50.0,
            "Unit": "Percent",
        }
        for k, iid in enumerate(ids)
        for start in periods
    ]
    for i in range(0, len(data), 1000):
        cw.put_metric_data(Namespace="CWAgent", MetricData=data[i : i + 1000])


def one(n: int) -> dict[str, Any]:
    now = datetime.now(UTC) + timedelta(days=1)  # past every launch's grace period
    with mock_aws():
        session = boto3.Session(region_name="us-east-1")
        populate(session, n, now)
        calls: Counter[str] = Counter()
        ec2 = session.client("ec2")
        cw = session.client("cloudwatch")
        for client in (ec2, cw):
            client.meta.events.register(
                "before-call.*.*", lambda model, **_: calls.update([model.name])
            )
        provider = AwsAdapter("us-east-1", ec2_client=ec2, cloudwatch_client=cw)
        policy = Policy.model_validate(
            {"version": 1, "name": "bench", "scope": {"aws": {"regions": ["us-east-1"]}}}
        )
        started = time.perf_counter()
        result = run_stop_idle(policy, [provider], apply=False, now=now)
        wall = time.perf_counter() - started
    verdicts = Counter(o.item.decision.verdict.value for o in result.outcomes)
    return {"n": n, "calls": calls, "wall": wall, "verdicts": verdicts}


def main() -> int:
    rows = [one(n) for n in SIZES]
    lines = [
        "# stop-idle benchmark (moto, one region, dry run)",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {platform.machine()} "
        f"with Python {platform.python_version()}, moto in-process "
        "(`python scripts/bench_stop_idle.py`). One GPU per instance, so series = instances.",
        "Wall time is moto's, not AWS's; the call counts are what matters.",
        "",
        "| instances | API calls | DescribeInstances | DescribeInstanceTypes | ListMetrics "
        "| GetMetricData | ceil(series/500) | wall s | verdicts |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        c = r["calls"]
        v = ", ".join(f"{k} {n}" for k, n in sorted(r["verdicts"].items()))
        lines.append(
            f"| {r['n']} | {sum(c.values())} | {c['DescribeInstances']} | "
            f"{c['DescribeInstanceTypes']} | {c['ListMetrics']} | {c['GetMetricData']} | "
            f"{math.ceil(r['n'] / 500)} | {r['wall']:.2f} | {v} |"
        )
    lines += [
        "",
        "DescribeInstances and ListMetrics are paginated (moto returns one page here; real "
        "AWS pages at 1,000 instances / 500 metrics; moto repeats a series once per "
        "datapoint in ListMetrics, hence its pages). GetMetricData is one call per 500 "
        "series (plus NextToken pages for many datapoints).",
    ]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    bad = [r for r in rows if r["calls"]["GetMetricData"] != math.ceil(r["n"] / 500)]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
