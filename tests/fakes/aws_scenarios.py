"""The scenario table of the AWS lifecycle tests: one instance per row, built on moto."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from tests.fakes.aws_world import NOW, PERIODS, World, flat

TEAM = {"team": "research"}


@dataclass(frozen=True)
class Row:
    name: str
    instance_id: str
    region: str
    verdict: str
    applied: str
    """The ``action`` expected after ``--apply``."""


def _bursty(gpu: int, period: int) -> float:
    return 60.0 if period == 4 else 1.0


def _thin(gpu: int, period: int) -> float | None:
    return 0.0 if period < 6 else None


def _one_busy(gpu: int, period: int) -> float:
    return 70.0 if gpu == 3 and period == 6 else 1.0


def _one_silent(gpu: int, period: int) -> float | None:
    return None if gpu == 5 and period > 2 else 1.0


def build(world: World) -> list[Row]:
    rows: list[Row] = []

    def add(name: str, iid: str, verdict: str, applied: str, region: str = "us-east-1") -> None:
        rows.append(Row(name, iid, region, verdict, applied))

    iid = world.launch(tags=TEAM)
    world.publish(iid, flat(1.0))
    add("idle", iid, "idle", "stopped")

    iid = world.launch(tags=TEAM)
    world.publish(iid, flat(85.0))
    add("busy", iid, "busy", "none")

    iid = world.launch(tags=TEAM)
    world.publish(iid, _bursty)
    add("bursty", iid, "busy", "none")

    add("no-agent", world.launch(tags=TEAM), "unknown", "none")

    iid = world.launch(tags=TEAM)
    world.publish(iid, _thin)
    add("thin-data", iid, "unknown", "none")

    iid = world.launch(tags=TEAM, launched=NOW - timedelta(minutes=6))
    world.publish(iid, flat(0.0), periods=PERIODS[-1:])
    add("just-launched", iid, "grace", "none")

    iid = world.launch(tags={**TEAM, "gpuplan-keep": "yes"})
    world.publish(iid, flat(0.0))
    add("exempt", iid, "exempt", "none")

    iid = world.launch(tags={**TEAM, "gpuplan-snooze-until": "20261202t140000z"})
    world.publish(iid, flat(0.0))
    add("snoozed", iid, "exempt", "none")

    iid = world.launch(tags={"team": "other"})
    world.publish(iid, flat(0.0))
    add("out-of-scope", iid, "out_of_scope", "none")

    iid = world.launch_asg_member()
    world.publish(iid, flat(0.0))
    add("asg-member", iid, "managed", "none")

    iid = world.launch(tags=TEAM, spot=True)
    world.publish(iid, flat(0.0))
    add("one-time-spot", iid, "idle", "skipped")

    iid = world.launch(tags=TEAM)
    world.stop(iid)
    add("already-stopped", iid, "out_of_scope", "none")

    iid = world.launch("g5.48xlarge", tags=TEAM)
    world.publish(iid, _one_busy, gpus=8, instance_type="g5.48xlarge")
    add("8-gpu-one-busy", iid, "busy", "none")

    iid = world.launch("g5.48xlarge", tags=TEAM)
    world.publish(iid, _one_silent, gpus=8, instance_type="g5.48xlarge")
    add("8-gpu-one-silent", iid, "unknown", "none")

    iid = world.launch("p5.48xlarge", tags=TEAM)
    world.publish(iid, flat(0.0), gpus=8, instance_type="p5.48xlarge")
    add("8-gpu-idle-scarce", iid, "idle", "stopped")

    iid = world.launch(tags=TEAM, region="us-west-2")
    world.publish(iid, flat(2.0), region="us-west-2")
    add("other-region-idle", iid, "idle", "stopped", region="us-west-2")

    iid = world.launch(tags=TEAM, region="us-west-2")
    world.publish(iid, flat(50.0), region="us-west-2")
    add("other-region-busy", iid, "busy", "none", region="us-west-2")
    return rows
