"""``gpuplan estimate``: rank every GPU option for a training job by time and cost."""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import date
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from gpuplan.cli.common import (
    add_catalog_dir,
    add_db,
    add_output_format,
    check_provider_regions,
    load_catalog_for,
    print_notices,
    split_list,
)
from gpuplan.core.catalog.kinds import Precision, PricingModel, Provider
from gpuplan.core.errors import InputError
from gpuplan.core.planner.calibration import GOODPUT as DEFAULT_GOODPUT
from gpuplan.core.planner.quantities import DURATION_UNITS
from gpuplan.core.planner.workload import Optimizer, Recompute
from gpuplan.core.wording import plural, shown_line

if TYPE_CHECKING:
    from gpuplan.core.catalog.query import Catalog
    from gpuplan.core.planner.constraints import PlanConstraints
    from gpuplan.core.planner.options import PlanResult
    from gpuplan.usecases.planner.estimate import EstimateArgs


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "estimate",
        help="rank GPU options for a training job by time and cost",
        description="Estimate time and cost of a training job on every GPU the catalog sells. "
        "Amounts accept suffixes K, M, B, T (7B, 2T); durations need a unit "
        f"({DURATION_UNITS}: 36h, 14d, 1h30m; a bare number is refused); numbers are ASCII "
        "digits; --gpus takes 64, 8,16,64 or 8-512.",
    )
    work = p.add_argument_group("work")
    work.add_argument("--job", metavar="FILE", help="YAML/JSON job file (keys as the flags)")
    work.add_argument("--params", help="parameters, e.g. 7B or 7e9 (at least 1M)")
    work.add_argument("--active-params", help="active parameters per token (mixture-of-experts)")
    work.add_argument("--tokens", help="training tokens, e.g. 2T (at least 1M)")
    work.add_argument("--samples", help="samples (non-transformer work)")
    work.add_argument("--flops-per-sample", help="training FLOPs per sample (fwd+bwd)")
    work.add_argument("--throughput", help="measured tokens (or samples)/s per GPU")
    work.add_argument("--measured-on", metavar="GPU", help="GPU the throughput was measured on")
    shape = p.add_argument_group("shape (inferred from the active parameters when absent)")
    for flag in ("--seq-len", "--layers", "--hidden", "--heads", "--vocab"):
        shape.add_argument(flag)
    shape.add_argument("--experts", help="experts per layer (mixture-of-experts)")
    shape.add_argument("--top-k", help="routed experts per token (default 2 for MoE)")
    setup = p.add_argument_group("training setup")
    setup.add_argument(
        "--precision",
        help=_listed(Precision, "bf16") + "; nvfp4 and mxfp4 plan as fp4, mxfp8 as fp8",
    )
    setup.add_argument("--optimizer", help=_listed(Optimizer, "adamw"))
    setup.add_argument("--zero", help="ZeRO stage 0-3 (default: 3 on several GPUs)")
    setup.add_argument("--fsdp", action="store_true", help="FSDP full sharding (= --zero 3)")
    setup.add_argument(
        "--recompute", help=_listed(Recompute, None) + " (default: lightest that fits)"
    )
    setup.add_argument("--micro-batch", help="sequences per GPU per step (default 1)")
    setup.add_argument("--global-batch", help="sequences per optimizer step")
    setup.add_argument(
        "--method",
        help="pretrain (default), full (full fine-tuning), lora (frozen bf16 base + "
        "adapters), qlora (frozen 4-bit base + adapters)",
    )
    setup.add_argument("--lora-rank", help="adapter rank for lora/qlora (default 16)")
    _choices(p)
    _output(p)
    add_output_format(p)
    add_catalog_dir(p)
    p.set_defaults(handler=run)
    # "-1T", "-inf" are values (then refused by the parser with the flag's name), not flags:
    # `--tokens -1T` and `--tokens=-1T` get the same message.
    p._negative_number_matcher = re.compile(r"^-(\d|\.\d|inf|nan)", re.IGNORECASE)


def _output(p: argparse.ArgumentParser) -> None:
    out = p.add_argument_group("output")
    out.add_argument(
        "--top", help="show N rows (default 10, all for one GPU at one count); JSON lists the same"
    )
    out.add_argument("--all", action="store_true", help="JSON/CSV: every feasible option")
    out.add_argument(
        "--compare-gpus",
        action="store_true",
        help="the same job on A100-80GB, H100, H200, B200, MI300X (or the --gpu list) at one "
        "count (--gpus, default 8): time, cost and why",
    )
    out.add_argument("--show-infeasible", action="store_true", help="list left-out options")
    out.add_argument(
        "--explain", nargs="?", const="1", metavar="N", help="print the arithmetic of option N"
    )
    out.add_argument("--currency", metavar="CODE", help="show money in CODE (needs --fx)")
    out.add_argument("--fx", metavar="RATE", help="units of CODE per USD, display only")


def _choices(p: argparse.ArgumentParser) -> None:
    c = p.add_argument_group("choices")
    c.add_argument("--gpu", action="append", help="GPU name (repeatable, comma list)")
    c.add_argument(
        "--gpus",
        help="total GPUs: any count (64, 3), a list (8,16,64) or a range (8-512: its powers "
        "of two); default: powers of two from 1 to 1024",
    )
    c.add_argument("--provider", action="append", help=_listed(Provider, None))
    c.add_argument("--region", action="append", help="region (repeatable, comma list)")
    c.add_argument("--pricing", action="append", help=_listed(PricingModel, None) + " (repeatable)")
    c.add_argument("--mfu", help="override the MFU model, a fraction such as 0.4")
    c.add_argument(
        "--utilization",
        help="expected goodput, a fraction; the central figure is then the model at it, "
        "not averaged with the 6ND rule of thumb (default: the fit on published runs, "
        f"{DEFAULT_GOODPUT:.2f}, averaged with the rule)",
    )
    c.add_argument(
        "--checkpoint-every", help="checkpoint interval for spot, with its unit (default 1h)"
    )
    c.add_argument(
        "--deadline",
        help="wall-clock limit with its unit, e.g. 36h or 14d (not a bare 14); default 90d",
    )
    c.add_argument("--budget", help="USD limit")
    c.add_argument("--objective", help="cost (default) or time")
    c.add_argument(
        "--policy",
        metavar="FILE",
        help="apply a policy's planning and budget sections (no cloud call)",
    )
    add_db(c)
    c.add_argument("--price-per-gpu-hour", help="USD rate for an unsold GPU or a negotiated deal")
    c.add_argument(
        "--reuse-commitment",
        action="store_true",
        help="reserved capacity stays busy after the job: charge job hours only",
    )
    c.add_argument(
        "--include-stale",
        action="store_true",
        help="rank options priced over 90 days ago by cost alone (default: after fresh ones)",
    )


def _listed(values: Iterable[StrEnum | Provider], default: str | None) -> str:
    """Help text from the enum the parser resolves against: it never lists fewer."""
    words = [f"{v.value} (default)" if v.value == default else v.value for v in values]
    return ", ".join(words)


def run(args: argparse.Namespace) -> int:
    from gpuplan.cli import estimate_render as render
    from gpuplan.usecases.planner.estimate import EstimateArgs, estimate
    from gpuplan.usecases.planner.estimate_job import job_error, merge_job_file, read_job_file

    values = EstimateArgs(
        **{k: getattr(args, k) for k in _SCALARS},
        gpu=split_list(args.gpu),
        provider=split_list(args.provider),
        region=split_list(args.region),
        pricing=split_list(args.pricing),
    )
    job_keys: set[str] = set()
    if args.job:
        job = read_job_file(args.job)
        job_keys = {k for k in job if getattr(values, k) in (None, [], False)}
        values = merge_job_file(values, job)
    if args.compare_gpus:  # the job file's work too (on main it was read by neither path)
        return _compare(args, values)
    top = _positive_int(args.top, "--top")
    explain_rank = _positive_int(args.explain, "--explain")
    fx = _fx(args.currency, args.fx)
    catalog = load_catalog_for(args, fast=True)
    check_provider_regions(values.provider, values.region, catalog)
    constraints, note = None, None
    if args.policy:
        from datetime import UTC, datetime

        from gpuplan.usecases.policy import plan_constraints

        constraints, note = plan_constraints(
            args.policy, db=args.db, now=datetime.now(UTC), gpus=catalog.gpus
        )
    try:
        _check_plausible(values)
        result = estimate(catalog, values, constraints, today=date.today())
    except InputError as exc:
        raise job_error(exc, args.job, job_keys) if args.job else exc from None
    if note is not None:
        result = replace(result, notes=(*result.notes, note))
    top = top or _default_top(result)
    _check_explain(explain_rank, result)
    if args.json:
        render.print_plan_json(result, top, fx, every=args.all, left_out=args.show_infeasible)
    elif args.csv:
        render.print_plan_csv(result, top, fx, every=args.all)
    else:
        render.print_plan_table(result, top, fx, show_infeasible=args.show_infeasible)
    if explain_rank is not None:
        render.print_explain(result, explain_rank)
    if not result.options:
        fits = _planner_with(catalog, values, constraints)
        _print_reasons(result, constraints.label if constraints else None, fits)
        return 1
    return 0


def _compare(args: argparse.Namespace, values: EstimateArgs) -> int:
    """``--compare-gpus``: one GPU count, one row per GPU."""
    from gpuplan.cli.estimate_compare import print_comparison
    from gpuplan.core.planner.compare import COMPARED_GPUS, DEFAULT_COMPARE_COUNT
    from gpuplan.usecases.planner.estimate import estimate

    if values.gpus is not None and ("," in values.gpus or "-" in values.gpus):
        raise InputError("--compare-gpus: give one GPU count (--gpus 64), not a list or range")
    catalog = load_catalog_for(args, fast=True)
    names = tuple(values.gpu) or COMPARED_GPUS
    values = replace(values, gpu=list(names), gpus=values.gpus or DEFAULT_COMPARE_COUNT)
    result = estimate(catalog, values, today=date.today())
    gpus = tuple(catalog.gpus.resolve_many(list(names)))
    print_comparison(result, gpus, _fx(args.currency, args.fx), as_json=args.json)
    return 0 if result.options else 1


def _check_explain(rank: int | None, result: PlanResult) -> None:
    if rank is not None and result.options and rank > len(result.options):
        raise InputError(
            f"--explain {rank}: the table has {plural(len(result.options), 'option')}; "
            f"expected 1 to {len(result.options):,}"
        )


def _planner_with(
    catalog: Catalog, values: EstimateArgs, constraints: PlanConstraints | None
) -> Callable[[Mapping[str, Any]], bool]:
    """Whether the plan with one change has a feasible option (to check a tip)."""
    from gpuplan.usecases.planner.estimate import estimate

    def fits(change: Mapping[str, Any]) -> bool:
        try:
            changed = replace(values, **change)
            return bool(estimate(catalog, changed, constraints, today=date.today()).options)
        except InputError:
            return False

    return fits


_SCALARS = (
    "params",
    "active_params",
    "tokens",
    "samples",
    "flops_per_sample",
    "throughput",
    "measured_on",
    "seq_len",
    "layers",
    "hidden",
    "heads",
    "vocab",
    "experts",
    "top_k",
    "precision",
    "optimizer",
    "zero",
    "fsdp",
    "recompute",
    "micro_batch",
    "global_batch",
    "method",
    "lora_rank",
    "gpus",
    "mfu",
    "utilization",
    "checkpoint_every",
    "deadline",
    "budget",
    "objective",
    "price_per_gpu_hour",
    "reuse_commitment",
    "include_stale",
)


def _check_plausible(values: EstimateArgs) -> None:
    """Values each plausible alone but unusual together: said on stderr."""
    from gpuplan.core.planner.quantities import parse_amount, tokens_per_param_notice

    fine_tune = values.method not in (None, "pretrain")
    if values.params is not None and values.tokens is not None and not fine_tune:
        notice = tokens_per_param_notice(
            parse_amount(str(values.tokens), "--tokens"),
            parse_amount(str(values.params), "--params"),
        )
        print_notices([notice] if notice else [])


def _default_top(result: PlanResult) -> int:
    """10 rows; every row when one GPU at one count is asked for (a dozen at most: one per
    provider, instance and pricing model)."""
    if len({(o.gpu, o.gpus) for o in result.options}) <= 1:
        return max(1, len(result.options))
    return 10


def _print_reasons(
    result: PlanResult, label: str | None, fits: Callable[[Mapping[str, Any]], bool]
) -> None:
    from gpuplan.cli.estimate_tips import cheapest_over_budget, fastest_over_cap, true_tips
    from gpuplan.core.planner.records import reason_counts

    reasons = reason_counts(result)
    if not reasons:
        reasons = {"no option matched the --gpu/--provider/--region/--pricing filters": 1}
    print("gpuplan: nothing feasible; reasons:", file=sys.stderr)
    ranked = list(reasons.items())  # in the planner's order: the fastest options' first
    for reason, count in ranked[:15]:
        line = f"  {reason}" + (f" ({count:,} options)" if count > 1 else "")
        print(shown_line(line), file=sys.stderr)
    if len(ranked) > 15:
        more = plural(len(ranked) - 15, "other reason")
        print(f"  ... {more} (--json lists all)", file=sys.stderr)
    for summary in (cheapest_over_budget(result), fastest_over_cap(result, fits)):
        if summary:
            print(shown_line(summary), file=sys.stderr)
    tips, dropped = true_tips(result, label, fits)
    if tips:
        print("what would fit:", file=sys.stderr)
        for tip in tips:
            print(f"  {tip}", file=sys.stderr)
    if dropped:
        within = " within the policy" if label else ""
        print(
            f"({plural(dropped, 'other change')} checked would still not fit{within})",
            file=sys.stderr,
        )


MAX_FX = Decimal(1_000_000)
"""No currency trades above a million units per USD (the largest are ~10^5)."""
MAX_ROWS = 1_000_000


def _positive_int(text: str | None, flag: str) -> int | None:
    if text is None:
        return None
    raw = text.strip()
    ascii_digits = raw.isascii() and raw.isdigit()  # '²'.isdigit() is True, int('²') fails
    if not ascii_digits or len(raw) > 7 or not 1 <= int(raw) <= MAX_ROWS:
        shown = raw if len(raw) <= 24 else f"{raw[:12]}...({len(raw)} characters)"
        raise InputError(f"{flag}: expected a whole number from 1 to {MAX_ROWS:,}, got {shown!r}")
    return int(raw)


def _fx(code: str | None, rate: str | None) -> tuple[str, Decimal] | None:
    if code is None and rate is None:
        return None
    if not code or not rate:
        raise InputError("--currency and --fx go together, e.g. --currency EUR --fx 0.92")
    if not code.isalpha() or len(code) != 3:
        raise InputError(f"--currency: expected a 3-letter code such as EUR, got {code!r}")
    try:
        value = Decimal(rate) if rate.isascii() else Decimal("nan")
    except InvalidOperation:
        raise InputError(f"--fx: expected a rate such as 0.92, got {rate!r}") from None
    if not value.is_finite() or value <= 0:
        raise InputError(f"--fx: expected a positive rate, got {rate!r}")
    if value > MAX_FX:
        raise InputError(f"--fx: {rate[:24]} is absurdly large (at most {MAX_FX:,} per USD)")
    return code.upper(), value
