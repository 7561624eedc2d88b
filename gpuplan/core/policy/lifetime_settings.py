"""Policy sections for time and people: ``lifetimes``, ``exemptions`` and ``owners``.

Secrets never sit in the policy file: a destination names the *environment variable*
that holds its webhook URL (and the SMTP password); the variable is read when a notice
is sent, and only ``GPUPLAN_*`` names or names listed in ``env_allow`` are read.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StrictBool, model_validator

from gpuplan.core.policy.fields import EnvName, Minutes, PositiveInt, TagName, _text
from gpuplan.core.policy.section import Section

EmailAddress = Annotated[
    str,
    _text(r"^[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9.-]{1,190}\.[A-Za-z]{2,24}$", "an email address"),
]
"""An email address (``alice@example.org``)."""


class Lifetimes(Section):
    """How long an instance may run or stay stopped, whatever its load (opt-in, each rule)."""

    max_runtime: Minutes | None = None
    """Stop a running instance once its current run is older than this (``72h``), busy or
    not; ``gpuplan snooze`` holds it at most ``max_snooze`` longer. None: no limit."""
    max_snooze: Minutes = 1440
    """The longest a snooze holds a due lifetime rule, counted from when the rule fell due
    (``24h``); a longer snooze is cut short there, and said so."""
    notice_minutes: Minutes = 60
    """A due rule first tags ``gpuplan-lifetime-after`` and tells the owner; a later run
    acts once this has passed. 0: act at once."""
    stopped_for_days: PositiveInt | None = None
    """Snapshot the disks of an instance stopped longer than this many days, then
    terminate it. Opt-in; needs ``idle.allow_data_loss: true`` and the terminate
    permissions (deploy/aws-iam-terminate.json, gcp-custom-role-terminate.yaml,
    azure-role-terminate.json). An instance whose stop time is unknown is left alone."""
    expires_tag: TagName | None = "gpuplan-expires"
    """A tag whose value is the last day an instance may run (``gpuplan-expires:
    2026-12-31``); once that day has ended the instance is stopped (after the notice).
    ``null``: not read."""


class Exemptions(Section):
    """Exemptions that end: the exempt tag's value is a date or a span from a date."""

    max_days: PositiveInt | None = None
    """The longest exemption allowed, in days. A value longer than this, or one that is
    neither ``2026-12-31`` nor ``7d@2026-12-01``, is reported and, after
    ``notice_minutes``, no longer exempts. None: such values exempt for good (the old
    meaning); a date that has passed never exempts."""
    notice_minutes: Minutes = 1440
    """How long a refused exemption still holds after its notice (``24h``)."""


class Destination(Section):
    """Where one owner's notices go (any of the three; at least one)."""

    webhook_env: EnvName | None = None
    """Environment variable holding a generic webhook URL (JSON POST with ``text`` and a
    ``notice`` object)."""
    slack_env: EnvName | None = None
    """Environment variable holding a Slack incoming-webhook URL (``{"text": ...}``)."""
    email: list[EmailAddress] = Field(default_factory=list)
    """Addresses to mail through ``owners.smtp``."""

    @model_validator(mode="after")
    def _one_at_least(self) -> Destination:
        if not (self.webhook_env or self.slack_env or self.email):
            raise ValueError("a destination needs webhook_env, slack_env or email")
        return self


class Smtp(Section):
    """The mail server notices by email go through."""

    host: Annotated[str, _text(r"^[A-Za-z0-9.-]{1,253}$", "a host name")]
    """Host name of the SMTP server."""
    port: int = Field(default=587, ge=1, le=65535)
    """Port (1-65535); 587 with STARTTLS, 465 with implicit TLS."""
    tls: Annotated[str, _text(r"^(starttls|implicit|none)$", "starttls, implicit or none")] = (
        "starttls"
    )
    """``starttls``, ``implicit`` or ``none`` (a lab relay on loopback only)."""
    sender: EmailAddress
    """The From address."""
    username: str | None = Field(default=None, max_length=256)
    """Login name; none: no login."""
    password_env: EnvName | None = None
    """Environment variable holding the password (never written in the policy)."""


class Owners(Section):
    """The owner told first: an owner tag maps to where that owner's notices go."""

    tag: TagName = "owner"
    """The tag (label) naming an instance's owner, e.g. ``owner: ml-research``."""
    destinations: dict[TagName, Destination] = Field(default_factory=dict)
    """Owner tag value -> where notices go; ``default`` catches owners not listed."""
    smtp: Smtp | None = None
    """Needed when any destination has ``email``."""
    allow_insecure: StrictBool = False
    """Allow ``http://`` and loopback or private hosts for the webhooks (a lab)."""

    @model_validator(mode="after")
    def _smtp_when_mailing(self) -> Owners:
        if self.smtp is None and any(d.email for d in self.destinations.values()):
            raise ValueError("a destination has email: set owners.smtp")
        return self
