"""The live audit over an in-memory provider, its alerts (once per period), and the CLI."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuplan.cli.main import main
from gpuplan.core.audit.split import AuditRule
from gpuplan.core.catalog.gpus import Precision
from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples, InstanceState
from gpuplan.core.policy.models import Policy
from gpuplan.ledger import Ledger
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.fake import FakeAdapter
from gpuplan.providers.webhook import Delivery
from gpuplan.usecases.audit import live as live

END = datetime(2026, 12, 2, 12, tzinfo=UTC)
START = END - timedelta(days=7)


class Recorder:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def send(self, text: str, *, extra: dict[str, Any] | None = None) -> Delivery:
        self.sent.append(text)
        return Delivery(ok=True, status=200)


def _instance(iid: str, itype: str, price: str, gpus: int, **labels: str) -> GpuInstance:
    return GpuInstance(
        provider=Provider.AWS, account="123456789012", region="us-east-1", instance_id=iid,
        instance_type=itype, state=InstanceState.RUNNING, gpu_count=gpus,
        hourly_usd=Decimal(price), labels={"team": "ml", **labels},
    )  # fmt: skip


def _samples(per_gpu: list[float], memory: float, cpu: float) -> HostSamples:
    starts = live.period_starts(START, END, 60)
    return HostSamples(
        utilisation={str(i): {t: u for t in starts} for i, u in enumerate(per_gpu)},
        memory={"0": {t: memory for t in starts}},
        cpu={t: cpu for t in starts},
    )


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    loaded = load_catalog()
    return loaded[0] if isinstance(loaded, tuple) else loaded


def _fake() -> FakeAdapter:
    fake = FakeAdapter(Provider.AWS, [
        _instance("i-one", "p4d.24xlarge", "21.957642", 8),
        _instance("i-well", "p5.48xlarge", "55.04", 8),
        _instance("i-spot", "p5.48xlarge", "55.04", 8, **{"gpuplan-restartable": "true"}),
        _instance("i-dark", "g5.xlarge", "1.006", 1),
    ])  # fmt: skip
    fake.samples = {
        "i-one": _samples([95, *[0] * 7], 80, 8),
        "i-well": _samples([95] * 8, 85, 40),
        "i-spot": _samples([95] * 8, 85, 40),
    }
    return fake


def test_live_audit_batches_one_fetch_and_advises(catalog: Catalog) -> None:
    fake = _fake()
    policy = Policy.model_validate({"version": 1, "name": "ml"})
    result = live.audit_fleet([fake], catalog, AuditRule(), policy.audit, start=START,
                              end=END, period_minutes=60)  # fmt: skip
    assert [c.method for c in fake.calls] == ["list_instances", "fetch_utilisation"]
    kinds = {a.subject.instance_id: {v.kind.value for v in a.advice} for a in result.audits}
    assert kinds == {
        "i-one": {"one-busy-gpu"},
        "i-well": set(),
        # Restartable H100 work is cheaper on B200 (planner v2: 2.3x the throughput, as the
        # measured H100 -> B200 ratios, for less than 2.3x the price).
        "i-spot": {"spot-with-checkpoints", "newer-generation"},
    }
    assert result.skipped == ["i-dark: no GPU metrics (unknown)"]
    one = next(a for a in result.audits if a.subject.instance_id == "i-one")
    assert one.split.paid == Decimal("21.957642") * 168
    assert one.resize is not None and one.resize.offer.gpu_memory_gb >= 40 * 0.8


def test_alerts_once_per_instance_and_period(catalog: Catalog, tmp_path: Path) -> None:
    policy = Policy.model_validate({"version": 1, "name": "ml", "audit": {"alerts": True}})
    result = live.audit_fleet([_fake()], catalog, AuditRule(), policy.audit, start=START,
                              end=END, period_minutes=60)  # fmt: skip
    recorder = Recorder()
    with Ledger(tmp_path / "l.db") as ledger:
        first = live.send_alerts(policy, result.audits, ledger, recorder, END)
        again = live.send_alerts(policy, result.audits, ledger, recorder, END + timedelta(hours=1))
    assert [(o.instance_id, o.status) for o in first] == [("i-one", "sent")]
    assert [(o.instance_id, o.status) for o in again] == [("i-one", "already-sent")]
    assert len(recorder.sent) == 1 and "i-one" in recorder.sent[0] and "/month" in recorder.sent[0]


def test_period_key_is_aligned() -> None:
    assert live.period_key(END, 7) == live.period_key(END + timedelta(hours=1), 7)
    assert live.period_key(END, 7) != live.period_key(END + timedelta(days=7), 7)


def test_cli_live_path_over_the_fake_fleet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    started = (datetime.now(UTC) - timedelta(days=10)).isoformat()
    inst = {"provider": "aws", "account": "1", "region": "us-east-1", "instance_id": "i-low",
            "instance_type": "p5.48xlarge", "state": "running", "started_at": started,
            "gpu": "H100", "gpu_count": 8, "hourly_usd": "55.04",
            "labels": {"team": "research"}}  # fmt: skip
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps({"instances": [inst], "utilisation_percent": {"i-low": 20}}))
    policy = tmp_path / "p.yaml"
    policy.write_text("version: 1\nname: t\nscope:\n  aws: {regions: [us-east-1]}\n"
                      "audit: {alerts: true}\nidle: {allow_data_loss: false}\n")  # fmt: skip
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(fleet))
    code = main(["audit", "--policy", str(policy), "--since", "7d", "--json",
                 "--db", str(tmp_path / "l.db")])  # fmt: skip
    out = capsys.readouterr()
    assert code == 0, out.err
    (row,) = json.loads(out.out)["instances"]
    assert row["instance_id"] == "i-low"
    assert abs(float(row["busy_usd"]) - 0.2 * float(row["paid_usd"])) < 0.01 * float(
        row["paid_usd"]
    )
    assert "i-low: no-webhook" in out.err
    assert [g["name"] for g in json.loads(out.out)["groups"]] == ["1"]  # the account
    assert main(["audit", "--policy", str(policy), "--by", "label:team", "--json",
                 "--db", str(tmp_path / "l.db")]) == 0  # fmt: skip
    out = capsys.readouterr()
    assert [g["name"] for g in json.loads(out.out)["groups"]] == ["research"]
    assert "i-low: no-webhook" in out.err


def test_newer_generation_priced_with_the_planner(catalog: Catalog) -> None:
    from gpuplan.core.audit.advice import audit_instance
    from gpuplan.core.audit.split import Subject, Usage
    from gpuplan.core.planner.efficiency import base_mfu

    usage = Usage(60, [(95.0,) * 8] * 168, [70.0] * 168, [40.0] * 168)
    subject = Subject("i-v100", Provider.AWS, "us-east-1", "p3.16xlarge", Decimal("24.48"),
                      gpu_count=8, restartable=True)  # fmt: skip
    audit = audit_instance(subject, usage, catalog.offers, AuditRule(), catalog.gpus)
    (newer,) = [a for a in audit.advice if a.kind.value == "newer-generation"]
    # The cheapest move for the work, priced with the planner's throughput ratio (planner v2:
    # peak-proportional, so H100's 7.9x over V100 beats A100's 2.5x at their prices).
    count, target = re.search(r"\((\d+)x ([^)]+)\)", newer.action).groups()  # type: ignore[union-attr]
    offer = next(
        o
        for o in catalog.offers
        if f"{o.instance_type} " in newer.action + " "
        and (o.provider, o.region) == (Provider.AWS, "us-east-1")
    )
    v100, new_gpu = catalog.gpus.resolve("V100-16GB"), catalog.gpus.resolve(target)
    peak = new_gpu.peak_tflops(Precision.BF16) or 0.0
    speedup = (peak * base_mfu(new_gpu)[0] * int(count)) / (125.0 * base_mfu(v100)[0] * 8)
    assert f"x{speedup:.2f}" in newer.evidence
    hours = 168 * 0.05 + 168 * 0.95 / speedup
    price = offer.price(PricingModel.ON_DEMAND)
    assert price is not None
    saving = Decimal("24.48") * 168 - price * Decimal(str(hours))
    assert abs(newer.usd_per_month - saving * 730 / 168) < 50
    # not labelled restartable: the job cannot move, no advice (it is well used)
    fixed = Subject("i-v100", Provider.AWS, "us-east-1", "p3.16xlarge", Decimal("24.48"),
                    gpu_count=8)  # fmt: skip
    assert audit_instance(fixed, usage, catalog.offers, AuditRule(), catalog.gpus).advice == ()
