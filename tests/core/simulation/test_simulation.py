"""The idle-savings simulator: oracles, replay against the real idle decision, trace folders."""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.errors import DataError
from gpuplan.core.lifecycle.idle import IdleRule
from gpuplan.core.lifecycle.simulation.replay import replay_trace, simulate
from gpuplan.core.lifecycle.simulation.traces import CLASS_MIX, Kind, Segment, Trace, generate_fleet
from gpuplan.loaders.catalog import load_catalog
from gpuplan.loaders.traces import read_traces, write_traces
from gpuplan.usecases.lifecycle.simulate import EPOCH, seeded_fleet

PRICES = {
    t: Decimal(p)
    for t, p in [("g5.xlarge", "1"), ("g6.xlarge", "1"), ("g5.12xlarge", "5"),
                 ("p4d.24xlarge", "20"), ("p5.48xlarge", "50")]
}  # fmt: skip


def make_trace(*parts: tuple[int, Kind, float | None, str]) -> Trace:
    """Segments of (minutes, kind, value, label) laid end to end."""
    values: list[float | None] = []
    segments = []
    for minutes, kind, value, label in parts:
        segments.append(Segment(len(values), len(values) + minutes, kind, label))
        values.extend([value] * minutes)
    return Trace("t-1", "g5.xlarge", "hand", Decimal(6), tuple(values), tuple(segments))


def test_finished_job_is_stopped_one_window_after_it_ends() -> None:
    trace = make_trace((120, "busy", 95.0, "training"), (600, "idle", 0.0, "finished"))
    result = replay_trace(trace, rule=IdleRule(), interval=5, epoch=EPOCH)
    assert len(result.stops) == 1
    stop = result.stops[0]
    assert not stop.false_stop
    assert 180 <= stop.minute <= 190  # idle from 120, window 60, at most a period + a tick late
    assert result.saved_minutes == 720 - stop.minute
    assert result.window_oracle_minutes == 540
    assert result.perfect_oracle_minutes == 600
    assert result.usd(result.saved_minutes) == Decimal(6) * result.saved_minutes / 60


def test_pause_shorter_than_window_is_never_stopped_but_a_short_window_stops_it() -> None:
    trace = make_trace(
        (90, "busy", 90.0, "epoch"),
        (45, "busy", 0.0, "evaluation"),
        (90, "busy", 90.0, "epoch"),
    )
    safe = replay_trace(trace, rule=IdleRule(window_minutes=60), interval=5, epoch=EPOCH)
    assert safe.stops == ()
    risky = replay_trace(trace, rule=IdleRule(window_minutes=30), interval=5, epoch=EPOCH)
    assert [s.false_stop for s in risky.stops] == [True]
    assert risky.stops[0].label == "evaluation"
    assert risky.disrupted_minutes > 0
    assert risky.saved_minutes == 0


def test_missing_metrics_mean_unknown_so_nothing_is_stopped() -> None:
    trace = make_trace((60, "busy", 95.0, "training"), (600, "idle", None, "agent down"))
    result = replay_trace(trace, rule=IdleRule(), interval=5, epoch=EPOCH)
    assert result.stops == ()
    assert result.window_oracle_minutes == 540


def test_restart_brings_grace_and_a_second_stop() -> None:
    trace = make_trace(
        (60, "busy", 80.0, "burst"),
        (300, "idle", 0.0, "abandoned"),
        (60, "busy", 80.0, "burst"),
        (300, "idle", 0.0, "abandoned"),
    )
    result = replay_trace(trace, rule=IdleRule(), interval=5, epoch=EPOCH)
    assert len(result.stops) == 2
    assert result.stops[1].minute > 420  # after the restart at 360 and a full window
    assert result.false_stops == 0


def test_generator_is_seeded_and_keeps_the_class_mix() -> None:
    first = generate_fleet(seed=3, instances=40, hours=24, prices=PRICES)
    again = generate_fleet(seed=3, instances=40, hours=24, prices=PRICES)
    other = generate_fleet(seed=4, instances=40, hours=24, prices=PRICES)
    assert first == again
    assert first != other
    counts = Counter(t.trace_class for t in first)
    for name, share in CLASS_MIX.items():
        assert abs(counts[name] - 40 * share) <= 1
    for trace in first:
        assert trace.minutes == 24 * 60
        assert trace.segments[0].start == 0 and trace.segments[-1].end == trace.minutes


def test_default_trace_set_recovers_85_percent_of_the_perfect_oracle() -> None:
    catalog = load_catalog()
    fleet = seeded_fleet(catalog, seed=7, instances=60, hours=72)
    result = simulate(fleet, rule=IdleRule(), interval_minutes=10, epoch=EPOCH)
    share = result.share_of(result.perfect_oracle_usd)
    assert share is not None and share >= 0.85
    assert result.false_stops == 0
    assert result.window_oracle_usd <= result.perfect_oracle_usd
    utilisation_only = simulate(
        fleet, rule=IdleRule(live_process_window_minutes=60), interval_minutes=10, epoch=EPOCH
    )
    assert utilisation_only.false_stops > 0  # the pauses the generator has are real


def test_trace_folder_round_trip(tmp_path: Path) -> None:
    fleet = generate_fleet(seed=1, instances=6, hours=6, prices=PRICES)
    write_traces(tmp_path, fleet)
    assert read_traces(tmp_path, price_of=lambda _: None) == fleet


def test_unlabelled_traces_get_derived_labels(tmp_path: Path) -> None:
    (tmp_path / "fleet.csv").write_text("instance_id,instance_type\nmine,g5.xlarge\n")
    rows = ["minute,utilisation"] + [f"{m},{90 if m < 30 else 0}" for m in range(300)]
    (tmp_path / "mine.csv").write_text("\n".join(rows) + "\n")
    (trace,) = read_traces(tmp_path, price_of=lambda _: Decimal("1.006"), min_idle_minutes=120)
    assert trace.hourly_usd == Decimal("1.006")
    assert [(s.start, s.end, s.kind) for s in trace.segments] == [
        (0, 30, "busy"),
        (30, 300, "idle"),
    ]


def test_bad_trace_file_names_file_line_field(tmp_path: Path) -> None:
    (tmp_path / "fleet.csv").write_text("instance_id,instance_type,hourly_usd\nx,g5.xlarge,2\n")
    (tmp_path / "x.csv").write_text("minute,utilisation\n0,5\n1,lots\n")
    with pytest.raises(DataError, match=r"x.csv:3:2: utilisation: expected a number"):
        read_traces(tmp_path, price_of=lambda _: None)


def test_cli_json_and_bad_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--instances", "8", "--hours", "12", "--json"]
    assert main([*argv, "--write-traces", str(tmp_path)]) == 0
    generated = json.loads(capsys.readouterr().out)
    assert generated["instances"] == 8 and generated["false_stops"] == 0
    assert main(["simulate", "--traces", str(tmp_path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["saved_usd"] == generated["saved_usd"]
    assert main(["simulate", "--interval", "0"]) == 2
    assert "--interval" in capsys.readouterr().err
