"""End to end: ``gpuplan fleet`` on one policy spanning AWS (moto_server), GCP and Azure
(TLS wire fakes): one table, and one error line for a cloud whose credentials fail while
the others are still listed."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import boto3

from tests.e2e.clouds.harness import PROJECT, SUB, Clouds, child_env, run_gpuplan, write_policy
from tests.fakes.aws_world import World
from tests.fakes.moto_fixtures import aws_env  # noqa: F401  (fake AWS credentials)
from tests.fakes.scenarios import TEAM


def _three_clouds(tmp_path: Path, clouds: Clouds, endpoint: str) -> Path:
    session = boto3.Session(region_name="us-east-1")
    world = World(session)
    world.clients[("ec2", "us-east-1")] = session.client(
        "ec2", region_name="us-east-1", endpoint_url=endpoint
    )
    world.launch("g5.xlarge", tags=dict(TEAM), launched=datetime.now(UTC))
    clouds.compute.add(PROJECT, "us-central1-a", "gcp-box", "a2-highgpu-1g", labels=dict(TEAM))
    clouds.azure.add_vm(SUB, "rg", "azure-box", "Standard_NC24ads_A100_v4", tags=dict(TEAM))
    policy = write_policy(tmp_path, clouds)
    text = policy.read_text(encoding="utf-8")
    policy.write_text(text.replace("scope:\n", "scope:\n  aws: {regions: [us-east-1]}\n"))
    return policy


def _env(tmp_path: Path, clouds: Clouds, ca_file: Path, endpoint: str) -> dict[str, str]:
    env = child_env(tmp_path, clouds, ca_file)
    env.update(
        AWS_ENDPOINT_URL=endpoint,
        AWS_ACCESS_KEY_ID="testing",
        AWS_SECRET_ACCESS_KEY="testing",
        AWS_DEFAULT_REGION="us-east-1",
    )
    return env


def test_one_table_for_three_clouds(
    server: str,
    clouds: Clouds,
    tmp_path: Path,
    ca_file: Path,
    aws_env: None,  # noqa: F811
) -> None:
    policy = _three_clouds(tmp_path, clouds, server)
    env = _env(tmp_path, clouds, ca_file, server)
    done = run_gpuplan(["fleet", "--policy", str(policy), "--json"], env)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["problems"] == []
    assert {i["provider"] for i in record["instances"]} == {"aws", "gcp", "azure"}

    table = run_gpuplan(["fleet", "--policy", str(policy)], env)
    header, _rule, *rows = table.stdout.strip().splitlines()
    assert header.split()[:3] == ["provider", "region", "instance"]
    assert {row.split()[0] for row in rows if row and not row[0].isspace()} >= {
        "aws",
        "gcp",
        "azure",
    }


def test_failing_credentials_are_one_line_and_the_others_are_listed(
    server: str,
    clouds: Clouds,
    tmp_path: Path,
    ca_file: Path,
    aws_env: None,  # noqa: F811
) -> None:
    policy = _three_clouds(tmp_path, clouds, server)
    env = _env(tmp_path, clouds, ca_file, server)
    env["AZURE_CLIENT_SECRET"] = "wrong"
    done = run_gpuplan(["fleet", "--policy", str(policy)], env)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("gpuplan: error:")]
    assert len(errors) == 1 and "azure" in errors[0] and "not authenticated" in errors[0]
    providers = {line.split()[0] for line in done.stdout.splitlines()[2:] if line.strip()}
    assert {"aws", "gcp"} <= providers
    assert "azure" not in providers
