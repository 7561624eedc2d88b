"""Exemptions that expire: what the exempt tag's value says, judged against the policy.

The exempt tag (``idle.exempt_tag``, ``gpuplan-keep`` by default) holds a date or a
duration from the day it was set, so an exemption ends by itself:

- ``2026-12-31``: exempt through that day (until 00:00 UTC the day after);
- ``7d@2026-12-01`` (or ``36h@2026-12-01``): exempt for 7 days (36 hours) from that day,
  the day written when the tag was set (the cloud keeps no time for a tag: the value is
  the only record of when it was set, so it carries it).

``exemptions.max_days`` is the longest exemption allowed. A value past it, or a value
that is neither form, is reported; after a notice (``gpuplan-exempt-void-after`` tagged
on the instance, and the owner told) it no longer exempts. Without ``max_days`` a value
that is neither form keeps the old meaning (exempt for good), so existing fleets are not
stopped by an upgrade; a date that has passed never exempts. Pure: ``now`` comes in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from enum import StrEnum

from gpuplan.core.lifecycle.idle import format_tag_time, parse_tag_time
from gpuplan.core.lifecycle.instances import GpuInstance

VOID_AFTER_TAG = "gpuplan-exempt-void-after"
"""Set with the notice that an exemption is unreadable or too long: after it, no longer
exempt (value ``20261202t101500z``)."""

_DATE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")
_SPAN = re.compile(r"^(\d{1,4})([dh])@(\d{4}-\d{2}-\d{2})$")
MAX_VALUE_CHARS = 64


class ExemptionState(StrEnum):
    """What an exempt tag's value amounts to now."""

    NONE = "none"
    """No exempt tag."""
    VALID = "valid"
    """A readable value within the policy's limit that has not ended."""
    OPEN = "open"
    """A value with no end (the old form: any value), allowed: the policy sets no limit."""
    EXPIRED = "expired"
    """The date or span has passed: not exempt."""
    TOO_LONG = "too_long"
    """Longer than ``exemptions.max_days``: exempt until the notice runs out."""
    UNREADABLE = "unreadable"
    """Neither form, with a limit set: exempt until the notice runs out."""
    VOID = "void"
    """Too long or unreadable, and the notice has run out: not exempt."""

    @property
    def exempts(self) -> bool:
        return self in (
            ExemptionState.VALID,
            ExemptionState.OPEN,
            ExemptionState.TOO_LONG,
            ExemptionState.UNREADABLE,
        )

    @property
    def needs_notice(self) -> bool:
        """A value the policy refuses: the owner is told, then it stops exempting."""
        return self in (ExemptionState.TOO_LONG, ExemptionState.UNREADABLE)


@dataclass(frozen=True)
class Exemption:
    state: ExemptionState
    reason: str
    until: datetime | None = None
    """When it ends (VALID, EXPIRED, TOO_LONG); None: no end known."""
    void_after: datetime | None = None
    """When a refused value stops exempting (from the notice tag)."""


def _day(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _midnight(day: date) -> datetime:
    return datetime(day.year, day.month, day.day, tzinfo=UTC)


def ends_at(value: str) -> tuple[datetime | None, datetime | None]:
    """(when it was set, when it ends) for the two forms; (None, None): neither form.

    A date alone has no set time: (None, end)."""
    text = value.strip().lower()
    if len(text) > MAX_VALUE_CHARS:
        return None, None
    if _DATE.match(text) and (day := _day(text)) is not None:
        return None, _midnight(day) + timedelta(days=1)
    span = _SPAN.match(text)
    if span and (day := _day(span.group(3))) is not None:
        count = int(span.group(1))
        length = timedelta(days=count) if span.group(2) == "d" else timedelta(hours=count)
        start = _midnight(day)
        return start, start + length
    return None, None


def judge(
    labels: Mapping[str, str] | None,
    exempt_tag: str,
    now: datetime,
    max_days: int | None,
) -> Exemption:
    """The exemption ``labels`` carry under ``exempt_tag``, now."""
    raw = (labels or {}).get(exempt_tag)
    if raw is None:
        return Exemption(ExemptionState.NONE, "")
    shown = f"{exempt_tag}={raw[:MAX_VALUE_CHARS]!r}"
    start, end = ends_at(raw)
    if end is None:
        if max_days is None:
            return Exemption(ExemptionState.OPEN, f"exempt: tag {exempt_tag} is set")
        return _refused(
            labels or {},
            ExemptionState.UNREADABLE,
            f"{shown} is not a date (2026-12-31) or a span from a date (7d@2026-12-01)",
            None,
            now,
        )
    if now >= end:
        return Exemption(
            ExemptionState.EXPIRED, f"{shown}: exemption ended {end:%Y-%m-%d %H:%M}Z", end
        )
    if max_days is not None:
        longest = timedelta(days=max_days)
        length = end - start if start is not None else end - now
        if length > longest:
            what = "lasts" if start is not None else "runs"
            return _refused(
                labels or {},
                ExemptionState.TOO_LONG,
                f"{shown} {what} {length.days} days, longer than exemptions.max_days = {max_days}",
                end,
                now,
            )
    return Exemption(ExemptionState.VALID, f"exempt: {shown} until {end:%Y-%m-%d %H:%M}Z", end)


def _refused(
    labels: Mapping[str, str], state: ExemptionState, why: str, end: datetime | None, now: datetime
) -> Exemption:
    raw = labels.get(VOID_AFTER_TAG)
    after = parse_tag_time(raw) if raw is not None else None
    if after is None:
        return Exemption(state, f"{why}; exempt until a notice runs out", end)
    if now >= after:
        return Exemption(
            ExemptionState.VOID,
            f"{why}; notice ran out {after:%Y-%m-%d %H:%M}Z: no longer exempt",
            end,
            after,
        )
    return Exemption(
        state, f"{why}; no longer exempt after {after:%Y-%m-%d %H:%M}Z (notice given)", end, after
    )


def void_tag(now: datetime, notice_minutes: int) -> dict[str, str]:
    """The tag a notice of a refused value sets: exempt until then, no longer after."""
    return {VOID_AFTER_TAG: format_tag_time(now + timedelta(minutes=notice_minutes))}


@dataclass(frozen=True)
class Holder:
    """Who holds exemptions (the owner tag's value) and what they cost per hour."""

    holder: str
    instances: int
    usd_per_hour: Decimal
    unpriced: int = 0
    """Exempt running instances with no known price (not in ``usd_per_hour``)."""


def holders(
    instances: Iterable[GpuInstance],
    exempt_tag: str,
    owner_tag: str,
    now: datetime,
    max_days: int | None,
) -> list[Holder]:
    """Running exempt instances per owner, most dollars first (``(no owner)`` when the
    owner tag is missing); only instances whose exemption holds now count."""
    found: dict[str, tuple[int, Decimal, int]] = {}
    for inst in instances:
        if not inst.state.bills_compute:
            continue
        if not judge(inst.labels, exempt_tag, now, max_days).state.exempts:
            continue
        who = inst.labels.get(owner_tag, "").strip()[:128] or NO_OWNER
        count, usd, unpriced = found.get(who, (0, Decimal(0), 0))
        price = inst.hourly_usd
        found[who] = (
            count + 1,
            usd + (price or Decimal(0)),
            unpriced + (1 if price is None else 0),
        )
    rows = [Holder(who, n, usd, u) for who, (n, usd, u) in found.items()]
    return sorted(rows, key=lambda h: (-h.usd_per_hour, h.holder))


NO_OWNER = "(no owner)"
