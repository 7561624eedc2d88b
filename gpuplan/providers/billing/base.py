"""What every cost source promises: read-only daily cost lines, and the permissions."""

from __future__ import annotations

from datetime import date
from typing import Protocol

from gpuplan.core.audit.bill.lines import CostLine


class CostSource(Protocol):
    """One cloud's bill for one scope (account / billing table / subscription)."""

    @property
    def provider(self) -> str: ...

    @property
    def scope(self) -> str:
        """Safe to print and store: an account, project or subscription id, never a URL."""
        ...

    @property
    def permissions(self) -> tuple[str, ...]:
        """The read-only permissions (IAM actions, roles) the calls need."""
        ...

    def daily_costs(self, since: date, until: date, team_label: str) -> list[CostLine]:
        """Cost lines for each day in [since, until); raises ProviderError."""
        ...
