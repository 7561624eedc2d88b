"""The lifetime and exemption scenario, the same on every cloud's fake.

Two runs with a frozen clock: the first at :data:`NOW` gives notice (an owner notice per
marked instance), the second :data:`LATER` (after the notice) acts. The fleet:

=============  ============================================  ==========================
name           facts                                         expected
=============  ============================================  ==========================
long-run       running 80 h, busy                            notice, then stop (max-runtime)
fresh          running 24 h, busy                            nothing
expired-tag    gpuplan-expires: 2026-11-30, busy             notice, then stop (expires)
old-stopped    stopped 40 days, a disk                       notice, then snapshot + terminate
keep-valid     gpuplan-keep: 2026-12-20, idle                nothing (exempt)
keep-expired   gpuplan-keep: 2026-11-30, idle                stop at once (idle)
keep-long      gpuplan-keep: 2027-12-31, idle                notice, then stop (idle, void)
=============  ============================================  ==========================

Owners: ``owner`` tags ``ml`` (long-run, old-stopped, keep-long) and ``vision``
(expired-tag); only ``ml`` has a destination, a loopback webhook.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from gpuplan.core.policy import Policy

NOW = datetime(2026, 12, 2, 10, 17, 30, tzinfo=UTC)
LATER = NOW + timedelta(minutes=61)
STOPPED_DAYS = 40
HOOK_ENV = "GPUPLAN_HOOK_ML"


@dataclass(frozen=True)
class Machine:
    name: str
    running: bool = True
    ran: timedelta = timedelta(hours=24)
    busy: bool = True
    labels: dict[str, str] = field(default_factory=dict)


FLEET = (
    Machine("long-run", ran=timedelta(hours=80), labels={"owner": "ml"}),
    Machine("fresh"),
    Machine("expired-tag", labels={"gpuplan-expires": "2026-11-30", "owner": "vision"}),
    Machine("old-stopped", running=False, labels={"owner": "ml"}),
    Machine("keep-valid", busy=False, labels={"gpuplan-keep": "2026-12-20"}),
    Machine("keep-expired", busy=False, labels={"gpuplan-keep": "2026-11-30"}),
    Machine("keep-long", busy=False, labels={"gpuplan-keep": "2027-12-31", "owner": "ml"}),
)

FIRST = {
    "long-run": "notified",
    "fresh": "none",
    "expired-tag": "notified",
    "old-stopped": "notified",
    "keep-valid": "none",
    "keep-expired": "stopped",
    "keep-long": "notified",
}
TOLD_FIRST = {
    ("long-run", "max-runtime", "sent"),
    ("expired-tag", "expires", "no destination"),
    ("old-stopped", "stopped-for", "sent"),
    ("keep-long", "exemption", "sent"),
}


def second(terminated: str) -> dict[str, str]:
    """What the second run does (``terminated``: the outcome of old-stopped there)."""
    return {
        "long-run": "stopped",
        "fresh": "none",
        "expired-tag": "stopped",
        "old-stopped": terminated,
        "keep-valid": "none",
        "keep-expired": "none",
        "keep-long": "stopped",
    }


def policy(scope: dict[str, Any]) -> Policy:
    return Policy.model_validate(
        {
            "version": 1,
            "name": "lifetimes",
            "scope": scope,
            "idle": {
                "allow_data_loss": True,
                "grace_minutes": 0,
                "window_minutes": 30,
                "live_process_window_minutes": 30,
            },
            "lifetimes": {
                "max_runtime": "72h",
                "notice_minutes": 60,
                "stopped_for_days": 30,
                "expires_tag": "gpuplan-expires",
            },
            "exemptions": {"max_days": 30, "notice_minutes": 60},
            "owners": {
                "tag": "owner",
                "allow_insecure": True,
                "destinations": {"ml": {"webhook_env": HOOK_ENV}},
            },
        }
    )


def periods() -> Iterator[datetime]:
    """5-minute periods from 2 hours before :data:`NOW` to 2 hours after (both runs)."""
    start = NOW.replace(minute=0, second=0) - timedelta(hours=2)
    for n in range(0, 4 * 12 + 1):
        yield start + timedelta(minutes=5 * n)


def percent(machine: Machine) -> float:
    return 85.0 if machine.busy else 0.5
