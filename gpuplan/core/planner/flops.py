"""Training FLOPs of a workload (model FLOPs, as MFU counts them).

Dense part ``6 N D`` (Kaplan et al. 2020: 2 FLOPs per parameter per token forward,
4 backward) with ``N`` the active parameters for mixture-of-experts; attention part
``12 L H Q S`` per token (Chowdhery et al. 2022, PaLM, Appendix B: the model-FLOPs
definition). Recomputation is not counted: it is work the hardware does, not the model.

LoRA / QLoRA (a frozen base): the frozen weights get no weight gradients, so a token costs
``2N`` forward plus ``2N`` for the activation gradients, ``4 N`` in all, plus ``6`` per
adapter parameter; attention has no weights and costs the same as in pretraining.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuplan.core.errors import InputError
from gpuplan.core.planner.workload import Shape, Workload, adapter_params

FROZEN_FLOPS_PER_PARAM = 4.0
"""Forward 2 + activation gradients 2; no weight gradients (Hu et al. 2021, LoRA)."""


@dataclass(frozen=True)
class Flops:
    """Total training FLOPs with its parts."""

    dense: float
    """6 N D."""
    attention: float
    """12 L H Q S D (0 when the work is given as samples x FLOPs per sample)."""
    per_token_dense: float = 0.0
    per_token_attention: float = 0.0

    @property
    def total(self) -> float:
        return self.dense + self.attention


def attention_flops_per_token(shape: Shape) -> float:
    """``12 L H Q S``: H heads x Q head size is the model width."""
    return 12.0 * shape.layers * shape.heads * shape.head_dim * shape.seq_len


def training_flops(workload: Workload) -> Flops:
    """Model FLOPs for the whole run; :class:`InputError` when the work is underspecified."""
    if workload.samples is not None or workload.flops_per_sample is not None:
        if workload.samples is None or workload.flops_per_sample is None:
            raise InputError("--samples and --flops-per-sample go together")
        return Flops(dense=workload.samples * workload.flops_per_sample, attention=0.0)
    n = workload.compute_params
    if n is None or workload.tokens is None:
        raise InputError(
            "say how much work: --params and --tokens (or --samples with --flops-per-sample)"
        )
    dense_per_token = 6.0 * n
    if workload.setup.method.frozen_base:
        adapters = adapter_params(workload.shape, workload.setup.lora_rank) if workload.shape else 0
        dense_per_token = FROZEN_FLOPS_PER_PARAM * n + 6.0 * adapters
    attn_per_token = attention_flops_per_token(workload.shape) if workload.shape else 0.0
    return Flops(
        dense=dense_per_token * workload.tokens,
        attention=attn_per_token * workload.tokens,
        per_token_dense=dense_per_token,
        per_token_attention=attn_per_token,
    )
