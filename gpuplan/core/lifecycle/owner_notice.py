"""The owner told first: what a notice to an instance's owner says, and its one key.

A notice goes out when a run marks an instance (``Step.MARK``: an idle notice, a lifetime
rule's notice, a refused exemption's notice). It names the instance, the rule, the
dollars per hour at stake, when gpuplan will act, and how to snooze or fix it. Its key
(:attr:`OwnerNotice.key`: the rule and the time it will act) is claimed in the ledger
before sending, so each notice goes out once per instance and rule. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from gpuplan.core.lifecycle.exemptions import VOID_AFTER_TAG
from gpuplan.core.lifecycle.idle import STOP_AFTER_TAG, parse_tag_time
from gpuplan.core.lifecycle.lifetimes import NOTICE_TAG
from gpuplan.core.lifecycle.plan import PlannedAction, Step

_WHEN_TAGS = (NOTICE_TAG, STOP_AFTER_TAG, VOID_AFTER_TAG)
UNOWNED = "default"
"""The destination for instances without an owner tag (or an owner not listed)."""


@dataclass(frozen=True)
class OwnerNotice:
    owner: str
    """The owner tag's value ("" when the instance has none)."""
    instance_id: str
    name: str
    region: str
    provider: str
    rule: str
    """``idle``, ``max-runtime``, ``expires``, ``stopped-for`` or ``exemption``."""
    what: str
    """What will happen (the plan's note)."""
    reason: str
    usd_per_hour: Decimal | None
    act_after: datetime | None
    exempt_tag: str
    basis: str = ""
    """The plan's notice key (a lifetime rule and when it fell due; a refused exemption's
    value); "" for an idle notice, keyed by when it acts."""

    @property
    def key(self) -> str:
        """The ledger key: once per instance and rule (and the moment it fell due, or the
        exemption's value), so a notice marked again is not sent again."""
        if self.basis:
            return f"owner-notice:{self.basis}"
        when = f"{self.act_after:%Y%m%dT%H%MZ}" if self.act_after else "-"
        return f"owner-notice:{self.rule}:{when}"

    @property
    def how_to_keep(self) -> str:
        if self.rule == "exemption":
            return (
                f"fix the tag: {self.exempt_tag}: YYYY-MM-DD (a date) or 7d@YYYY-MM-DD "
                "(a span from the day it is set), within exemptions.max_days"
            )
        return (
            f"snooze: gpuplan snooze {self.instance_id} --for 4h --policy POLICY "
            "(lifetime rules honour a snooze up to lifetimes.max_snooze)"
        )

    def text(self) -> str:
        dollars = f"${self.usd_per_hour}/h" if self.usd_per_hour is not None else "price unknown"
        when = f"{self.act_after:%Y-%m-%d %H:%M}Z" if self.act_after else "the next run"
        label = f"{self.instance_id} ({self.name})" if self.name else self.instance_id
        return (
            f"gpuplan: {label} in {self.provider} {self.region}, owner "
            f"{self.owner or '(none)'}: rule {self.rule}, {dollars}. {self.reason}. "
            f"{self.what}. gpuplan acts after {when}. To keep it: {self.how_to_keep}."
        )

    def record(self) -> dict[str, Any]:
        """The JSON a generic webhook receives beside ``text`` (no secret in it)."""
        return {
            "owner": self.owner,
            "instance_id": self.instance_id,
            "provider": self.provider,
            "region": self.region,
            "rule": self.rule,
            "usd_per_hour": str(self.usd_per_hour) if self.usd_per_hour is not None else None,
            "act_after": self.act_after.isoformat() if self.act_after else None,
            "how_to_keep": self.how_to_keep,
        }


def notice_for(item: PlannedAction, owner_tag: str, exempt_tag: str) -> OwnerNotice | None:
    """The owner's notice for a marked instance; None for any other step."""
    if item.step is not Step.MARK:
        return None
    inst = item.instance
    when = next((item.tags[t] for t in _WHEN_TAGS if t in item.tags), None)
    return OwnerNotice(
        owner=inst.labels.get(owner_tag, "").strip()[:128],
        instance_id=inst.instance_id,
        name=inst.name or "",
        region=inst.region,
        provider=inst.provider.value,
        rule=item.lifetime or "idle",
        what=item.note,
        reason=item.decision.reason,
        usd_per_hour=inst.hourly_usd,
        act_after=parse_tag_time(when) if when else None,
        exempt_tag=exempt_tag,
        basis=item.notice_key,
    )
