"""What is being trained, and how: the planner's inputs after defaults.

A :class:`Workload` is the work (parameters and tokens, or samples x FLOPs per sample)
plus the transformer shape. Missing shape fields are inferred from the *active* parameter
count (a mixture-of-experts' attention and width follow its active model, never its total)
with :func:`infer_shape` (documented in docs/estimating.md) and the inferred fields are
named, so the output can say which numbers were guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

from gpuplan.core.catalog.kinds import Precision
from gpuplan.core.errors import InputError

DEFAULT_SEQ_LEN = 4096
"""Llama-2 onward pretrain at 4K or more; older runs (GPT-3, LLaMA-1) used 2K."""
DEFAULT_VOCAB = 32_000
"""LLaMA / Llama-2 / Mistral tokenizer size."""
DEFAULT_TOP_K = 2
"""Routed experts per token when a mixture-of-experts does not say (GShard, Mixtral)."""
HEAD_DIM = 128
"""Head dimension of nearly every large open model (LLaMA, GPT-3 from 6.7B up)."""

# (parameters, layers) of well-known dense decoders: GPT-3 small..XL (Brown et al. 2020,
# Table 2.1), LLaMA 7B..65B (Touvron et al. 2023, Table 2), GPT-3 175B, Llama 3.1 405B.
_REFERENCE_DEPTHS: tuple[tuple[float, int], ...] = (
    (125e6, 12),
    (350e6, 24),
    (1.3e9, 24),
    (2.7e9, 32),
    (6.7e9, 32),
    (13e9, 40),
    (32.5e9, 60),
    (65e9, 80),
    (175e9, 96),
    (405e9, 126),
    (1e12, 128),
)


class Optimizer(StrEnum):
    ADAMW = "adamw"
    SGD = "sgd"
    ADAFACTOR = "adafactor"
    ADAM_8BIT = "8bit-adam"


class Method(StrEnum):
    """What is trained: every weight from scratch or from a checkpoint, or adapters only."""

    PRETRAIN = "pretrain"
    FULL = "full"
    """Full fine-tuning: every weight trained, as pretraining (a shorter run)."""
    LORA = "lora"
    """Low-rank adapters on a frozen bf16 base (Hu et al. 2021)."""
    QLORA = "qlora"
    """Low-rank adapters on a frozen 4-bit NF4 base (Dettmers et al. 2023)."""

    @property
    def frozen_base(self) -> bool:
        return self in (Method.LORA, Method.QLORA)


DEFAULT_LORA_RANK = 16
"""The rank most LoRA/QLoRA recipes use (Hugging Face PEFT examples, torchtune, Unsloth)."""
MAX_LORA_RANK = 1024
"""Ranks above ~256 buy nothing over full fine-tuning (Hu et al. 2021 use 1-64)."""


def lora_rank(method: Method, given: int | None) -> int:
    """The adapter rank: ``given`` checked against ``method``, or the default."""
    if given is None:
        return DEFAULT_LORA_RANK
    if not method.frozen_base:
        raise InputError(
            f"--lora-rank contradicts --method {method.value}: "
            "adapters exist with --method lora or qlora"
        )
    if not 1 <= given <= MAX_LORA_RANK:
        raise InputError(f"--lora-rank: expected 1 to {MAX_LORA_RANK}, got {given}")
    return given


class Recompute(StrEnum):
    NONE = "none"
    SELECTIVE = "selective"
    FULL = "full"


@dataclass(frozen=True)
class Shape:
    """Transformer shape; ``inferred`` names the fields filled in by default."""

    seq_len: int
    layers: int
    hidden: int
    heads: int
    vocab: int
    inferred: frozenset[str] = field(default=frozenset())

    @property
    def head_dim(self) -> float:
        return self.hidden / self.heads


@dataclass(frozen=True)
class TrainingSetup:
    """How the job trains. ``None`` means 'let the planner choose the lightest that fits'."""

    precision: Precision = Precision.BF16
    optimizer: Optimizer = Optimizer.ADAMW
    zero: int | None = None
    recompute: Recompute | None = None
    micro_batch: int = 1
    global_batch: int | None = None
    """Sequences per optimizer step, across all GPUs."""
    flash_attention: bool = True
    method: Method = Method.PRETRAIN
    lora_rank: int = DEFAULT_LORA_RANK


@dataclass(frozen=True)
class Workload:
    """The work to do. Either params + tokens, or samples x FLOPs per sample."""

    params: float | None = None
    active_params: float | None = None
    tokens: float | None = None
    samples: float | None = None
    flops_per_sample: float | None = None
    shape: Shape | None = None
    setup: TrainingSetup = field(default_factory=TrainingSetup)
    experts: int | None = None
    """Experts per MoE layer (informational; memory counts every parameter anyway)."""
    top_k: int | None = None
    """Routed experts per token; None: DEFAULT_TOP_K for a mixture-of-experts."""

    @property
    def compute_params(self) -> float | None:
        """Parameters that do work per token: the active ones for mixture-of-experts."""
        return self.active_params if self.active_params is not None else self.params

    @property
    def is_moe(self) -> bool:
        return (
            self.active_params is not None
            and self.params is not None
            and self.active_params < self.params
        )

    @property
    def routed_experts(self) -> int | None:
        """Experts each token is sent to, for the all-to-all factor; None when dense."""
        if not self.is_moe and self.top_k is None:
            return None
        return self.top_k if self.top_k is not None else DEFAULT_TOP_K


def adapter_params(shape: Shape, rank: int) -> float:
    """LoRA parameters with adapters on every linear layer of a Llama-style block.

    Per layer ``r x (in + out)`` for q, k, v, o (``h x h`` each, grouped-query k/v counted
    as full) and the three MLP matrices (``h x 8h/3``): ``r L (8h + 3 (h + 8h/3)) = 19 r L h``.
    Llama-2-7B at rank 16: 39.8M (PEFT reports 40.0M for all linear layers).
    """
    return 19.0 * rank * shape.layers * shape.hidden


def infer_shape(
    params: float,
    *,
    seq_len: int | None = None,
    layers: int | None = None,
    hidden: int | None = None,
    heads: int | None = None,
    vocab: int | None = None,
) -> Shape:
    """Fill missing shape fields from the parameter count.

    Depth comes from the nearest well-known model; width from ``N ~ 12 L h^2 + V h``
    (Kaplan et al. 2020) rounded to a multiple of 128; heads from a head size of 128.
    """
    inferred = {
        name
        for name, value in (
            ("vocab", vocab),
            ("seq_len", seq_len),
            ("layers", layers),
            ("hidden", hidden),
            ("heads", heads),
        )
        if value is None
    }
    vocab = DEFAULT_VOCAB if vocab is None else vocab
    seq_len = DEFAULT_SEQ_LEN if seq_len is None else seq_len
    layers = _nearest_depth(params) if layers is None else layers
    hidden = _width(params, layers, vocab) if hidden is None else hidden
    heads = max(1, round(hidden / HEAD_DIM)) if heads is None else heads
    shape = Shape(seq_len, layers, hidden, heads, vocab, frozenset(inferred))
    for name in ("seq_len", "layers", "hidden", "heads", "vocab"):
        if getattr(shape, name) <= 0:
            raise InputError(f"--{name.replace('_', '-')}: must be positive")
    return shape


def _nearest_depth(params: float) -> int:
    best = min(_REFERENCE_DEPTHS, key=lambda ref: abs(math.log(ref[0] / params)))
    return best[1]


def _width(params: float, layers: int, vocab: int) -> int:
    # Solve 12 L h^2 + V h - N = 0 for h.
    a, b = 12.0 * layers, float(vocab)
    h = (-b + math.sqrt(b * b + 4 * a * params)) / (2 * a)
    return max(HEAD_DIM, round(h / HEAD_DIM) * HEAD_DIM)
