"""What the ledger stores and returns: plain records, one per row kind."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from typing import Any


@dataclass(frozen=True)
class DecisionRecord:
    """One instance's verdict in a run (the lifecycle manager's decision)."""

    provider: str
    region: str
    instance_id: str
    instance_type: str
    state: str
    verdict: str
    reason: str
    planned_action: str
    decided_at: datetime
    account: str = ""
    zone: str | None = None
    hourly_usd: Decimal | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    gpu_count: float = 0


@dataclass(frozen=True)
class ActionRecord:
    """What was done to one instance, and how it went."""

    provider: str
    region: str
    instance_id: str
    action: str
    outcome: str
    """``stopped``, ``skipped``, ``failed``, ``notified`` ..."""
    acted_at: datetime
    detail: str = ""
    decision_id: int | None = None
    scope: str = ""
    """The adapter scope the run acted in (``aws 123456789012/us-east-1``); reconcile
    settles an intent only in a run that covers the same scope."""


PENDING = "pending"
"""The outcome of an action whose cloud call may or may not have happened yet."""


@dataclass(frozen=True)
class PendingAction:
    """An intent without an outcome: the run that wrote it was killed mid-call."""

    id: int
    run_id: int
    provider: str
    region: str
    instance_id: str
    action: str
    acted_at: datetime
    policy: str = ""
    """The policy of the run that wrote the intent."""
    scope: str = ""
    """The scope it was written in (empty in rows older than the column)."""
    lock_name: str = ""
    """The run lock of that run (policy and shard)."""
    account: str = ""
    """The instance's account, from the decision the intent followed ("" without one)."""
    alive: bool = False
    """Its run's lock is held in another session: that run may still be acting."""


@dataclass(frozen=True)
class SpendRecord:
    """A month-to-date spend estimate for one policy."""

    policy: str
    month: str
    """``YYYY-MM``."""
    recorded_at: datetime
    month_to_date_usd: Decimal
    forecast_usd: Decimal
    monthly_usd: Decimal | None
    instances: int
    detail: Mapping[str, Any] = field(default_factory=dict)
    run_id: int | None = None


@dataclass(frozen=True)
class RunRecord:
    id: int
    kind: str
    policy: str
    started_at: datetime
    finished_at: datetime | None
    dry_run: bool
    status: str
    summary: dict[str, Any]
    shard: str = ""
    """``INDEX/COUNT`` of a sharded run, empty for a whole-fleet run."""


@dataclass(frozen=True)
class InstanceKey:
    """One instance, as claims name it (ids are unique per cloud, account and region)."""

    provider: str
    account: str
    region: str
    instance_id: str


@dataclass(frozen=True)
class ClaimHolder:
    """The run that holds an instance's claim, and until when."""

    run_id: int
    claimed_at: str
    expires_at: str
