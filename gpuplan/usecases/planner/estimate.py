"""Estimate use case: user words (flags or a job file) -> a plan -> plain records.

Everything the CLI, a job file or the Python API says arrives as text or numbers in
:class:`EstimateArgs`; this module turns it into a :class:`PlanRequest` (raising
:class:`InputError` with the flag's name for anything wrong) and the plan's options into
the public JSON shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal
from typing import Any

from gpuplan.core.catalog.kinds import Precision, PricingModel
from gpuplan.core.catalog.query import Catalog, is_stale, oldest_price_note
from gpuplan.core.errors import InputError
from gpuplan.core.planner.constraints import PlanConstraints
from gpuplan.core.planner.options import DEFAULT_GOODPUT, Option, PlanRequest, PlanResult
from gpuplan.core.planner.quantities import (
    parse_amount,
    parse_duration_hours,
    parse_fraction,
    parse_gpu_counts,
    parse_usd,
)
from gpuplan.core.planner.ranking import Objective, plan
from gpuplan.core.planner.spot import DEFAULT_CHECKPOINT_HOURS
from gpuplan.core.planner.timing import Throughput
from gpuplan.core.planner.workload import (
    Method,
    Optimizer,
    Recompute,
    TrainingSetup,
    Workload,
    infer_shape,
    lora_rank,
)
from gpuplan.usecases.catalog.lookup import parse_pricing, parse_provider


@dataclass
class EstimateArgs:
    """The estimate's inputs as people type them; None means 'default'."""

    params: str | None = None
    active_params: str | None = None
    tokens: str | None = None
    samples: str | None = None
    flops_per_sample: str | None = None
    throughput: str | None = None
    measured_on: str | None = None
    seq_len: str | None = None
    layers: str | None = None
    hidden: str | None = None
    heads: str | None = None
    vocab: str | None = None
    experts: str | None = None
    top_k: str | None = None
    precision: str | None = None
    optimizer: str | None = None
    zero: str | None = None
    fsdp: bool = False
    recompute: str | None = None
    micro_batch: str | None = None
    global_batch: str | None = None
    method: str | None = None
    lora_rank: str | None = None
    gpu: list[str] = field(default_factory=list)
    gpus: str | None = None
    provider: list[str] = field(default_factory=list)
    region: list[str] = field(default_factory=list)
    pricing: list[str] = field(default_factory=list)
    mfu: str | None = None
    utilization: str | None = None
    checkpoint_every: str | None = None
    deadline: str | None = None
    budget: str | None = None
    objective: str | None = None
    price_per_gpu_hour: str | None = None
    reuse_commitment: bool = False
    include_stale: bool = False
    """Rank options priced over 90 days ago by cost alone (default: after the fresh ones)."""


def estimate(
    catalog: Catalog,
    args: EstimateArgs,
    constraints: PlanConstraints | None = None,
    today: date | None = None,
) -> PlanResult:
    """Parse ``args``, plan on ``catalog`` within ``constraints``; InputError on bad input."""
    check_contradictions(args)
    request = build_request(catalog, args, constraints)
    result = plan(catalog, request, parse_objective(args.objective))
    if today is not None and not args.include_stale:
        result = stale_last(result, catalog, today)
    return with_price_age(result, catalog, today)


def stale_last(result: PlanResult, catalog: Catalog, today: date) -> PlanResult:
    """Options whose price is over 90 days old at ``today`` after the fresh ones, each
    group in the objective's order (a stale price is a guess at today's)."""
    by_key = {o.key: o for o in catalog.offers}

    def stale(option: Option) -> bool:
        if option.provider is None or not option.instance_type or not option.region:
            return False
        offer = by_key.get((option.provider.value, option.instance_type, option.region))
        pricing = PricingModel(option.pricing) if option.pricing else PricingModel.ON_DEMAND
        return offer is not None and is_stale(offer, today, pricing)

    return replace(result, options=tuple(sorted(result.options, key=stale)))


def with_price_age(result: PlanResult, catalog: Catalog, today: date | None) -> PlanResult:
    """Add the assumption naming the oldest catalog price the feasible options use: each
    offer at the pricing model the option prices it by, dated by that price's reading."""
    by_key = {o.key: o for o in catalog.offers}
    used = [
        (by_key[key], PricingModel(o.pricing) if o.pricing else PricingModel.ON_DEMAND)
        for o in result.options
        if o.provider is not None and o.instance_type and o.region
        if (key := (o.provider.value, o.instance_type, o.region)) in by_key
    ]
    note = oldest_price_note(used, today)
    return result if note is None else replace(result, notes=(*result.notes, note))


def check_contradictions(args: EstimateArgs) -> None:
    """Flags that cannot both hold: InputError naming both, before any planning."""
    for work in ("params", "active_params", "tokens"):
        for other in ("samples", "flops_per_sample"):
            if getattr(args, work) is not None and getattr(args, other) is not None:
                raise InputError(
                    f"{flag_of(work)} contradicts {flag_of(other)}: give --params with --tokens, "
                    "or --samples with --flops-per-sample, not both"
                )
    if args.fsdp and args.zero is not None and str(args.zero).strip() != "3":
        raise InputError(
            f"--fsdp contradicts --zero {args.zero}: FSDP full sharding is ZeRO-3 "
            "(drop one of them)"
        )
    pricing = {p.strip().lower().replace("-", "_") for p in args.pricing}
    if args.reuse_commitment and pricing and not any(p.startswith("reserved") for p in pricing):
        raise InputError(
            f"--reuse-commitment contradicts --pricing {','.join(sorted(pricing))}: "
            "it applies to reserved pricing only"
        )
    if args.mfu is not None and args.throughput is not None:
        raise InputError("--mfu contradicts --throughput: both set the MFU; give one")
    if args.measured_on and args.throughput is None:
        raise InputError("--measured-on needs --throughput (the rate measured there)")
    if (args.experts is not None or args.top_k is not None) and args.active_params is None:
        which = "--experts" if args.experts is not None else "--top-k"
        raise InputError(f"{which} needs --active-params (the parameters each token uses)")
    check_needs(args)


MODEL_FIELDS = (
    "seq_len", "layers", "hidden", "heads", "vocab",
    "optimizer", "zero", "fsdp", "recompute", "micro_batch", "global_batch",
    "method", "lora_rank",
)  # fmt: skip
"""The transformer's shape and the memory setup: read only for --params work (issue 33)."""


def check_needs(args: EstimateArgs) -> None:
    """Values that would do nothing with the rest (from flags or the job file): InputError
    naming what they need, never silently ignored."""
    samples = args.samples is not None or args.flops_per_sample is not None
    if samples and args.params is None and args.active_params is None:
        for name in MODEL_FIELDS:
            if getattr(args, name) not in (None, False):
                raise InputError(
                    f"{flag_of(name)} needs --params with --tokens: --samples work has no "
                    "transformer shape or memory model, so it would do nothing"
                )
    pricing = {parse_pricing(p) for p in args.pricing if p.strip()}
    if args.checkpoint_every is not None and pricing and PricingModel.SPOT not in pricing:
        raise InputError(
            f"--checkpoint-every needs spot pricing (--pricing spot), not --pricing "
            f"{','.join(sorted(pricing))}: only spot runs are interrupted and restart from "
            "a checkpoint"
        )


def flag_of(name: str) -> str:
    """The flag a field of :class:`EstimateArgs` comes from: ``seq_len`` -> ``--seq-len``."""
    return "--" + name.replace("_", "-")


def parse_objective(text: str | None) -> Objective:
    try:
        return Objective((text or "cost").strip().lower())
    except ValueError:
        raise InputError(f"--objective: expected cost or time, got {text!r}") from None


_NEEDS_CORES = {
    Precision.FP4: "use fp8 or bf16, or a Blackwell GPU or an MI355X",
    Precision.FP8: "use bf16, or an H100/H200/B200-class GPU",
    Precision.BF16: "use fp16 on it, or an A100 or newer",
}
"""Precisions a GPU must have tensor cores for when asked for by name and by flag: refused
(exit 2). Without ``--precision`` a GPU with no bf16 (V100, T4) runs at its fp16 peak."""


def build_request(
    catalog: Catalog, args: EstimateArgs, constraints: PlanConstraints | None = None
) -> PlanRequest:
    workload = build_workload(args)
    gpus = tuple(catalog.gpus.resolve_many(args.gpu)) if args.gpu else ()
    precision = workload.setup.precision
    if args.precision is not None and precision in _NEEDS_CORES:  # the default bf16 falls back
        for name in gpus:
            if not catalog.gpus.get(name).peak_tflops(precision):
                raise InputError(
                    f"--precision {precision.value} contradicts --gpu {name}: it has no "
                    f"{precision.value.upper()} tensor cores ({_NEEDS_CORES[precision]})"
                )
    throughput = None
    if args.throughput is not None:
        if not args.measured_on:
            raise InputError("--throughput needs --measured-on GPU (where it was measured)")
        unit = "samples" if args.samples is not None else "tokens"
        throughput = Throughput(
            parse_amount(args.throughput, "--throughput"),
            catalog.gpus.resolve(args.measured_on),
            unit,
        )
    regions = frozenset(r.strip() for r in args.region if r.strip())
    _check_regions(catalog, regions)
    return PlanRequest(
        workload=workload,
        gpus=gpus,
        counts=parse_gpu_counts(args.gpus) if args.gpus else None,
        providers=frozenset(parse_provider(p) for p in args.provider),
        regions=regions,
        pricing=frozenset(parse_pricing(p) for p in args.pricing),
        mfu=parse_fraction(args.mfu, "--mfu") if args.mfu is not None else None,
        goodput=(
            parse_fraction(args.utilization, "--utilization")
            if args.utilization is not None
            else DEFAULT_GOODPUT
        ),
        goodput_given=args.utilization is not None,
        checkpoint_hours=(
            parse_duration_hours(args.checkpoint_every, "--checkpoint-every")
            if args.checkpoint_every
            else DEFAULT_CHECKPOINT_HOURS
        ),
        deadline_hours=parse_duration_hours(args.deadline, "--deadline") if args.deadline else None,
        budget_usd=_money(args.budget, "--budget"),
        price_per_gpu_hour=_money(args.price_per_gpu_hour, "--price-per-gpu-hour"),
        reuse_commitment=args.reuse_commitment,
        throughput=throughput,
        constraints=constraints,
    )


def _check_regions(catalog: Catalog, regions: frozenset[str]) -> None:
    """A region no catalog offer is in is a typo or another planet: exit 2 with near names."""
    if not regions:
        return
    known = {o.region for o in catalog.offers}
    for region in sorted(regions - known):
        import difflib

        near = difflib.get_close_matches(region, sorted(known), n=3, cutoff=0.6)
        hint = f"did you mean {', '.join(near)}?" if near else f"{len(known)} regions are known"
        raise InputError(f"--region {region}: no catalog offer is in this region ({hint})")


def build_workload(args: EstimateArgs) -> Workload:
    params = _amount(args.params, "--params")
    active = _amount(args.active_params, "--active-params")
    if active is not None and params is not None and active > params:
        raise InputError("--active-params contradicts --params: active cannot exceed total")
    if params is None and active is not None:
        params = active
    experts, top_k = _int(args.experts, "--experts"), _int(args.top_k, "--top-k")
    if experts is not None and top_k is not None and top_k > experts:
        raise InputError(f"--top-k {top_k} contradicts --experts {experts}: k <= experts")
    shape = None
    if params is not None:
        # Attention and width follow the active model; memory counts every parameter.
        shape = infer_shape(
            active if active is not None else params,
            seq_len=_int(args.seq_len, "--seq-len"),
            layers=_int(args.layers, "--layers"),
            hidden=_int(args.hidden, "--hidden"),
            heads=_int(args.heads, "--heads"),
            vocab=_int(args.vocab, "--vocab"),
        )
    method = _enum(Method, args.method, "--method", Method.PRETRAIN)
    setup = TrainingSetup(
        precision=_enum(Precision, _precision_alias(args.precision), "--precision", Precision.BF16),
        optimizer=_optimizer(args.optimizer),
        zero=3 if args.fsdp else _zero(args.zero),
        recompute=_enum(Recompute, args.recompute, "--recompute", None),
        micro_batch=_int(args.micro_batch, "--micro-batch") or 1,
        global_batch=_int(args.global_batch, "--global-batch"),
        method=method,
        lora_rank=lora_rank(method, _int(args.lora_rank, "--lora-rank")),
    )
    if setup.global_batch is not None and setup.micro_batch > setup.global_batch:
        raise InputError(
            f"--micro-batch {setup.micro_batch} contradicts --global-batch "
            f"{setup.global_batch}: a step holds at least one micro-batch"
        )
    workload = Workload(
        params=params,
        active_params=active,
        tokens=_amount(args.tokens, "--tokens"),
        samples=_amount(args.samples, "--samples"),
        flops_per_sample=_amount(args.flops_per_sample, "--flops-per-sample"),
        shape=shape,
        setup=setup,
        experts=experts,
        top_k=top_k,
    )
    if workload.samples is None and workload.flops_per_sample is None:
        if params is None:
            raise InputError("--params is required (or --samples with --flops-per-sample)")
        if workload.tokens is None:
            raise InputError("--tokens is required with --params (e.g. --tokens 2T)")
    return workload


def _amount(text: str | None, flag: str) -> float | None:
    return None if text is None else parse_amount(str(text), flag)


def _int(text: str | None, flag: str) -> int | None:
    if text is None:
        return None
    value = parse_amount(str(text), flag)
    if value != int(value):
        raise InputError(f"{flag}: expected a whole number, got {text!r}")
    return int(value)


def _zero(text: str | None) -> int | None:
    if text is None:
        return None
    if str(text).strip() not in ("0", "1", "2", "3"):
        raise InputError(f"--zero: expected 0, 1, 2 or 3, got {text!r}")
    return int(text)


def _optimizer(text: str | None) -> Optimizer:
    if text is None:
        return Optimizer.ADAMW
    key = str(text).strip().lower().replace("_", "-").replace(" ", "-")
    aliases = {"adam": "adamw", "8-bit-adam": "8bit-adam", "adam8bit": "8bit-adam"}
    chosen: Optimizer = _enum(Optimizer, aliases.get(key, key), "--optimizer", Optimizer.ADAMW)
    return chosen


PRECISION_ALIASES = {"nvfp4": "fp4", "mxfp4": "fp4", "mxfp8": "fp8"}
"""Recipe names that train at a planner precision: NVFP4 and MXFP4 at the fp4 peak, MXFP8
at the fp8 peak."""


def _precision_alias(text: str | None) -> str | None:
    if text is None:
        return None
    return PRECISION_ALIASES.get(str(text).strip().lower(), text)


def _enum(kind: Any, text: str | None, flag: str, default: Any) -> Any:
    if text is None:
        return default
    try:
        return kind(str(text).strip().lower())
    except ValueError:
        choices = ", ".join(k.value for k in kind)
        raise InputError(f"{flag}: expected one of {choices}, got {text!r}") from None


def _money(text: str | None, flag: str) -> Decimal | None:
    if text is None:
        return None
    return parse_usd(text, flag)
