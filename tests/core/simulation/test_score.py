"""The replay's saved and disrupted minutes equal their plain definition: each stopped
minute is saved when :meth:`Trace.kind_at` calls it idle, else disrupted; whatever the
segments (gaps, overlaps where the first wins, segments past the trace's end)."""

from __future__ import annotations

from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.core.lifecycle.idle import IdleRule
from gpuplan.core.lifecycle.simulation.replay import _Live, _score
from gpuplan.core.lifecycle.simulation.traces import Segment, Trace
from gpuplan.core.lifecycle.simulation.window import PeriodReader

SEGMENT = st.builds(
    lambda start, length, kind: Segment(start, start + length, kind, kind),
    st.integers(0, 80),
    st.integers(0, 40),
    st.sampled_from(["busy", "idle"]),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    minutes=st.integers(0, 90),
    segments=st.lists(SEGMENT, max_size=6),
    stopped=st.lists(st.booleans(), max_size=100),
)
def test_saved_and_disrupted_are_their_definition(
    minutes: int, segments: list[Segment], stopped: list[bool]
) -> None:
    trace = Trace("t", "g5.xlarge", "hand", Decimal(1), (1.0,) * minutes, tuple(segments))
    live = _Live(trace, PeriodReader(trace, 5), stopped=bytearray(stopped))
    got = _score(live, IdleRule())
    kinds = [trace.kind_at(m) for m, flag in enumerate(stopped) if flag]
    assert (got.saved_minutes, got.disrupted_minutes) == (kinds.count("idle"), kinds.count("busy"))
