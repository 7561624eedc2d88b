"""Check and fit the expert all-to-all share on the MoE rows of the anchor tables.

Run: python scripts/fit_all_to_all.py

The all-to-all factor (:mod:`gpuplan.core.planner.comm`) models fabric communication, so
its one constant, the share of all-to-all time not overlapped with compute
(``A2A_EXPOSED``), is fitted on the MoE rows of tests/core/planner/anchors/
throughput_anchors.csv whose all-to-all crosses the scale-out fabric (multi-node HGX); the
shapes come from the models' published configs. Left out a model at a time, it prints the
held-out error: the MoE part is the least certain of the model.
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fit_steady_state import ANCHORS, precision_of

from gpuplan.core.catalog.gpus import GpuSpec
from gpuplan.core.catalog.kinds import Precision
from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner.efficiency import Cluster, JobShape, estimate_mfu
from gpuplan.loaders.catalog import load_gpus

MOE_SHAPES = {
    # (layers, hidden, top_k) from the models' published configs.
    "DeepSeekV3": (61, 7168, 8),
    "Qwen3_235B_a22B": (94, 4096, 8),
    "Qwen3_30B_a3B": (48, 2048, 8),
}
A2A_GRID = tuple(k / 20 for k in range(1, 21))


@dataclass(frozen=True)
class MoeAnchor:
    model: str
    spec: GpuSpec
    gpus: int
    precision: Precision
    layers: int
    hidden: int
    top_k: int
    flops_per_token: float
    measured: float
    """MFU against the dense bf16 peak, with the planner's FLOPs (active parameters)."""


def load_moe_anchors(path: Path = ANCHORS) -> list[MoeAnchor]:
    gpus = load_gpus()
    out = []
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            precision = precision_of(row["precision"])
            shape = MOE_SHAPES.get(row["model"])
            if precision is None or shape is None or not row["gpus"]:
                continue
            try:
                spec = gpus.resolve(row["gpu"])
            except Exception:  # a GPU the table lacks
                continue
            layers, hidden, top_k = shape
            seq = int(row["seq_len"] or 4096)
            flops = 6 * float(row["active_params"]) + 12 * layers * hidden * seq
            peak = spec.peak_tflops(Precision.BF16) or 1.0
            measured = float(row["tokens_per_s_per_gpu"]) * flops / (peak * 1e12)
            out.append(
                MoeAnchor(
                    row["model"],
                    spec,
                    int(float(row["gpus"])),
                    precision,
                    layers,
                    hidden,
                    top_k,
                    flops,
                    measured,
                )
            )
    return out


def predict_moe(anchor: MoeAnchor, exposed: float) -> float:
    saved = cal.A2A_EXPOSED
    try:
        cal.A2A_EXPOSED = exposed
        per_node = 72.0 if anchor.spec.name.startswith("GB") else 8.0
        per_node = min(per_node, float(anchor.gpus))
        cluster = Cluster(float(anchor.gpus), per_node, max(1, math.ceil(anchor.gpus / per_node)))
        job = JobShape(anchor.hidden, anchor.layers, anchor.flops_per_token)
        est = estimate_mfu(anchor.spec, anchor.precision, None, cluster,
                           moe_top_k=anchor.top_k, job=job)  # fmt: skip
    finally:
        cal.A2A_EXPOSED = saved
    peak = anchor.spec.peak_tflops(anchor.precision) or 1.0
    return est.mfu * peak / (anchor.spec.peak_tflops(Precision.BF16) or peak)


def fit_all_to_all(anchors: list[MoeAnchor]) -> float:
    """The share of all-to-all time left exposed: least absolute log error on the grid."""
    return min(
        A2A_GRID,
        key=lambda x: sum(abs(math.log(predict_moe(a, x) / a.measured)) for a in anchors),
    )


def crosses_fabric(anchor: MoeAnchor) -> bool:
    """Rows whose all-to-all crosses the scale-out fabric: more than one 8-GPU HGX node
    (an NVL72 rack keeps it on NVLink; one node has no fabric traffic)."""
    return anchor.gpus > 8 and not anchor.spec.name.startswith("GB")


def all_to_all_report() -> str:
    """Fitted where the all-to-all crosses the fabric; elsewhere MoE rows are slower than
    the dense model for reasons other than communication (small expert GEMMs, routing)."""
    anchors = [a for a in load_moe_anchors() if crosses_fabric(a)]
    models = sorted({a.model for a in anchors})
    held = []
    for model in models:
        exposed = fit_all_to_all([a for a in anchors if a.model != model])
        held += [predict_moe(a, exposed) / a.measured for a in anchors if a.model == model]
    median = statistics.median(abs(r - 1) for r in held)
    return (
        f"expert all-to-all: {len(anchors)} MoE rows ({', '.join(models)}); fit "
        f"A2A_EXPOSED {fit_all_to_all(anchors)} (shipped {cal.A2A_EXPOSED}); leave-model-out "
        f"median error {median:.1%}, worst {max(max(r, 1 / r) for r in held):.2f}x"
    )


def main() -> int:
    print(all_to_all_report())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
