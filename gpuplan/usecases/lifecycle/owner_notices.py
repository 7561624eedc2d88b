"""Telling each instance's owner before gpuplan acts: destinations, claims, delivery.

After an applied run's executor has tagged its notices (``notified`` outcomes), each
marked instance's owner (``owners.tag``) is looked up in ``owners.destinations`` (else
``default``) and told through every channel listed there. Each notice is claimed in the
ledger first (the audit alerts' claim table, key ``owner-notice:<rule>:<act after>``), so
it goes out once per instance and rule, even with runs overlapping:

- delivered on every channel, or on some: ``sent`` for good (a later run never sends it
  again to those who have it; the failures are reported);
- refused by every channel with an answer (HTTP 4xx/5xx, an SMTP error code): the claim
  is given back and the next run tries again (nothing was delivered);
- no answer (a timeout after sending, a dropped connection): kept as ``sent`` and
  reported, never sent again: a duplicate is worse than a notice to check.

Secrets (webhook URLs, the SMTP password) are read from the environment here, named by
the policy, and appear in no message, no record and no ledger row.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal

from gpuplan.core.audit.alerts import AlertClaim
from gpuplan.core.lifecycle.owner_notice import UNOWNED, OwnerNotice, notice_for
from gpuplan.core.lifecycle.plan import Outcome
from gpuplan.core.policy import Policy
from gpuplan.core.policy.lifetime_settings import Destination, Owners
from gpuplan.ledger import Ledger
from gpuplan.ledger.audit_alerts import (
    AlertKey,
    claim_audit_alert,
    confirm_audit_alert,
    release_audit_alert,
)
from gpuplan.providers.owner_channels import Channel, Hook, Mail
from gpuplan.usecases.lifecycle.executor import InstanceResult

ENV_PREFIX = "GPUPLAN_"
CLAIM_MINUTES = 15


@dataclass(frozen=True)
class OwnerSent:
    """One owner notice in a run: to whom, through what, and how it went."""

    instance_id: str
    owner: str
    rule: str
    state: str
    """``sent``, ``partly sent``, ``already sent``, ``failed``, ``no destination``."""
    channels: tuple[str, ...] = ()
    """Each channel by kind and host only."""
    detail: str = ""

    def record(self) -> dict[str, object]:
        return {
            "instance_id": self.instance_id,
            "owner": self.owner,
            "rule": self.rule,
            "state": self.state,
            "channels": list(self.channels),
            "detail": self.detail,
        }


@dataclass
class OwnerNotifier:
    """The policy's owner destinations with the secrets the environment holds."""

    policy: str
    owners: Owners
    exempt_tag: str
    environ: Mapping[str, str]
    allowed: frozenset[str] = frozenset()
    problems: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, policy: Policy, environ: Mapping[str, str]) -> OwnerNotifier | None:
        """None when the policy lists no destination."""
        if not policy.owners.destinations:
            return None
        return cls(policy.name, policy.owners, policy.idle.exempt_tag, environ,
                   frozenset(policy.env_allow))  # fmt: skip

    def drain(self) -> list[str]:
        """The problems met reading destinations since the last drain (one run's)."""
        out, self.problems = self.problems, []
        return out

    def channels(self, owner: str) -> tuple[str, list[Channel]]:
        """The destination's name and its channels (secrets read now)."""
        name = owner if owner in self.owners.destinations else UNOWNED
        found = self.owners.destinations.get(name)
        if found is None:
            return name, []
        return name, self._built(name, found)

    def _built(self, name: str, dest: Destination) -> list[Channel]:
        out: list[Channel] = []
        insecure = self.owners.allow_insecure
        for kind, env in (("webhook", dest.webhook_env), ("slack", dest.slack_env)):
            if env is None:
                continue
            url = self._secret(env, f"owners.destinations.{name}.{kind}_env")
            if url:
                out.append(Hook(kind, url, insecure))
        smtp = self.owners.smtp
        if dest.email and smtp is not None:
            password = (
                self._secret(smtp.password_env, "owners.smtp.password_env")
                if smtp.password_env
                else None
            )
            out.append(Mail(smtp, tuple(dest.email), password, insecure))
        return out

    def _secret(self, env: str, where: str) -> str | None:
        if not env.startswith(ENV_PREFIX) and env not in self.allowed:
            self.problems.append(f"{where}: {env} may not be read: only {ENV_PREFIX}* or env_allow")
            return None
        value = self.environ.get(env, "")
        if not value:
            self.problems.append(f"{where}: environment variable {env} is not set")
            return None
        return value


def tell_owners(
    notifier: OwnerNotifier,
    outcomes: Iterable[InstanceResult],
    ledger: Ledger | None,
    now: datetime,
) -> list[OwnerSent]:
    """Tell the owner of every instance this run noticed (``notified``); once each."""
    sent: list[OwnerSent] = []
    for o in outcomes:
        if o.outcome is not Outcome.NOTIFIED:
            continue
        notice = notice_for(o.item, notifier.owners.tag, notifier.exempt_tag)
        if notice is not None:
            sent.append(_tell(notifier, notice, ledger, now))
    return sent


def _tell(
    notifier: OwnerNotifier, notice: OwnerNotice, ledger: Ledger | None, now: datetime
) -> OwnerSent:
    name, channels = notifier.channels(notice.owner)
    shown = tuple(c.shown for c in channels)

    def told(state: str, detail: str = "") -> OwnerSent:
        return OwnerSent(notice.instance_id, notice.owner, notice.rule, state, shown, detail)

    if not channels:
        return told("no destination", f"no usable destination for owner {name!r}")
    key = AlertKey(notifier.policy, notice.instance_id, notice.key)
    token = secrets.token_hex(6)
    if ledger is not None:
        holder = claim_audit_alert(
            ledger, key, token=token, at=now, until=now + timedelta(minutes=CLAIM_MINUTES),
            busy_percent=0.0, paid_usd=notice.usd_per_hour or Decimal(0),
        )  # fmt: skip
        if holder is not None:
            state = "already sent" if holder.state is AlertClaim.SENT else "claimed elsewhere"
            return told(state, holder.detail)
    deliveries = [c.send(notice) for c in channels]
    failures = [d.error or "failed" for d in deliveries if not d.ok]
    answered = all(d.status is not None for d in deliveries if not d.ok)
    if len(failures) == len(deliveries) and answered:
        if ledger is not None:
            release_audit_alert(ledger, key, token=token)
        return told("failed", "; ".join(failures) + " (tried again next run)")
    if ledger is not None:
        confirm_audit_alert(ledger, key, token=token, at=now)
    if not failures:
        return told("sent")
    state = "partly sent" if len(failures) < len(deliveries) else "failed"
    return told(state, "; ".join(failures) + " (not sent again: it may have arrived)")


def problems_of(sent: Sequence[OwnerSent]) -> list[str]:
    """The run's problem lines for notices that did not reach their owner."""
    return [
        f"owner notice {s.instance_id} ({s.rule}) to {s.owner or '(no owner)'}: {s.state}: "
        f"{s.detail}"
        for s in sent
        if s.state in ("failed", "partly sent")
    ]


def notices_of(sent: Sequence[OwnerSent]) -> list[str]:
    """Notices with nowhere to go (no owner tag and no ``default`` destination)."""
    return [
        f"owner notice {s.instance_id} ({s.rule}): {s.detail}"
        for s in sent
        if s.state == "no destination"
    ]
