"""Accuracy on published runs, whole sources held out: scripts/bench_accuracy.py's sanity.

Each row of ``published_runs.csv`` is estimated exactly as an outside check runs
``gpuplan estimate ... --json`` (median ``gpu_hours`` over the options with exactly N
GPUs). The only constant fitted on these runs is the goodput; the headline leaves a whole
lab out at a time. These tests check that the held-out machinery really holds the lab out,
that the shipped goodput and band are the full-table fit, that every MoE run passes its
README flags, and guard the held-out figures from regressing.
"""

from __future__ import annotations

import csv
import importlib.util
import io
import json
import statistics
import sys
from contextlib import redirect_stdout
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuplan.cli.main import main
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner.records import plan_record
from gpuplan.loaders.catalog import load_catalog
from gpuplan.usecases.planner.estimate import EstimateArgs, estimate

ROOT = Path(__file__).resolve().parents[3]
TABLE = Path(__file__).with_name("published_runs.csv")
SHARED = ROOT / "tests/core/planner/data/published-runs.json"
"""The shared reference list, copied into the repository (see data/README.md)."""
UPSTREAM = ROOT.parent / "shared/data/published-runs.json"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "bench_accuracy", ROOT / "scripts/bench_accuracy.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_accuracy"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    return _script()


@pytest.fixture(scope="module")
def runs(bench: ModuleType) -> list[Any]:
    loaded, _ = bench.load_runs()
    return list(loaded)


def _rows() -> list[dict[str, str]]:
    with TABLE.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def test_every_row_has_a_source_and_a_count_note() -> None:
    for row in _rows():
        assert len(row["source"]) > 20 and row["gpus_note"], row["model"]


def test_the_copy_of_the_shared_runs_is_current() -> None:
    """Where the shared list sits beside the repository, the copy must equal it."""
    copy = json.loads(SHARED.read_text(encoding="utf-8"))
    assert len(copy) >= 16 and all(run.get("source") for run in copy)
    if UPSTREAM.exists():  # a checkout without the shared folder checks the copy alone
        assert copy == json.loads(UPSTREAM.read_text(encoding="utf-8"))


def test_every_shared_run_with_gpu_hours_is_in_the_table() -> None:
    names = {r["model"] for r in _rows()}
    for run in json.loads(SHARED.read_text(encoding="utf-8")):
        if run["gpu_hours"] is None:
            continue
        model = run["model"].replace(" (MoE)", "")
        assert model in names, model


LEFT_OUT_KINDS = ("distillation", "bound, not a total", "estimate, not a measured total")
"""The only reasons a row may be left out: what was published is not an end-to-end 6ND run
(distillation) or not a figure of a run (an upper bound, a forecast). Never its error."""


def test_rows_are_left_out_only_with_a_reason_and_never_for_error() -> None:
    left = [r for r in _rows() if r["left_out"]]
    assert {r["model"] for r in left} == {
        "Llama-3.2-1B",
        "Llama-3.2-3B",
        "Snowflake-Arctic",
        "Apertus-70B",
    }
    for row in left:
        assert row["left_out"].startswith(LEFT_OUT_KINDS), row["model"]


def test_cli_json_gives_the_same_median_as_the_use_case() -> None:
    row = _rows()[0]
    argv = _script().argv_of(row)
    buffer = io.StringIO()
    with redirect_stdout(buffer):
        assert main(argv) == 0
    gpus = float(row["gpus"])
    via_cli = statistics.median(
        o["gpu_hours"] for o in json.loads(buffer.getvalue())["options"] if o["gpus"] == gpus
    )
    values: dict[str, Any] = {}
    for flag, value in zip(argv[1:-1:2], argv[2:-1:2], strict=True):
        name = flag.lstrip("-").replace("-", "_")
        values[name] = [value] if name == "gpu" else value
    record = plan_record(estimate(load_catalog(), EstimateArgs(**values)))
    via_use_case = statistics.median(o["gpu_hours"] for o in record["options"] if o["gpus"] == gpus)
    assert via_cli == pytest.approx(via_use_case)


def test_a_held_out_lab_does_not_see_its_own_figures(bench: ModuleType, runs: list[Any]) -> None:
    before = bench.cross_validate(runs)
    lab = runs[0].source
    moved = [replace(r, published=r.published * 10) if r.source == lab else r for r in runs]
    after = bench.cross_validate(moved)
    for b, a in zip(before, after, strict=True):
        if b.run.source == lab:
            assert a.estimate == pytest.approx(b.estimate), b.run.name
    # ... while an in-sample fit would move towards the changed figures.
    assert bench.fit(moved) != bench.fit(runs)


def test_sources_are_labs_and_every_run_has_one(runs: list[Any]) -> None:
    labs = {r.source for r in runs}
    assert len(labs) >= 15
    assert all(r.source != r.name for r in runs), [r.name for r in runs if r.source == r.name]


@pytest.fixture(scope="module")
def fresh(bench: ModuleType) -> list[Any]:
    return list(bench.load_fresh())


def test_shipped_goodput_and_band_are_the_full_table_fit(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    assert bench.fit(runs) == pytest.approx(cal.GOODPUT, abs=0.005)
    calibrated = bench.calibrate(runs, fresh)
    assert (calibrated.low, calibrated.high, *calibrated.large) == (
        pytest.approx(cal.RESIDUAL_LOW_SMALL, abs=0.01),
        pytest.approx(cal.RESIDUAL_HIGH_SMALL, abs=0.01),
        pytest.approx(cal.RESIDUAL_LOW_LARGE, abs=0.01),
        pytest.approx(cal.RESIDUAL_HIGH_LARGE, abs=0.01),
    )
    # The screen's "expect about 90% of runs inside" is measured, not typed: every public
    # run, each with a band built from the other labs' residuals only; the stated figure is
    # the one most sets of public runs drawn by lab fall within 10 points of, and each set's
    # own coverage is within 10 points of it (the tolerance).
    assert calibrated.stated == pytest.approx(cal.RANGE_COVERAGE, abs=0.006)
    published, new = calibrated.by_set
    assert published == pytest.approx(cal.RANGE_COVERAGE_PUBLISHED, abs=0.006)
    assert new == pytest.approx(cal.RANGE_COVERAGE_FRESH, abs=0.006)
    assert calibrated.mean == pytest.approx((published + new) / 2)
    assert abs(published - calibrated.stated) <= 0.10 and abs(new - calibrated.stated) <= 0.10
    assert calibrated.coverage == min(published, new) >= bench.RANGE_TARGET
    assert len(calibrated.held) == cal.RANGE_RUNS == len(runs) + len(fresh)
    assert len({h.run.source for h in calibrated.held}) == cal.RANGE_LABS
    assert calibrated.level == pytest.approx(cal.RANGE_LEVEL)
    assert cal.RANGE_COVERAGE >= bench.RANGE_TARGET


def test_the_level_is_the_first_that_holds_the_target(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    """The level is calibrated to the measured coverage: any narrower level tried first
    holds less than 85% of one set of public runs with their labs left out."""
    shipped = bench.calibrate(runs, fresh)
    for level in bench.RANGE_LEVELS:
        if level >= shipped.level:
            break
        narrower = bench.calibrate(runs, fresh, levels=(level,))
        assert narrower.coverage < bench.RANGE_TARGET
        assert narrower.high / narrower.low < shipped.high / shipped.low
        assert narrower.large[1] / narrower.large[0] < shipped.large[1] / shipped.large[0]


def test_a_level_per_side_was_checked_and_what_it_costs(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    """A narrower band from 256 GPUs up (its own level: 97.5% under 256, 95% from 256 up,
    4.6x against 4.8x) holds the targets on both sets but fewer fresh runs (86% against
    89%: YaLM-100B falls out on that side, 4 of the 6 fresh runs from 256 GPUs up against
    5): checked, not shipped (docs/estimating.md)."""
    shipped = bench.calibrate(runs, fresh)
    pairs = [
        bench._pair(runs, fresh, small, large)
        for small in bench.RANGE_LEVELS
        for large in bench.RANGE_LEVELS
    ]
    holding = [p for p in pairs if p.holds]
    best = min(holding, key=lambda p: p.width)
    assert best.width < shipped.width
    assert best.by_set[1] < shipped.by_set[1]

    def fresh_large(calibration: Any) -> int:
        held = calibration.held[len(runs) :]
        return sum(h.inside for h in held if h.run.gpus >= cal.BAND_CUT_GPUS)

    assert fresh_large(best) < fresh_large(shipped)
    # The README's DeepSeek-V3 example (2.66M published, 3.37M central) is inside both.
    assert 3.37e6 * shipped.large[0] < 3.37e6 * best.large[0] < 2.66e6


def test_the_gpu_count_bands_narrow_the_range_at_equal_coverage(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    """One band for every run never holds what the two bands split at 256 GPUs hold: at
    every level tried it holds fewer fresh runs, and at the widest (97.5%: 86% of the fresh
    runs against 89%) it is over twice as wide (10.6x against 4.8x; docs/estimating.md)."""
    pool = runs + fresh
    centrals = bench.held_centrals(runs, pool)
    weights = bench.set_weights(runs, fresh)
    shipped = bench.calibrate(runs, fresh)
    width = statistics.median(h.high / h.low for h in shipped.held)
    for level in bench.RANGE_LEVELS:
        held = bench.held_bands(pool, centrals, weights, level)
        one = bench.Calibration(level, 0.0, 0.0, held, len(runs))
        assert one.coverage < shipped.coverage, level
    assert statistics.median(h.high / h.low for h in held) > 2 * width


def test_a_run_band_never_sees_its_own_lab(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    """Moving one fresh lab's published figures moves its own runs' residuals but not their
    bands: each band comes from the other labs only."""
    before = bench.calibrate(runs, fresh, levels=(cal.RANGE_LEVEL,)).held
    lab = fresh[0].source
    moved = [replace(r, published=r.published * 10) if r.source == lab else r for r in fresh]
    after = bench.calibrate(runs, moved, levels=(cal.RANGE_LEVEL,)).held
    for b, a in zip(before, after, strict=True):
        if b.run.source == lab:
            assert (a.low, a.high) == (pytest.approx(b.low), pytest.approx(b.high))
            if a.run.published != b.run.published:  # moved 10x: now outside its own band
                assert not a.inside, a.run.name


def test_held_out_figures_stay_within_the_targets(bench: ModuleType, runs: list[Any]) -> None:
    held = bench.cross_validate(runs)
    ratios = [h.ratio for h in held]
    errors = [abs(r - 1) for r in ratios]
    inside = sum(h.inside for h in held) / len(held)
    widths = [h.high / h.low for h in held]
    lines = [f"{h.run.name:22} {h.ratio:5.2f} {'in' if h.inside else 'OUT'}" for h in held]
    report = "\n".join(lines)
    # Regression guards on the leave-source-out figures in docs/estimating.md (58 runs,
    # 17 labs: 19.6%, worst 2.21x, with the rule of thumb averaged in (the model alone:
    # 18.4%, worst 1.98x); with the bands calibrated over every public run, 98% of the
    # published runs inside at a median 4.82x).
    assert statistics.median(errors) <= 0.20, report
    assert inside >= 0.95, report
    assert statistics.median(widths) <= 5.0, report
    assert max(max(r, 1 / r) for r in ratios) <= 2.3, report
    # The central estimate beats 6ND at 40% of the dense bf16 peak on the same runs.
    naive = [abs(bench.naive(h.run) / h.run.published - 1) for h in held]
    assert statistics.median(errors) < statistics.median(naive), report


def test_the_central_figure_beats_naive_arithmetic_on_each_set(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    """Held out (each run's goodput from the other labs' published runs), the central
    figure's median error is below 6ND at 40% of peak on the published runs (19.6% against
    34.0%), on the fresh, never-fitted runs (37.6% against 43.6%) and on the first 20 fresh
    runs (30.7% against 37.4%; the model alone lost there: 42.2%). The rule-of-thumb average
    turned that loss into a win (benchmarks/results/central_alternatives.md)."""
    held = bench.calibrate(runs, fresh).held
    first = held[len(runs) : len(runs) + 20]
    for part in (held[: len(runs)], held[len(runs) :], first):
        central = statistics.median(abs(h.ratio - 1) for h in part)
        naive = statistics.median(abs(bench.naive(h.run) / h.run.published - 1) for h in part)
        assert central < naive, (central, naive)
    # ... and the model alone (no rule of thumb) still loses on the first 20: the change is
    # what wins there, not a change in the runs.
    alone = statistics.median(
        abs(
            h.run.steady / bench.fit([r for r in runs if r.source != h.run.source])
            - h.run.published
        )
        / h.run.published
        for h in first
    )
    naive = statistics.median(abs(bench.naive(h.run) / h.run.published - 1) for h in first)
    assert alone > naive


def test_the_cli_range_holds_the_central_figure(runs: list[Any]) -> None:
    for run in runs:
        assert run.low < run.median < run.high, run.name
        low, high = cal.band(run.gpus)
        assert run.high / run.low == pytest.approx(high / low, rel=0.02)


def test_every_moe_run_passes_the_readme_flags(bench: ModuleType, runs: list[Any]) -> None:
    """--experts and --top-k reach the CLI for every MoE row, and the all-to-all shows."""
    moe = [r for r in _rows() if r["active_params"] and not r["left_out"]]
    assert len(moe) >= 8
    for row in moe:
        argv = bench.argv_of(row)
        assert "--active-params" in argv, row["model"]
        if row["experts"]:
            assert argv[argv.index("--experts") + 1] == row["experts"], row["model"]
        if row["top_k"]:
            assert argv[argv.index("--top-k") + 1] == row["top_k"], row["model"]
        buffer = io.StringIO()
        with redirect_stdout(buffer):
            assert main(argv) == 0
        option = json.loads(buffer.getvalue())["options"][0]
        assert 0 < option["mfu_factors"]["expert all-to-all"] < 1, row["model"]


def test_goodput_by_a_run_property_does_not_beat_one_goodput(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    """Goodput by GPU count or by run length, fitted without each run's lab on the published
    runs, does not beat the one shipped goodput on both sets: by run length 17.5% against
    19.6% on the published runs but 38.5% against 37.6% on the fresh runs; by GPU count
    19.1% against 19.6%, and 38.1% against 37.6%: why neither ships
    (benchmarks/results/accuracy.md, "Alternatives checked")."""

    def median_error(ratios: list[float]) -> float:
        return statistics.median(abs(x - 1) for x in ratios)

    constant = bench.FEATURES[0][1]
    shipped = bench.fit_slope(runs, constant)
    shipped_fresh = median_error([bench._by(shipped, constant, r) for r in fresh])
    shipped_held = median_error([h.ratio for h in bench.cross_validate(runs, fresh)])
    for name, feature in bench.FEATURES[1:]:
        held = [
            bench._by(
                bench.fit_slope([o for o in runs if o.source != r.source], feature), feature, r
            )
            for r in runs
        ]
        full = bench.fit_slope(runs, feature)
        unseen = [bench._by(full, feature, r) for r in fresh]
        better = median_error(held) < shipped_held and median_error(unseen) < shipped_fresh
        assert not better, name


def test_every_stack_label_is_sourced_and_the_stack_is_measured(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    """A ``stack`` label comes with its verbatim quote and source; the check of whether the
    stack narrows the range runs on every labelled run whose stack other labs share."""
    labelled = [r for r in runs + fresh if r.row["stack"]]
    assert len(labelled) >= 30
    for run in labelled:
        assert "Quote" in run.row["stack_source"] or "row's own source" in run.row["stack_source"]
    unlabelled = [r for r in runs + fresh if not r.row["stack"]]
    assert all(not r.row["stack_source"] for r in unlabelled)
    lines = bench.stack_lines(runs, bench.calibrate(runs, fresh))
    assert f"for {len(labelled)} of {len(runs) + len(fresh)} public runs" in lines[0]

    # At equal coverage (6 of the 7 measurable runs) the stated stack narrows the shipped
    # 97.5% bands (3.61x against 4.09x) but not the 95% ones (4.06x against 4.00x): the
    # sign turns with the level on 7 runs whose peers come from one or two labs, so --stack
    # does not ship (docs/estimating.md says so with these figures).
    def equal(level: float) -> tuple[list[str], list[float]]:
        calibrated = bench.calibrate(runs, fresh, levels=(level,))
        rows = [r for r in bench.stack_lines(runs, calibrated) if r.startswith("| at equal")]
        inside = [row.split("|")[3].strip() for row in rows]
        return inside, [float(row.rsplit("|", 2)[1].strip().rstrip("x")) for row in rows]

    inside, width = equal(cal.RANGE_LEVEL)
    assert inside[0] == inside[1] == "6/7"
    assert width[1] < width[0]
    inside, width = equal(0.95)
    assert inside[0] == inside[1]
    assert width[1] >= width[0]


def test_stack_bands_at_equal_coverage_narrow_only_what_holds_as_many(
    bench: ModuleType,
) -> None:
    """The equal-coverage check: a shift that centres every run narrows the band; one that
    moves runs away from the centre does not."""
    rows = [(0.5, 0.5, -1.0, 1.0), (-0.4, -0.4, -1.0, 1.0), (0.2, 0.2, -1.0, 1.0)]
    plain, moved = bench.equal_coverage(rows)
    assert plain[0] == moved[0] == 3
    assert moved[1] < plain[1]
    away = [(0.5, -0.5, -1.0, 1.0), (-0.4, 0.4, -1.0, 1.0), (0.2, -0.2, -1.0, 1.0)]
    plain, moved = bench.equal_coverage(away)
    assert moved[1] > plain[1]


def test_the_stated_coverage_holds_on_sets_drawn_by_lab_more_often_at_the_shipped_level(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    """On sets of 16 and 21 public runs drawn by lab, the stated coverage is within 10
    points of the set's more often at the shipped level (97.5%: 95% of the fresh-like sets of
    16) than at the issue's 80% target's level (95%: 85%), and more often than the sets'
    mean, stated before (78%): why the target is 85% and the figure is chosen on draws."""
    rows = [[c.strip() for c in row.split("|")[1:-1]] for row in bench.draw_lines(runs, fresh)[2:]]
    near = {(r[0], r[1], r[2].split()[1]): float(r[3].split("/")[0].rstrip("% ")) for r in rows}
    shipped = f"{cal.RANGE_LEVEL:.1%}"
    assert {key[0] for key in near} == {"95.0%", shipped}
    for size in ("16", "21"):
        assert near[(shipped, size, "(stated)")] >= 90
        assert near[(shipped, size, "(stated)")] >= near[(shipped, size, "(the")]
    assert near[(shipped, "16", "(stated)")] > near[("95.0%", "16", "(stated)")] + 5


def test_the_stated_figure_is_the_best_whole_percent_on_the_draws(
    bench: ModuleType, runs: list[Any], fresh: list[Any]
) -> None:
    """No other whole percent is within 10 points of more sets drawn by lab (the worse kind
    of draw counting) than the shipped one, which is also within 10 points of each set."""
    calibrated = bench.calibrate(runs, fresh)
    draws = bench.lab_draws(calibrated)
    best = min(bench.within(part, cal.RANGE_COVERAGE) for part in draws)
    for k in range(50, 101):
        assert min(bench.within(part, k / 100) for part in draws) <= best + 1e-12
    assert all(abs(x - cal.RANGE_COVERAGE) <= 0.10 for x in calibrated.by_set)
