"""The replay measures honestly: what a live run could see, the action settings, the new
signals, trace format v2 and the JSON ``stops`` list."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.errors import DataError
from gpuplan.core.lifecycle.idle import IdleRule
from gpuplan.core.lifecycle.simulation.replay import ActionSettings, replay_trace, simulate
from gpuplan.core.lifecycle.simulation.traces import Kind, Segment, Trace
from gpuplan.loaders.catalog import load_catalog
from gpuplan.loaders.traces import read_traces
from gpuplan.usecases.lifecycle.simulate import EPOCH, action_settings, folder_fleet, result_record

Part = tuple[int, Kind, float | None, float | None, float | None, str]
"""(minutes, kind, utilisation, GPU memory %, CPU %, label)."""


def trace(*parts: Part, name: str = "t-1", signals: bool = True) -> Trace:
    util: list[float | None] = []
    memory: list[float | None] = []
    cpu: list[float | None] = []
    segments = []
    for minutes, kind, u, m, c, label in parts:
        segments.append(Segment(len(util), len(util) + minutes, kind, label))
        util += [u] * minutes
        memory += [m] * minutes
        cpu += [c] * minutes
    return Trace(
        name, "g5.xlarge", "hand", Decimal(1), tuple(util), tuple(segments),
        memory=tuple(memory) if signals else None, cpu=tuple(cpu) if signals else None,
    )  # fmt: skip


def test_no_window_reads_before_minute_zero() -> None:
    zero = trace((600, "idle", 0.0, None, None, "forgotten"), signals=False)
    result = replay_trace(zero, rule=IdleRule(), interval=10, epoch=EPOCH)
    assert result.stops and result.stops[0].minute >= 50  # 10 of 12 periods observed
    assert "observed" in result.stops[0].reason or result.stops[0].minute >= 60


def test_notify_saves_nothing_and_flags_instead() -> None:
    idle = trace((60, "busy", 90.0, 50.0, 30.0, "training"), (600, "idle", 0.0, 0.0, 1.0, "done"))
    result = simulate([idle], rule=IdleRule(), interval_minutes=10, epoch=EPOCH,
                      actions=ActionSettings(stops=False))  # fmt: skip
    assert result.stops == 0 and result.saved_usd == 0
    assert result.flags >= 1


def test_notice_delays_the_stop() -> None:
    idle = trace((60, "busy", 90.0, 50.0, 30.0, "training"), (600, "idle", 0.0, 0.0, 1.0, "done"))
    plain = replay_trace(idle, rule=IdleRule(), interval=10, epoch=EPOCH)
    noticed = simulate([idle], rule=IdleRule(), interval_minutes=10, epoch=EPOCH,
                       actions=ActionSettings(notice_minutes=30)).traces[0]  # fmt: skip
    assert noticed.stops[0].minute == plain.stops[0].minute + 30


def test_the_cap_defers_stops_to_the_next_run() -> None:
    # Issue 25: on main a run with more due than the cap stopped none, forever.
    fleet = [trace((600, "idle", 0.0, 0.0, 1.0, "forgotten"), name=f"t-{n}") for n in range(3)]
    fleet += [trace((600, "busy", 90.0, 50.0, 30.0, "training"), name=f"b-{n}") for n in range(7)]
    capped = simulate(fleet, rule=IdleRule(), interval_minutes=10, epoch=EPOCH,
                      actions=ActionSettings(max_actions_per_run=2))  # fmt: skip
    assert capped.stops == 3 and capped.aborted_runs == 0
    assert (capped.deferred_runs, capped.deferrals) == (1, 1)
    first = sorted(t.stops[0].minute for t in capped.traces if t.stops)
    assert first[0] == first[1] and first[2] == first[0] + 10


def test_the_breaker_replays_the_planner_rule() -> None:
    # Every running instance due at once on utilisation alone (no memory, no CPU): the
    # run is aborted; fewer than breaker_min_actions: not.
    fleet = [
        trace((600, "idle", 0.0, None, None, "forgotten"), name=f"t-{n}", signals=False)
        for n in range(6)
    ]
    breaker = ActionSettings(breaker_percent=80, breaker_min_actions=5)
    tripped = simulate(fleet, rule=IdleRule(), interval_minutes=10, epoch=EPOCH, actions=breaker)
    assert tripped.stops == 0 and tripped.aborted_runs > 0
    few = simulate(fleet[:4], rule=IdleRule(), interval_minutes=10, epoch=EPOCH, actions=breaker)
    assert few.stops == 4 and few.aborted_runs == 0


def test_forgotten_instances_idle_on_every_signal_are_stopped_under_the_breaker() -> None:
    # Issue 33: three forgotten dev boxes of three (GPU memory and CPU quiet too) tripped
    # the default breaker (3 of 3 >= 80%) on every run, and nothing was ever saved.
    fleet = [trace((600, "idle", 0.0, 0.0, 1.0, "forgotten"), name=f"t-{n}") for n in range(3)]
    result = simulate(fleet, rule=IdleRule(), interval_minutes=10, epoch=EPOCH,
                      actions=action_settings(None))  # fmt: skip
    assert result.stops == 3 and result.aborted_runs == 0
    assert result.share_of(result.perfect_oracle_usd) >= 0.85


def test_the_breaker_trips_at_the_threshold() -> None:
    # Issue 33: 8 of 10 is 80%, "not more than 80%" let it through; at the threshold it trips.
    quiet = [
        trace((600, "idle", 0.0, None, None, "agent broken"), name=f"q-{n}", signals=False)
        for n in range(8)
    ]
    busy = [trace((600, "busy", 90.0, 50.0, 30.0, "training"), name=f"b-{n}") for n in range(2)]
    result = simulate([*quiet, *busy], rule=IdleRule(), interval_minutes=10, epoch=EPOCH,
                      actions=action_settings(None))  # fmt: skip
    assert result.stops == 0 and result.aborted_runs > 0


def eval_server(signals: bool) -> Trace:
    parts: list[Part] = []
    for _ in range(6):
        parts.append((20, "busy", 85.0, 60.0, 40.0, "evaluation"))
        parts.append((115, "busy", 0.0, 60.0, 1.0, "waiting, model loaded"))
    parts.append((600, "idle", 0.0, 60.0, 1.0, "forgotten, model loaded"))
    return trace(*parts, signals=signals)


def test_eval_server_waits_are_not_stopped_but_the_forgotten_server_is() -> None:
    result = replay_trace(eval_server(True), rule=IdleRule(), interval=10, epoch=EPOCH)
    assert result.false_stops == 0
    assert len(result.stops) == 1 and "live-process window" in result.stops[0].reason
    assert result.stops[0].minute >= 6 * 135 - 115 + 180  # quiet since the last evaluation
    blind = replay_trace(eval_server(False), rule=IdleRule(), interval=10, epoch=EPOCH)
    assert blind.false_stops >= 5  # utilisation alone stops every wait


def test_cpu_phase_is_not_idle_and_a_hung_loop_is_stopped_in_the_end() -> None:
    phase = trace(
        (120, "busy", 90.0, 50.0, 30.0, "epoch"),
        (110, "busy", 0.0, 0.2, 85.0, "CPU phase, no GPU process"),
        (120, "busy", 90.0, 50.0, 30.0, "epoch"),
        (300, "idle", 0.0, 70.0, 25.0, "hung loop, one core busy"),
    )
    result = replay_trace(phase, rule=IdleRule(), interval=10, epoch=EPOCH)
    assert result.false_stops == 0
    (stop,) = result.stops
    assert stop.minute >= 350 + 180 and stop.label.startswith("hung loop")


def test_v2_folder_with_five_minute_rows_gaps_and_signals(tmp_path: Path) -> None:
    (tmp_path / "fleet.csv").write_text("instance_id,instance_type,hourly_usd\nx,any,2\n")
    rows = ["minute,cpu_percent,utilisation,gpu_memory_used_percent,kind,label,extra"]
    rows += [f"{m},3,{90 if m < 60 else 0},{40 if m < 60 else 0},busy,job,z" for m in (0, 5, 55)]
    rows += [f"{m},1,0,0,idle,done," for m in range(60, 300, 5)]
    (tmp_path / "x.csv").write_text("\n".join(rows) + "\n")
    (t,) = read_traces(tmp_path, price_of=lambda _: None)
    assert t.minutes == 300 and t.hourly_usd == Decimal(2)
    assert t.utilisation[:5] == (90.0,) * 5 and t.utilisation[10:55] == (None,) * 45
    assert t.memory is not None and t.memory[0] == 40.0 and t.cpu is not None
    assert [(s.start, s.end, s.kind) for s in t.segments] == [(0, 60, "busy"), (60, 300, "idle")]


@pytest.mark.parametrize(
    ("body", "where"),
    [
        ("minute,utilisation,cpu_percent\n0,1,2\n1,1,nan\n", r"x.csv:3:3: cpu_percent"),
        ("minute,utilisation\n0,1\n0,1\n", r"x.csv:3:1: minutes must increase"),
        ("minute,utilisation,kind\n0,1,maybe\n", r"x.csv:2:3: kind: expected busy or idle"),
        ("minute,utilisation\n0.5,1\n", r"x.csv:2:1: minute"),
        ("minute,utilisation\n0,1,2,3\n", r"x.csv:2:3: 4 cells"),
        ("", r"x.csv:1: empty"),
    ],
)
def test_loader_errors_name_file_line_and_column(tmp_path: Path, body: str, where: str) -> None:
    (tmp_path / "fleet.csv").write_text("instance_id,instance_type,hourly_usd\nx,g5.xlarge,2\n")
    (tmp_path / "x.csv").write_text(body)
    with pytest.raises(DataError, match=where):
        read_traces(tmp_path, price_of=lambda _: None)


def test_cli_json_lists_stops_and_overrides(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["simulate", "--instances", "6", "--hours", "24", "--write-traces", str(tmp_path)]
    assert main([*argv, "--json"]) == 0
    capsys.readouterr()
    assert main(["simulate", "--traces", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert isinstance(out["stops"], list) and out["stop_count"] == len(out["stops"])
    for stop in out["stops"]:
        assert set(stop) >= {"instance_id", "minute", "reason"}
    what_if = ["--window", "30", "--threshold", "2", "--live-window", "90", "--json"]
    assert main(["simulate", "--traces", str(tmp_path), *what_if]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["window_minutes"], out["threshold_percent"]) == (30, 2.0)
    assert out["live_process_window_minutes"] == 90
    assert main(["simulate", "--window", "0"]) == 2
    assert "--window" in capsys.readouterr().err


def test_adversarial_week_from_the_second_generator_has_no_harmful_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[3] / "scripts/adversarial_traces.py"
    argv = [str(tmp_path), "--seed", "5", "--instances", "24", "--hours", "72"]
    subprocess.run([sys.executable, str(script), *argv], check=True, capture_output=True)
    assert main(["simulate", "--traces", str(tmp_path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["harmful_stops"] == 0 and not any(s["harmful"] for s in out["stops"])
    assert out["share_of_perfect_oracle"] >= 0.8


def test_a_folder_without_fleet_csv_prices_every_trace_at_one_dollar(tmp_path: Path) -> None:
    rows = ["minute,utilisation,kind"] + [f"{m},0,idle" for m in range(0, 300, 5)]
    (tmp_path / "a.csv").write_text("\n".join(rows) + "\n")
    (trace_a,) = read_traces(tmp_path, price_of=lambda _: None)
    assert (trace_a.instance_id, trace_a.hourly_usd, trace_a.minutes) == ("a", Decimal(1), 300)
    with pytest.raises(DataError, match="not a folder"):
        read_traces(tmp_path / "missing", price_of=lambda _: None)


def _office_week(
    tmp_path: Path, *extra: str, instances: int = 60, hours: int = 72
) -> dict[str, object]:
    import subprocess
    import sys

    script = Path(__file__).resolve().parents[3] / "scripts/adversarial_traces.py"
    size = ["--instances", str(instances), "--hours", str(hours)]
    argv = [str(tmp_path), "--seed", "5", *size, "--office"]
    subprocess.run([sys.executable, str(script), *argv, *extra], check=True, capture_output=True)
    result = simulate(
        folder_fleet(tmp_path, load_catalog(), IdleRule()),
        rule=IdleRule(),
        interval_minutes=10,
        epoch=EPOCH,
        actions=action_settings(None),
    )
    return result_record(result)


def test_the_default_policy_on_a_team_week_defers_and_never_aborts(tmp_path: Path) -> None:
    # Issue 25: on main the cap of 10 aborted every run once more than ten were due at
    # once (the week starts with the weekend's notebooks idle), so it saved nothing.
    record = _office_week(tmp_path)
    assert record["harmful_stops"] == 0 and record["aborted_runs"] == 0
    assert record["deferred_runs"] > 0  # the cap was reached, and the rest waited
    assert float(str(record["share_of_perfect_oracle"])) >= 0.8


def test_no_busy_instance_is_stopped_when_every_agent_reports_zeros(tmp_path: Path) -> None:
    # The step into zeros on every instance at once is a fault, not idleness: unknown
    # while it lasts and through the recovery hold (the breaker needs not trip).
    record = _office_week(tmp_path, "--outage", "38:120")
    assert record["harmful_stops"] == 0


@pytest.mark.parametrize(("share", "kind"), [("0.3", "gpu"), ("0.8", "all")])
def test_no_busy_instance_is_stopped_when_part_of_the_agents_break(
    tmp_path: Path, share: str, kind: str
) -> None:
    # Issue 33: with 3, 5 or 8 of 10 agents broken, busy instances were stopped during
    # and after the outage (live pauses with 4 hours of zeros behind them).
    outage = ("--outage", "38:240", "--outage-share", share, "--outage-kind", kind)
    record = _office_week(tmp_path, *outage)
    assert record["harmful_stops"] == 0
