"""Fit and validate the steady-state MFU model on the framework benchmark anchors.

Run: python scripts/fit_steady_state.py

Reads tests/core/planner/anchors/throughput_anchors.csv (each row a framework's published
tokens/s per GPU, with its verbatim quote and source). For every dense row on a GPU of
the spec table at bf16 or fp8 (fp8, mxfp8; fp4 rows are left out of this fit: the fp4
share is fitted on its own pairs by scripts/fit_low_precision.py) the measured MFU is
``tokens/s x model FLOPs per token / dense bf16 peak`` with the
planner's own FLOPs (6N + 12 L H Q S, shape inferred from the parameters as the CLI
does). The model's prediction is :func:`gpuplan.core.planner.efficiency.estimate_mfu` on
that GPU, count and precision. The free constants (base, width half-point, memory
traffic share, fp8 share of the Amdahl precision factor) are fitted by least absolute log
error on a small grid (the fp8 share on the rows that differ only in precision,
scripts/fit_low_precision.py); the headline figures leave each *framework*
(Megatron-Bridge/NeMo, llm-foundry, torchtitan) out whole, fit on the others and score the
one left out. The cross-generation pairs (``cross_report``) include nvfp4 on both sides.
"""

from __future__ import annotations

import csv
import dataclasses
import itertools
import math
import re
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_low_precision import VARIANT_NOTE, family_of, framework_of, load_pairs
from fit_low_precision import fit as fit_shares

from gpuplan.core.catalog.gpus import GpuSpec
from gpuplan.core.catalog.kinds import Precision
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner.efficiency import Cluster, JobShape, estimate_mfu
from gpuplan.core.planner.workload import infer_shape
from gpuplan.loaders.catalog import load_gpus

ROOT = Path(__file__).resolve().parent.parent
ANCHORS = ROOT / "tests/core/planner/anchors/throughput_anchors.csv"
BASES = tuple(0.40 + 0.02 * k for k in range(21))
WIDTH_HALVES = (0.0, 128.0, 256.0, 384.0, 512.0, 640.0, 768.0, 1024.0, 1536.0)
TRAFFIC = (0.2,)
"""Not fitted here: within one framework the memory-traffic share is confounded with the
framework's maturity on each generation (llm-foundry's 2023 H100 rows keep 0.40 of peak
against 0.55 on A100). It is set from the cross-generation pairs instead (see
``cross_report``): 0.2 puts A100 -> H100 at 2.9x (the issue's measurements: 2.9-3.7x;
llm-foundry's 2023 tables: 2.2-2.5x) and H100 -> B200 at 2.2x (Megatron-Bridge: 2.1x)."""
MOE_NAMES = ("oss", "qwen3", "nemotron_3", "nemotron v3", "kimi", "deepseek", "llama 4", "mixtral")
"""Mixture-of-experts models the table lists without active parameters: not dense anchors."""
# VARIANT_NOTE (fit_low_precision): rows run on a variant the spec table does not hold:
# torchtitan's H100 tables ran on Grand Teton H100 96GB HBM2e capped at 500 W (30 rows), not
# the 700 W SXM5 80GB HBM3 part the table's "H100" is; scored against the SXM peak they keep
# 0.22-0.36 of it and pulled the base down. Left out of the fit and its validation, by the
# hardware note, not the error.
DEFAULT_SEQ = 8192
"""Rows without a sequence length: torchtitan's Llama 3 configs train at 8192."""


@dataclass(frozen=True)
class Anchor:
    source: str
    framework: str
    model: str
    spec: GpuSpec
    gpus: int
    precision: Precision
    hidden: int
    layers: int
    seq_len: int
    measured: float
    """MFU against the dense bf16 peak, with the planner's FLOPs."""
    quote: str

    @property
    def family(self) -> str:
        """The framework a row comes from: the unit left out whole."""
        return framework_of(self.source)


def precision_of(text: str) -> Precision | None:
    """bf16, fp8 (fp8, fp8-cs, mxfp8...) or fp4 (nvfp4, mxfp4); None when unstated."""
    family = family_of(text)
    return None if family is None else Precision(family)


def load_anchors(path: Path = ANCHORS) -> list[Anchor]:
    gpus = load_gpus()
    out = []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            precision = precision_of(row["precision"])
            if precision in (None, Precision.FP4) or not row["params"] or row["active_params"]:
                continue
            if any(name in row["model"].lower() for name in MOE_NAMES):
                continue
            if not row["tokens_per_s_per_gpu"] or not row["gpus"]:
                continue
            if VARIANT_NOTE in row["source"]:
                continue
            try:
                spec = gpus.resolve(row["gpu"])
            except Exception:  # a GPU the table lacks: not an anchor
                continue
            params = float(row["params"])
            seq = int(row["seq_len"] or DEFAULT_SEQ)
            shape = infer_shape(
                params,
                seq_len=seq,
                layers=int(row["layers"]) if row["layers"] else None,
                hidden=int(row["hidden"]) if row["hidden"] else None,
            )
            flops = 6 * params + 12 * shape.layers * shape.hidden * seq
            peak = spec.peak_tflops(Precision.BF16) or spec.peak_tflops(Precision.FP16) or 1.0
            measured = float(row["tokens_per_s_per_gpu"]) * flops / (peak * 1e12)
            out.append(
                Anchor(
                    row["source_id"],
                    row["framework"],
                    row["model"],
                    spec,
                    int(float(row["gpus"])),
                    precision,
                    shape.hidden,
                    shape.layers,
                    seq,
                    measured,
                    row["quote"],
                )
            )
    return out


Fit = tuple[float, float, float, float]
"""(STEADY_BASE, WIDTH_HALF, MEMORY_TRAFFIC, FP8_GEMM_SHARE)."""


def shipped() -> Fit:
    return (cal.STEADY_BASE, cal.WIDTH_HALF, cal.MEMORY_TRAFFIC, cal.FP8_GEMM_SHARE)


def cluster_of(anchor: Anchor) -> Cluster:
    per_node = 72.0 if anchor.spec.name.startswith("GB") else 8.0
    per_node = min(per_node, float(anchor.gpus))
    return Cluster(float(anchor.gpus), per_node, max(1, math.ceil(anchor.gpus / per_node)))


def predict(anchor: Anchor, fit: Fit) -> float:
    """Predicted MFU against the dense bf16 peak under ``fit``."""
    base, half, traffic, _ = fit
    saved = (cal.STEADY_BASE, cal.WIDTH_HALF, cal.MEMORY_TRAFFIC, cal.FP8_GEMM_SHARE)
    try:
        cal.STEADY_BASE, cal.WIDTH_HALF, cal.MEMORY_TRAFFIC, cal.FP8_GEMM_SHARE = fit
        est = estimate_mfu(
            anchor.spec,
            anchor.precision,
            None,
            cluster_of(anchor),
            job=_job(anchor, half, traffic, base),
        )
    finally:
        cal.STEADY_BASE, cal.WIDTH_HALF, cal.MEMORY_TRAFFIC, cal.FP8_GEMM_SHARE = saved
    peak = anchor.spec.peak_tflops(anchor.precision) or 1.0
    bf16 = anchor.spec.peak_tflops(Precision.BF16) or peak
    return est.mfu * peak / bf16


def _job(anchor: Anchor, half: float, traffic: float, base: float) -> JobShape:
    del half, traffic, base  # read through calibration at call time
    return JobShape(hidden=anchor.hidden, layers=anchor.layers)


def fp8_share(anchors: list[Anchor]) -> float:
    """The fp8 share of the Amdahl precision factor, fitted on the rows that differ only in
    precision (scripts/fit_low_precision.py) from the frameworks ``anchors`` come from."""
    frameworks = {a.family for a in anchors}
    return fit_shares(p for p in load_pairs() if p.framework in frameworks)[0]


def fit(anchors: list[Anchor]) -> Fit:
    """fp8 share from paired rows; then a grid over width and traffic with the base the
    median ratio, least absolute log error over every row."""
    speed = fp8_share(anchors)
    best: tuple[float, Fit] | None = None
    for half, traffic in itertools.product(WIDTH_HALVES, TRAFFIC):
        unit: Fit = (1.0, half, traffic, speed)
        logs = [math.log(a.measured / predict(a, unit)) for a in anchors]
        base = math.exp(statistics.median(logs))
        loss = sum(abs(x - math.log(base)) for x in logs)
        if best is None or loss < best[0]:
            best = (loss, (round(base, 3), half, traffic, speed))
    assert best is not None
    return best[1]


def scale_out_slope(anchors: list[Anchor]) -> float:
    """Median MFU lost per doubling of nodes, over rows of one table that differ only in
    GPU count (the smallest against the largest count, each above one node)."""
    groups: dict[tuple[str, str, str, Precision, int], dict[int, float]] = {}
    for a in anchors:
        key = (a.source, a.model, a.spec.name, a.precision, a.seq_len)
        best = groups.setdefault(key, {})
        best[a.gpus] = max(best.get(a.gpus, 0.0), a.measured)
    slopes = []
    for counts in groups.values():
        low, high = min(counts), max(counts)
        if high <= 8 or low == high:
            continue
        doublings = math.log2(high / max(low, 8))
        slopes.append((counts[low] / counts[high] - 1) / doublings)
    return statistics.median(slopes)


@dataclass(frozen=True)
class Scored:
    anchor: Anchor
    predicted: float

    @property
    def ratio(self) -> float:
        return self.predicted / self.anchor.measured


def leave_family_out(anchors: list[Anchor]) -> tuple[list[Scored], dict[str, Fit]]:
    families = sorted({a.family for a in anchors})
    scored, fits = [], {}
    for family in families:
        rest = [a for a in anchors if a.family != family]
        held = fit(rest)
        fits[family] = held
        scored += [Scored(a, predict(a, held)) for a in anchors if a.family == family]
    return scored, fits


def errors(scored: list[Scored]) -> tuple[float, float]:
    ratios = [s.ratio for s in scored]
    return (
        statistics.median(abs(r - 1) for r in ratios),
        max(max(r, 1 / r) for r in ratios),
    )


def main() -> int:
    anchors = load_anchors()
    full = fit(anchors)
    print(f"{len(anchors)} dense bf16/fp8 anchors; families: "
          f"{sorted({a.family for a in anchors})}")  # fmt: skip
    scored, fits = leave_family_out(anchors)
    median, worst = errors(scored)
    print(f"leave-framework-out: median error {median:.1%}, worst {worst:.2f}x")
    for family, held in fits.items():
        part = [s for s in scored if s.anchor.family == family]
        m, w = errors(part)
        print(f"  {family}: fit without it {held}; on it median {m:.1%}, worst {w:.2f}x")
    inside = [Scored(a, predict(a, full)) for a in anchors]
    m, w = errors(inside)
    print(f"in sample: median error {m:.1%}, worst {w:.2f}x")
    print(cross_report(full))
    print(f"scale-out: {scale_out_slope(anchors):.4f} per doubling of nodes "
          f"(shipped {cal.INTER_EXPOSED_PER_DOUBLING})")  # fmt: skip
    print(f"fit on all: STEADY_BASE {full[0]}, WIDTH_HALF {full[1]}, "
          f"MEMORY_TRAFFIC {full[2]}, FP8_GEMM_SHARE {full[3]}; shipped {shipped()}")  # fmt: skip
    return 0


CROSS = ROOT / "tests/core/planner/anchors/cross_generation.csv"


@dataclass(frozen=True)
class CrossRow:
    source: str
    model: str
    gpus: int
    a: GpuSpec
    b: GpuSpec
    precision: Precision
    measured: float
    """Throughput of b over a at the same GPU count (time ratio a over b)."""
    unfair: str = ""
    """Why the pair is not a fair test of a hardware model (empty when it is); see
    :func:`mark_fair`."""


def release_of(source: str) -> tuple[int, ...]:
    """``mbridge-26.04.01`` -> (26, 4, 1); other sources (one table each) -> ()."""
    match = re.fullmatch(r"(?:mbridge|nemo)-(\d+)\.(\d+)(?:\.(\d+))?(?:-perf)?", source)
    return tuple(int(x or 0) for x in match.groups()) if match else ()


def is_moe(model: str) -> bool:
    name = model.lower()
    return any(key in name for key in MOE_NAMES)


def recipes_differ(quote: str) -> bool:
    """llm-foundry quotes both table rows, ``||`` between them: one side ``bf16 | PURE``,
    the other ``amp_bf16 | DEFAULT`` is a different precision recipe, not hardware."""
    sides = quote.split("||")
    return len(sides) == 2 and ("amp_bf16" in sides[0]) != ("amp_bf16" in sides[1])


UNFAIR_MOE = "mixture of experts: the ratio measures expert placement (8-GPU HGX vs NVL72)"
UNFAIR_RECIPE = "the two sides ran different precision recipes (pure bf16 vs amp_bf16)"
UNFAIR_STALE = "an older release of a benchmark row a newer release re-measured"


def mark_fair(rows: list[CrossRow]) -> list[CrossRow]:
    """Which pairs test the hardware model, decided before scoring (never by error):

    - dense models only: a mixture-of-experts ratio between an 8-GPU HGX node and a 72-GPU
      NVLink rack measures where the experts' all-to-all runs (Megatron-Bridge: 1.1-2.5x
      for the same peak); the all-to-all model is checked on its own
      (scripts/fit_all_to_all.py) and over-predicts this gap when scored here;
    - the same precision recipe on both sides (llm-foundry's A100-40GB table runs pure
      bf16, its A100-80GB and H100 tables amp_bf16);
    - one release per Megatron-Bridge row (the newest): the tables republish the same
      model / GPU count / GPU pair every release, and stale configurations (26.02 ran
      Qwen3-30B-A3B on B200 at micro-batch 1 against 8 on B300: 3.05x) are not hardware.
    """
    newest: dict[tuple[object, ...], tuple[int, ...]] = {}
    for r in rows:
        key = (r.model, r.gpus, r.a.name, r.b.name, r.precision)
        newest[key] = max(newest.get(key, ()), release_of(r.source))
    out = []
    for r in rows:
        key = (r.model, r.gpus, r.a.name, r.b.name, r.precision)
        reason = r.unfair
        if not reason and is_moe(r.model):
            reason = UNFAIR_MOE
        if not reason and release_of(r.source) < newest[key]:
            reason = UNFAIR_STALE
        out.append(dataclasses.replace(r, unfair=reason))
    return out


def load_cross(path: Path = CROSS) -> list[CrossRow]:
    gpus = load_gpus()
    out = []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            pa, pb = precision_of(row["precision_a"]), precision_of(row["precision_b"])
            if pa is None or pa is not pb or not row["ratio_b_over_a"]:
                continue
            if "tokens" not in row["metric"] and "tflops" not in row["metric"].lower():
                continue
            try:
                a, b = gpus.resolve(row["gpu_a"]), gpus.resolve(row["gpu_b"])
            except Exception:  # a GPU the table lacks
                continue
            count = int(float(row["gpus"])) if row["gpus"] else 8
            out.append(
                CrossRow(
                    row["source_id"],
                    row["model"],
                    count,
                    a,
                    b,
                    pa,
                    float(row["ratio_b_over_a"]),
                    UNFAIR_RECIPE if recipes_differ(row["quote"]) else "",
                )
            )
    return mark_fair(out)


def predicted_ratio(row: CrossRow, fit: Fit) -> float:
    def rate(spec: GpuSpec) -> float:
        anchor = Anchor(
            row.source, "", row.model, spec, row.gpus, row.precision, 4096, 32, 4096, 1.0, ""
        )
        return predict(anchor, fit) * (spec.peak_tflops(Precision.BF16) or 1.0)

    return rate(row.b) / rate(row.a)


def cross_errors(rows: list[CrossRow], fit: Fit) -> str:
    ratios = [predicted_ratio(r, fit) / r.measured for r in rows]
    if not ratios:
        return "no pairs"
    median = statistics.median(abs(x - 1) for x in ratios)
    worst = max(max(x, 1 / x) for x in ratios)
    return f"{len(rows)} pairs: median error {median:.1%}, worst {worst:.2f}x"


def cross_report(fit: Fit) -> str:
    """Predicted / measured time ratio on the fair pairs first, then on every pair and on
    each excluded group (so nothing is hidden by the exclusion)."""
    rows = load_cross()
    fair = [r for r in rows if not r.unfair]
    lines = [
        f"cross-generation, fair pairs (dense, same recipe, newest release): "
        f"{cross_errors(fair, fit)}",
        f"cross-generation, all pairs: {cross_errors(rows, fit)}",
    ]
    for reason in (UNFAIR_MOE, UNFAIR_RECIPE, UNFAIR_STALE):
        part = [r for r in rows if r.unfair == reason]
        lines.append(f"  excluded, {reason}: {cross_errors(part, fit)}")
    fp4 = [r for r in rows if r.precision is Precision.FP4]
    lines.append(
        f"  nvfp4 on both sides: {cross_errors(fp4, fit)}; the fair ones: "
        f"{cross_errors([r for r in fp4 if not r.unfair], fit)}"
    )
    pairs: dict[tuple[str, str], list[CrossRow]] = {}
    for r in fair:
        pairs.setdefault((r.a.name, r.b.name), []).append(r)
    for (a, b), part in sorted(pairs.items()):
        ratios = [predicted_ratio(r, fit) / r.measured for r in part]
        lines.append(
            f"  fair {a} -> {b}: {len(part)} pairs, measured "
            f"{min(r.measured for r in part):.2f}-{max(r.measured for r in part):.2f}x, "
            f"predicted / measured median {statistics.median(ratios):.2f}"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
