"""The Estimate table's columns and cells (no widgets here).

What a person compares first never shrinks: the GPU cell (count and full GPU name, so
``A100-40GB`` and ``A100-80GB`` never read alike), the wall time and the cost, each with
its range (the calibration's low-high band), and the region. The spot-outlier flag (a
spot price far below the same instance elsewhere) rides in the ★ column and in the
pricing cell (``spot!``); a reserved term the job pays whole and uses part of is marked
``^`` there too (the CLI's mark). Narrow terminals drop whole columns, least important first
(where, $/h, the cost range); numbers and GPU names are never cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING

from rich.text import Text

from gpuplan.tui import format as fmt
from gpuplan.tui.table import Column

if TYPE_CHECKING:
    from gpuplan.core.planner.options import Option, PlanResult

COLUMNS: tuple[Column, ...] = (
    Column("mark", "★!", 0),
    Column("gpu", "GPUs", 0),
    Column("hours", "time", 0),
    Column("hours_range", "time range", 1),
    Column("cost", "cost $", 0),
    Column("cost_range", "cost range", 2),
    Column("hourly", "$/h", 2),
    Column("region", "region", 0, min_width=9, max_width=16),
    Column("pricing", "pricing", 1),
    Column("where", "where", 3),
)
"""Priority 0 always shows; a column without a minimum width shows whole or not at all."""
TEXT_COLUMNS = frozenset({"gpu", "region", "pricing", "where"})
OUTLIER = "!"
"""Marks an option priced on a spot outlier (the reason is in Explain)."""
PRICING_SHORT = {
    "on_demand": "on-dem",
    "reserved_1y": "1y",
    "reserved_3y": "3y",
    "capacity_block": "cap-blk",
    "dws_calendar": "dws-cal",
}
"""Pricing models as the table abbreviates them (Explain names them in full)."""


def option_place(option: Option) -> str:
    if option.instance_type is None or option.provider is None:
        return "custom price"
    nodes = f"{option.nodes}x " if option.nodes > 1 else ""
    return f"{option.provider.value} {nodes}{option.instance_type}"


def gpu_cell(option: Option) -> str:
    """``1024x A100-80GB``: the count without separators (one character less), the name
    whole: it is what tells two rows apart."""
    count = fmt.count(option.gpus).replace(",", "")
    return f"{count}x {option.gpu}"


UNUSED_TERM = "^"
"""After a reserved pricing whose job runs in part of the term it pays for (as the CLI)."""


def pricing_cell(option: Option) -> str:
    pricing = option.pricing or fmt.MISSING
    short = PRICING_SHORT.get(pricing, pricing)
    return (
        short
        + (OUTLIER if option.spot_outlier else "")
        + (UNUSED_TERM if option.unused_term_hours else "")
    )


def hours_range(low: float | None, high: float | None) -> str:
    """``50-101 d``: both ends in the unit :func:`fmt.hours` gives the high end."""
    if low is None or high is None:
        return fmt.MISSING
    unit = fmt.hours(high).split()[-1]
    per = {"h": 1.0, "d": 24.0, "y": 365 * 24.0}[unit]
    digits = 0 if high / per >= 10 else 1
    return f"{low / per:,.{digits}f}-{high / per:,.{digits}f} {unit}"


def money_range(low: Decimal | None, high: Decimal | None) -> str:
    """``24k-48k``, ``1.2M-2.3M``, ``450-900``: whole dollars, short."""
    if low is None or high is None:
        return fmt.MISSING
    return f"{short_money(low)}-{short_money(high)}"


def short_money(value: Decimal) -> str:
    amount = float(value)
    if amount >= 1e6:
        return f"{amount / 1e6:.1f}M"
    if amount >= 1e4:
        return f"{amount / 1e3:.0f}k"
    if amount >= 1e3:
        return f"{amount / 1e3:.1f}k"
    return f"{amount:.0f}"


def option_cells(option: Option) -> dict[str, str]:
    """Every column's text for one option (the screen picks the columns that fit)."""
    return {
        "mark": ("★" if option.pareto else " ") + (OUTLIER if option.spot_outlier else ""),
        "gpu": gpu_cell(option),
        "hours": fmt.hours(option.hours),
        "hours_range": hours_range(option.hours_low, option.hours_high),
        "cost": fmt.compact_money(option.cost_usd),
        "cost_range": money_range(option.cost_usd_low, option.cost_usd_high),
        "hourly": fmt.money(option.hourly_usd),
        "pricing": pricing_cell(option),
        "where": option_place(option),
        "region": option.region or fmt.MISSING,
    }


def sort_value(option: Option, column: str) -> float | str | None:
    """What a header click sorts ``column`` by (None: no value, listed last)."""
    values: dict[str, float | str | None] = {
        "mark": -1.0 if option.pareto else 0.0,
        "gpu": option.gpu,
        "hours": option.hours,
        "hours_range": option.hours_high,
        "cost": None if option.cost_usd is None else float(option.cost_usd),
        "cost_range": None if option.cost_usd_high is None else float(option.cost_usd_high),
        "hourly": None if option.hourly_usd is None else float(option.hourly_usd),
        "region": option.region,
        "pricing": option.pricing,
        "where": option_place(option),
    }
    return values.get(column)


def sorted_indexes(options: Sequence[Option], sort: tuple[str, bool] | None) -> list[int]:
    """Ranks (indexes into ``options``) in the clicked column's order; rows without a
    value go last either way; ties keep the planner's ranking."""
    ranks = list(range(len(options)))
    if sort is None:
        return ranks
    column, descending = sort
    present = [i for i in ranks if sort_value(options[i], column) is not None]
    missing = [i for i in ranks if sort_value(options[i], column) is None]
    present.sort(key=lambda i: sort_value(options[i], column), reverse=descending)  # type: ignore[arg-type,return-value]
    return present + missing


def mark_cell(option: Option) -> Text:
    """★ (green) on the Pareto frontier, ! (bold red) on a spot outlier."""
    out = Text("★" if option.pareto else " ", style="bold green")
    if option.spot_outlier:
        out.append(OUTLIER, style="bold red")
    return out


def infeasible_text(result: PlanResult) -> Text:
    """Why nothing fits: each distinct reason once, with how many options it left out
    (the same reason recurs for every region and pricing of an instance)."""
    from gpuplan.core.planner.records import reason_counts

    reasons = reason_counts(result)
    out = Text("No feasible option. Why:\n", style="bold")
    if not reasons:
        out.append("no option matched the GPU, pricing and policy filters\n", style="red")
    for reason, count in list(reasons.items())[:MAX_REASONS]:
        out.append(reason, style="red")
        out.append(f" ({fmt.plural(count, 'option')})\n" if count > 1 else "\n")
    if len(reasons) > MAX_REASONS:
        out.append(f"and {fmt.plural(len(reasons) - MAX_REASONS, 'other reason')}\n")
    return out


MAX_REASONS = 8


def option_text(option: Option) -> str:
    """What the options filter (``/``) searches: GPU, instance, cloud, region, pricing."""
    parts = (option.gpu, option.instance_type or "", option_place(option), option.pricing or "")
    return " ".join((*parts, option.region or "")).lower()
