"""The exporter's families: names, label bounds, what counts as running, coverage."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal

from gpuplan.core.audit.exposition import (
    MAX_LABEL,
    MAX_TEAMS,
    OTHER_TEAM,
    Family,
    LastRun,
    LedgerFacts,
    MetricKind,
    PriceAge,
    SeenInstance,
    families,
    label_value,
)

NOW = datetime(2026, 12, 4, 12, tzinfo=UTC)


def seen(team: str, verdict: str = "idle", *, price: str = "1", running: bool = True,
         policy: str = "p") -> SeenInstance:  # fmt: skip
    return SeenInstance(policy, "aws", "111122223333", verdict, running, 1.0, Decimal(price),
                        {"team": team})  # fmt: skip


def by_name(facts: LedgerFacts) -> dict[str, Family]:
    return {f.name: f for f in families(facts, now=NOW, team_label="team")}


def test_names_follow_the_prometheus_conventions() -> None:
    for f in by_name(LedgerFacts()).values():
        assert f.name.startswith("gpuplan_") and f.name == f.name.lower()
        assert f.name.endswith("_total") == (f.kind is MetricKind.COUNTER), f.name
        assert "days" not in f.name and "hours" not in f.name.removesuffix("_per_hour")


def test_team_values_are_bounded_costliest_first() -> None:
    fleet = [seen(f"team{i:02d}", price=str(i + 1)) for i in range(MAX_TEAMS + 5)]
    teams = {s.labels[3] for s in by_name(LedgerFacts(seen=fleet))["gpuplan_instances"].samples}
    assert len(teams) == MAX_TEAMS + 1 and OTHER_TEAM in teams
    assert "team00" not in teams and f"team{MAX_TEAMS + 4:02d}" in teams  # cheapest go


def test_stopped_instances_cost_nothing_and_verdicts_split_dollars() -> None:
    fleet = [seen("a", "idle", price="2.5"), seen("a", "busy", price="10"),
             seen("a", "idle", price="99", running=False)]  # fmt: skip
    dollars = {s.labels[4]: s.value for s in by_name(LedgerFacts(seen=fleet))[
        "gpuplan_cost_dollars_per_hour"].samples}  # fmt: skip
    assert dollars == {"idle": 2.5, "busy": 10.0}


def test_coverage_is_the_share_with_a_verdict() -> None:
    fleet = [seen("a", "unknown"), seen("a", "idle"), seen("a", "busy"), seen("a", "busy")]
    [sample] = by_name(LedgerFacts(seen=fleet))["gpuplan_metrics_coverage_ratio"].samples
    assert sample.value == 0.75


def test_label_values_carry_no_secret_no_newline_and_are_bounded() -> None:
    assert "hunter2" not in label_value("https://bob:hunter2@hooks.example.com/x")
    assert "abc123" not in label_value("team?token=abc123")
    assert "\n" not in label_value("a\nb") and "\x1b" not in label_value("a\x1b[2Jb")
    assert len(label_value("x" * 500)) == MAX_LABEL


def test_last_run_and_price_age() -> None:
    run = LastRun("p", "stop-idle", NOW, None, "running", False, {"deferred": 3})
    facts = LedgerFacts(last_runs=[run], prices=[PriceAge("aws", date(2026, 11, 4),
                                                          date(2026, 12, 2))])  # fmt: skip
    got = by_name(facts)
    assert got["gpuplan_last_run_timestamp_seconds"].samples[0].value == NOW.timestamp()
    assert got["gpuplan_last_run_success"].samples[0].value == 0.0
    assert got["gpuplan_last_run_actions"].samples[0].labels == ("p", "stop-idle", "deferred")
    ages = {s.labels: s.value for s in got["gpuplan_catalog_price_age_seconds"].samples}
    assert ages == {("aws", "oldest"): 30 * 86400.0, ("aws", "newest"): 2 * 86400.0}
