"""Renders an estimate: the ranked table with its assumptions, JSON, CSV, explanations.

The table shows the best region per (GPU count, instance type, pricing) so that one
instance sold in ten regions does not fill the screen; JSON and CSV list the same rows
with their other regions spelled out, or every option with ``--all``.
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from typing import Any

from gpuplan.cli.render import format_count, print_csv, render_table, to_jsonable, wrap
from gpuplan.core.planner.calibration import range_summary
from gpuplan.core.planner.explain import assumption_lines, explain
from gpuplan.core.planner.options import Option, PlanResult
from gpuplan.core.planner.records import option_record, plan_record
from gpuplan.core.wording import plural

Fx = tuple[str, Decimal] | None

CSV_COLUMNS = (
    "rank",
    "gpu",
    "gpus",
    "nodes",
    "provider",
    "instance_type",
    "region",
    "pricing",
    "hours",
    "hours_low",
    "hours_high",
    "days",
    "gpu_hours",
    "gpu_hours_low",
    "gpu_hours_high",
    "cost_usd",
    "cost_usd_low",
    "cost_usd_high",
    "hourly_usd",
    "commitment_usd",
    "break_even_utilization",
    "unused_term_hours",
    "mfu",
    "fits_memory",
    "memory_per_gpu_gib",
    "pareto",
    "spot_outlier",
)
"""The columns of ``--format csv``, in order (with ``cost_<cur>``, ``hourly_<cur>`` after
them under ``--currency``)."""


def _local(value: Decimal | None, fx: Fx) -> Decimal | None:
    if value is None or fx is None:
        return value
    return (value * fx[1]).quantize(Decimal("0.01"))


def shown_options(result: PlanResult, top: int | None, every: bool) -> tuple[Option, ...]:
    """What JSON/CSV list: the table's rows with each row's other regions spelled out (the
    ``(+n)``), or every feasible option with ``--all``."""
    if every:
        return result.options if top is None else result.options[:top]
    keys = {_group_key(o) for o, _ in _grouped(result.options)[: top or 10]}
    return tuple(o for o in result.options if _group_key(o) in keys)


def _group_key(option: Option) -> tuple[Any, ...]:
    return (option.gpu, option.gpus, option.provider, option.instance_type, option.pricing)


def print_plan_json(
    result: PlanResult, top: int | None, fx: Fx, *, every: bool = False, left_out: bool = False
) -> None:
    """``left_out`` (--show-infeasible), ``every`` (--all) or nothing feasible: the left-out
    options in full under ``infeasible``; otherwise summed by reason."""
    record = plan_record(
        result,
        assumptions=assumption_lines(result),
        shown=shown_options(result, top, every),
        every_infeasible=every or left_out or not result.options,
    )
    if fx is not None:
        record["currency"] = {"code": fx[0], "fx_per_usd": fx[1], "display_only": True}
        for option in record["options"]:
            option["cost_local"] = _local(option["cost_usd"], fx)
            option["hourly_local"] = _local(option["hourly_usd"], fx)
    # One write: json.dump streams thousands of tiny writes, slow for big plans.
    sys.stdout.write(json.dumps(to_jsonable(record), indent=2) + "\n")


def print_plan_csv(result: PlanResult, top: int | None, fx: Fx, *, every: bool = False) -> None:
    shown = shown_options(result, top, every)
    rows = [option_record(o, i + 1) for i, o in enumerate(shown)]
    columns = list(CSV_COLUMNS)
    if fx is not None:
        columns += [f"cost_{fx[0].lower()}", f"hourly_{fx[0].lower()}"]
        for row in rows:
            row[f"cost_{fx[0].lower()}"] = _local(row["cost_usd"], fx)
            row[f"hourly_{fx[0].lower()}"] = _local(row["hourly_usd"], fx)
    print_csv(columns, rows)


def _grouped(options: tuple[Option, ...]) -> list[tuple[Option, int]]:
    """Best option per (GPU, count, provider, instance, pricing), with its region count."""
    seen: dict[tuple[Any, ...], int] = {}
    out: list[tuple[Option, int]] = []
    for option in options:
        key = _group_key(option)
        if key in seen:
            index = seen[key]
            out[index] = (out[index][0], out[index][1] + 1)
            continue
        seen[key] = len(out)
        out.append((option, 1))
    return out


def _hours(hours: float | None) -> str:
    if hours is None:
        return "-"
    if hours < 48:
        return f"{hours:,.1f} h"
    return f"{hours:,.0f} h ({hours / 24:,.1f} d)"


def _span(option: Option) -> str:
    """Central wall time with its range, compactly: ``65.9 d (55-97)``."""
    hours, low, high = option.hours, option.hours_low, option.hours_high
    if hours is None:
        return "-"
    unit, scale = ("h", 1.0) if hours < 48 else ("d", 24.0)
    central = f"{hours / scale:,.1f} {unit}"
    if low is None or high is None:
        return central
    digits = 1 if high / scale < 10 else 0
    return f"{central} ({low / scale:,.{digits}f}-{high / scale:,.{digits}f})"


def _money(value: Decimal | None, fx: Fx) -> str:
    value = _local(value, fx)
    return "-" if value is None else f"{value:,.0f}" if value >= 1000 else f"{value:,.2f}"


def _row(rank: int, option: Option, regions: int, fx: Fx) -> list[str]:
    memory = option.memory
    where = option.region or "-"
    if regions > 1:
        where += f" (+{regions - 1})"
    instance = f"{option.nodes} x {option.instance_type}" if option.instance_type else "-"
    return [
        str(rank),
        f"{option.gpu} x {format_count(option.gpus)}",
        instance,
        option.provider.value if option.provider else "-",
        where,
        (option.pricing or "-")
        + ("!" if option.spot_outlier else "")
        + ("^" if option.unused_term_hours else ""),
        _span(option),
        f"{option.gpu_hours:,.0f}" if option.gpu_hours is not None else "-",
        _money(option.cost_usd, fx),
        _money(option.hourly_usd, fx),
        f"{option.mfu:.0%}" if option.mfu is not None else "-",
        f"{memory.gib(memory.total):.0f}/{memory.gib(memory.capacity):.0f}" if memory else "-",
        "*" if option.pareto else "",
    ]


DROP_ORDER = (12, 10, 7, 11, 9, 2, 4, 3)
"""Columns left out, in this order, when the table is wider than the terminal: Pareto
mark, MFU, GPU-hours, memory, hourly price, instance, region, provider (last: a GPU
cloud's region, ``global`` or ``us``, does not name its cloud as ``us-east4`` does). A
column whose absence would make two rows read the same stays (two instance types of one
GPU count in one region keep the instance). GPU x count, pricing, wall time and cost
always stay."""


def print_plan_table(result: PlanResult, top: int, fx: Fx, *, show_infeasible: bool) -> None:
    code = fx[0] if fx else "USD"
    headers = [
        "#", "GPU x count", "nodes x instance", "provider", "region", "pricing",
        "wall time (range)",
        "GPU-h", f"cost {code}", f"{code}/h", "MFU", "mem GiB/GPU", "P",
    ]  # fmt: skip
    groups = _grouped(result.options)
    rows = [_row(i + 1, o, n, fx) for i, (o, n) in enumerate(groups[:top])]
    if rows:
        right = [True, False, False, False, False, False, True, True, True, True, True, True, False]
        print(render_table(headers, rows, align_right=right, drop=DROP_ORDER, numbering=0))
        hidden = len(groups) - len(rows)
        more = f"; {hidden} more (--top N)" if hidden > 0 else ""
        print(
            "\n"
            + wrap(
                f"{plural(len(result.options), 'feasible option')}{more}. P * = Pareto frontier "
                "(nothing else is both faster and cheaper); (+n) = same option in n more regions."
            )
        )
        for line in range_summary(measured=_measured(result)):
            print(wrap(line))
        if any(o.spot_outlier for o, _ in groups[:top]):
            print(
                wrap(
                    "spot! = one zone's spot price under half the same instance's spot price "
                    "in the other regions; shown as listed, ranked at their median "
                    "(docs/estimating.md, spot realism)."
                )
            )
        _term_line([o for o, _ in groups[:top]])
        _fastest_line(result, fx)
    else:
        print("No feasible option.")
    for warning in result.warnings:
        print(wrap(f"Warning: {warning}", indent="  "))
    if fx is not None:
        print(f"Money in {fx[0]} at {fx[1]} per USD (display only; the plan is in USD).")
    print("Assumptions:")
    for line in assumption_lines(result):
        print(wrap(f"  - {line}", indent="    "))
    _idle_line(result)
    if result.infeasible:
        if show_infeasible:
            _print_infeasible(result)
        else:
            left_out = plural(len(result.infeasible), "option")
            print(f"{left_out} left out (--show-infeasible lists why).")


def _measured(result: PlanResult) -> bool:
    """Whether the options rest on the user's own step rate (--throughput --measured-on)."""
    return any(f.name.startswith("measured ") for o in result.options[:1] for f in o.mfu_factors)


def _term_line(shown: list[Option]) -> None:
    """What ``^`` means, with the first marked row's figures: its cost is the whole term."""
    for rank, option in enumerate(shown, start=1):
        unused, hours = option.unused_term_hours, option.hours
        if unused is None or hours is None:
            continue
        print(wrap(
            f"reserved^ = the whole term is charged, though the job runs in part of it "
            f"(row {rank}: {hours / 24:,.1f} days of {(hours + unused) / 24:,.0f} paid); "
            "--reuse-commitment charges job hours only, if the capacity stays busy afterwards."
        ))  # fmt: skip
        return


def _fastest_line(result: PlanResult, fx: Fx) -> None:
    """The fastest feasible option, which the cost ranking may list far down."""
    fastest = min(result.options, key=lambda o: o.hours if o.hours is not None else 1e30)
    if fastest is result.options[0] or fastest.hours is None:
        return
    where = f"{fastest.nodes} x {fastest.instance_type}" if fastest.instance_type else "-"
    print(wrap(
        f"Fastest: {fastest.gpu} x {format_count(fastest.gpus)} ({where}, "
        f"{fastest.provider.value if fastest.provider else '-'}, {fastest.pricing or '-'}) in "
        f"{_hours(fastest.hours)} for {_money(fastest.cost_usd, fx)} "
        f"{fx[0] if fx else 'USD'} (--objective time ranks by time)."
    ))  # fmt: skip


def _idle_line(result: PlanResult) -> None:
    """What waiting costs: the top option at 60% instead of the assumed goodput."""
    if not result.options:
        return
    top = result.options[0]
    if top.hours is None or top.cost_usd is None or top.commitment_usd is not None:
        return
    low = 0.6
    if result.goodput <= low:
        return
    factor = result.goodput / low
    cost = top.cost_usd * Decimal(str(round(factor, 6)))
    print(wrap(
        f"Idle: at {low:.0%} utilisation instead of {result.goodput:.0%}, option 1 takes "
        f"{_hours(top.hours * factor)} and costs ${cost:,.0f} (+${cost - top.cost_usd:,.0f})."
    ))  # fmt: skip


def _print_infeasible(result: PlanResult) -> None:
    print("\nLeft out:")
    headers = ["GPU x count", "instance", "provider", "region", "pricing", "wall time", "why"]
    rows = []
    for o in result.infeasible[:200]:
        rows.append([
            f"{o.gpu} x {format_count(o.gpus)}", o.instance_type or "-",
            o.provider.value if o.provider else "-", o.region or "-", o.pricing or "-",
            _hours(o.hours), "; ".join(o.reasons),
        ])  # fmt: skip
    # Left out first to fit the terminal: provider, wall time, pricing, instance; the
    # reasons wrap.
    print(render_table(headers, rows, drop=(2, 5, 4, 1), wrap_last=True))
    if len(result.infeasible) > 200:
        print(f"... {len(result.infeasible) - 200} more (--json lists all)")


def print_explain(result: PlanResult, rank: int) -> None:
    if not result.options:
        print("\nNothing to explain: no feasible option.")
        return
    if rank > len(result.options):
        print(f"\n--explain {rank}: only {plural(len(result.options), 'option')}")
        return
    option = result.options[rank - 1]
    print(
        f"\nOption {rank}: {option.gpu} x {format_count(option.gpus)}, "
        f"{option.provider.value if option.provider else 'no provider'} "
        f"{option.instance_type or ''} {option.region or ''} {option.pricing or ''}"
    )
    for line in explain(result, option):
        print(wrap(f"  {line}", indent="    "))
