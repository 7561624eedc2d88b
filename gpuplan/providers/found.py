"""What scope discovery found in one cloud: the scope ids, and the parts it could not read.

AWS member accounts (Organizations), GCP projects (Resource Manager) and Azure
subscriptions (ARM) are all discovered the same way: a sorted list of ids, plus one
problem line for each part of the tree that could not be read. One type for the three.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class FoundScopes:
    """Scope ids found (sorted, once each), and a problem line per part not read."""

    ids: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
