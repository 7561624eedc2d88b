"""Policies, times and runs for the ``gpuplan schedule`` tests on every cloud's fake.

Schedule ``office``: Europe/Berlin, 08:00-19:00 Monday to Friday; times below are UTC
(Berlin is UTC+1 in December).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.providers.base import CloudAdapter
from gpuplan.usecases.lifecycle.schedule import run_schedule
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, result_record

WED_EVENING = datetime(2026, 12, 2, 19, 30, tzinfo=UTC)  # 20:30 in Berlin
WED_LATER = datetime(2026, 12, 2, 21, 30, tzinfo=UTC)
THU_MORNING = datetime(2026, 12, 3, 7, 30, tzinfo=UTC)  # 08:30 in Berlin
OFFICE = {"gpuplan-schedule": "office"}


def schedule_policy(scope: dict[str, Any], **idle: Any) -> Policy:
    return Policy.model_validate(
        {
            "version": 1,
            "name": "research",
            "scope": scope,
            "idle": {"allow_data_loss": True, **idle},
            "schedules": {
                "named": {
                    "office": {
                        "timezone": "Europe/Berlin",
                        "on_hours": "08:00",
                        "off_hours": "19:00",
                    }
                }
            },
        }
    )


def run_at(
    policy: Policy, adapters: Sequence[CloudAdapter], db: Path, now: datetime
) -> StopIdleResult:
    with Ledger(db) as ledger:
        return run_schedule(policy, adapters, apply=True, now=now, ledger=ledger)


def by_name(result: StopIdleResult) -> dict[str, str]:
    return {
        str(d["name"] or d["instance_id"]): str(d["action"])
        for d in result_record(result)["decisions"]
    }
