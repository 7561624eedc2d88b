"""What gpuplan exports to Prometheus: metric families built from facts the ledger holds.

Pure: the use case reads the ledger and the catalog and passes plain facts in; this
module names the metrics, bounds their labels and returns :class:`Family` values that
the edge renders (``prometheus_client``). Nothing here calls a cloud: a scrape costs
one read of the ledger.

Names follow the Prometheus conventions: a ``gpuplan_`` prefix, the unit in the name
(``_dollars``, ``_seconds``, ``_ratio``), ``_total`` only on counters, base units
(seconds, not days). Cardinality is bounded and documented in docs/exporter.md: the
labels are ``policy`` (a handful), ``provider`` (the registered clouds), ``account``
(an account, project or subscription id: allowed, never a secret), ``team`` (the value
of one tag, at most :data:`MAX_TEAMS` values by dollars, the rest ``other``),
``verdict`` (the :class:`gpuplan.core.lifecycle.idle.IdleVerdict` values), ``kind``, ``status``,
``action`` and ``outcome`` (closed sets). Label values pass :func:`label_value`:
secrets redacted, control characters escaped, at most :data:`MAX_LABEL` characters.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from decimal import Decimal
from enum import StrEnum

from gpuplan.core.wording import shown

MAX_TEAMS = 20
"""Team label values kept per scrape (most dollars per hour first); the rest: ``other``."""
MAX_LABEL = 63
"""A label value longer than this is cut (a tag value can be 256 characters)."""
NO_TEAM = "none"
OTHER_TEAM = "other"
FLEET_LABELS = ("policy", "provider", "account", "team", "verdict")


class MetricKind(StrEnum):
    GAUGE = "gauge"
    COUNTER = "counter"


@dataclass(frozen=True)
class Sample:
    labels: tuple[str, ...]
    """Values in the order of the family's ``label_names``."""
    value: float


@dataclass(frozen=True)
class Family:
    """One metric: its name, help text, type, label names and samples."""

    name: str
    help: str
    kind: MetricKind
    label_names: tuple[str, ...]
    samples: list[Sample] = field(default_factory=list)


@dataclass(frozen=True)
class SeenInstance:
    """One instance as the latest stop-idle run of its policy recorded it."""

    policy: str
    provider: str
    account: str
    verdict: str
    running: bool
    gpus: float
    hourly_usd: Decimal | None
    labels: Mapping[str, str]


@dataclass(frozen=True)
class LastRun:
    """The latest run of one kind for one policy (any shard)."""

    policy: str
    kind: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    dry_run: bool
    outcomes: Mapping[str, int]
    """Action rows of that run by outcome (``stopped``, ``deferred``, ``failed`` ...)."""


@dataclass(frozen=True)
class Spend:
    """The month's latest spend snapshot of one policy (``gpuplan budget``)."""

    policy: str
    recorded_at: datetime
    month_to_date_usd: Decimal
    forecast_usd: Decimal
    monthly_usd: Decimal | None


@dataclass(frozen=True)
class Billed:
    """This month's stored bill of one policy, provider and kind (``gpuplan bill sync``)."""

    policy: str
    provider: str
    kind: str
    """A closed set: instance, disk, commitment, discount, other."""
    usd: Decimal
    through: date
    """The bill's last day."""


@dataclass(frozen=True)
class PriceAge:
    """The oldest and newest ``as of`` among one provider's catalog rows."""

    provider: str
    oldest: date
    newest: date


@dataclass(frozen=True)
class LedgerFacts:
    """Everything a scrape reads, as plain values."""

    seen: Sequence[SeenInstance] = ()
    last_runs: Sequence[LastRun] = ()
    runs: Mapping[tuple[str, ...], int] = field(default_factory=dict)
    """Run count by (policy, kind, status)."""
    actions: Mapping[tuple[str, ...], int] = field(default_factory=dict)
    """Applied action rows by (policy, provider, action, outcome)."""
    spend: Sequence[Spend] = ()
    prices: Sequence[PriceAge] = ()
    billed: Sequence[Billed] = ()


def label_value(text: str) -> str:
    """A label value safe to publish: secrets redacted, controls escaped, bounded."""
    value = shown(text).replace("\n", "\\n")
    return value if len(value) <= MAX_LABEL else value[: MAX_LABEL - 1] + "~"


def families(facts: LedgerFacts, *, now: datetime, team_label: str) -> list[Family]:
    """Every family gpuplan exports, from one read of the ledger and the catalog."""
    return [
        *_fleet(facts.seen, team_label),
        _coverage(facts.seen),
        *_runs(facts, now),
        *_budget(facts.spend),
        *_billed(facts.billed),
        _price_age(facts.prices, now),
    ]


def _billed(billed: Iterable[Billed]) -> list[Family]:
    amounts: list[Sample] = []
    through: dict[tuple[str, ...], float] = {}
    for b in billed:
        key = (label_value(b.policy), label_value(b.provider))
        amounts.append(Sample((*key, label_value(b.kind)), float(b.usd)))
        day = datetime(b.through.year, b.through.month, b.through.day, tzinfo=UTC)
        through[key] = max(through.get(key, 0.0), day.timestamp())
    g = MetricKind.GAUGE
    return [
        Family("gpuplan_bill_month_to_date_dollars",
               "This month's actual spend from the clouds' cost APIs (bill sync), by kind.",
               g, ("policy", "provider", "kind"), amounts),
        Family("gpuplan_bill_billed_through_timestamp_seconds",
               "Start of the last day the stored bill covers (cost data lags about a day).",
               g, ("policy", "provider"),
               [Sample(k, v) for k, v in sorted(through.items())]),
    ]  # fmt: skip


def _teams(seen: Sequence[SeenInstance], team_label: str) -> dict[str, str]:
    """Team value -> the value published (the :data:`MAX_TEAMS` costliest kept)."""
    dollars: dict[str, Decimal] = defaultdict(Decimal)
    for s in seen:
        dollars[s.labels.get(team_label) or NO_TEAM] += s.hourly_usd or Decimal(0)
    ranked = sorted(dollars, key=lambda team: (-dollars[team], team))
    return {t: (label_value(t) if i < MAX_TEAMS else OTHER_TEAM) for i, t in enumerate(ranked)}


def _fleet(seen: Sequence[SeenInstance], team_label: str) -> list[Family]:
    teams = _teams(seen, team_label)
    instances: dict[tuple[str, ...], float] = defaultdict(float)
    gpus: dict[tuple[str, ...], float] = defaultdict(float)
    dollars: dict[tuple[str, ...], float] = defaultdict(float)
    for s in seen:
        if not s.running:
            continue
        team = teams[s.labels.get(team_label) or NO_TEAM]
        key = (
            label_value(s.policy),
            label_value(s.provider),
            label_value(s.account),
            team,
            label_value(s.verdict),
        )
        instances[key] += 1
        gpus[key] += s.gpus
        dollars[key] += float(s.hourly_usd or 0)
    scope = "running GPU instances in the latest stop-idle run of each policy"
    return [
        _family("gpuplan_instances", f"Number of {scope}, by verdict.", instances),
        _family("gpuplan_gpus", f"GPUs of the {scope}, by verdict.", gpus),
        _family(
            "gpuplan_cost_dollars_per_hour",
            f"List-price dollars per hour of the {scope}, by verdict (idle: waste).",
            dollars,
        ),
    ]


def _family(name: str, text: str, values: Mapping[tuple[str, ...], float]) -> Family:
    samples = [Sample(key, value) for key, value in sorted(values.items())]
    return Family(name, text, MetricKind.GAUGE, FLEET_LABELS, samples)


def _coverage(seen: Sequence[SeenInstance]) -> Family:
    """Share of running instances whose metrics gave a verdict (not ``unknown``)."""
    running: dict[str, int] = defaultdict(int)
    known: dict[str, int] = defaultdict(int)
    for s in seen:
        if s.running:
            running[s.policy] += 1
            known[s.policy] += s.verdict != "unknown"
    samples = [Sample((label_value(p),), known[p] / n) for p, n in sorted(running.items()) if n]
    return Family(
        "gpuplan_metrics_coverage_ratio",
        "Share of running GPU instances whose metrics gave a verdict (not unknown), per policy.",
        MetricKind.GAUGE,
        ("policy",),
        samples,
    )


def _runs(facts: LedgerFacts, now: datetime) -> list[Family]:
    last = [(label_value(r.policy), label_value(r.kind)) for r in facts.last_runs]
    pk = ("policy", "kind")
    done = [
        Sample(key, (r.finished_at or r.started_at).timestamp())
        for key, r in zip(last, facts.last_runs, strict=True)
    ]
    ok = [
        Sample(key, float(r.status == "ok")) for key, r in zip(last, facts.last_runs, strict=True)
    ]
    dry = [Sample(key, float(r.dry_run)) for key, r in zip(last, facts.last_runs, strict=True)]
    outcomes = [
        Sample((*key, label_value(outcome)), float(count))
        for key, r in zip(last, facts.last_runs, strict=True)
        for outcome, count in sorted(r.outcomes.items())
    ]
    return [
        Family(
            "gpuplan_last_run_timestamp_seconds",
            "When the latest run of each kind ended (Unix time; its start while it runs).",
            MetricKind.GAUGE,
            pk,
            done,
        ),
        Family(
            "gpuplan_last_run_success",
            "1 when the latest run's status is ok, 0 when it failed, aborted or runs still.",
            MetricKind.GAUGE,
            pk,
            ok,
        ),
        Family(
            "gpuplan_last_run_dry_run",
            "1 when the latest run was a dry run.",
            MetricKind.GAUGE,
            pk,
            dry,
        ),
        Family(
            "gpuplan_last_run_actions",
            "Action rows of the latest run by outcome (stopped, deferred, skipped, failed ...).",
            MetricKind.GAUGE,
            (*pk, "outcome"),
            outcomes,
        ),
        _counter(
            "gpuplan_runs_total",
            "Runs recorded in the ledger.",
            ("policy", "kind", "status"),
            facts.runs,
        ),
        _counter(
            "gpuplan_actions_total",
            "Actions applied runs recorded, by outcome.",
            ("policy", "provider", "action", "outcome"),
            facts.actions,
        ),
    ]


def _counter(
    name: str, text: str, names: tuple[str, ...], counts: Mapping[tuple[str, ...], int]
) -> Family:
    samples = [
        Sample(tuple(label_value(v) for v in key), float(n)) for key, n in sorted(counts.items())
    ]
    return Family(name, text, MetricKind.COUNTER, names, samples)


def _budget(spend: Iterable[Spend]) -> list[Family]:
    mtd, forecast, limit, recorded = [], [], [], []
    for s in spend:
        key = (label_value(s.policy),)
        mtd.append(Sample(key, float(s.month_to_date_usd)))
        forecast.append(Sample(key, float(s.forecast_usd)))
        recorded.append(Sample(key, s.recorded_at.timestamp()))
        if s.monthly_usd is not None:
            limit.append(Sample(key, float(s.monthly_usd)))
    g, p = MetricKind.GAUGE, ("policy",)
    return [
        Family(
            "gpuplan_budget_month_to_date_dollars",
            "Month-to-date spend the latest budget run estimated.",
            g,
            p,
            mtd,
        ),
        Family(
            "gpuplan_budget_forecast_dollars",
            "The month's spend at the current rate (budget run's forecast).",
            g,
            p,
            forecast,
        ),
        Family(
            "gpuplan_budget_limit_dollars",
            "The policy's budget.monthly_usd (absent: no limit).",
            g,
            p,
            limit,
        ),
        Family(
            "gpuplan_budget_recorded_timestamp_seconds",
            "When the latest budget snapshot was recorded (Unix time).",
            g,
            p,
            recorded,
        ),
    ]


def _price_age(prices: Iterable[PriceAge], now: datetime) -> Family:
    today = now.date()
    samples = []
    for p in prices:
        for which, day in (("oldest", p.oldest), ("newest", p.newest)):
            age = max(0, (today - day).days) * 86400.0
            samples.append(Sample((label_value(p.provider), which), age))
    return Family(
        "gpuplan_catalog_price_age_seconds",
        "Age of the oldest and newest price in the catalog, per provider.",
        MetricKind.GAUGE,
        ("provider", "which"),
        samples,
    )
