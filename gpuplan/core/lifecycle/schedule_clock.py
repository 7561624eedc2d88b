"""The clock of a schedule: is it on-hours or off-hours at an instant, since when, until when.

Pure: the schedule and the instant come in (aware datetimes, any zone); periods come out
in UTC. Local times are read in the schedule's IANA zone (:mod:`zoneinfo`), so daylight
saving moves the UTC instant, never the local hour: on-hours 08:00-19:00 in
Europe/Berlin are 07:00-18:00 UTC in winter and 06:00-17:00 UTC in summer, and the night
that holds the change is an hour shorter (spring) or longer (autumn). A local time the
change skips (02:30 on the last Sunday of March in Berlin) is read with the offset before
the change (fold 0), i.e. 03:30 summer time; a repeated one (01:30 on the first Sunday
of November in New York) is its first occurrence.

A day is an *on-day* when its weekday is listed and it is not a holiday; an on-day's
on-hours are ``[on_hours, off_hours)``; everything else is off-hours. An off period runs
from one on-day's ``off_hours`` to the next on-day's ``on_hours`` (a weekend, a holiday
and the nights around them are one period).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import lru_cache
from zoneinfo import ZoneInfo

from gpuplan.core.policy.schedules import WEEKDAYS, Schedule

MAX_DAYS = 400
"""How far the clock looks back or ahead for an on-day (a year of holidays and more)."""


@dataclass(frozen=True)
class Period:
    """The stretch of on-hours or off-hours an instant falls in (UTC)."""

    on: bool
    since: datetime | None
    """When it began; None: no on-day in the last :data:`MAX_DAYS` days."""
    until: datetime | None
    """When it ends; None: no on-day in the next :data:`MAX_DAYS` days."""

    def describe(self, schedule: Schedule) -> str:
        """``off-hours since Fri 19:00 Europe/Berlin, until Mon 08:00`` (local times)."""
        zone = ZoneInfo(schedule.timezone)
        kind = "on-hours" if self.on else "off-hours"
        since = f" since {_local(self.since, zone)}" if self.since else ""
        until = f" until {_local(self.until, zone)}" if self.until else ""
        return f"{kind}{since}{until} {schedule.timezone}"


def _local(moment: datetime, zone: ZoneInfo) -> str:
    return moment.astimezone(zone).strftime("%a %Y-%m-%d %H:%M")


def is_on_day(schedule: Schedule, day: date) -> bool:
    return WEEKDAYS[day.weekday()] in schedule.weekdays and day not in _holidays(schedule)


@lru_cache(maxsize=64)
def _holiday_set(holidays: tuple[str, ...]) -> frozenset[date]:
    return frozenset(date.fromisoformat(day) for day in holidays)


def _holidays(schedule: Schedule) -> frozenset[date]:
    return _holiday_set(tuple(schedule.holidays))


def on_window(schedule: Schedule, day: date) -> tuple[datetime, datetime]:
    """The on-hours of ``day`` (an on-day) in UTC."""
    zone = ZoneInfo(schedule.timezone)
    start = datetime.combine(day, schedule.on_hours, tzinfo=zone)
    end = datetime.combine(day, schedule.off_hours, tzinfo=zone)
    return start.astimezone(UTC), end.astimezone(UTC)


def period_at(schedule: Schedule, now: datetime) -> Period:
    """The on-hours or off-hours period ``now`` falls in."""
    zone = ZoneInfo(schedule.timezone)
    today = now.astimezone(zone).date()
    if is_on_day(schedule, today):
        start, end = on_window(schedule, today)
        if start <= now < end:
            return Period(True, start, end)
    since = _last_off_start(schedule, today, now)
    return Period(False, since, _next_on_start(schedule, today, now))


def _last_off_start(schedule: Schedule, today: date, now: datetime) -> datetime | None:
    for back in range(MAX_DAYS + 1):
        day = today - timedelta(days=back)
        if is_on_day(schedule, day):
            end = on_window(schedule, day)[1]
            if end <= now:
                return end
    return None


def _next_on_start(schedule: Schedule, today: date, now: datetime) -> datetime | None:
    for ahead in range(MAX_DAYS + 1):
        day = today + timedelta(days=ahead)
        if is_on_day(schedule, day):
            start = on_window(schedule, day)[0]
            if start > now:
                return start
    return None


def off_hours_between(schedule: Schedule, start: datetime, end: datetime) -> float:
    """Hours of off-hours within ``[start, end)`` (the simulator's and the check's sum)."""
    total = timedelta(0)
    moment = start
    while moment < end:
        period = period_at(schedule, moment)
        stop = min(end, period.until or end)
        if not period.on:
            total += stop - moment
        if stop <= moment:  # pragma: no cover - a period always ends after its instant
            break
        moment = stop
    return total.total_seconds() / 3600
