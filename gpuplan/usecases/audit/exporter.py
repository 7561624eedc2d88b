"""``gpuplan exporter``: gpuplan's figures for Prometheus, read from the ledger.

One read of the ledger (and of the catalog's dates) per scrape: the latest stop-idle
run of each policy (its decisions: GPUs and dollars per hour by verdict), the latest
run of each kind (when, status, actions), run and action counts, the month's latest
budget snapshot, and the catalog's price ages. No cloud is called and no credential is
needed: the scheduled job does the surveying, the exporter publishes what it recorded.

Two ways to publish, both from :func:`exposition_text`: a long-running ``/metrics``
endpoint (:func:`serve`, for a Deployment scraped by Prometheus or a ServiceMonitor),
and a file for node_exporter's textfile collector (:func:`write_textfile`, written
atomically after each scheduled run: no process to keep alive beside a cron job).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpuplan.core.audit.exposition import (
    Billed,
    Family,
    LastRun,
    LedgerFacts,
    MetricKind,
    PriceAge,
    Sample,
    SeenInstance,
    Spend,
    families,
)
from gpuplan.core.lifecycle.plan import DONE
from gpuplan.ledger import Ledger, LedgerError
from gpuplan.ledger.store import existing_ledger

if TYPE_CHECKING:
    from prometheus_client.registry import Collector

RUNNING = "running"
_DONE = tuple(outcome.value for outcome in DONE.values())
"""Outcomes after which an instance no longer runs (stopped, hibernated, ...)."""


def read_facts(ledger: Ledger, now: datetime) -> LedgerFacts:
    """What a scrape publishes from the ledger (the catalog's ages are added apart)."""
    latest = _latest_stop_idle_runs(ledger)
    return LedgerFacts(
        seen=_seen(ledger, latest),
        last_runs=_last_runs(ledger),
        runs={
            (str(p), str(k), str(s)): int(n)
            for p, k, s, n in ledger.select(
                "SELECT policy, kind, status, COUNT(*) FROM runs GROUP BY policy, kind, status"
            )
        },
        actions={
            (str(p), str(c), str(a), str(o)): int(n)
            for p, c, a, o, n in ledger.select(
                "SELECT r.policy, a.provider, a.action, a.outcome, COUNT(*) FROM actions a"
                " JOIN runs r ON a.run_id = r.id WHERE r.dry_run = 0"
                " GROUP BY r.policy, a.provider, a.action, a.outcome"
            )
        },
        spend=_spend(ledger, now),
        billed=_billed(ledger, now),
    )


def _billed(ledger: Ledger, now: datetime) -> list[Billed]:
    """This month's stored bill per policy, provider and kind (migration 10's table)."""
    first = f"{now:%Y-%m}-01"
    out = []
    for policy, provider, kind, usd, through in ledger.select(
        "SELECT policy, provider, kind, usd, day FROM bill_lines WHERE day >= ?", (first,)
    ):
        try:
            out.append(Billed(str(policy), str(provider), str(kind), Decimal(usd),
                              date.fromisoformat(through)))  # fmt: skip
        except (ArithmeticError, ValueError, TypeError):
            continue  # a damaged row: `gpuplan bill reconcile` names it
    return _summed(out)


def _summed(rows: list[Billed]) -> list[Billed]:
    sums: dict[tuple[str, str, str], tuple[Decimal, date]] = {}
    for b in rows:
        usd, day = sums.get((b.policy, b.provider, b.kind), (Decimal(0), b.through))
        sums[(b.policy, b.provider, b.kind)] = (usd + b.usd, max(day, b.through))
    return [Billed(p, c, k, usd, day) for (p, c, k), (usd, day) in sorted(sums.items())]


def _latest_stop_idle_runs(ledger: Ledger) -> list[int]:
    """The newest stop-idle run of each (policy, shard): together, the whole fleet."""
    rows = ledger.select(
        "SELECT r.id FROM runs r WHERE r.kind = 'stop-idle' AND r.id = (SELECT MAX(q.id)"
        " FROM runs q WHERE q.kind = 'stop-idle' AND q.policy = r.policy"
        " AND q.shard = r.shard)"
    )
    return [int(row[0]) for row in rows]


def _seen(ledger: Ledger, run_ids: list[int]) -> list[SeenInstance]:
    if not run_ids:
        return []
    marks = ", ".join("?" for _ in run_ids)
    done = ", ".join("?" for _ in _DONE)
    # An instance the run stopped (or hibernated, ...) no longer runs: not counted.
    rows = ledger.select(
        "SELECT r.policy, d.provider, d.account, d.verdict, d.state, d.gpu_count,"
        " d.hourly_usd, d.labels, (SELECT COUNT(*) FROM actions a WHERE a.decision_id = d.id"
        f" AND a.outcome IN ({done})) FROM decisions d JOIN runs r ON d.run_id = r.id"
        f" WHERE d.run_id IN ({marks})",
        (*_DONE, *run_ids),
    )
    out = []
    for policy, provider, account, verdict, state, gpus, hourly, labels, acted in rows:
        try:
            raw = json.loads(labels or "{}")
            tags = {str(k): str(v) for k, v in raw.items()} if isinstance(raw, dict) else {}
            price = Decimal(hourly) if hourly not in (None, "") else None
        except (ValueError, ArithmeticError):
            continue  # a damaged row: `gpuplan history` names it; the gauge leaves it out
        out.append(
            SeenInstance(
                str(policy),
                str(provider),
                str(account or ""),
                str(verdict),
                state == RUNNING and not acted,
                float(gpus or 0),
                price,
                tags,
            )
        )
    return out


def _last_runs(ledger: Ledger) -> list[LastRun]:
    rows = ledger.select(
        "SELECT r.id, r.policy, r.kind, r.started_at, r.finished_at, r.status, r.dry_run"
        " FROM runs r WHERE r.id = (SELECT MAX(q.id) FROM runs q"
        " WHERE q.policy = r.policy AND q.kind = r.kind)"
    )
    out = []
    for run_id, policy, kind, started, finished, status, dry_run in rows:
        outcomes = {
            str(o): int(n)
            for o, n in ledger.select(
                "SELECT outcome, COUNT(*) FROM actions WHERE run_id = ? GROUP BY outcome",
                (run_id,),
            )
        }
        try:
            begun = datetime.fromisoformat(started)
            ended = datetime.fromisoformat(finished) if finished else None
        except (TypeError, ValueError):
            continue
        out.append(
            LastRun(str(policy), str(kind), begun, ended, str(status), bool(dry_run), outcomes)
        )
    return out


def _spend(ledger: Ledger, now: datetime) -> list[Spend]:
    month = f"{now:%Y-%m}"
    policies = ledger.select(
        "SELECT DISTINCT policy FROM spend_snapshots WHERE month = ?", (month,)
    )
    out = []
    for (policy,) in policies:
        last = ledger.last_spend(str(policy), month)
        if last is not None:
            out.append(
                Spend(
                    last.policy,
                    last.recorded_at,
                    last.month_to_date_usd,
                    last.forecast_usd,
                    last.monthly_usd,
                )
            )
    return out


def price_ages(catalog_dir: str | os.PathLike[str] | None) -> list[PriceAge]:
    """The oldest and newest ``as of`` of each provider's catalog rows."""
    from gpuplan.loaders.catalog import load_catalog

    oldest: dict[str, Any] = {}
    newest: dict[str, Any] = {}
    for offer in load_catalog(catalog_dir, fast=True).offers:
        name = offer.provider.value
        oldest[name] = min(oldest.get(name, offer.as_of), offer.as_of)
        newest[name] = max(newest.get(name, offer.as_of), offer.as_of)
    return [PriceAge(name, oldest[name], newest[name]) for name in sorted(oldest)]


def collect(
    db: str | None,
    environ: Mapping[str, str] | None,
    *,
    now: datetime,
    team_label: str,
    prices: list[PriceAge],
) -> list[Family]:
    """Every family for one scrape; an unreadable ledger is ``gpuplan_ledger_up 0``."""
    up = 1.0
    facts = LedgerFacts()
    try:
        ledger = existing_ledger(db, environ)
        if ledger is not None:
            with ledger:
                facts = read_facts(ledger, now)
    except LedgerError:
        up = 0.0
    facts = LedgerFacts(facts.seen, facts.last_runs, facts.runs, facts.actions, facts.spend, prices,
                        facts.billed)  # fmt: skip
    ledger_up = Family(
        "gpuplan_ledger_up",
        "1 when the exporter could read the ledger (or there is none yet), 0 when it could not.",
        MetricKind.GAUGE,
        (),
        [Sample((), up)],
    )
    return [*families(facts, now=now, team_label=team_label), ledger_up]


class LedgerCollector:
    """A ``prometheus_client`` collector reading the ledger on every scrape."""

    def __init__(
        self,
        db: str | None,
        environ: Mapping[str, str] | None,
        *,
        team_label: str,
        catalog_dir: str | None,
    ) -> None:
        self._db, self._environ, self._team = db, environ, team_label
        self._prices = price_ages(catalog_dir)  # the bundled catalog changes with an upgrade

    def families(self) -> list[Family]:
        """One scrape's families, read now."""
        return collect(
            self._db,
            self._environ,
            now=datetime.now(UTC),
            team_label=self._team,
            prices=self._prices,
        )

    def collect(self) -> Any:
        for family in self.families():
            yield _rendered(family)


def _rendered(family: Family) -> Any:
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    names = list(family.label_names)
    if family.kind is MetricKind.COUNTER:
        # prometheus_client appends _total to a counter's samples itself.
        out: Any = CounterMetricFamily(
            family.name.removesuffix("_total"), family.help, labels=names
        )
    else:
        out = GaugeMetricFamily(family.name, family.help, labels=names)
    for sample in family.samples:
        out.add_metric(list(sample.labels), sample.value)
    return out


def registry_for(collector: LedgerCollector) -> Any:
    """A registry holding only gpuplan's collector (no process or platform metrics)."""
    from prometheus_client import CollectorRegistry

    registry = CollectorRegistry(auto_describe=False)
    registry.register(_as_collector(collector))
    return registry


def _as_collector(collector: LedgerCollector) -> Collector:
    return collector


def families_json(collector: LedgerCollector) -> list[dict[str, Any]]:
    """One scrape as plain records (``gpuplan exporter --json``)."""
    return [
        {
            "name": f.name,
            "type": f.kind.value,
            "help": f.help,
            "samples": [
                {"labels": dict(zip(f.label_names, s.labels, strict=True)), "value": s.value}
                for s in f.samples
            ],
        }
        for f in collector.families()
    ]


def exposition_text(collector: LedgerCollector) -> str:
    """The text exposition format of one scrape."""
    from prometheus_client import generate_latest

    return bytes(generate_latest(registry_for(collector))).decode("utf-8")


def write_textfile(collector: LedgerCollector, path: Path) -> None:
    """Write one scrape for node_exporter's textfile collector, atomically (a temporary
    file in the same folder, then a rename: the collector never reads half a file)."""
    from prometheus_client import write_to_textfile

    write_to_textfile(str(path), registry_for(collector))


def serve(collector: LedgerCollector, host: str, port: int) -> tuple[Any, Any]:
    """Serve ``/metrics`` on ``host:port`` in a daemon thread: (server, thread)."""
    from prometheus_client import start_http_server

    return start_http_server(port, addr=host, registry=registry_for(collector))
