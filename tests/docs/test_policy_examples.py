"""The policy examples of docs/policy.md ("Lifetimes, exemptions that end, and the owner
told first"), read from the file and run: each passes ``policy check`` and does on a
fleet, with a frozen clock, what the text beside it says."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.idle import STOPPED_AT_TAG, format_tag_time
from gpuplan.core.lifecycle.instances import Capability, GpuInstance
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.providers.fake import FakeAdapter
from gpuplan.usecases.audit.exempt_report import exempt_line, exempt_summary
from gpuplan.usecases.lifecycle.owner_notices import OwnerNotifier
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle
from gpuplan.usecases.policy import load_policy
from tests.fakes.policy_fixtures import HookServer
from tests.fakes.smtp import smtp_server

DOC = Path(__file__).resolve().parents[2] / "docs" / "policy.md"
SECTION = "## Lifetimes, exemptions that end, and the owner told first"
NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


def examples() -> dict[str, str]:
    """Policy name -> the YAML of each example in the section."""
    text = DOC.read_text(encoding="utf-8")
    section = text[text.index(SECTION) : text.index("## Reference")]
    blocks = re.findall(r"```yaml\n(.*?)```", section, flags=re.S)
    names = [re.findall(r"^name: (\S+)$", b, flags=re.M) for b in blocks]
    return {name[0]: b for name, b in zip(names, blocks, strict=True) if name}


@pytest.fixture
def policies(tmp_path: Path) -> dict[str, Policy]:
    out: dict[str, Policy] = {}
    for name, body in examples().items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(body, encoding="utf-8")
        assert main(["policy", "check", str(path)]) == 0, name
        out[name] = load_policy(path)
    return out


def inst(iid: str, *, state: str = "running", ran_h: float = 24, **labels: str) -> GpuInstance:
    return GpuInstance.model_validate(
        {
            "provider": "aws",
            "account": "1",
            "region": "us-east-1",
            "instance_id": iid,
            "instance_type": "p5.48xlarge",
            "state": state,
            "started_at": NOW - timedelta(hours=ran_h),
            "gpu": "H100",
            "gpu_count": 8,
            "hourly_usd": "55.04",
            "labels": {k.replace("_", "-"): v for k, v in labels.items()},
        }
    )


def fake(*fleet: GpuInstance, idle: tuple[str, ...] = ()) -> FakeAdapter:
    adapter = FakeAdapter(Provider.AWS, fleet, capabilities=tuple(Capability))
    adapter.flat_percent = {i.instance_id: 0.5 if i.instance_id in idle else 90.0 for i in fleet}
    return adapter


def outcomes(result: StopIdleResult) -> dict[str, str]:
    return {o.item.instance.instance_id: o.outcome.value for o in result.outcomes}


def test_the_section_holds_the_three_examples() -> None:
    assert set(examples()) == {"sweeps", "evals", "research"}


def test_lifetimes_example(policies: dict[str, Policy], tmp_path: Path) -> None:
    policy = policies["sweeps"]
    stopped = format_tag_time(NOW - timedelta(days=40))
    adapter = fake(
        inst("i-sweep", ran_h=80),
        inst("i-fresh", ran_h=5),
        inst("i-parked", state="stopped", **{STOPPED_AT_TAG.replace("-", "_"): stopped}),
        inst("i-expired", gpuplan_expires="2026-11-30"),
    )
    with Ledger(tmp_path / "l.db") as ledger:
        first = run_stop_idle(policy, [adapter], apply=True, now=NOW, ledger=ledger)
        later = NOW + timedelta(minutes=61)
        second = run_stop_idle(policy, [adapter], apply=True, now=later, ledger=ledger)
    notified = {"i-sweep": "notified", "i-fresh": "none", "i-parked": "notified"}
    assert outcomes(first) == {**notified, "i-expired": "notified"}
    assert outcomes(second) == {
        "i-sweep": "stopped",
        "i-fresh": "none",
        "i-parked": "terminated",
        "i-expired": "stopped",
    }
    reason = second.outcomes[0].item.decision.reason
    assert reason == "max_runtime: running 3.4 days, over 3.0 days (busy or not)"
    parked = [c.method for c in adapter.calls if c.args[:1] == ("i-parked",)]
    assert [m for m in parked if m in ("snapshot", "terminate", "stop")] == [
        "snapshot",
        "terminate",
    ]


def test_exemptions_example(policies: dict[str, Policy], tmp_path: Path) -> None:
    policy = policies["evals"]
    adapter = fake(
        inst("i-date", gpuplan_keep="2026-12-31", owner="ml"),
        inst("i-span", gpuplan_keep="7d@2026-12-01", owner="vision"),
        inst("i-ended", gpuplan_keep="2026-11-30"),
        inst("i-word", gpuplan_keep="yes"),
        idle=("i-date", "i-span", "i-ended", "i-word"),
    )
    with Ledger(tmp_path / "l.db") as ledger:
        first = run_stop_idle(policy, [adapter], apply=True, now=NOW, ledger=ledger)
        later = NOW + timedelta(hours=24, minutes=1)
        adapter.flat_percent = dict.fromkeys(adapter.flat_percent, 0.5)
        second = run_stop_idle(policy, [adapter], apply=True, now=later, ledger=ledger)
    assert outcomes(first) == {
        "i-date": "none",
        "i-span": "none",
        "i-ended": "stopped",
        "i-word": "notified",
    }
    assert outcomes(second)["i-word"] == "stopped"
    summary = exempt_summary(adapter.instances.values(), policy, NOW)
    assert exempt_line(summary) == (
        "Exempt: $110.08/h on 2 running instances (ml $55.04/h x1, vision $55.04/h x1)."
    )


def test_owners_example(
    policies: dict[str, Policy], hook_server: HookServer, tmp_path: Path
) -> None:
    platform = HookServer()
    try:
        with smtp_server() as (port, box):
            smtp: Any = policies["research"].owners.smtp
            lab = smtp.model_copy(update={"host": "127.0.0.1", "port": port, "tls": "none"})
            owners = policies["research"].owners.model_copy(
                update={"smtp": lab, "allow_insecure": True}
            )
            policy = policies["research"].model_copy(update={"owners": owners})
            environ = {
                "GPUPLAN_SLACK_ML": hook_server.url,
                "GPUPLAN_PLATFORM_HOOK": platform.url,
                "GPUPLAN_SMTP_PASSWORD": "pw",
            }
            adapter = fake(
                inst("i-ml", owner="ml-research"), inst("i-anyone"), idle=("i-ml", "i-anyone")
            )
            notifier = OwnerNotifier.of(policy, environ)
            with Ledger(tmp_path / "l.db") as ledger:
                for minutes in (0, 10):
                    run_stop_idle(policy, [adapter], apply=True, ledger=ledger, owners=notifier,
                                  now=NOW + timedelta(minutes=minutes))  # fmt: skip
            mails = [(m["To"], m["Subject"]) for m in box.messages]
    finally:
        platform.close()
    assert [r["body"]["text"].split(" ")[1] for r in hook_server.received] == ["i-ml"]
    assert [r["body"]["notice"]["instance_id"] for r in platform.received] == ["i-anyone"]
    assert mails == [("ml-leads@example.org", "gpuplan: i-ml: idle")]
