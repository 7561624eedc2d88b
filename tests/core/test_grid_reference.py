"""The idle decision's period grid equals its plain definition, on any samples.

``build_grid`` folds each series once into per-period slots (it runs 50,000 times in an
organisation-sized survey). This checks it against the definition written the obvious
way: per period, the busiest GPU among those that reported in the grid, whether every
expected GPU reported, the fullest GPU memory and the CPU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from gpuplan.core.lifecycle.idle_signals import build_grid
from gpuplan.core.lifecycle.instances import HostSamples

BASE = datetime(2026, 12, 2, 9, 0, tzinfo=UTC)
TIMES = [BASE + timedelta(minutes=5 * i) for i in range(-3, 15)]
VALUES = st.one_of(
    st.sampled_from([0.0, 1.0, 4.99, 5.0, 60.0, 100.0, math.nan]),
    st.floats(0, 100, allow_nan=False),
)
SERIES = st.dictionaries(st.sampled_from(TIMES), VALUES, max_size=len(TIMES))
GPUS = st.dictionaries(st.sampled_from([str(g) for g in range(8)]), SERIES, max_size=6)


def reference(samples: HostSamples, starts: Sequence[datetime], gpu_count: float) -> tuple:
    def peak(series: Mapping[str, Mapping[datetime, float]], t: datetime) -> float | None:
        return max((s[t] for s in series.values() if t in s), default=None)

    util = {g: {t: v for t, v in s.items() if t in starts} for g, s in samples.utilisation.items()}
    util = {g: s for g, s in util.items() if s}
    expected = max(math.ceil(gpu_count), len(util))
    return (
        tuple(starts),
        tuple(peak(util, t) for t in starts),
        tuple(len(util) == expected and all(t in s for s in util.values()) for t in starts),
        tuple(peak(samples.memory, t) for t in starts),
        tuple(samples.cpu.get(t) for t in starts),
        len(util),
        expected,
    )


def shown(row: tuple) -> str:
    return repr(row)  # nan != nan, but its repr is stable


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    util=GPUS,
    memory=GPUS,
    cpu=SERIES,
    first=st.integers(0, 6),
    periods=st.integers(0, 12),
    gpu_count=st.sampled_from([0, 0.5, 1, 2, 4, 8]),
)
def test_the_grid_is_its_definition(
    util: dict[str, dict[datetime, float]],
    memory: dict[str, dict[datetime, float]],
    cpu: dict[datetime, float],
    first: int,
    periods: int,
    gpu_count: float,
) -> None:
    starts = TIMES[first : first + periods]
    samples = HostSamples(utilisation=util, memory=memory, cpu=cpu)
    grid = build_grid(samples, starts, gpu_count)
    got = (
        tuple(grid.starts),
        tuple(grid.busiest),
        tuple(grid.covered),
        tuple(grid.memory),
        tuple(grid.cpu),
        grid.gpus_reporting,
        grid.gpus_expected,
    )
    assert shown(got) == shown(reference(samples, starts, gpu_count))
