"""End to end: the installed ``gpuplan budget`` against GCP and Azure wire fakes, over
TLS, through configuration only (see :mod:`tests.e2e.clouds.harness`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.clouds.harness import (
    PROJECT,
    SUB,
    Clouds,
    child_env,
    run_gpuplan,
    write_policy,
)
from tests.fakes.identity import jwt_claims
from tests.fakes.scenarios import CASES, TEAM


def _build(clouds: Clouds) -> None:
    for case in CASES:
        extra: dict[str, Any] = {"labels": dict(case.labels)}
        if not case.running:
            extra["status"] = "TERMINATED"
        clouds.compute.add(PROJECT, "us-central1-a", case.name, "a2-highgpu-1g", **extra)
        power = "running" if case.running else "deallocated"
        clouds.azure.add_vm(
            SUB, "rg", case.name, "Standard_NC24ads_A100_v4", tags=dict(case.labels), power=power
        )


def test_budget_lists_both_clouds_through_configuration_only(
    clouds: Clouds, tmp_path: Path, ca_file: Path
) -> None:
    _build(clouds)
    env = child_env(tmp_path, clouds, ca_file)
    done = run_gpuplan(["budget", "--policy", str(write_policy(tmp_path, clouds)), "--json"], env)
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["problems"] == []
    in_scope = {c.name for c in CASES if c.labels.get("team") == TEAM["team"]}
    listed = {(i["provider"], i["instance_id"].rsplit("/", 1)[-1]) for i in record["instances"]}
    gcp_ids = {body["id"]: name for (_, name), body in clouds.compute.instances.items()}
    assert {gcp_ids.get(iid, iid) for p, iid in listed if p == "gcp"} == in_scope
    assert {iid for p, iid in listed if p == "azure"} == in_scope
    # The real credential chains ran against the fakes: a JWT-bearer grant signed by
    # the service account, and an Entra client-credentials grant for the ARM audience.
    assert clouds.compute.tokens and clouds.azure.tokens
    assert all(t.startswith("entra-") for t in clouds.azure.tokens)
    assert clouds.entra.grants[0]["scope"] == f"{clouds.urls['arm']}/.default"
    # google-auth signs its own JWT for service accounts on GAPIC clients (no call to
    # the key file's token_uri): the token names the account and the Compute audience.
    claims = jwt_claims(clouds.compute.tokens[0])
    assert claims["iss"] == f"gpuplan@{PROJECT}.iam.gserviceaccount.com"
    assert claims["aud"] == "https://compute.googleapis.com/"


def test_a_cloud_without_credentials_is_one_error_line_and_the_other_is_listed(
    clouds: Clouds, tmp_path: Path, ca_file: Path
) -> None:
    _build(clouds)
    env = child_env(tmp_path, clouds, ca_file)
    env["AZURE_CLIENT_SECRET"] = "wrong"
    done = run_gpuplan(["budget", "--policy", str(write_policy(tmp_path, clouds)), "--json"], env)
    assert done.returncode == 1
    record = json.loads(done.stdout)
    (problem,) = record["problems"]
    assert problem.startswith(f"azure {SUB}: listing failed: listing VMs: not authenticated")
    assert {i["provider"] for i in record["instances"]} == {"gcp"}
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) <= 2


def test_a_gcp_project_that_fails_to_list_fails_budget_and_is_named(
    clouds: Clouds, tmp_path: Path, ca_file: Path
) -> None:
    _build(clouds)
    env = child_env(tmp_path, clouds, ca_file)
    path = write_policy(tmp_path, clouds)
    path.write_text(
        path.read_text().replace(f"projects: [{PROJECT}]", f"projects: [gone-proj, {PROJECT}]")
    )
    clouds.compute.fail("aggregatedList", 403)  # the first project listed: gone-proj
    # The fault answers the next aggregatedList request: one scope at a time makes that
    # gone-proj's (concurrently, either project could draw it).
    done = run_gpuplan(["budget", "--policy", str(path), "--json", "--concurrency", "1"], env)
    assert done.returncode == 1, done.stderr
    record = json.loads(done.stdout)
    (problem,) = record["problems"]
    assert problem.startswith("gcp gone-proj: listing failed")
    assert record["recorded"] is False  # a partial month is not stored as the month
    assert {i["provider"] for i in record["instances"]} == {"gcp", "azure"}
    assert "gcp gone-proj: listing failed" in done.stderr and "Traceback" not in done.stderr
