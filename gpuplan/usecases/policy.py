"""Policy use cases: load and check policy files, show them, and what budget is left.

One validation: ``load_policy`` (every command that reads a policy) and ``policy check``
both run :func:`check_policy`, so a run refuses exactly what the check refuses, with the
same lines. It checks ``planning.allowed_gpus`` against the bundled GPU table (close
matches suggested) and expands ``${ENV_VAR}`` webhook URLs from the environment.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from gpuplan.core.audit.budget import month_key, remaining_budget
from gpuplan.core.catalog.gpus import GpuTable
from gpuplan.core.errors import DataError, InputError
from gpuplan.core.planner.constraints import HOURS_PER_MONTH, PlanConstraints
from gpuplan.core.policy import Policy, Scope
from gpuplan.ledger import Ledger
from gpuplan.loaders.policy_check import check_policy_file
from gpuplan.loaders.policy_file import PolicyFileError
from gpuplan.providers.url_parts import split_url
from gpuplan.usecases.clouds import registry as cloud_registry  # noqa: F401  (registers ENTRIES: their scope sections)


def gpu_table(catalog_dir: str | os.PathLike[str] | None = None) -> GpuTable:
    """The GPU table of the catalog in ``catalog_dir`` (default: the bundled one)."""
    from gpuplan.loaders.catalog import load_gpus

    return load_gpus(catalog_dir)


def load_policy(
    path: str | os.PathLike[str],
    *,
    gpus: GpuTable | None = None,
    environ: Mapping[str, str] | None = None,
) -> Policy:
    """The policy in ``path`` if ``gpuplan policy check`` passes it, else the same errors.

    Every command that reads a policy (``stop-idle``, ``fleet``, ``budget``, ``audit``,
    ``snooze``, ``simulate``, ``estimate --policy``, the TUI) loads it here: what
    ``policy check`` refuses (a missing ``scope:``, ``allow_data_loss`` unstated with an
    acting action) is bad input (exit 2) before anything is done.
    """
    result = check_policy(path, gpus=gpus or gpu_table(), environ=environ)
    if result.policy is not None and not result.problems:
        return result.policy
    placed = [p for p in result.placed if isinstance(p, DataError)]
    if len(placed) < len(result.placed):
        raise next(p for p in result.placed if not isinstance(p, DataError))
    raise PolicyFileError(placed)


@dataclass(frozen=True)
class CheckResult:
    """One file's verdict from ``gpuplan policy check`` (and from every policy load)."""

    path: str
    policy: Policy | None
    problems: tuple[str, ...]
    warnings: tuple[str, ...] = ()
    """Valid but dangerous settings (exit 0, one line each)."""
    placed: tuple[InputError, ...] = ()
    """The problems as errors (file, line, field), in the order of ``problems``."""

    @property
    def ok(self) -> bool:
        return self.policy is not None and not self.problems


def check_policy(
    path: str | os.PathLike[str],
    *,
    gpus: GpuTable | None = None,
    environ: Mapping[str, str] | None = None,
) -> CheckResult:
    """Everything ``policy check`` asks of one file: the one validation of a policy. Its
    URLs are split by the parser that fetches them (httpx's: :func:`split_url`)."""
    shown = str(path)
    found = check_policy_file(path, split=split_url, gpus=gpus, environ=environ)
    missing = scope_missing(shown, found.policy) if found.policy is not None else ()
    placed = (*found.problems, *missing)
    policy = None if missing else found.policy
    return CheckResult(shown, policy, tuple(str(p) for p in placed), found.warnings, placed)


def check_policies(
    paths: Sequence[str], *, environ: Mapping[str, str] | None = None
) -> list[CheckResult]:
    """Check each file; never stops at the first broken one."""
    gpus = gpu_table()
    return [check_policy(path, gpus=gpus, environ=environ) for path in paths]


def scope_missing(path: str, policy: Policy) -> tuple[DataError, ...]:
    """A policy must say which instances it governs: ``scope: {}`` says "none" on purpose.

    Without the key, ``fleet`` and ``stop-idle`` would quietly see no instances.
    """
    if "scope" in policy.model_fields_set:
        return ()
    sections = ", ".join(f"scope.{name}" for name in Scope.registered_models())
    return (
        DataError(
            path,
            f"missing: name the clouds this policy governs ({sections}), "
            "or write 'scope: {}' for a planning-only policy",
            field="scope",
        ),
    )


def effective_policy(policy: Policy) -> dict[str, Any]:
    """The policy with every default filled in, as plain data; every URL redacted.

    The webhook shows its origin only (its path is the secret); other URLs (endpoints,
    Prometheus) lose user info, query and token-like path segments.
    """
    from gpuplan.providers.url_parts import redact_url, redact_webhook

    data: dict[str, Any] = _redact_urls(policy.model_dump(mode="json"), redact_url, redact_webhook)
    return data


def _redact_urls(value: Any, redact: Any, webhook: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _redact_urls(v, redact, webhook, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_urls(v, redact, webhook, key) for v in value]
    if isinstance(value, str) and "://" in value:
        return webhook(value) if key == "webhook_url" else redact(value)
    return value


SCHEMA_ID = "https://github.com/gpuplan/gpuplan/raw/main/policies/policy.schema.json"


def policy_schema() -> dict[str, Any]:
    """The JSON Schema of policy files, generated from the models and the registry: every
    registered cloud's ``scope.<name>``, metrics source's ``idle.metrics.<name>`` and
    keys of ``bill`` appear in it as they do in validation."""
    from gpuplan.core import clouds
    from gpuplan.core.policy.bill_settings import registered_keys
    from gpuplan.core.policy.metrics_settings import defaulted_sections, registered_sections
    from gpuplan.core.policy.section import splice_keys, splice_sections

    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": SCHEMA_ID,
        **Policy.model_json_schema(),
    }
    scopes = {
        provider.value: section
        for provider in clouds.registered()
        if (section := clouds.facts_of(provider).scope_section) is not None
    }
    splice_sections(schema, "Scope", scopes)
    splice_sections(schema, "MetricsSettings", registered_sections(), defaulted_sections())
    splice_keys(schema, "BillSettings", registered_keys())
    return schema


def policy_schema_text() -> str:
    """The JSON Schema of policy files, as checked in at ``policies/policy.schema.json``."""
    import json

    return json.dumps(policy_schema(), indent=2, sort_keys=False) + "\n"


def remaining_monthly_budget(
    policy: Policy, ledger: Ledger | None, now: datetime
) -> tuple[Decimal | None, str]:
    """What is left of ``budget.monthly_usd`` this month, and a sentence saying how."""
    monthly = policy.budget.monthly_usd
    if monthly is None:
        return None, "no budget.monthly_usd in the policy: no monthly limit"
    month = month_key(now)
    last = None if ledger is None else ledger.last_spend(policy.name, month)
    if last is None:
        where = "no ledger" if ledger is None else "no spend recorded"
        return monthly, (
            f"whole budget, {where} for policy {policy.name} in {month} "
            f"(run 'gpuplan budget --policy FILE' to record it)"
        )
    left = remaining_budget(monthly, last.month_to_date_usd)
    return left, (
        f"monthly_usd {monthly} minus the month's last recorded spend "
        f"{last.month_to_date_usd} (recorded {last.recorded_at:%Y-%m-%d %H:%M} UTC)"
    )


def plan_constraints(
    path: str, *, db: str | None, now: datetime, gpus: GpuTable | None = None
) -> tuple[PlanConstraints, str]:
    """What ``planning`` and ``budget`` of the policy in ``path`` allow, with no cloud call.

    The remaining budget comes from the ledger's last recorded spend this month; a ledger
    that does not exist yet is not created (the whole budget is used, and said so).
    """
    from gpuplan.ledger.store import existing_ledger

    policy = load_policy(path, gpus=gpus)
    ledger = existing_ledger(db)
    try:
        remaining, how = remaining_monthly_budget(policy, ledger, now)
    finally:
        if ledger is not None:
            ledger.close()
    planning = policy.planning
    constraints = PlanConstraints(
        allowed_gpus=frozenset(planning.allowed_gpus),
        allowed_pricing=frozenset(planning.allowed_pricing),
        allowed_regions=frozenset(planning.allowed_regions),
        max_hourly_usd=policy.budget.max_hourly_usd,
        budget_usd=remaining,
        budget_period_hours=HOURS_PER_MONTH,
        budget_name="policy's remaining budget this month",
        label=f"policy {policy.name} ({path})",
    )
    note = f"policy {policy.name} ({path}): remaining monthly budget: {how}"
    return constraints, note


__all__ = [
    "CheckResult",
    "check_policies",
    "check_policy",
    "effective_policy",
    "gpu_table",
    "load_policy",
    "plan_constraints",
    "policy_schema_text",
    "remaining_monthly_budget",
]
