"""The ``schedules:`` section: named on-hours in an IANA time zone, and who follows them.

A schedule says when instances may run (``on_hours`` to ``off_hours`` on its
``weekdays``, local time in ``timezone``); every other hour is off-hours, and so is the
whole of each holiday. Which schedule an instance follows: the value of its ``tag`` (a
schedule name, or ``off``), else ``default`` when ``applies_to`` is ``all`` (opt-out),
else none (``tagged``: opt-in). What happens at off-hours and on-hours is
``gpuplan schedule`` (docs/policy.md, "schedules"); the clock itself is
:mod:`gpuplan.core.lifecycle.schedule_clock`.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time
from enum import StrEnum
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    BeforeValidator,
    Field,
    PlainSerializer,
    StrictBool,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
)

from gpuplan.core.policy.fields import TagName, TagValue, describe
from gpuplan.core.policy.section import Section

OFF = "off"
"""The tag value that takes an instance out of every schedule."""
MAX_HOLIDAYS = 1000
_TIME = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
_ZONE = re.compile(r"^[A-Za-z][A-Za-z0-9_+-]*(?:/[A-Za-z0-9_+-]+){0,2}$")
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


def _zone(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(
            f"expected an IANA time zone such as 'Europe/Berlin', got {describe(value)}"
        )
    if not _ZONE.match(value) or len(value) > 64:
        raise ValueError(f"{value!r} is not an IANA time zone name (e.g. 'America/New_York')")
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"unknown time zone {value!r}; expected an IANA name such as 'Europe/Berlin' or 'UTC'"
        ) from None
    return value


def _clock(value: Any) -> time:
    if isinstance(value, int) and not isinstance(value, bool):
        # YAML 1.1 reads an unquoted 19:00 as the base-60 number 1140.
        raise ValueError(
            f"expected a time of day in quotes such as '19:00', got the number {value} "
            "(YAML reads an unquoted 19:00 as a number)"
        )
    if not isinstance(value, str) or not (match := _TIME.match(value)):
        raise ValueError(
            f"expected a time of day 'HH:MM' from 00:00 to 23:59, got {describe(value)}"
        )
    return time(int(match.group(1)), int(match.group(2)))


def _day(value: Any) -> str:
    """A holiday as ISO text (``2026-12-25``): YAML reads an unquoted date as a date."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, str) and len(value) == 10:
        try:
            return date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    raise ValueError(f"expected a date such as 2026-12-25, got {describe(value)}")


def _weekday(value: Any) -> str:
    if not isinstance(value, str) or value.lower()[:3] not in WEEKDAYS or len(value) > 9:
        raise ValueError(
            f"expected a weekday (mon, tue, wed, thu, fri, sat, sun), got {describe(value)}"
        )
    return value.lower()[:3]


TimeZoneName = Annotated[
    str, BeforeValidator(_zone), WithJsonSchema({"type": "string", "pattern": _ZONE.pattern})
]
"""An IANA time zone name (``Europe/Berlin``, ``America/New_York``, ``UTC``)."""
ClockTime = Annotated[
    time,
    BeforeValidator(_clock),
    PlainSerializer(lambda value: value.strftime("%H:%M")),
    WithJsonSchema({"type": "string", "pattern": _TIME.pattern}),
]
"""A local time of day, ``'HH:MM'`` in quotes."""
Holiday = Annotated[
    str, BeforeValidator(_day), WithJsonSchema({"type": "string", "format": "date"})
]
"""A date, kept as ISO text (no date type in the model: a frozen test clock swaps it)."""
Weekday = Annotated[
    str, BeforeValidator(_weekday), WithJsonSchema({"type": "string", "enum": list(WEEKDAYS)})
]


class AppliesTo(StrEnum):
    """Who follows a schedule without a tag of their own."""

    TAGGED = "tagged"
    """Opt-in: only instances whose schedule tag names a schedule."""
    ALL = "all"
    """Opt-out: every instance in scope follows ``default`` unless its tag says otherwise."""


class Schedule(Section):
    """One schedule: when its instances may run; every other hour is off-hours."""

    timezone: TimeZoneName
    """IANA time zone the hours are in; daylight saving follows the zone."""
    on_hours: ClockTime = time(8, 0)
    """Local time instances are started again (only those ``gpuplan schedule`` stopped)."""
    off_hours: ClockTime = time(19, 0)
    """Local time off-hours begin and instances in scope are stopped; after ``on_hours``."""
    weekdays: list[Weekday] = Field(
        default_factory=lambda: ["mon", "tue", "wed", "thu", "fri"], min_length=1
    )
    """Days with on-hours; the other days are off all day (a weekend)."""
    holidays: list[Holiday] = Field(default_factory=list, max_length=MAX_HOLIDAYS)
    """Dates (``2026-12-25``) that are off all day, in the schedule's time zone."""
    holidays_file: str | None = Field(default=None, min_length=1, max_length=1024)
    """A file of more holidays, one ISO date per line (``#`` comments), relative to the
    policy file; read when the policy loads (at most 64 KiB)."""

    @field_validator("off_hours")
    @classmethod
    def _after_on(cls, value: time, info: ValidationInfo) -> time:
        on = info.data.get("on_hours")
        if on is not None and value <= on:
            raise ValueError(
                f"must be later than on_hours ({on:%H:%M}), got {value:%H:%M}; on-hours "
                "are within one day"
            )
        return value

    @field_validator("weekdays")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        twice = sorted({d for d in value if value.count(d) > 1})
        if twice:
            raise ValueError(f"{', '.join(twice)} listed twice")
        return value


ScheduleName = Annotated[
    TagValue,
    Field(min_length=1),
]


class Schedules(Section):
    """Off-hours and on-hours (``gpuplan schedule``): named schedules and who follows them."""

    named: dict[ScheduleName, Schedule] = Field(default_factory=dict)
    """Schedules by name; a name is also the tag value that picks it."""
    applies_to: AppliesTo = AppliesTo.TAGGED
    """``tagged`` (opt-in: only instances whose ``tag`` names a schedule) or ``all``
    (opt-out: every instance in scope follows ``default`` unless tagged otherwise)."""
    default: ScheduleName | None = None
    """The schedule of instances without the tag; required with ``applies_to: all``."""
    tag: TagName = "gpuplan-schedule"
    """The tag (label) whose value picks an instance's schedule by name, or ``off``."""
    enforce_off_hours: StrictBool = False
    """An instance a person starts during off-hours is left running until the next
    off-hours; true: stop it again at the next run."""

    @field_validator("named")
    @classmethod
    def _not_off(cls, value: dict[str, Schedule]) -> dict[str, Schedule]:
        if OFF in value:
            raise ValueError(f"{OFF!r} is reserved (the tag value that opts an instance out)")
        return value

    @field_validator("default")
    @classmethod
    def _known_default(cls, value: str | None, info: ValidationInfo) -> str | None:
        named = info.data.get("named")
        if value is not None and named is not None and value not in named:
            known = ", ".join(sorted(named)) or "none defined"
            raise ValueError(f"unknown schedule {value!r} (named: {known})")
        return value

    def problems(self) -> list[tuple[tuple[str, ...], str]]:
        """Rules across keys (checked with the policy's others): (key path, message)."""
        if self.applies_to is AppliesTo.ALL and self.default is None:
            return [
                (
                    ("schedules", "default"),
                    "needed with applies_to: all (the schedule of untagged instances)",
                )
            ]
        return []

    def pick(self, labels: dict[str, str]) -> tuple[str | None, str]:
        """The schedule name an instance with ``labels`` follows (None: none), and why."""
        value = labels.get(self.tag)
        if value == OFF:
            return None, f"tag {self.tag}={OFF}: no schedule"
        if value:
            if value in self.named:
                return value, f"tag {self.tag}={value}"
            return None, f"tag {self.tag}={value} names no schedule of this policy: left alone"
        if self.applies_to is AppliesTo.ALL and self.default is not None:
            return self.default, f"default schedule {self.default} (applies_to: all)"
        return None, f"no {self.tag} tag (schedules apply to tagged instances only)"
