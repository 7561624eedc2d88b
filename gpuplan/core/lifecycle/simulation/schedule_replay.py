"""Replay a schedule over traces: dollars saved and work interrupted.

Pure: traces (one value a minute from ``epoch``), a schedule and the epoch come in.
Every instance is taken to follow the schedule (traces carry no tags): it is stopped at
each off-hours start and started at the next on-hours, so it bills for on-hours minutes
only. ``saved`` is every off-hours minute of the trace at its hourly price, busy or not;
``interrupted`` is the off-hours minutes labelled busy (work a scheduled stop cuts, in
hours and dollars), and ``cut`` counts the busy stretches an off-hours start lands in,
or that run into an off period. Dollars are Decimal; minutes are whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal

from gpuplan.core.lifecycle.schedule_clock import period_at
from gpuplan.core.lifecycle.simulation.traces import Trace
from gpuplan.core.policy.schedules import Schedule

_PER_HOUR = Decimal(60)


@dataclass(frozen=True)
class TraceReplay:
    instance_id: str
    hourly_usd: Decimal
    off_minutes: int
    busy_off_minutes: int
    cut: int

    @property
    def saved_usd(self) -> Decimal:
        return self.hourly_usd * self.off_minutes / _PER_HOUR

    @property
    def interrupted_usd(self) -> Decimal:
        return self.hourly_usd * self.busy_off_minutes / _PER_HOUR


@dataclass(frozen=True)
class ScheduleReplay:
    name: str
    traces: tuple[TraceReplay, ...]

    @property
    def saved_usd(self) -> Decimal:
        return sum((t.saved_usd for t in self.traces), Decimal(0))

    @property
    def interrupted_usd(self) -> Decimal:
        return sum((t.interrupted_usd for t in self.traces), Decimal(0))

    @property
    def interrupted_hours(self) -> float:
        return sum(t.busy_off_minutes for t in self.traces) / 60

    @property
    def off_hours(self) -> float:
        return sum(t.off_minutes for t in self.traces) / 60

    @property
    def cut(self) -> int:
        return sum(t.cut for t in self.traces)


def off_intervals(schedule: Schedule, epoch: datetime, minutes: int) -> list[tuple[int, int]]:
    """Off-hours as minute ranges ``[start, end)`` of ``[0, minutes)`` from ``epoch``."""
    out: list[tuple[int, int]] = []
    minute = 0
    while minute < minutes:
        moment = epoch + timedelta(minutes=minute)
        period = period_at(schedule, moment)
        end = minutes
        if period.until is not None:
            end = min(minutes, max(minute + 1, _ceil_minutes(period.until - epoch)))
        if not period.on:
            out.append((minute, end))
        minute = end
    return out


def _ceil_minutes(delta: timedelta) -> int:
    seconds = delta.total_seconds()
    return int(-(-seconds // 60))


def replay_schedule(
    traces: Sequence[Trace], name: str, schedule: Schedule, epoch: datetime
) -> ScheduleReplay:
    longest = max((t.minutes for t in traces), default=0)
    off = off_intervals(schedule, epoch, longest)
    rows = []
    for trace in traces:
        mine = [(a, min(b, trace.minutes)) for a, b in off if a < trace.minutes]
        off_minutes = sum(b - a for a, b in mine)
        busy = [s for s in trace.segments if s.kind == "busy"]
        busy_off = sum(max(0, min(b, s.end) - max(a, s.start)) for s in busy for a, b in mine)
        cut = sum(1 for s in busy if any(s.start < b and a < s.end for a, b in mine))
        rows.append(TraceReplay(trace.instance_id, trace.hourly_usd, off_minutes, busy_off, cut))
    return ScheduleReplay(name, tuple(rows))
