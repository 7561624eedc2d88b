"""Budget: the pure estimate, alerts once per threshold per month, the ``budget`` command."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuplan.cli.main import main
from gpuplan.core.audit.budget import estimate_spend, month_bounds, thresholds_crossed
from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger, SpendRecord
from gpuplan.providers.webhook import WebhookNotifier
from gpuplan.usecases.audit.budget import run_budget
from gpuplan.usecases.clouds.adapters import CloudEntry, ProviderRegistry
from gpuplan.usecases.policy import remaining_monthly_budget
from tests.fakes.policy_fixtures import HookServer

NOW = datetime(2026, 12, 11, 0, 0, tzinfo=UTC)  # 240 h into December, 504 h left


def inst(instance_id: str, **extra: Any) -> GpuInstance:
    fields: dict[str, Any] = {
        "provider": "aws",
        "account": "123456789012",
        "region": "us-east-1",
        "instance_id": instance_id,
        "instance_type": "p5.48xlarge",
        "state": "running",
        "started_at": "2026-12-01T00:00:00Z",
        "labels": {"team": "research"},
        "hourly_usd": "10",
    }
    fields.update(extra)
    return GpuInstance.model_validate(fields)


def price(instance: GpuInstance) -> Decimal | None:
    return instance.hourly_usd


def policy(monthly: int = 5000, alerts: tuple[int, ...] = (50, 80, 100), **extra: Any) -> Policy:
    data: dict[str, Any] = {
        "version": 1,
        "name": "team-a",
        "scope": {"aws": {"regions": ["us-east-1"]}, "match_labels": {"team": "research"}},
        "budget": {"monthly_usd": monthly, "alert_at_percent": list(alerts)},
    }
    data.update(extra)
    return Policy.model_validate(data)


def test_month_bounds_handle_december() -> None:
    assert month_bounds(NOW) == (
        datetime(2026, 12, 1, tzinfo=UTC),
        datetime(2027, 1, 1, tzinfo=UTC),
    )


@pytest.mark.parametrize(
    ("instance", "hours", "note"),
    [
        (inst("a"), Decimal(240), "since the start of the month"),
        (inst("b", started_at="2026-11-03T00:00:00Z"), Decimal(240), "since the start"),
        (inst("c", started_at="2026-12-10T12:00:00Z"), Decimal(12), "since its last start"),
        (inst("d", state="stopped"), Decimal(0), "not billing now"),
        (inst("e", started_at=None), Decimal(0), "start time unknown"),
        (inst("f", state="terminated"), Decimal(0), "not billing now"),
    ],
)
def test_billed_hours_per_instance(instance: GpuInstance, hours: Decimal, note: str) -> None:
    estimate = estimate_spend([instance], price, NOW, Decimal(5000))
    [row] = estimate.instances
    assert row.hours == hours
    assert note in row.note
    assert estimate.month_to_date_usd == hours * 10


def test_forecast_adds_the_current_burn_to_month_end() -> None:
    fleet = [inst("a"), inst("b", state="stopped"), inst("c", hourly_usd=None)]
    estimate = estimate_spend(fleet, price, NOW, Decimal(5000))
    assert estimate.month_to_date_usd == Decimal("2400.00")
    assert estimate.burn_hourly_usd == Decimal("10.00")
    assert estimate.forecast_usd == Decimal("7440.00")  # 2400 + 10 x 504 h
    assert estimate.percent_used == Decimal("48.0")
    assert estimate.percent_forecast == Decimal("148.8")
    assert estimate.unpriced == 1
    assert "price unknown" in estimate.instances[2].note


def test_naive_now_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        estimate_spend([], price, datetime(2026, 12, 1))


@pytest.mark.parametrize(
    ("spent", "crossed"),
    [("0", []), ("2499.99", []), ("2500", [50]), ("4000", [50, 80]), ("9000", [50, 80, 100])],
)
def test_thresholds_crossed(spent: str, crossed: list[int]) -> None:
    assert thresholds_crossed(Decimal(spent), Decimal(5000), [100, 50, 80]) == crossed
    assert thresholds_crossed(Decimal(spent), None, [50]) == []


def entry(provider: Provider, scopes: Any) -> CloudEntry:
    return CloudEntry(provider, scopes, steps={}, catalog_file="", permission_file="")


class FakeRegistry(ProviderRegistry):
    def __init__(self, fleet: list[GpuInstance]) -> None:
        super().__init__()
        from gpuplan.providers.fake import FakeAdapter

        self.fakes = {p: FakeAdapter(p, fleet) for p in Provider}
        for provider, fake in self.fakes.items():
            self.register(entry(provider, lambda _context, fake=fake: {fake.scope: fake}))


def run(pol: Policy, fleet: list[GpuInstance], ledger: Ledger, hook: str | None, now: datetime):
    return run_budget(
        pol,
        ledger=ledger,
        registry=FakeRegistry(fleet),
        environ={},
        now=now,
        notifier=None if hook is None else WebhookNotifier(hook, timeout=2, allow_insecure=True),
    )


def test_alerts_fire_once_per_threshold_per_month(tmp_path: Path, hook_server: HookServer) -> None:
    pol = policy()
    fleet = [inst("a"), inst("x", labels={"team": "other"})]  # x is out of scope
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        first = run(pol, fleet, ledger, hook_server.url, NOW)  # 2400 of 5000: none
        assert first.alerts == [] and first.out_of_scope == 1
        later = NOW + timedelta(hours=10)  # 2500: 50%
        second = run(pol, fleet, ledger, hook_server.url, later)
        assert [(a.threshold_percent, a.status) for a in second.alerts] == [(50, "sent")]
        third = run(pol, fleet, ledger, hook_server.url, later + timedelta(hours=1))
        assert [(a.threshold_percent, a.status) for a in third.alerts] == [(50, "already-sent")]
        assert len(hook_server.received) == 1
        text = hook_server.received[0]["body"]["text"]
        assert "team-a" in text and "50%" in text and "$2,500.00" in text
        big = [inst("a", hourly_usd="100")]
        fourth = run(pol, big, ledger, hook_server.url, later)  # 25000: 80 and 100 new
        assert [(a.threshold_percent, a.status) for a in fourth.alerts] == [
            (50, "already-sent"),
            (80, "sent"),
            (100, "sent"),
        ]
        january = datetime(2027, 1, 31, tzinfo=UTC)
        fifth = run(
            pol, [inst("j", started_at="2027-01-01T00:00:00Z")], ledger, hook_server.url, january
        )
        assert [a.status for a in fifth.alerts] == ["sent"] * 3  # a new month
        assert len(hook_server.received) == 6
        assert ledger.count("spend_snapshots") == 5


def test_alert_to_a_dead_webhook_is_reported_and_retried_next_run(
    tmp_path: Path, closed_port_url: str, hook_server: HookServer
) -> None:
    pol = policy(monthly=1000)
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        down = run(pol, [inst("a")], ledger, closed_port_url, NOW)
        assert [a.status for a in down.alerts] == ["failed", "failed", "failed"]
        assert down.failed and down.recorded  # the spend is still recorded
        assert "unreachable" in down.alerts[0].detail
        up = run(pol, [inst("a")], ledger, hook_server.url, NOW)
        assert [a.status for a in up.alerts] == ["sent", "sent", "sent"]


def test_one_provider_failing_to_list_does_not_stop_the_other(tmp_path: Path) -> None:
    pol = policy(scope={"aws": {"regions": ["us-east-1"]}, "gcp": {"projects": ["p"]}})
    registry = FakeRegistry([inst("a"), inst("g", provider="gcp", account="p", labels={})])
    registry.fakes[Provider.AWS].failures["list_instances"] = "us-east-1: throttled"
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        outcome = run_budget(
            pol, ledger=ledger, registry=registry, environ={}, now=NOW, notifier=None
        )
    assert outcome.problems == ["aws (in-memory fake): listing failed: us-east-1: throttled"]
    assert [s.instance.instance_id for s in outcome.estimate.instances] == ["g"]
    assert outcome.failed and not outcome.recorded


def test_provider_failure_is_reported_and_spend_not_recorded(tmp_path: Path) -> None:
    pol = policy(scope={"aws": {"regions": ["us-east-1"]}, "gcp": {"projects": ["p"]}})
    registry = ProviderRegistry()  # nothing registered: adapters not available
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        outcome = run_budget(
            pol, ledger=ledger, registry=registry, environ={}, now=NOW, notifier=None
        )
        assert outcome.problems == [
            "aws: adapter not available",
            "gcp: adapter not available",
        ]
        assert outcome.failed and not outcome.recorded
        assert ledger.last_spend("team-a", "2026-12") is None


def test_remaining_monthly_budget_says_where_it_came_from(tmp_path: Path) -> None:
    pol = policy(monthly=5000)
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        amount, why = remaining_monthly_budget(pol, ledger, NOW)
        assert amount == Decimal(5000)
        assert why.startswith("whole budget, no spend recorded")
        ledger.record_spend(
            SpendRecord("team-a", "2026-12", NOW, Decimal("1234.50"), Decimal("0"), None, 1)
        )
        amount, why = remaining_monthly_budget(pol, ledger, NOW)
        assert amount == Decimal("3765.50")
        assert why.startswith("monthly_usd 5000 minus the month's last recorded spend 1234.50")
        next_month, _ = remaining_monthly_budget(pol, ledger, datetime(2027, 1, 2, tzinfo=UTC))
        assert next_month == Decimal(5000)
    no_budget = Policy.model_validate({"version": 1, "name": "x"})
    assert remaining_monthly_budget(no_budget, None, NOW)[0] is None
    assert remaining_monthly_budget(pol, None, NOW) == (
        Decimal(5000),
        remaining_monthly_budget(pol, None, NOW)[1],
    )


FLEET = [
    {
        "provider": "aws",
        "account": "123456789012",
        "region": "us-east-1",
        "instance_id": "i-0a",
        "instance_type": "p5.48xlarge",
        "state": "running",
        "started_at": "2026-11-20T08:00:00Z",
        "labels": {"team": "research"},
        "hourly_usd": "55.04",
    },
    {
        "provider": "aws",
        "account": "123456789012",
        "region": "eu-west-1",
        "instance_id": "i-0b",
        "instance_type": "g6.xlarge",
        "state": "running",
        "started_at": "2026-12-01T08:00:00Z",
        "labels": {"team": "research"},
        "hourly_usd": "0.80",
    },
]


def test_budget_command_with_the_fake_fleet_hook(
    tmp_path: Path,
    write_policy: Callable[[str | bytes, str], Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    hook_server: HookServer,
) -> None:
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps(FLEET))
    monkeypatch.setenv("GPUPLAN_FAKE_FLEET", str(fleet))
    monkeypatch.setenv("HOOK", hook_server.url)
    path = write_policy(
        "version: 1\nname: team-a\nscope: {aws: {regions: [us-east-1]}}\n"
        "idle: {allow_data_loss: false}\n"
        "budget: {monthly_usd: 100}\nenv_allow: [HOOK]\n"
        "notify: {webhook_url: '${HOOK}', allow_insecure_webhook: true}\n",
        "p.yaml",
    )
    db = tmp_path / "l.sqlite3"
    assert main(["budget", "--policy", str(path), "--json", "--db", str(db)]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [i["instance_id"] for i in record["instances"]] == ["i-0a"]
    assert record["out_of_scope"] == 1 and record["recorded"] is True
    assert record["month_to_date_usd"] > 100  # p5 running since before this month
    assert [a["status"] for a in record["alerts"]] == ["sent", "sent", "sent"]
    assert record["cannot_see"]
    assert main(["budget", "--policy", str(path), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "alert 50%: already-sent" in out and "Cannot see:" in out
    assert len(hook_server.received) == 3
    with Ledger(db) as ledger:
        assert ledger.count("spend_snapshots") == 2


def test_budget_command_reports_each_provider_it_cannot_list(
    write_policy: Callable[[str | bytes, str], Path],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    db_path: Path,
) -> None:
    # Whatever adapters are registered, none can list here (no credentials, loopback
    # only): each provider gets its own error line, the run goes on and exits 1.
    monkeypatch.delenv("GPUPLAN_FAKE_FLEET", raising=False)
    for name in (
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
        "AZURE_CLIENT_ID",
        "GOOGLE_APPLICATION_CREDENTIALS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(db_path.parent / "none"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(db_path.parent / "none"))
    path = write_policy(
        "version: 1\nname: team-a\nscope:\n  aws: {regions: [us-east-1]}\n"
        "  azure: {subscriptions: [00000000-0000-0000-0000-000000000000]}\n"
        "idle: {allow_data_loss: false}\n",
        "p.yaml",
    )
    assert main(["budget", "--policy", str(path)]) == 1
    captured = capsys.readouterr()
    assert "gpuplan: error: aws us-east-1: listing failed: DescribeInstances" in captured.err
    assert (
        "gpuplan: error: azure 00000000-0000-0000-0000-000000000000: listing failed" in captured.err
    )
    assert "Traceback" not in captured.err
    assert "not recorded in the ledger" in captured.out
    assert db_path.exists()  # GPUPLAN_DB honoured


def test_budget_command_with_a_broken_policy_exits_2(
    write_policy: Callable[[str | bytes, str], Path],
    capsys: pytest.CaptureFixture[str],
    db_path: Path,
) -> None:
    path = write_policy("version: 1\nname: x\nbudget: {monthly_usd: 0}\n", "p.yaml")
    assert main(["budget", "--policy", str(path)]) == 2
    assert f"{path}:3:23: budget.monthly_usd: must be more than 0 USD" in capsys.readouterr().err


def test_pricing_falls_back_to_the_catalog_by_pricing_model() -> None:
    from gpuplan.core.catalog.offers import Offer
    from gpuplan.usecases.audit.budget import catalog_pricer

    offer = Offer(
        provider=Provider.AWS,
        instance_type="g6.xlarge",
        region="us-east-1",
        gpu="L4",
        gpu_count=1,
        gpu_memory_gb=24,
        vcpus=4,
        memory_gb=16,
        on_demand_hourly=Decimal("0.80"),
        spot_hourly=Decimal("0.30"),
        as_of=datetime(2026, 12, 1).date(),
        source="test",
    )

    class OneOffer:
        offers = (offer,)

    pricer = catalog_pricer(OneOffer())  # type: ignore[arg-type]
    spot = inst("s", instance_type="g6.xlarge", hourly_usd=None, pricing=PricingModel.SPOT)
    assert pricer(spot) == Decimal("0.30")
    assert pricer(inst("o", instance_type="g6.xlarge", hourly_usd=None)) == Decimal("0.80")
    assert pricer(inst("u", instance_type="zz", hourly_usd=None)) is None
    assert pricer(inst("p", hourly_usd="1.5", state=InstanceState.RUNNING)) == Decimal("1.5")


def test_registry_reports_a_factory_error_and_the_fake_hook_replaces_adapters(
    tmp_path: Path,
) -> None:
    from gpuplan.core.errors import InputError

    def broken(_context: Any) -> Any:
        raise InputError("no credentials for profile 'x'")

    registry = ProviderRegistry()
    registry.register(entry(Provider.AWS, broken))
    assert Provider.AWS in registry and Provider.GCP not in registry
    pol = policy()
    built = registry.build(pol, None, {})
    assert built.adapters == []
    assert built.problems == ["aws: no credentials for profile 'x'"]
    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps(FLEET))
    built = registry.build(pol, None, {"GPUPLAN_FAKE_FLEET": str(fleet)})
    assert built.problems == [] and [a.provider for a in built.adapters] == [Provider.AWS]
    assert {i.instance_id for i in built.adapters[0].list_instances()} == {"i-0a", "i-0b"}
