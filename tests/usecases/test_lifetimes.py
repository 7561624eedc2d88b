"""Lifetime and exemption rules through ``run_stop_idle`` on the in-memory fake.

Which instances act, how (stop, snapshot then terminate), with which recorded reason,
and what is only noticed, snoozed or skipped: the same act path as idle actions (dry run
by default, notice, cap, lease, ledger intent before and outcome after).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.exemptions import VOID_AFTER_TAG
from gpuplan.core.lifecycle.idle import SNOOZE_TAG, STOPPED_AT_TAG, format_tag_time
from gpuplan.core.lifecycle.instances import Capability, GpuInstance, InstanceState
from gpuplan.core.lifecycle.lifetimes import NOTICE_TAG
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.providers.fake import FakeAdapter
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
ALL = tuple(Capability)


def policy(**sections: Any) -> Policy:
    body: dict[str, Any] = {
        "version": 1,
        "name": "team",
        "scope": {"aws": {"regions": ["us-east-1"]}},
        "idle": {"allow_data_loss": True, "grace_minutes": 0},
    }
    for key, value in sections.items():
        body[key] = {**body.get(key, {}), **value}
    return Policy.model_validate(body)


def inst(iid: str, *, state: str = "running", ran: timedelta = timedelta(hours=1),
         labels: dict[str, str] | None = None) -> GpuInstance:  # fmt: skip
    return GpuInstance.model_validate(
        {
            "provider": "aws",
            "account": "123456789012",
            "region": "us-east-1",
            "instance_id": iid,
            "instance_type": "g5.xlarge",
            "state": state,
            "started_at": NOW - ran,
            "gpu": "A10G",
            "gpu_count": 1,
            "hourly_usd": "1.006",
            "labels": labels or {},
        }
    )


def fake(*instances: GpuInstance, busy: float = 90.0) -> FakeAdapter:
    adapter = FakeAdapter(Provider.AWS, instances, capabilities=ALL)
    adapter.flat_percent = {i.instance_id: busy for i in instances}
    return adapter


def by_id(result: StopIdleResult) -> dict[str, tuple[str, str]]:
    return {
        o.item.instance.instance_id: (o.item.step.value, o.outcome.value) for o in result.outcomes
    }


def acted(adapter: FakeAdapter) -> list[tuple[str, str]]:
    wanted = ("stop", "terminate", "snapshot")
    return [(c.method, c.args[0]) for c in adapter.calls if c.method in wanted]


def test_a_busy_instance_past_max_runtime_is_noticed_then_stopped(tmp_path: Path) -> None:
    p = policy(lifetimes={"max_runtime": "72h", "notice_minutes": 60})
    adapter = fake(inst("i-long", ran=timedelta(hours=80)), inst("i-short", ran=timedelta(hours=5)))
    with Ledger(tmp_path / "l.db") as ledger:
        first = run_stop_idle(p, [adapter], apply=True, now=NOW, ledger=ledger)
        assert by_id(first) == {"i-long": ("mark", "notified"), "i-short": ("none", "none")}
        assert NOTICE_TAG in adapter.instances["i-long"].labels
        assert acted(adapter) == []
        later = NOW + timedelta(minutes=61)
        second = run_stop_idle(p, [adapter], apply=True, now=later, ledger=ledger)
        rows = ledger.select("SELECT instance_id, action, outcome FROM actions ORDER BY id")
        reasons = ledger.select("SELECT instance_id, reason FROM decisions ORDER BY id")
    assert by_id(second)["i-long"] == ("act", "stopped")
    assert acted(adapter) == [("stop", "i-long")]
    stopped = adapter.instances["i-long"]
    assert stopped.labels["gpuplan-reason"] == "lifetime-max-runtime"
    assert NOTICE_TAG not in stopped.labels
    assert [tuple(r) for r in rows][-1] == ("i-long", "stop", "stopped")
    assert any(r[0] == "i-long" and "max_runtime: running 3.4 days" in r[1] for r in reasons)


def test_dry_run_is_the_default_and_names_the_rule() -> None:
    p = policy(lifetimes={"max_runtime": "72h", "notice_minutes": 0})
    adapter = fake(inst("i-long", ran=timedelta(hours=80)))
    result = run_stop_idle(p, [adapter], apply=False, now=NOW)
    (o,) = result.outcomes
    assert (o.item.step.value, o.outcome.value) == ("act", "none")
    assert o.item.lifetime == "max-runtime"
    assert "busy or not" in o.item.decision.reason
    assert acted(adapter) == []


def test_a_snooze_holds_within_max_snooze_only() -> None:
    p = policy(lifetimes={"max_runtime": "72h", "notice_minutes": 0, "max_snooze": "12h"})
    week = format_tag_time(NOW + timedelta(days=7))
    held = inst("i-held", ran=timedelta(hours=80), labels={SNOOZE_TAG: week})
    over = inst("i-over", ran=timedelta(hours=90), labels={SNOOZE_TAG: week})
    adapter = fake(held, over)
    result = run_stop_idle(p, [adapter], apply=True, now=NOW)
    assert by_id(result) == {"i-held": ("none", "none"), "i-over": ("act", "stopped")}
    held_reason = result.outcomes[0].item.decision.reason
    assert "held only to 2026-12-02 14:00Z (lifetimes.max_snooze)" in held_reason
    assert "not honoured past lifetimes.max_snooze" in result.outcomes[1].item.warnings[0]


def test_stopped_for_40_days_is_snapshotted_then_terminated(tmp_path: Path) -> None:
    p = policy(lifetimes={"stopped_for_days": 30, "notice_minutes": 0})
    old = inst("i-old", state="stopped",
               labels={STOPPED_AT_TAG: format_tag_time(NOW - timedelta(days=40))})  # fmt: skip
    recent = inst("i-recent", state="stopped",
                  labels={STOPPED_AT_TAG: format_tag_time(NOW - timedelta(days=3))})  # fmt: skip
    unknown = inst("i-unknown", state="stopped")
    adapter = fake(old, recent, unknown)
    with Ledger(tmp_path / "l.db") as ledger:
        result = run_stop_idle(p, [adapter], apply=True, now=NOW, ledger=ledger)
        steps = ledger.select("SELECT step, provider_call, state FROM action_steps ORDER BY id")
    assert by_id(result)["i-old"] == ("act", "terminated")
    assert by_id(result)["i-recent"] == ("none", "none")
    assert by_id(result)["i-unknown"] == ("none", "none")
    assert "when it stopped is unknown" in result.outcomes[2].item.decision.reason
    assert acted(adapter) == [("snapshot", "i-old"), ("terminate", "i-old")]
    assert [tuple(s) for s in steps] == [(1, "snapshot", "done"), (2, "terminate", "done")]
    assert adapter.instances["i-old"].state is InstanceState.TERMINATED


def test_stopped_for_needs_allow_data_loss_and_a_snapshot() -> None:
    p = policy(lifetimes={"stopped_for_days": 30, "notice_minutes": 0},
               idle={"allow_data_loss": False})  # fmt: skip
    old = inst("i-old", state="stopped",
               labels={STOPPED_AT_TAG: format_tag_time(NOW - timedelta(days=40))})  # fmt: skip
    adapter = fake(old)
    result = run_stop_idle(p, [adapter], apply=True, now=NOW)
    (o,) = result.outcomes
    assert (o.item.step.value, o.outcome.value) == ("skip", "skipped")
    assert "set idle.allow_data_loss: true" in o.detail
    assert acted(adapter) == []


def test_an_expiry_tag_that_has_passed_stops_the_instance() -> None:
    p = policy(lifetimes={"expires_tag": "gpuplan-expires", "notice_minutes": 0})
    gone = inst("i-gone", labels={"gpuplan-expires": "2026-12-01"})
    today = inst("i-today", labels={"gpuplan-expires": "2026-12-02"})
    bad = inst("i-bad", labels={"gpuplan-expires": "soon"})
    adapter = fake(gone, today, bad)
    result = run_stop_idle(p, [adapter], apply=True, now=NOW)
    assert by_id(result) == {
        "i-gone": ("act", "stopped"),
        "i-today": ("none", "none"),
        "i-bad": ("none", "none"),
    }
    assert "is not a date" in result.outcomes[2].item.decision.reason


def test_exemptions_valid_expired_and_too_long(tmp_path: Path) -> None:
    p = policy(exemptions={"max_days": 30, "notice_minutes": "24h"})
    labels = {
        "i-valid": "2026-12-20",
        "i-span": "7d@2026-11-30",
        "i-expired": "2026-11-30",
        "i-long": "2027-06-30",
        "i-word": "yes",
    }
    adapter = fake(*(inst(i, labels={"gpuplan-keep": v}) for i, v in labels.items()), busy=0.0)
    with Ledger(tmp_path / "l.db") as ledger:
        first = run_stop_idle(p, [adapter], apply=True, now=NOW, ledger=ledger)
        assert by_id(first) == {
            "i-valid": ("none", "none"),
            "i-span": ("none", "none"),
            "i-expired": ("act", "stopped"),
            "i-long": ("mark", "notified"),
            "i-word": ("mark", "notified"),
        }
        assert VOID_AFTER_TAG in adapter.instances["i-long"].labels
        later = NOW + timedelta(hours=25)
        second = run_stop_idle(p, [adapter], apply=True, now=later, ledger=ledger)
    assert by_id(second)["i-long"] == ("act", "stopped")
    assert by_id(second)["i-word"] == ("act", "stopped")
    assert by_id(second)["i-valid"] == ("none", "none")
    assert "i-span" not in {i for i, v in by_id(second).items() if v[1] == "stopped"}


def test_the_cap_counts_idle_and_lifetime_actions_alike_most_dollars_first() -> None:
    p = policy(
        lifetimes={"max_runtime": "72h", "notice_minutes": 0},
        idle={"max_actions_per_run": 2, "window_minutes": 30},
    )
    cheap_idle = inst("i-cheap-idle")
    dear_long = inst("i-dear-long", ran=timedelta(hours=80)).model_copy(
        update={"hourly_usd": Decimal("55.04")}
    )
    mid_idle = inst("i-mid-idle").model_copy(update={"hourly_usd": Decimal("12.29")})
    adapter = fake(cheap_idle, dear_long, mid_idle)
    adapter.flat_percent = {"i-cheap-idle": 0.5, "i-dear-long": 90.0, "i-mid-idle": 0.5}
    result = run_stop_idle(p, [adapter], apply=True, now=NOW)
    assert by_id(result) == {
        "i-cheap-idle": ("defer", "deferred"),
        "i-dear-long": ("act", "stopped"),
        "i-mid-idle": ("act", "stopped"),
    }


def test_a_stopped_instance_with_a_refused_exemption_gets_no_notice_without_stopped_for() -> None:
    p = policy(exemptions={"max_days": 30})
    parked = inst("i-parked", state="stopped", labels={"gpuplan-keep": "forever"})
    result = run_stop_idle(p, [fake(parked)], apply=True, now=NOW)
    assert by_id(result) == {"i-parked": ("none", "none")}
