"""Savings and waste: the core arithmetic over typed ledger rows, and the commands."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber
from freezegun import freeze_time

from gpuplan.cli.main import main
from gpuplan.core.audit.grouping import GroupBy, GroupKind, parse_group_by
from gpuplan.core.audit.savings import Acted, Sighting, savings, waste
from gpuplan.core.errors import InputError
from gpuplan.core.lifecycle.idle import IdleVerdict
from gpuplan.core.lifecycle.instances import InstanceState
from gpuplan.providers.aws.provider import AwsAdapter
from gpuplan.usecases.audit.savings import parse_since, reserved_pairs
from tests.fakes.aws_world import NOW, World, flat

T0 = datetime(2026, 11, 30, 23, 0, tzinfo=UTC)


def acted(at: datetime, iid: str, price: str, team: str, **where: str) -> Acted:
    region = where.get("region", "us-east-1")
    kind = where.get("instance_type", "g5.xlarge")
    return Acted(at, iid, region, kind, Decimal(price), {"team": team})


def seen(
    at: datetime,
    iid: str,
    verdict: str = "idle",
    *,
    state: str = "running",
    labels: dict[str, str] | None = None,
) -> Sighting:
    verdict_, state_ = IdleVerdict(verdict), InstanceState(state)
    return Sighting(at, 60, iid, verdict_, state_, labels or {"team": "research"}, Decimal(16), 8)


def test_savings_until_restart_or_now_split_by_month() -> None:
    back = seen(T0 + timedelta(hours=3), "i-1", "busy",
                labels={"team": "a", "gpuplan-stopped-at": "20261130t230000z"})  # fmt: skip
    done = [acted(T0, "i-1", "10", "a"), acted(T0, "i-2", "2", "b")]
    lines = {(x.month, x.group): x for x in savings(done, [back], T0 + timedelta(hours=5))}
    assert lines[("2026-11", "a")].usd == Decimal("10.00")
    assert lines[("2026-12", "a")].usd == Decimal("20.00")
    assert lines[("2026-12", "b")].hours == Decimal("4.00")
    assert all(x.instances == 1 for x in lines.values())
    assert sum(x.usd for x in lines.values()) == Decimal("40.00")


def test_a_sighting_while_still_stopped_is_not_a_restart() -> None:
    stopped = seen(T0 + timedelta(hours=1), "i-1", "out_of_scope", state="stopped",
                   labels={"team": "a", "gpuplan-stopped-at": "20261130t230000z"})  # fmt: skip
    lines = savings([acted(T0, "i-1", "10", "a")], [stopped], T0 + timedelta(hours=2))
    assert sum(x.usd for x in lines) == Decimal("20.00")  # 23:00 to 01:00, both months


def test_saving_on_a_reserved_type_is_doubtful() -> None:
    done = [acted(T0 + timedelta(hours=1), "i-1", "10", "a", instance_type="p5.48xlarge")]
    now = T0 + timedelta(hours=3)
    (line,) = savings(done, [], now, reserved={("us-east-1", "p5.48xlarge")})
    assert (line.usd, line.doubtful_usd) == (Decimal("20.00"), Decimal("20.00"))
    (plain,) = savings(done, [], now, reserved={("us-west-2", "p5.48xlarge")})
    assert plain.doubtful_usd == Decimal(0)


def test_reserved_types_are_read_and_failures_reported(aws_env: None) -> None:
    ec2 = boto3.client("ec2", region_name="us-east-1")
    with Stubber(ec2) as stub:
        stub.add_response(
            "describe_reserved_instances",
            {"ReservedInstances": [{"InstanceType": "p5.48xlarge", "State": "active"}]},
            {"Filters": [{"Name": "state", "Values": ["active"]}]},
        )
        stub.add_client_error("describe_reserved_instances", "UnauthorizedOperation")
        aws = AwsAdapter("us-east-1", ec2_client=ec2, cloudwatch_client=None)
        pairs, problems = reserved_pairs([aws])
        assert pairs == {("us-east-1", "p5.48xlarge")} and problems == []
        pairs, problems = reserved_pairs([aws, object()])
        assert pairs == set() and "UnauthorizedOperation" in problems[0]


def test_waste_counts_time_seen_idle() -> None:
    sightings = [seen(NOW + timedelta(minutes=10 * k), "i-1") for k in range(3)]
    sightings.append(seen(NOW - timedelta(days=30), "i-1"))  # before --since
    sightings.append(seen(NOW, "i-2", "busy"))
    (line,) = waste(sightings, NOW - timedelta(days=7))
    assert line.hours == Decimal("1.33") and line.gpu_hours == Decimal("10.67")
    assert line.usd == Decimal("21.33") and line.group == "research"


def test_parsers() -> None:
    assert parse_since("7d", NOW) == NOW - timedelta(days=7)
    assert parse_since("2026-12-01", NOW) == datetime(2026, 12, 1, tzinfo=UTC)
    assert parse_group_by("label:team") == GroupBy(GroupKind.LABEL, "team")
    assert parse_group_by("account") == GroupBy(GroupKind.ACCOUNT)
    with pytest.raises(InputError):
        parse_since("last week", NOW)
    for bad in ("team", "label:", "class", "accounts"):
        with pytest.raises(InputError, match="expected account or label:KEY"):
            parse_group_by(bad)


def test_savings_and_report_commands(
    world: World, tmp_path: Path, lc_catalog_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    iid = world.launch(tags={"team": "research"})
    world.publish(iid, flat(0.0))
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\nname: p\nscope: {aws: {regions: [us-east-1]}}\n"
        "idle: {allow_data_loss: true}\n",
        encoding="utf-8",
    )
    db = str(tmp_path / "l.db")
    args = ["stop-idle", "--policy", str(policy), "--db", db, "--catalog-dir", str(lc_catalog_dir)]
    with freeze_time(NOW):
        assert main([*args, "--apply"]) == 0
    world.client("ec2", "us-east-1").start_instances(InstanceIds=[iid])
    with freeze_time(NOW + timedelta(hours=2)):
        assert main(args) == 0  # sees it running again with its stopped-at tag
    capsys.readouterr()
    with freeze_time(NOW + timedelta(hours=5)):
        assert main(["savings", "--db", db, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        (line,) = out["savings"]
        assert (line["team"], line["hours"], line["usd"]) == ("research", 2.0, 2.01)
        assert "keep billing" in out["note"]
        assert main(["fleet", "--report", "--since", "7d", "--db", db, "--json"]) == 0
        (group,) = json.loads(capsys.readouterr().out)["groups"]
        assert (group["team"], group["idle_gpu_hours"], group["wasted_usd"]) == (
            "research",
            1.0,
            1.01,
        )
        assert main(["waste", "--since", "7d", "--db", db, "--json"]) == 0  # its own command
        assert json.loads(capsys.readouterr().out)["groups"][0]["wasted_usd"] == 1.01
        assert main(["savings", "--db", db]) == 0
        assert "saved $" in capsys.readouterr().out
