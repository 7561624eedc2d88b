"""The central figure against naive 6ND at 40% of peak, held out, on every set of public
runs; by regime; and the changes to the central figure that were tried.

Run: python scripts/central_alternatives.py

Every figure leaves whole labs out: each run's goodput is the geometric median over the
*published* runs of the other labs (as scripts/bench_accuracy.py does). A change to the
steady state is applied as a per-run multiplier on the model's steady-state GPU-hours,
read from the CLI's own JSON (``workload.flops_dense``, ``workload.flops_attention``,
``mfu_factors``); the expert-parallel span is rerun through the CLI. The shipped central
figure is the geometric mean of the model (that goodput) and the rule of thumb on the same
GPU and cluster (gpuplan/core/planner/central.py); "the model alone" is the central figure
before it.

Besides the median error on each fixed set, each variant gets a robustness figure: how
often it beats naive arithmetic on sets of public runs drawn by lab (whole labs drawn at
random, with replacement, until a set holds 16 runs or more, as the hidden sets hold 16
and 21), from the labs with fresh runs and from every lab, 3,000 draws.

Writes benchmarks/results/central_alternatives.md.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_accuracy as bench

from gpuplan.cli.main import main as gpuplan
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner import comm

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks/results/central_alternatives.md"
FIRST_FRESH = 20
"""The fresh runs an earlier session chose first (before the other 16): kept apart because
naive arithmetic beat the central figure on them."""


@dataclass(frozen=True)
class Scored:
    run: bench.Run
    fresh: bool
    naive: float
    """6ND at 40% of the dense bf16 (else fp16) peak, GPU-hours."""
    json: dict[str, Any]
    """The CLI's first option with the run's GPU count, and its workload."""

    @property
    def attention_share(self) -> float:
        work = self.json["workload"]
        return float(work["flops_attention"]) / float(work["flops_dense"])

    @property
    def width(self) -> float:
        return float(self.json["workload"]["hidden"])


def _cli(argv: list[str], gpus: float) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        gpuplan(argv)
    data = json.loads(out.getvalue())
    (option, *_) = [o for o in data["options"] if o["gpus"] == gpus]
    return {"workload": data["workload"], "option": option}


def _naive(row: dict[str, str]) -> float:
    spec = bench.load_gpus().resolve(bench.FRESH_GPU.get(row["gpu"], row["gpu"]))
    peak = spec.peak_tflops(bench.Precision.BF16) or spec.peak_tflops(bench.Precision.FP16) or 1.0
    n = float(row["active_params"] or row["params"])
    return 6 * n * float(row["tokens"]) / (peak * 1e12 * 0.4) / 3600


def load() -> list[Scored]:
    runs, _ = bench.load_runs()
    fresh = bench.load_fresh()
    out = []
    for run in runs:
        argv = bench.argv_of(run.row)
        out.append(Scored(run, False, _naive(run.row), _cli(argv, run.gpus)))
    for run in fresh:
        argv = bench.fresh_argv(run.row)
        out.append(Scored(run, True, _naive(run.row), _cli(argv, run.gpus)))
    return out


def held_goodputs(pool: list[Scored], steady: list[float]) -> list[float]:
    """Each run's goodput: the geometric median of the other labs' published runs."""
    out = []
    for s in pool:
        others = [
            math.log(x / p.run.published)
            for p, x in zip(pool, steady, strict=True)
            if not p.fresh and p.run.source != s.run.source
        ]
        out.append(math.exp(statistics.median(others)))
    return out


def held_ratios(pool: list[Scored], steady: list[float], *, rule: bool = False) -> list[float]:
    """Estimate / published with the goodput fitted on the other labs' published runs; with
    ``rule``, averaged with the rule of thumb as the CLI does (``Run.central``)."""
    goodputs = held_goodputs(pool, steady)
    return [
        x / g * (bench.blend(s.run.rule, g) if rule else 1.0) / s.run.published
        for s, x, g in zip(pool, steady, goodputs, strict=True)
    ]


def shipped_ratios(pool: list[Scored]) -> list[float]:
    return held_ratios(pool, [s.run.steady for s in pool], rule=True)


def _err(ratios: list[float]) -> str:
    return f"{statistics.median(abs(r - 1) for r in ratios):.1%}" if ratios else "-"


SETS: tuple[tuple[str, Callable[[int, Scored], bool]], ...] = (
    ("published", lambda i, s: not s.fresh),
    ("fresh (never fitted)", lambda i, s: s.fresh),
    ("fresh, the first 20 chosen", lambda i, s: s.fresh and i < FIRST_FRESH),
)


def set_lines(pool: list[Scored], ratios: list[float], before: list[float]) -> list[str]:
    lines = [
        "| set | runs | central figure, labs left out | the model alone (before) "
        "| naive 6ND at 40% of peak | central wins |",
        "|---|---:|---:|---:|---:|:-:|",
    ]
    fresh_index = {id(s): i for i, s in enumerate(p for p in pool if p.fresh)}
    for name, keep in SETS:
        idx = [k for k, s in enumerate(pool) if keep(fresh_index.get(id(s), -1), s)]
        central = [ratios[k] for k in idx]
        naive = [pool[k].naive / pool[k].run.published for k in idx]
        win = statistics.median(abs(r - 1) for r in central) < statistics.median(
            abs(r - 1) for r in naive
        )
        lines.append(
            f"| {name} | {len(idx)} | {_err(central)} | {_err([before[k] for k in idx])} "
            f"| {_err(naive)} | {'yes' if win else 'no'} |"
        )
    return lines


REGIMES: tuple[tuple[str, Callable[[Scored], bool]], ...] = (
    ("under 64 GPUs", lambda s: s.run.gpus < 64),
    ("64-255 GPUs", lambda s: 64 <= s.run.gpus < cal.BAND_CUT_GPUS),
    ("256 GPUs and up", lambda s: s.run.gpus >= cal.BAND_CUT_GPUS),
    ("hidden size under 1,100", lambda s: s.width < 1100),
    ("attention FLOPs 40% of 6ND or more", lambda s: s.attention_share >= 0.4),
    ("mixture-of-experts", lambda s: "expert all-to-all" in s.json["option"]["mfu_factors"]),
    ("A100-40GB", lambda s: s.run.row["gpu"].startswith("A100-40")),
    ("V100 (2021-22)", lambda s: s.run.row["gpu"].startswith("V100")),
)


def regime_lines(pool: list[Scored], ratios: list[float], before: list[float]) -> list[str]:
    lines = [
        "| regime (both sets) | runs | median estimate / published | central error "
        "| the model alone (before) | naive error |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, keep in REGIMES:
        idx = [k for k, s in enumerate(pool) if keep(s)]
        if not idx:
            continue
        central = [ratios[k] for k in idx]
        naive = [pool[k].naive / pool[k].run.published for k in idx]
        lines.append(
            f"| {name} | {len(idx)} | {statistics.median(central):.2f} | {_err(central)} "
            f"| {_err([before[k] for k in idx])} | {_err(naive)} |"
        )
    return lines


def _attention(scale: float) -> Callable[[Scored], float]:
    def multiplier(s: Scored) -> float:
        work = s.json["workload"]
        dense, attention = float(work["flops_dense"]), float(work["flops_attention"])
        return (dense + scale * attention) / (dense + attention)

    return multiplier


def _width(half: float) -> Callable[[Scored], float]:
    def multiplier(s: Scored) -> float:
        h = s.width
        return (h / (h + cal.WIDTH_HALF)) / (h / (h + half)) if half else h / (h + cal.WIDTH_HALF)

    return multiplier


def _ep_span(pool: list[Scored], span: int) -> list[float]:
    """Steady-state GPU-hours with the expert-parallel span set to ``span`` GPUs."""
    shipped = comm.EP_SPAN
    comm.EP_SPAN = span
    try:
        out = []
        for s in pool:
            if "expert all-to-all" not in s.json["option"]["mfu_factors"]:
                out.append(s.run.steady)
                continue
            argv = bench.fresh_argv(s.run.row) if s.fresh else bench.argv_of(s.run.row)
            hours = float(_cli(argv, s.run.gpus)["option"]["gpu_hours"])
            out.append(s.run.steady * hours / float(s.json["option"]["gpu_hours"]))
        return out
    finally:
        comm.EP_SPAN = shipped


def pooled_goodput(pool: list[Scored], cut: float) -> list[float]:
    """Estimate / published with the goodput the weighted median over *both* sets' runs of
    the other labs (each set weighing the same) on the run's side of ``cut`` GPUs."""
    n_pub = sum(not s.fresh for s in pool)
    n_fresh = len(pool) - n_pub
    ratios = []
    for s in pool:
        alike = [
            p
            for p in pool
            if p.run.source != s.run.source and (p.run.gpus >= cut) == (s.run.gpus >= cut)
        ]
        logs = [math.log(p.run.steady / p.run.published) for p in alike]
        weights = [1 / n_fresh if p.fresh else 1 / n_pub for p in alike]
        goodput = math.exp(bench.weighted_quantile(logs, weights, 0.5))
        ratios.append(s.run.steady / goodput / s.run.published)
    return ratios


def _parts(pool: list[Scored], ratios: list[float]) -> list[list[float]]:
    """Ratios on the published runs, the fresh, the first 20 fresh and the MoE runs."""
    fresh = [s for s in pool if s.fresh]
    first = {id(s) for s in fresh[:FIRST_FRESH]}
    moe = {id(s) for s in pool if "expert all-to-all" in s.json["option"]["mfu_factors"]}
    keeps: list[Callable[[Scored], bool]] = [
        lambda s: not s.fresh,
        lambda s: s.fresh,
        lambda s: id(s) in first,
        lambda s: id(s) in moe,
    ]
    return [[r for s, r in zip(pool, ratios, strict=True) if keep(s)] for keep in keeps]


DRAWS = 3000
SET_SIZE = 16


def lab_draws(pool: list[Scored]) -> list[tuple[bool, list[int]]]:
    """Sets of public runs drawn by lab (seeded): whole labs at random, with replacement,
    until the set holds :data:`SET_SIZE` runs; every other draw only from labs with a fresh
    run (``True``: sets like the fresh runs), the rest from every lab."""
    by_lab: dict[str, list[int]] = {}
    for i, s in enumerate(pool):
        by_lab.setdefault(s.run.source, []).append(i)
    labs = sorted(by_lab)
    fresh_labs = [lab for lab in labs if any(pool[i].fresh for i in by_lab[lab])]
    rng = random.Random(1)
    draws = []
    for t in range(DRAWS):
        like_fresh = t % 2 == 0
        chosen: list[int] = []
        while len(chosen) < SET_SIZE:
            chosen += by_lab[rng.choice(fresh_labs if like_fresh else labs)]
        draws.append((like_fresh, chosen))
    return draws


def win_shares(
    pool: list[Scored], ratios: list[float], draws: list[tuple[bool, list[int]]]
) -> tuple[float, float]:
    """Share of the drawn sets (like the fresh runs; from every lab) on which ``ratios``
    has a lower median error than naive arithmetic."""
    naive = [abs(s.naive / s.run.published - 1) for s in pool]
    errors = [abs(r - 1) for r in ratios]
    wins = {True: [0, 0], False: [0, 0]}
    for like_fresh, idx in draws:
        ours = statistics.median(errors[i] for i in idx)
        theirs = statistics.median(naive[i] for i in idx)
        wins[like_fresh][0] += ours < theirs
        wins[like_fresh][1] += 1
    return wins[True][0] / wins[True][1], wins[False][0] / wins[False][1]


def _gpu_part(s: Scored) -> float:
    """The GPU's own MFU factors over the H100 SXM's (matmul ceiling, memory traffic,
    small-model latency): what the CLI's rule of thumb keeps and naive arithmetic drops."""
    factors = s.json["option"]["mfu_factors"]
    mine = math.prod(
        float(factors.get(n, 1.0))
        for n in ("architecture", "memory traffic", "small-model latency")
    )
    return mine * cal.RULE_OF_THUMB_MFU / cal.RULE_OF_THUMB_PEAK_SHARE


def _rule_ratio(s: Scored, *, attention: bool = True, width: bool = True) -> float:
    """The CLI's rule of thumb over the model at goodput 1, optionally keeping the model's
    attention FLOPs or width factor (not shrinking them)."""
    work, factors = s.json["workload"], s.json["option"]["mfu_factors"]
    dense, attn = float(work["flops_dense"]), float(work["flops_attention"])
    share = dense / (dense + attn) if attention else 1.0
    w = float(factors.get("model width", 1.0)) if width else 1.0
    return share * float(factors["base (steady state)"]) * w / cal.RULE_OF_THUMB_MFU


def _blended(pool: list[Scored], weight: float, **keep: bool) -> list[float]:
    steady = [s.run.steady for s in pool]
    goodputs = held_goodputs(pool, steady)
    return [
        x / g * (_rule_ratio(s, **keep) * g) ** weight / s.run.published
        for s, x, g in zip(pool, steady, goodputs, strict=True)
    ]


def _median_error_level(pool: list[Scored], steady: list[float]) -> list[float]:
    """The level minimising the median relative error over the other labs' published runs
    (each lab weighing the same), on a grid of 0.5% steps around the geometric median."""
    goodputs = held_goodputs(pool, steady)
    grid = [math.exp(k / 200) for k in range(-120, 41)]
    cache: dict[str, float] = {}
    out = []
    for s, x, g in zip(pool, steady, goodputs, strict=True):
        if s.run.source not in cache:
            others = [
                (p, y)
                for p, y in zip(pool, steady, strict=True)
                if not p.fresh and p.run.source != s.run.source
            ]
            count: dict[str, int] = {}
            for p, _ in others:
                count[p.run.source] = count.get(p.run.source, 0) + 1
            rs = [y / g / p.run.published for p, y in others]
            ws = [1 / count[p.run.source] for p, _ in others]
            cache[s.run.source] = min(
                grid,
                key=lambda k: (
                    bench.weighted_quantile([abs(k * r - 1) for r in rs], ws, 0.5),
                    abs(math.log(k)),
                ),
            )
        out.append(x / g * cache[s.run.source] / s.run.published)
    return out


def _small_goodput(pool: list[Scored], cut: float) -> list[float]:
    """Under ``cut`` GPUs the goodput of the other labs' runs under it (both sets, each
    set weighing the same); from it up, of the other labs' published runs."""
    n_pub = sum(not s.fresh for s in pool)
    n_fresh = len(pool) - n_pub
    out = []
    for s in pool:
        others = [p for p in pool if p.run.source != s.run.source]
        if s.run.gpus < cut:
            alike = [p for p in others if p.run.gpus < cut]
        else:
            alike = [p for p in others if not p.fresh]
        logs = [math.log(p.run.steady / p.run.published) for p in alike]
        weights = [1 / n_fresh if p.fresh else 1 / n_pub for p in alike]
        goodput = math.exp(bench.weighted_quantile(logs, weights, 0.5))
        out.append(s.run.steady / goodput / s.run.published)
    return out


def alternative_rows(pool: list[Scored]) -> list[tuple[str, list[float]]]:
    """Every variant tried: the shipped central figure first, then the model alone (the
    central figure before) and the changes to it, each scored the same way."""
    model = [s.run.steady for s in pool]
    before = held_ratios(pool, model)
    rows: list[tuple[str, list[float]]] = [
        (
            "**shipped: geometric mean of the model and the rule of thumb (weight 1/2)**",
            shipped_ratios(pool),
        ),
        ("the model alone (shipped before)", before),
    ]
    for weight in (0.25, 0.4, 0.6, 0.75):
        rows.append((f"rule of thumb at weight {weight:g} (not 1/2)", _blended(pool, weight)))
    rows.append(
        (
            "rule of thumb at 1/2, shrinking the attention FLOPs only (width kept)",
            _blended(pool, 0.5, width=False),
        )
    )
    rows.append(
        (
            "rule of thumb at 1/2, shrinking the width factor only (attention kept)",
            _blended(pool, 0.5, attention=False),
        )
    )
    blended_steady = [
        s.run.steady * (_rule_ratio(s) * cal.GOODPUT) ** cal.RULE_OF_THUMB_WEIGHT for s in pool
    ]
    rows.append(
        (
            "rule of thumb at 1/2, goodput refitted on the blend (level back at the log-median)",
            held_ratios(pool, blended_steady),
        )
    )
    naive = [s.naive / s.run.published for s in pool]
    rows.append(
        (
            "mean of the model and naive 6ND at 40% of the GPU's own peak (changes GPU ratios)",
            [(m + n) / 2 for m, n in zip(before, naive, strict=True)],
        )
    )
    rows.append(
        (
            "geometric mean of the model and naive 6ND at 40% of the GPU's own peak "
            "(changes GPU ratios)",
            [math.sqrt(m * n) for m, n in zip(before, naive, strict=True)],
        )
    )
    rows.append(
        (
            "geometric mean of the model and naive arithmetic, goodput refitted",
            held_ratios(pool, [math.sqrt(s.run.steady * s.naive) for s in pool]),
        )
    )
    for scale, why in ((0.5, "causal: half the 12 L h S"), (0.0, "none")):
        m = _attention(scale)
        rows.append(
            (
                f"model, attention FLOPs x{scale:g} ({why})",
                held_ratios(pool, [s.run.steady * m(s) for s in pool]),
            )
        )
    causal, refit = _attention(0.5), _width(768.0)
    rows.append(
        (
            "model, attention x0.5 with the anchor tables refitted (they then want width "
            "half-point 768: scripts/fit_steady_state.py, leave-framework-out 32.2% -> 33.3%)",
            held_ratios(pool, [s.run.steady * causal(s) * refit(s) for s in pool]),
        )
    )
    for half in (256.0, 128.0, 0.0):
        m = _width(half)
        name = f"model, width half-point {half:g}" if half else "model, no width factor"
        rows.append((name, held_ratios(pool, [s.run.steady * m(s) for s in pool])))
    rows.append(
        ("model, expert-parallel span 8 (one node), not 64", held_ratios(pool, _ep_span(pool, 8)))
    )
    for cut in (cal.BAND_CUT_GPUS, 64.0, 0.0):
        name = "model, goodput over both sets (each weighing the same)"
        rows.append(
            (f"{name}, per side of {cut:g} GPUs" if cut else name, pooled_goodput(pool, cut))
        )
    rows.append(
        (
            "model, goodput under 64 GPUs from both sets' runs under 64, published above",
            _small_goodput(pool, 64.0),
        )
    )
    rows.append(
        (
            "model, level minimising the median relative error (other labs' published runs, "
            "each lab weighing the same)",
            _median_error_level(pool, model),
        )
    )
    for k in (0.8, 0.9, 1.1):
        rows.append((f"model, every estimate x{k:g} after the goodput", [r * k for r in before]))
    return rows


def alternative_lines(pool: list[Scored]) -> list[str]:
    draws = lab_draws(pool)
    lines = [
        "| central figure | published | fresh | fresh, first 20 | mixture-of-experts "
        "| beats naive on sets drawn by lab: like the fresh / any |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name, ratios in alternative_rows(pool):
        like_fresh, anywhere = win_shares(pool, ratios, draws)
        lines.append(
            f"| {name} | "
            + " | ".join(_err(p) for p in _parts(pool, ratios))
            + f" | {like_fresh:.0%} / {anywhere:.0%} |"
        )
    return lines


def main() -> int:
    pool = load()
    ratios = shipped_ratios(pool)
    before = held_ratios(pool, [s.run.steady for s in pool])
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    block = [
        "# The central figure against naive 6ND at 40% of peak (labs left out)",
        "",
        "The central figure is the geometric mean of the model (steady state from framework "
        "tables, goodput fitted on the other labs' published runs) and the rule of thumb "
        "6ND at 40% of peak on the same GPU and cluster (gpuplan/core/planner/central.py).",
        "",
        *set_lines(pool, ratios, before),
        "",
        *regime_lines(pool, ratios, before),
        "",
        "Changes to the central figure tried, each scored the same way (median error, labs "
        f"left out), with the share of {DRAWS:,} sets of at least {SET_SIZE} public runs "
        "drawn by lab (whole labs at random, with replacement; half from the labs with "
        "fresh runs, half from every lab) on which it beats naive arithmetic. Not shipped "
        'unless marked; "model" rows change the model alone (before the rule of thumb):',
        "",
        *alternative_lines(pool),
        "",
        f"Written by `python scripts/central_alternatives.py` on {stamp} (bundled catalog).",
    ]
    RESULTS.write_text("\n".join(block) + "\n", encoding="utf-8")
    print("\n".join(block))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
