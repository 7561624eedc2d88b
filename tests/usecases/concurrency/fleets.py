"""Fake fleets of many scopes for the concurrency tests (the in-memory provider)."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import Capability, GpuInstance, HostSamples
from gpuplan.core.policy import Policy
from gpuplan.providers.fake import FakeAdapter

NOW = datetime(2026, 12, 2, 10, 17, 30, tzinfo=UTC)


def instance(scope: int, k: int, **extra: Any) -> GpuInstance:
    return GpuInstance.model_validate(
        {
            "provider": "aws",
            "account": f"{scope:012d}",
            "region": f"region-{scope:03d}",
            "instance_id": f"i-{scope:03d}{k:05d}",
            "instance_type": "p5.48xlarge",
            "state": "running",
            "started_at": NOW - timedelta(days=2),
            "labels": {"team": "research"},
            "hourly_usd": Decimal("55.04"),
            "gpu": "H100",
            "gpu_count": 8,
            **extra,
        }
    )


def fake_scope(
    scope: int, size: int = 4, *, latency_s: float = 0.0, idle_every: int = 2
) -> FakeAdapter:
    """One scope of ``size`` instances; every ``idle_every``-th one idle, the rest busy."""
    fleet = [instance(scope, k) for k in range(size)]
    fake = FakeAdapter(
        Provider.AWS,
        fleet,
        capabilities=tuple(Capability),
        latency_s=latency_s,
        scope=f"aws fake-{scope:03d}",
    )
    fake.flat_percent = {
        i.instance_id: (1.0 if k % idle_every == 0 else 60.0) for k, i in enumerate(fleet)
    }
    return fake


def research_policy(**idle: Any) -> Policy:
    return Policy.model_validate(
        {
            "version": 1,
            "name": "research",
            "scope": {"aws": {"regions": ["us-east-1"]}},
            "idle": {"max_actions_per_run": 1000, **idle},
        }
    )


class CountingMetrics:
    """A metrics source that notes each fetch (ids, start, end, thread) and how many
    ran at once; each fetch takes ``seconds`` and answers ``percent`` per instance for
    every GPU and period."""

    def __init__(self, percent: dict[str, float], seconds: float = 0.05) -> None:
        self.percent = percent
        self.seconds = seconds
        self.lock = threading.Lock()
        self.now = 0
        self.most = 0
        self.fetches: list[tuple[tuple[str, ...], float, float, str]] = []

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]:
        began = time.monotonic()
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        time.sleep(self.seconds)
        with self.lock:
            self.now -= 1
            ids = tuple(i.instance_id for i in instances)
            self.fetches.append((ids, began, time.monotonic(), threading.current_thread().name))
        periods: list[datetime] = []
        moment = start
        while moment < end:
            periods.append(moment)
            moment += timedelta(minutes=period_minutes)
        return {
            i.instance_id: HostSamples(utilisation={
                str(g): dict.fromkeys(periods, self.percent[i.instance_id]) for g in range(8)
            })
            for i in instances
            if i.instance_id in self.percent
        }  # fmt: skip


def counted_scopes(count: int, size: int = 2, seconds: float = 0.05) -> tuple[
    list[FakeAdapter], CountingMetrics
]:  # fmt: skip
    """``count`` fakes sharing one counting metrics source (every other instance idle)."""
    fakes = [fake_scope(s, size) for s in range(count)]
    percent = {iid: pct for f in fakes for iid, pct in f.flat_percent.items()}
    source = CountingMetrics(percent, seconds)
    counted = [
        FakeAdapter(
            Provider.AWS,
            f.instances.values(),
            capabilities=tuple(Capability),
            metrics=source,
            scope=f.scope,
        )
        for f in fakes
    ]
    return counted, source
