"""``gpuplan schedule`` on the GCP wire fakes: off-hours stop, on-hours start of only what
it stopped (instances.stop / instances.start through the real client)."""

from __future__ import annotations

from pathlib import Path

from tests.fakes.gcp_world import PROJECT, GcpWorld
from tests.fakes.schedule_helpers import (
    OFFICE,
    THU_MORNING,
    WED_EVENING,
    by_name,
    run_at,
    schedule_policy,
)

SCOPE = {"gcp": {"projects": [PROJECT]}}
EARLY = "2026-11-20T09:00:00+00:00"


def test_stop_at_off_hours_and_start_only_ours_at_on_hours(gcp: GcpWorld, tmp_path: Path) -> None:
    zone = "us-central1-a"
    gcp.compute.add(PROJECT, zone, "ours", "a2-highgpu-1g", labels=OFFICE, lastStartTimestamp=EARLY)
    gcp.compute.add(
        PROJECT, zone, "persons", "a2-highgpu-1g", labels=OFFICE, status="TERMINATED",
        lastStartTimestamp=EARLY,
    )  # fmt: skip
    gcp.compute.add(PROJECT, zone, "free", "a2-highgpu-1g", lastStartTimestamp=EARLY)
    policy, db = schedule_policy(SCOPE), tmp_path / "l.db"

    evening = run_at(policy, [gcp.provider()], db, WED_EVENING)
    assert evening.problems == [] and evening.aborted is None
    assert by_name(evening) == {"ours": "stopped", "persons": "none", "free": "none"}
    assert gcp.compute.status(PROJECT, "ours") == "TERMINATED"
    assert gcp.compute.instances[(PROJECT, "ours")]["labels"]["gpuplan-reason"] == (
        "offhours-office"
    )
    assert gcp.compute.calls["start"] == 0

    morning = run_at(policy, [gcp.provider()], db, THU_MORNING)
    assert by_name(morning) == {"ours": "started", "persons": "none", "free": "none"}
    assert gcp.compute.calls["start"] == 1
    assert gcp.compute.status(PROJECT, "ours") == "RUNNING"
    assert gcp.compute.status(PROJECT, "persons") == "TERMINATED"
    assert "gpuplan-reason" not in gcp.compute.instances[(PROJECT, "ours")]["labels"]
