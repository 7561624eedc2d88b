"""Right before acting, on moto: tags read after the metrics, a failed re-check names
what was left alone (exit 1), and the ``gpuplan-acting`` lease keeps a second
scheduler from acting on the same instance (issue 14, items 5 and 6)."""

from __future__ import annotations

from typing import Any

from gpuplan.core.catalog.query import Catalog
from gpuplan.usecases.lifecycle.executor import LEASE_TAG
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle
from tests.fakes.aws_helpers import Faults, policy, providers
from tests.fakes.aws_world import NOW, World, flat

TEAM = {"team": "research"}


def idle(world: World, **tags: str) -> str:
    iid = world.launch(tags={**TEAM, **tags})
    world.publish(iid, flat(0.5))
    return iid


def run(world: World, catalog: Catalog) -> StopIdleResult:
    adapters = providers(world, catalog, ["us-east-1"])
    return run_stop_idle(policy(), adapters, apply=True, now=NOW)


def outcome(result: StopIdleResult, iid: str) -> tuple[str, str]:
    (o,) = [o for o in result.outcomes if o.item.instance.instance_id == iid]
    return o.outcome.value, o.detail


LIST_METRICS_PER_SURVEY = 3
"""Utilisation, memory used and memory total (``cloudwatch.read_all``); CPU needs none."""


class OnReCheck:
    """Runs ``then`` from the first ListMetrics after the survey's: the re-check's fetch."""

    def __init__(self, then: Any) -> None:
        self.calls, self.then = 0, then

    def __call__(self, **kwargs: Any) -> Any:
        self.calls += 1
        return self.then(**kwargs) if self.calls > LIST_METRICS_PER_SURVEY else None


def test_a_keep_tag_added_during_the_re_check_metrics_fetch_is_honoured(
    world: World, lc_catalog: Catalog
) -> None:
    iid = idle(world)
    ec2 = world.client("ec2", "us-east-1")

    def keep(**_: Any) -> None:
        ec2.create_tags(Resources=[iid], Tags=[{"Key": "gpuplan-keep", "Value": "yes"}])

    world.client("cloudwatch", "us-east-1").meta.events.register(
        "before-send.cloudwatch.ListMetrics", OnReCheck(keep)
    )
    result = run(world, lc_catalog)
    assert outcome(result, iid)[0] == "skipped" and "no longer idle" in outcome(result, iid)[1]
    assert world.state(iid) == "running"


def test_a_throttled_re_check_fails_the_run_and_names_what_was_left_alone(
    world: World, lc_catalog: Catalog
) -> None:
    first, second = idle(world), idle(world)
    throttle = Faults(400, "Throttling", times=1000)
    world.client("cloudwatch", "us-east-1").meta.events.register_first(
        "before-send.cloudwatch.ListMetrics", OnReCheck(throttle)
    )
    result = run(world, lc_catalog)
    assert result.failed
    for iid in (first, second):
        assert outcome(result, iid)[0] == "failed"
        assert "re-check failed, left alone" in outcome(result, iid)[1]
        assert world.state(iid) == "running"
    (named,) = [p for p in result.problems if p.startswith("left alone")]
    assert first in named and second in named


def test_another_runs_unexpired_lease_leaves_the_instance_alone_and_is_reported(
    world: World, lc_catalog: Catalog
) -> None:
    theirs = idle(world, **{LEASE_TAG: "0badc0ffee00-20261202t110000z"})  # NOW is 10:15
    stale = idle(world, **{LEASE_TAG: "0badc0ffee00-20261202t100000z"})
    result = run(world, lc_catalog)
    assert outcome(result, theirs)[0] == "skipped"
    assert "another gpuplan run holds the lease" in outcome(result, theirs)[1]
    assert any("second scheduler" in p for p in result.problems) and result.failed
    assert world.state(theirs) == "running"
    assert outcome(result, stale)[0] == "stopped"  # an expired lease is taken over
    assert LEASE_TAG not in world.tags(stale)  # released after acting


def test_a_lease_overwritten_before_the_read_back_means_hands_off(
    world: World, lc_catalog: Catalog
) -> None:
    iid = idle(world)
    ec2 = world.client("ec2", "us-east-1")
    ours: list[bool] = []

    def note(params: dict[str, Any], **_: Any) -> None:
        ours.append(LEASE_TAG in [t["Key"] for t in params.get("Tags", [])])

    def other_host(**_: Any) -> None:
        if ours == [True]:  # right after our lease, the second host writes its own
            ec2.create_tags(
                Resources=[iid], Tags=[{"Key": LEASE_TAG, "Value": "feedfacecafe-20261202t103000z"}]
            )

    ec2.meta.events.register("before-parameter-build.ec2.CreateTags", note)
    ec2.meta.events.register("after-call.ec2.CreateTags", other_host)
    result = run(world, lc_catalog)
    assert outcome(result, iid)[0] == "skipped"
    assert "another gpuplan run took the lease" in outcome(result, iid)[1]
    assert world.state(iid) == "running"
