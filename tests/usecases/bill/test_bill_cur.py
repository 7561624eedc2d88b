"""AWS actuals from a CUR 2.0 Data Export (CSV, gzip) in moto's S3: the same story as
Cost Explorer's, the same gaps named."""

from __future__ import annotations

import csv
import gzip
import io
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest

from gpuplan.core.audit.bill.reconcile import GapKind
from gpuplan.ledger import Ledger
from gpuplan.providers.aws.cur_export import CurExportSource, parse_location
from gpuplan.providers.base import ProviderError
from gpuplan.usecases.audit import bill
from gpuplan.usecases.policy import load_policy
from tests.fakes import bill_world as w

EXPORT = "s3://cur-bucket/exports/gpu-cur"
POLICY = f"""\
version: 1
name: team-a
scope:
  aws: {{regions: [us-east-1]}}
idle: {{allow_data_loss: false}}
bill: {{gap_percent: 10, gap_min_usd: 50, aws_cur_export: "{EXPORT}"}}
"""


def _gz(rows: list[list[str]]) -> bytes:
    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(w.CUR_COLUMNS)
    writer.writerows(rows)
    return gzip.compress(text.getvalue().encode())


@pytest.fixture
def s3(aws_env: None) -> Iterator[boto3.Session]:
    from moto import mock_aws

    with mock_aws():
        session = boto3.Session(region_name="us-east-1")
        client = session.client("s3")
        client.create_bucket(Bucket="cur-bucket")
        key = "exports/gpu-cur/data/BILLING_PERIOD=2026-12/gpu-cur-00001.csv.gz"
        client.put_object(Bucket="cur-bucket", Key=key, Body=_gz(w.CUR_ROWS))
        client.put_object(Bucket="cur-bucket", Key="exports/gpu-cur/metadata/x.json", Body=b"{}")
        yield session


def test_location_is_parsed() -> None:
    assert parse_location("s3://b/p/q/") == ("b", "p/q")
    with pytest.raises(ValueError, match="expected s3://"):
        parse_location("https://b/p")


def test_cur_lines_and_reconciliation(s3: boto3.Session, tmp_path: Path, write_policy: Any) -> None:
    policy = load_policy(write_policy(POLICY))
    keys = policy.bill.section("aws")  # the AWS entry's keys of bill
    assert keys is not None and keys.model_dump()["aws_cur_export"] == EXPORT
    assert policy.bill.model_dump()["aws_cur_export"] == EXPORT
    source = CurExportSource(s3, EXPORT)
    lines = source.daily_costs(date(2026, 12, 1), date(2026, 12, 2), "team")
    assert sum(x.usd for x in lines) == Decimal("808.0104")  # November's row left out
    g5 = [x for x in lines if x.instance_type == "g5.xlarge"]
    assert [(x.hours, x.team) for x in g5] == [(Decimal(48), "ml")]
    with Ledger(tmp_path / "l.db") as ledger:
        w.seed_ledger(ledger, policy.name, "aws", w.AWS_PRICES)
        out = bill.sync(policy, ledger, [source], now=w.NOW, since=date(2026, 12, 1))
        assert not out.problems
        result = bill.reconcile(policy, ledger, now=w.NOW, since=date(2026, 12, 1))
    rows = {r.instance_type: r for r in result.rows}
    assert [(g.kind, g.usd) for g in rows["p4d.24xlarge"].gaps] == [
        (GapKind.COMMITMENT, Decimal("300.00"))
    ]
    assert rows["g5.xlarge"].gaps[0].kind is GapKind.UNSEEN
    assert [g.kind for g in rows["g6e.12xlarge"].gaps] == [GapKind.UNSEEN]
    assert rows["(disks)"].billed_usd == Decimal("12.40")
    assert rows["(discounts and credits)"].billed_usd == Decimal("-45.00")
    assert rows["(commitment fees)"].billed_usd == Decimal("200.00")
    assert result.problems == [
        "aws 2026-12-01: $104.88 billed on g6e.12xlarge instances gpuplan never saw"
    ]


def test_parquet_and_missing_bucket_are_one_line(s3: boto3.Session) -> None:
    client = s3.client("s3")
    key = "exports/gpu-cur/data/BILLING_PERIOD=2026-12/part-0.parquet"
    client.put_object(Bucket="cur-bucket", Key=key, Body=b"PAR1")
    with pytest.raises(ProviderError, match="Parquet; gpuplan reads CSV"):
        CurExportSource(s3, EXPORT).daily_costs(date(2026, 12, 1), date(2026, 12, 2), "team")
    with pytest.raises(ProviderError, match=r"^aws: CUR export s3://nope/x: NoSuchBucket$"):
        CurExportSource(s3, "s3://nope/x").daily_costs(date(2026, 12, 1), date(2026, 12, 2), "t")


def test_a_huge_line_is_refused(s3: boto3.Session) -> None:
    client = s3.client("s3")
    row = [*w.CUR_ROWS[0][:-1], '{"user_team": "' + "x" * 2_000_000 + '"}']
    key = "exports/gpu-cur/data/BILLING_PERIOD=2026-12/gpu-cur-00001.csv.gz"
    client.put_object(Bucket="cur-bucket", Key=key, Body=_gz([row]))
    with pytest.raises(ProviderError, match="line over 1 MiB"):
        CurExportSource(s3, EXPORT).daily_costs(date(2026, 12, 1), date(2026, 12, 2), "team")
