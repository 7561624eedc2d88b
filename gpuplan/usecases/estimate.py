"""Estimate use case: user words (flags or a job file) -> a plan -> plain records.

Everything the CLI, a job file or the Python API says arrives as text or numbers in
:class:`EstimateArgs`; this module turns it into a :class:`PlanRequest` (raising
:class:`InputError` with the flag's name for anything wrong) and the plan's options into
the public JSON shape.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from gpuplan.core.catalog import Catalog
from gpuplan.core.errors import DataError, InputError
from gpuplan.core.gpus import Precision
from gpuplan.core.planner.constraints import PlanConstraints
from gpuplan.core.planner.options import DEFAULT_GOODPUT, PlanRequest, PlanResult
from gpuplan.core.planner.quantities import (
    parse_amount,
    parse_duration_hours,
    parse_fraction,
    parse_gpu_counts,
)
from gpuplan.core.planner.ranking import Objective, plan
from gpuplan.core.planner.spot import DEFAULT_CHECKPOINT_HOURS
from gpuplan.core.planner.timing import Throughput
from gpuplan.core.planner.workload import (
    Optimizer,
    Recompute,
    TrainingSetup,
    Workload,
    infer_shape,
)
from gpuplan.usecases.catalog import parse_pricing, parse_provider


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
    precision: str | None = None
    optimizer: str | None = None
    zero: str | None = None
    fsdp: bool = False
    recompute: str | None = None
    micro_batch: str | None = None
    global_batch: str | None = None
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


def estimate(
    catalog: Catalog, args: EstimateArgs, constraints: PlanConstraints | None = None
) -> PlanResult:
    """Parse ``args``, plan on ``catalog`` within ``constraints``; InputError on bad input."""
    request = build_request(catalog, args, constraints)
    return plan(catalog, request, parse_objective(args.objective))


def parse_objective(text: str | None) -> Objective:
    try:
        return Objective((text or "cost").strip().lower())
    except ValueError:
        raise InputError(f"--objective: expected cost or time, got {text!r}") from None


def build_request(
    catalog: Catalog, args: EstimateArgs, constraints: PlanConstraints | None = None
) -> PlanRequest:
    workload = build_workload(args)
    gpus = tuple(catalog.gpus.resolve_many(args.gpu)) if args.gpu else ()
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
    return PlanRequest(
        workload=workload,
        gpus=gpus,
        counts=parse_gpu_counts(args.gpus) if args.gpus else None,
        providers=frozenset(parse_provider(p) for p in args.provider),
        regions=frozenset(r.strip() for r in args.region if r.strip()),
        pricing=frozenset(parse_pricing(p) for p in args.pricing),
        mfu=parse_fraction(args.mfu, "--mfu") if args.mfu is not None else None,
        goodput=(
            parse_fraction(args.utilization, "--utilization")
            if args.utilization is not None
            else DEFAULT_GOODPUT
        ),
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


def build_workload(args: EstimateArgs) -> Workload:
    params = _amount(args.params, "--params")
    active = _amount(args.active_params, "--active-params")
    if active is not None and params is not None and active > params:
        raise InputError("--active-params: cannot exceed --params")
    if params is None and active is not None:
        params = active
    shape = None
    if params is not None:
        shape = infer_shape(
            params,
            seq_len=_int(args.seq_len, "--seq-len"),
            layers=_int(args.layers, "--layers"),
            hidden=_int(args.hidden, "--hidden"),
            heads=_int(args.heads, "--heads"),
            vocab=_int(args.vocab, "--vocab"),
        )
    setup = TrainingSetup(
        precision=_enum(Precision, args.precision, "--precision", Precision.BF16),
        optimizer=_optimizer(args.optimizer),
        zero=3 if args.fsdp else _zero(args.zero),
        recompute=_enum(Recompute, args.recompute, "--recompute", None),
        micro_batch=_int(args.micro_batch, "--micro-batch") or 1,
        global_batch=_int(args.global_batch, "--global-batch"),
    )
    workload = Workload(
        params=params,
        active_params=active,
        tokens=_amount(args.tokens, "--tokens"),
        samples=_amount(args.samples, "--samples"),
        flops_per_sample=_amount(args.flops_per_sample, "--flops-per-sample"),
        shape=shape,
        setup=setup,
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
    try:
        value = Decimal(str(text).strip().lstrip("$").replace(",", ""))
    except InvalidOperation:
        raise InputError(f"{flag}: expected an amount in USD, got {text!r}") from None
    if not value.is_finite() or value < 0:
        raise InputError(f"{flag}: expected a non-negative amount in USD, got {text!r}")
    return value


def read_job_file(path: str) -> dict[str, Any]:
    """A YAML or JSON job file: a mapping with the same keys as the flags."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(path, f"cannot read: {exc.strerror}") from None
    import yaml

    try:
        data = json.loads(text) if file.suffix.lower() == ".json" else yaml.safe_load(text)
    except json.JSONDecodeError as exc:
        raise DataError(path, f"not valid JSON: {exc.msg}", line=exc.lineno) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line = mark.line + 1 if mark is not None else None
        raise DataError(path, f"not valid YAML: {problem}", line=line) from None
    if not isinstance(data, dict):
        raise DataError(path, "expected a mapping of flag names to values")
    known = {f.name for f in fields(EstimateArgs)}
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = str(key).replace("-", "_")
        if name not in known:
            raise _unknown_key(path, text, str(key), known)
        out[name] = value
    return out


def _unknown_key(path: str, text: str, key: str, known: set[str]) -> DataError:
    """The unknown key's line, and the closest known key (``tokns`` -> ``tokens``)."""
    import difflib
    import re

    line = next(
        (
            number
            for number, content in enumerate(text.splitlines(), start=1)
            if re.match(rf"""\s*["']?{re.escape(key)}["']?\s*:""", content)
        ),
        None,
    )
    close = difflib.get_close_matches(key.replace("-", "_"), sorted(known), n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return DataError(path, f"unknown key {key!r}{hint}", line=line, field=key)


def merge_job_file(args: EstimateArgs, job: dict[str, Any]) -> EstimateArgs:
    """Job-file values fill what the flags left unset (flags win)."""
    for name, value in job.items():
        current = getattr(args, name)
        if current in (None, [], False):
            if isinstance(current, list):
                value = [str(v) for v in value] if isinstance(value, list) else [str(value)]
            elif isinstance(current, bool) or name in ("fsdp", "reuse_commitment"):
                value = bool(value)
            else:
                value = str(value)
            setattr(args, name, value)
    return args
