"""The central figure: the model's estimate averaged in log space with the rule of thumb.

The model (steady state fitted on framework benchmark tables, goodput on public runs) and
the rule of thumb ``6ND`` at 40% of the peak err differently: the model's shape terms (the
attention FLOPs, the width factor) and its goodput come from large labs' stacks and runs,
and small or hand-tuned runs depart from them by 1.5-5x either way; the rule has none. The
central figure is ``model^(1 - w) x rule^w`` (``w`` = :data:`~.calibration.RULE_OF_THUMB_WEIGHT`,
one half, set a priori), both on the same GPU and cluster: the rule keeps every factor the
model gives the GPU and the cluster (matmul ceiling, memory traffic, small-model latency,
precision, links, all-to-all, recomputation), so ratios between GPUs at one count are the
model's. Where the MFU is not the model's (``--mfu``, a measured ``--throughput``) or the
user states the goodput (``--utilization``), the user's figure stands alone: the rule hedges
the lab-habit part of the model, which those figures replace.
"""

from __future__ import annotations

from gpuplan.core.planner import calibration as cal
from gpuplan.core.planner.efficiency import MfuEstimate
from gpuplan.core.planner.flops import Flops

BASE = "base (steady state)"
WIDTH = "model width"


def rule_of_thumb_ratio(mfu: MfuEstimate, flops: Flops, goodput: float) -> float | None:
    """Rule-of-thumb time over the model's time (at ``goodput``) for the same option, or
    None where the MFU is not the model's (given, measured) or the work has no FLOPs."""
    factors = {f.name: f.value for f in mfu.factors}
    base = factors.get(BASE)
    if mfu.overridden or base is None or flops.total <= 0 or goodput <= 0:
        return None
    dense_share = flops.dense / flops.total  # the rule counts no attention FLOPs
    return dense_share * base * factors.get(WIDTH, 1.0) * goodput / cal.RULE_OF_THUMB_MFU


def central_factor(mfu: MfuEstimate, flops: Flops) -> float:
    """Central figure over the model's at the fitted goodput (1 where the rule does not
    apply): ``(rule / model) ** RULE_OF_THUMB_WEIGHT``."""
    ratio = rule_of_thumb_ratio(mfu, flops, cal.GOODPUT)
    return 1.0 if ratio is None else ratio**cal.RULE_OF_THUMB_WEIGHT
