"""``restore``: undo what ``stop-idle`` did to a workload (scale back, resume, start).

The adapter reads what to restore from the object itself (the replica count gpuplan
wrote on it, the notebook's stop annotation, the job's ``suspend``), so a restore needs
no ledger row to be right. With a ledger, the restore is a run of its own: its intent
(outcome ``restoring``) committed before the call, its outcome (``restored`` or
``failed``) after. Dry run by default: the platform's own dry run checks the calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol, runtime_checkable

from gpuplan.core.errors import GpuplanError, InputError
from gpuplan.ledger import Ledger
from gpuplan.ledger.records import ActionRecord
from gpuplan.providers.base import CloudAdapter

RESTORING = "restoring"
"""A restore's intent (not ``pending``: the stop-idle reconciler settles stops only)."""


@runtime_checkable
class Restorer(Protocol):
    """An adapter that can undo its own reclaim of a unit."""

    @property
    def scope(self) -> str: ...

    def restore(self, instance_id: str, *, dry_run: bool = False) -> str: ...


@dataclass
class RestoreResult:
    unit: str
    scope: str
    dry_run: bool
    ok: bool
    detail: str
    run_id: int | None = None


def pick(adapters: Sequence[CloudAdapter], scope: str | None) -> Restorer:
    """The one adapter that restores (the one named ``scope`` when several do)."""
    able = [a for a in adapters if isinstance(a, Restorer)]
    if scope is not None:
        able = [a for a in able if a.scope in (scope, f"kubernetes {scope}")]
    if len(able) == 1:
        return able[0]
    names = ", ".join(a.scope for a in able) or "none"
    if not able:
        raise InputError(f"restore: no scope of the policy can restore a workload ({names})")
    raise InputError(f"restore: several scopes could hold it ({names}): name one with --scope")


def run_restore(
    policy: str,
    adapter: Restorer,
    unit: str,
    *,
    apply: bool,
    now: datetime,
    ledger: Ledger | None = None,
) -> RestoreResult:
    """Restore ``unit`` (``namespace/Kind/name``) through ``adapter``."""
    run_id = intent = None
    if ledger is not None:
        with ledger.transaction():
            run_id = ledger.start_run("restore", policy, now, dry_run=not apply)
            record = ActionRecord(
                provider="kubernetes", region="", instance_id=unit, action="restore",
                outcome=RESTORING, acted_at=now, detail="", scope=adapter.scope,
            )  # fmt: skip
            intent = ledger.record_action(run_id, record)
    try:
        detail = adapter.restore(unit, dry_run=not apply)
        ok = True
    except GpuplanError as exc:
        detail, ok = exc.message, False
    if not apply and ok:
        detail = f"dry run accepted by the API server (dryRun=All): would have {detail}"
    if ledger is not None and run_id is not None and intent is not None:
        outcome = ("restored" if apply else "none") if ok else "failed"
        ledger.settle_action(intent, outcome, detail, now)
        ledger.finish_run(run_id, now, "ok" if ok else "failed", summary={"restore": unit})
    return RestoreResult(unit, adapter.scope, not apply, ok, detail, run_id)
