"""AWS actuals through moto's Cost Explorer: sync stores them beside the estimate, and
the reconciliation names each gap (Savings Plan, an instance gpuplan never saw, a type
it never saw, a disk, a discount, a commitment fee)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import boto3
import pytest
import requests

from gpuplan.core.audit.bill.lines import CostKind
from gpuplan.core.audit.bill.reconcile import GapKind
from gpuplan.ledger import Ledger
from gpuplan.ledger.bill import estimates
from gpuplan.providers.aws.cost_explorer import CostExplorerSource, instance_type_of, kind_of
from gpuplan.usecases.audit import bill
from gpuplan.usecases.policy import load_policy
from tests.fakes.bill_world import AWS_PRICES, CE_OTHER, CE_USAGE, NOW, seed_ledger

POLICY = """\
version: 1
name: team-a
scope:
  aws: {regions: [us-east-1]}
idle: {allow_data_loss: false}
bill: {gap_percent: 10, gap_min_usd: 50}
"""


@pytest.fixture
def ce(aws_env: None) -> Iterator[boto3.Session]:
    from moto import mock_aws

    with mock_aws():
        reply = requests.post(
            "http://motoapi.amazonaws.com/moto-api/static/ce/cost-and-usage-results",
            json={"results": [CE_USAGE, CE_OTHER]},
            timeout=5,
        )
        assert reply.status_code == 201
        yield boto3.Session(region_name="us-east-1")


def test_usage_types_map_to_kinds() -> None:
    assert instance_type_of("USE1-BoxUsage:p5.48xlarge") == "p5.48xlarge"
    assert instance_type_of("SpotUsage:g5.xlarge") == "g5.xlarge"
    assert instance_type_of("EBS:VolumeUsage.gp3") == ""
    assert kind_of("Usage", "EBS:VolumeUsage.gp3") is CostKind.DISK
    assert kind_of("SavingsPlanNegation", "BoxUsage:p4d.24xlarge") is CostKind.COMMITMENT
    assert kind_of("Credit", "") is CostKind.DISCOUNT
    assert kind_of("Usage", "USE1-DataTransfer-Out-Bytes") is CostKind.OTHER


def test_cost_explorer_lines(ce: boto3.Session) -> None:
    calls: list[dict[str, object]] = []
    ce_source = CostExplorerSource(ce)
    ce_source._ce.meta.events.register(
        "provide-client-params.ce.GetCostAndUsage", lambda params, **_: calls.append(params)
    )
    lines = ce_source.daily_costs(date(2026, 12, 1), date(2026, 12, 2), "team")
    assert len(calls) == 2  # one request for usage, one for everything else
    assert calls[0]["GroupBy"] == [{"Type": "TAG", "Key": "team"},
                                   {"Type": "DIMENSION", "Key": "USAGE_TYPE"}]  # fmt: skip
    assert calls[1]["Filter"] == {"Not": calls[0]["Filter"]}
    p4d = [x for x in lines if x.instance_type == "p4d.24xlarge"]
    assert {(x.kind, x.usd, x.team) for x in p4d} == {
        (CostKind.INSTANCE, Decimal("786.5424"), "ml"),
        (CostKind.COMMITMENT, Decimal("-300.00"), ""),
    }
    assert {x.scope for x in lines} == {"123456789012"}  # moto's account, from STS
    assert sum(x.usd for x in lines) == Decimal("808.0104")


def test_sync_then_reconcile_names_each_gap(
    ce: boto3.Session, tmp_path: Path, write_policy: Any
) -> None:
    policy = load_policy(write_policy(POLICY))
    with Ledger(tmp_path / "l.db") as ledger:
        seed_ledger(ledger, policy.name, "aws", AWS_PRICES)
        out = bill.sync(policy, ledger, [CostExplorerSource(ce)], now=NOW,
                        since=date(2026, 12, 1))  # fmt: skip
        assert out.lines == {"aws 123456789012": 8} and not out.problems
        assert out.final_through == date(2026, 12, 1)
        assert ledger.count("bill_estimates") == 2
        stored, damaged = estimates(ledger, policy.name, date(2026, 12, 1), date(2026, 12, 4))
        result = bill.reconcile(policy, ledger, now=NOW, since=date(2026, 12, 1))
    # The estimate stored beside the bill is the one the reconciliation shows.
    assert not damaged
    assert {(e.instance_type, e.usd) for e in stored} == {
        (r.instance_type, r.estimate_usd) for r in result.rows if r.estimate_usd
    }
    rows = {r.instance_type: r for r in result.rows}
    assert [g.kind for g in rows["p4d.24xlarge"].gaps] == [GapKind.COMMITMENT]
    assert rows["p4d.24xlarge"].gaps[0].usd == Decimal("300.00")
    assert rows["g5.xlarge"].gaps[0].kind is GapKind.UNSEEN
    assert "24.0 h billed on instances gpuplan never saw" in rows["g5.xlarge"].gaps[0].detail
    assert [g.kind for g in rows["g6e.12xlarge"].gaps] == [GapKind.UNSEEN]
    assert rows["(disks)"].billed_usd == Decimal("12.40")
    assert rows["(discounts and credits)"].billed_usd == Decimal("-45.00")
    assert rows["(commitment fees)"].billed_usd == Decimal("200.00")
    assert rows["(other)"].billed_usd == Decimal("0.90")
    # Only the type gpuplan never saw is over the threshold ($104.88 > $50 and 10%).
    assert result.problems == [
        "aws 2026-12-01: $104.88 billed on g6e.12xlarge instances gpuplan never saw"
    ]


def test_a_second_sync_replaces_the_window(
    ce: boto3.Session, tmp_path: Path, write_policy: Any
) -> None:
    policy = load_policy(write_policy(POLICY))
    with Ledger(tmp_path / "l.db") as ledger:
        for _ in range(2):
            bill.sync(policy, ledger, [CostExplorerSource(ce)], now=NOW, since=date(2026, 12, 1))
        assert ledger.count("bill_lines") == 8
        rows = ledger.select("SELECT * FROM bill_lines")
    text = json.dumps(rows)
    assert "testing" not in text  # the fake credentials never reach the ledger
