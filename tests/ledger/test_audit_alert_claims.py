"""Audit alerts are claimed in the ledger before they are sent (issue 28, items 3 and 7).

On SQLite and a real PostgreSQL: a run that finds the alert claimed by a run still
sending it does not send it; a failed delivery gives the claim back; three concurrent
``gpuplan audit --policy`` processes send each alert once, to an http webhook the policy
allows with ``notify.allow_insecure_webhook: true`` (honoured as stop-idle honours it).
"""

from __future__ import annotations

import json
import os
import subprocess
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuplan.core.audit.advice import InstanceAudit
from gpuplan.core.audit.split import AuditRule
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples, InstanceState
from gpuplan.core.policy.models import Policy
from gpuplan.ledger import Ledger
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.fake import FakeAdapter
from gpuplan.providers.webhook import Delivery
from gpuplan.usecases.audit import live as live
from tests.fakes.moto_server import installed_bin
from tests.fakes.policy_fixtures import HookServer

END = datetime(2026, 12, 2, 12, tzinfo=UTC)
START = END - timedelta(days=7)
POLICY = Policy.model_validate({"version": 1, "name": "ml", "audit": {"alerts": True}})


def _audits() -> list[InstanceAudit]:
    inst = GpuInstance(
        provider=Provider.AWS, account="1", region="us-east-1", instance_id="i-low",
        instance_type="p5.48xlarge", state=InstanceState.RUNNING, gpu_count=8,
        hourly_usd=Decimal("55.04"), labels={"team": "ml"},
    )  # fmt: skip
    starts = live.period_starts(START, END, 60)
    samples = HostSamples(
        utilisation={str(g): {t: 5.0 for t in starts} for g in range(8)},
        memory={"0": {t: 10.0 for t in starts}},
        cpu={t: 5.0 for t in starts},
    )
    loaded = load_catalog()
    catalog = loaded[0] if isinstance(loaded, tuple) else loaded
    fake = FakeAdapter(Provider.AWS, [inst])
    fake.samples = {"i-low": samples}
    result = live.audit_fleet(
        [fake], catalog, AuditRule(), POLICY.audit, start=START, end=END, period_minutes=60
    )
    return result.audits


class Sender:
    """A notifier; ``during`` runs while its message is in flight (another run)."""

    def __init__(self, ok: bool = True) -> None:
        self.sent: list[str] = []
        self.ok = ok
        self.during: Any = None

    def send(self, text: str, *, extra: dict[str, Any] | None = None) -> Delivery:
        if self.during is not None:
            self.during()
        self.sent.append(text)
        return Delivery(self.ok, 200 if self.ok else 500, None if self.ok else "HTTP 500")


def test_a_run_meeting_an_alert_in_flight_does_not_send_it(location: str) -> None:
    audits = _audits()
    first, second = Sender(), Sender()
    seen: list[list[live.AlertOutcome]] = []

    def other_run() -> None:
        with Ledger(location) as other:
            seen.append(live.send_alerts(POLICY, audits, other, second, END))

    first.during = other_run
    with Ledger(location) as ledger:
        mine = live.send_alerts(POLICY, audits, ledger, first, END)
        later = live.send_alerts(POLICY, audits, ledger, Sender(), END + timedelta(hours=1))
    assert [(o.instance_id, o.status) for o in mine] == [("i-low", "sent")]
    [[theirs]] = seen
    assert theirs.status == "claimed" and "another gpuplan audit run claimed it" in theirs.detail
    assert (len(first.sent), len(second.sent)) == (1, 0)
    assert [o.status for o in later] == ["already-sent"]


def test_a_failed_delivery_gives_the_claim_back(location: str) -> None:
    audits = _audits()
    with Ledger(location) as ledger:
        failed = live.send_alerts(POLICY, audits, ledger, Sender(ok=False), END)
        retry = Sender()
        again = live.send_alerts(POLICY, audits, ledger, retry, END + timedelta(minutes=1))
    assert [o.status for o in failed] == ["failed"]
    assert [o.status for o in again] == ["sent"] and len(retry.sent) == 1


def test_a_claim_left_by_a_killed_run_expires(location: str) -> None:
    from gpuplan.ledger.audit_alerts import AlertKey, claim_audit_alert

    audits = _audits()
    with Ledger(location) as ledger:
        key = AlertKey("ml", "i-low", live.period_key(END, POLICY.audit.period_days))
        until = END + timedelta(minutes=live.ALERT_CLAIM_MINUTES)
        assert claim_audit_alert(ledger, key, token="dead", at=END, until=until,
                                 busy_percent=5.0, paid_usd=Decimal(1)) is None  # fmt: skip
        during = live.send_alerts(POLICY, audits, ledger, Sender(), END + timedelta(minutes=1))
        after = live.send_alerts(POLICY, audits, ledger, Sender(), until + timedelta(seconds=1))
    assert [o.status for o in during] == ["claimed"]
    assert [o.status for o in after] == ["sent"]


def test_concurrent_audit_runs_send_each_alert_once_to_an_allowed_http_webhook(
    location: str, tmp_path: Path
) -> None:
    hook = HookServer()
    hook.delay_s = 1.0  # a slow webhook: every run is past its check while one sends
    started = (datetime.now(UTC) - timedelta(days=10)).isoformat()
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps({
        "instances": [{
            "provider": "aws", "account": "1", "region": "us-east-1", "instance_id": "i-low",
            "instance_type": "p5.48xlarge", "state": "running", "started_at": started,
            "gpu": "H100", "gpu_count": 8, "hourly_usd": "55.04", "labels": {"team": "ml"},
        }],
        "utilisation_percent": {"i-low": 5},
    }))  # fmt: skip
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "version: 1\nname: t\nscope:\n  aws: {regions: [us-east-1]}\naudit: {alerts: true}\n"
        "idle: {allow_data_loss: false}\n"
        f"notify: {{webhook_url: '{hook.url}', allow_insecure_webhook: true}}\n",
        encoding="utf-8",
    )
    env = {
        "PATH": os.environ["PATH"], "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"), "GPUPLAN_FAKE_FLEET": str(fleet),
        "PGPASSWORD": os.environ.get("PGPASSWORD", ""),
    }  # fmt: skip
    cmd = [installed_bin("gpuplan"), "audit", "--policy", str(policy), "--since", "7d"]
    try:
        children = [
            subprocess.Popen(
                [*cmd, "--db", location],
                env=env,
                text=True,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(3)
        ]
        errs = [child.communicate(timeout=120)[1] for child in children]
    finally:
        hook.close()
    assert [c.returncode for c in children] == [0, 0, 0], errs
    assert len(hook.received) == 1, errs
    assert "i-low" in hook.received[0]["body"]["text"]
    said = sorted(line.split("i-low: ")[1].split()[0] for e in errs for line in e.splitlines()
                  if "audit alert i-low" in line)  # fmt: skip
    assert said[-1] == "sent" and said.count("sent") == 1
    assert all("allow_insecure_webhook" not in e for e in errs)


@pytest.mark.parametrize("allow", [True, False])
def test_audit_honours_allow_insecure_webhook_as_stop_idle_does(
    tmp_path: Path, allow: bool
) -> None:
    hook = HookServer()
    policy = Policy.model_validate({
        "version": 1, "name": "ml", "audit": {"alerts": True},
        "notify": {"webhook_url": hook.url, "allow_insecure_webhook": allow},
    })  # fmt: skip
    from gpuplan.providers.webhook import notifier_for

    try:
        with Ledger(tmp_path / "l.db") as ledger:
            [out] = live.send_alerts(policy, _audits(), ledger, notifier_for(policy.notify), END)
    finally:
        hook.close()
    assert out.status == ("sent" if allow else "failed")
    assert len(hook.received) == (1 if allow else 0)
