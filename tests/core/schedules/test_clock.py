"""The schedule clock: weekdays, weekends, holidays and daylight-saving changes.

Berlin moves to summer time on the last Sunday of March (2026-03-29, 02:00 -> 03:00);
New York back to standard time on the first Sunday of November (2026-11-01, 02:00 ->
01:00). Local hours stay put; their UTC instants move.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from gpuplan.core.lifecycle.schedule_clock import off_hours_between, on_window, period_at
from gpuplan.core.policy.schedules import Schedule

EVERY_DAY = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]


def berlin(**kw: object) -> Schedule:
    return Schedule.model_validate({"timezone": "Europe/Berlin", **kw})


def utc(*parts: int) -> datetime:
    return datetime(*parts, tzinfo=UTC)  # type: ignore[arg-type]


def test_berlin_on_hours_move_an_hour_earlier_in_utc_across_the_last_sunday_of_march() -> None:
    s = berlin(weekdays=EVERY_DAY)
    assert on_window(s, date(2026, 3, 28)) == (utc(2026, 3, 28, 7), utc(2026, 3, 28, 18))
    assert on_window(s, date(2026, 3, 29)) == (utc(2026, 3, 29, 6), utc(2026, 3, 29, 17))
    # The night that holds the change is an hour shorter: 11 h, not 12 h, of off-hours.
    night = period_at(s, utc(2026, 3, 29, 1, 30))
    assert (night.on, night.since, night.until) == (
        False,
        utc(2026, 3, 28, 18),
        utc(2026, 3, 29, 6),
    )
    assert off_hours_between(s, utc(2026, 3, 28, 18), utc(2026, 3, 29, 6)) == 12.0
    assert off_hours_between(s, utc(2026, 3, 28, 12), utc(2026, 3, 29, 12)) == 12.0
    # 06:30 UTC on the Sunday is 08:30 summer time: on-hours (it was off at 06:30 UTC
    # the day before, 07:30 winter time).
    assert period_at(s, utc(2026, 3, 29, 6, 30)).on
    assert not period_at(s, utc(2026, 3, 28, 6, 30)).on


def test_a_local_time_the_spring_change_skips_is_read_before_the_change() -> None:
    s = berlin(weekdays=EVERY_DAY, on_hours="02:30", off_hours="12:00")
    # 02:30 does not exist in Berlin on 2026-03-29: read with +01:00, i.e. 01:30 UTC.
    assert on_window(s, date(2026, 3, 29))[0] == utc(2026, 3, 29, 1, 30)


def test_new_york_off_hours_move_an_hour_later_in_utc_on_the_first_sunday_of_november() -> None:
    s = Schedule.model_validate(
        {"timezone": "America/New_York", "on_hours": "09:00", "off_hours": "18:00",
         "weekdays": EVERY_DAY}
    )  # fmt: skip
    assert on_window(s, date(2026, 10, 31)) == (utc(2026, 10, 31, 13), utc(2026, 10, 31, 22))
    assert on_window(s, date(2026, 11, 1)) == (utc(2026, 11, 1, 14), utc(2026, 11, 1, 23))
    # The night that holds the change is an hour longer: 16 h of off-hours, not 15.
    night = period_at(s, utc(2026, 11, 1, 6))
    assert (night.since, night.until) == (utc(2026, 10, 31, 22), utc(2026, 11, 1, 14))
    assert off_hours_between(s, night.since, night.until) == 16.0  # type: ignore[arg-type]
    assert not period_at(s, utc(2026, 11, 1, 13, 30)).on  # 08:30 EST
    assert period_at(s, utc(2026, 10, 31, 13, 30)).on  # 09:30 EDT


def test_a_repeated_local_time_in_november_is_its_first_occurrence() -> None:
    s = Schedule.model_validate(
        {"timezone": "America/New_York", "on_hours": "01:30", "off_hours": "20:00",
         "weekdays": ["sun"]}
    )  # fmt: skip
    assert on_window(s, date(2026, 11, 1))[0] == utc(2026, 11, 1, 5, 30)  # 01:30 EDT


@pytest.mark.parametrize(
    ("now", "on", "since", "until"),
    [
        # Wednesday 20:30 Berlin: off since 19:00, until Thursday 08:00.
        (utc(2026, 12, 2, 19, 30), False, utc(2026, 12, 2, 18), utc(2026, 12, 3, 7)),
        # Wednesday 10:00 Berlin: on-hours.
        (utc(2026, 12, 2, 9), True, utc(2026, 12, 2, 7), utc(2026, 12, 2, 18)),
        # Saturday: off since Friday 19:00, until Monday 08:00.
        (utc(2026, 12, 5, 11), False, utc(2026, 12, 4, 18), utc(2026, 12, 7, 7)),
        # Christmas Eve (Thursday) and Day (Friday) are holidays: one period from
        # Wednesday 23 Dec 19:00 to Monday 28 Dec 08:00.
        (utc(2026, 12, 24, 10), False, utc(2026, 12, 23, 18), utc(2026, 12, 28, 7)),
        # Exactly at on_hours: on; exactly at off_hours: off.
        (utc(2026, 12, 3, 7), True, utc(2026, 12, 3, 7), utc(2026, 12, 3, 18)),
        (utc(2026, 12, 3, 18), False, utc(2026, 12, 3, 18), utc(2026, 12, 4, 7)),
    ],
)
def test_periods_over_a_week_with_holidays(
    now: datetime, on: bool, since: datetime, until: datetime
) -> None:
    s = berlin(holidays=["2026-12-24", "2026-12-25"])
    period = period_at(s, now)
    assert (period.on, period.since, period.until) == (on, since, until)


def test_describe_names_local_times_and_the_zone() -> None:
    s = berlin()
    text = period_at(s, utc(2026, 12, 5, 11)).describe(s)
    assert text == "off-hours since Fri 2026-12-04 19:00 until Mon 2026-12-07 08:00 Europe/Berlin"
