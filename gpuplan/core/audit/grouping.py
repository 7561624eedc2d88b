"""Report groups: by account (AWS account, GCP project, Azure subscription) or by a label.

One parser for every ``--by`` (``audit``, ``savings``, ``waste`` / ``fleet --report``)
and one rule that names a row's group, so an instance lands in the same group in every
report. A row without the label (or without a recorded account) goes to a group of its
own, never dropped: the groups' totals add up to the ungrouped total.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from enum import StrEnum

from gpuplan.core.errors import InputError

NO_LABEL = "(no label)"
NO_ACCOUNT = "(no account)"
NO_CLASS = "(no class)"


WORKLOAD_LABELS = {"namespace": "gpuplan.io/namespace", "owner": "gpuplan.io/owner"}
"""``--by namespace`` and ``--by owner``: labels every Kubernetes workload carries (its
namespace, its owner as ``Kind/name``); other units go to the "(no label)" group."""
_ALIAS_OF = {v: k for k, v in WORKLOAD_LABELS.items()}


class GroupKind(StrEnum):
    ACCOUNT = "account"
    """The instance's account, project or subscription."""
    LABEL = "label"
    """The value of one label (tag)."""
    CLASS = "class"
    """A trace's workload class (offline audits only)."""


@dataclass(frozen=True)
class GroupBy:
    """What ``--by`` asked for: ``account``, ``label:KEY`` or ``class``."""

    kind: GroupKind
    label: str = ""

    @property
    def column(self) -> str:
        """The group's column header and JSON key: ``account``, the label key, ``class``."""
        if self.kind is GroupKind.LABEL:
            return _ALIAS_OF.get(self.label, self.label)
        return self.kind.value

    def name(self, *, account: str = "", labels: Mapping[str, str] | None = None,
             trace_class: str = "") -> str:  # fmt: skip
        """The group one row belongs to; a missing value has a group of its own."""
        if self.kind is GroupKind.ACCOUNT:
            return account or NO_ACCOUNT
        if self.kind is GroupKind.CLASS:
            return trace_class or NO_CLASS
        return (labels or {}).get(self.label) or NO_LABEL

    def __str__(self) -> str:
        if self.label in _ALIAS_OF:
            return _ALIAS_OF[self.label]
        return f"label:{self.label}" if self.kind is GroupKind.LABEL else self.kind.value


BY_LABEL_TEAM = GroupBy(GroupKind.LABEL, "team")

_SPELLING = {GroupKind.ACCOUNT: "account", GroupKind.LABEL: "label:KEY", GroupKind.CLASS: "class"}


def parse_group_by(
    text: str, kinds: Collection[GroupKind] = (GroupKind.ACCOUNT, GroupKind.LABEL)
) -> GroupBy:
    """``account``, ``label:team`` or ``class`` (where ``kinds`` allows it); else one line."""
    raw = text.strip()
    if raw in WORKLOAD_LABELS and GroupKind.LABEL in kinds:
        return GroupBy(GroupKind.LABEL, WORKLOAD_LABELS[raw])
    if raw.startswith("label:") and raw[6:].strip() and GroupKind.LABEL in kinds:
        return GroupBy(GroupKind.LABEL, raw[6:].strip())
    for kind in kinds:
        if kind is not GroupKind.LABEL and raw == kind.value:
            return GroupBy(kind)
    choices = [_SPELLING[k] for k in GroupKind if k in kinds]
    expected = ", ".join(choices[:-1]) + f" or {choices[-1]}" if len(choices) > 1 else choices[0]
    raise InputError(f"--by: expected {expected} (e.g. label:team), got {text[:40]!r}")
