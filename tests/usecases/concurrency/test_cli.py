"""``--concurrency`` on every command that surveys: checked (one line, exit 2), and the
output of a run does not depend on it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from freezegun import freeze_time

from gpuplan.cli.main import main

NOW = datetime(2026, 12, 2, 10, 17, 30, tzinfo=UTC)

SURVEYING = [
    ["stop-idle", "--policy", "p.yaml"],
    ["fleet", "--policy", "p.yaml"],
    ["budget", "--policy", "p.yaml"],
    ["audit", "--policy", "p.yaml"],
    ["snooze", "i-0abc", "--for", "1h", "--policy", "p.yaml"],
    ["tui"],
]


def fleet_file(tmp_path: Path) -> Path:
    started = (NOW - timedelta(hours=5)).isoformat()
    instances = []
    for cloud, region, kind in (("aws", "us-east-1", "g5.xlarge"),
                                ("gcp", "us-central1", "a2-highgpu-1g"),
                                ("azure", "eastus", "Standard_NC24ads_A100_v4")):  # fmt: skip
        for k in range(4):
            instances.append(
                {
                    "provider": cloud,
                    "account": f"{cloud}-acct",
                    "region": region,
                    "instance_id": f"{cloud}-{k}",
                    "instance_type": kind,
                    "state": "running",
                    "started_at": started,
                    "gpu_count": 1,
                    "hourly_usd": "1.5",
                    "labels": {"team": "research"},
                }
            )
    data = {
        "instances": instances,
        "utilisation_percent": {i["instance_id"]: (0.5 if i["instance_id"][-1] in "02" else 80)
                                for i in instances},
    }  # fmt: skip
    path = tmp_path / "fleet.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "p.yaml"
    path.write_text(
        "version: 1\nname: research\nscope:\n  aws: {regions: [us-east-1]}\n"
        "  gcp: {projects: [research-1]}\n"
        "  azure: {subscriptions: [00000000-0000-0000-0000-000000000001]}\n"
        "  match_labels: {team: research}\nidle: {allow_data_loss: false}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("argv", SURVEYING, ids=lambda a: a[0])
@pytest.mark.parametrize("value", ["0", "abc", "257", "-3", "2.5"])
def test_a_bad_concurrency_is_one_line_and_exit_2(
    argv: list[str], value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main([*argv, "--concurrency", value])
    assert caught.value.code == 2
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("gpuplan: error:")]
    assert errors == [
        f"gpuplan: error: argument --concurrency: expected a whole number from 1 to 256, "
        f"got {value!r} (see 'gpuplan {argv[0]} --help')"
    ]
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("env", "value", "named"),
    [
        ("GPUPLAN_CONCURRENCY", "abc", "GPUPLAN_CONCURRENCY: expected a whole number"),
        ("GPUPLAN_CONCURRENCY", "0", "GPUPLAN_CONCURRENCY: expected a whole number"),
        ("GPUPLAN_SERVICE_LIMITS", "aws.cloudwatch=lots", "aws.cloudwatch: expected a whole"),
        ("GPUPLAN_SERVICE_LIMITS", "s3=4", "expected CLOUD.SERVICE=N"),
    ],
)
def test_a_bad_environment_setting_is_one_line_and_exit_2(
    env: str,
    value: str,
    named: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv(env, value)
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(fleet_file(tmp_path)))
    code = main(["fleet", "--policy", str(policy_file(tmp_path))])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("gpuplan: error: ") and named in err


def test_fleet_and_stop_idle_output_do_not_depend_on_concurrency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(fleet_file(tmp_path)))
    policy = str(policy_file(tmp_path))
    outputs: dict[str, list[str]] = {}
    for workers in ("1", "3", "256"):
        got = []
        db = str(tmp_path / f"{workers}.db")
        for argv in (["fleet", "--policy", policy, "--json"],
                     ["stop-idle", "--policy", policy, "--db", db],
                     ["budget", "--policy", policy, "--db", db]):  # fmt: skip
            with freeze_time(NOW):
                code = main([*argv, "--concurrency", workers])
            out = capsys.readouterr()
            assert code == 0, out.err
            got.append(out.out)
        outputs[workers] = got
    assert outputs["3"] == outputs["1"] == outputs["256"]
    fleet = json.loads(outputs["1"][0])["instances"]
    assert [i["instance_id"] for i in fleet] == [
        f"{c}-{k}" for c in ("aws", "gcp", "azure") for k in range(4)
    ]


def test_the_environment_sets_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(fleet_file(tmp_path)))
    monkeypatch.setenv("GPUPLAN_CONCURRENCY", "2")
    monkeypatch.setenv("GPUPLAN_SERVICE_LIMITS", "aws.ec2=1,gcp.monitoring=1")
    assert main(["snooze", "gcp-2", "--for", "1h", "--policy", str(policy_file(tmp_path))]) == 0
    assert "gcp-2 (us-central1): snoozed until" in capsys.readouterr().out
