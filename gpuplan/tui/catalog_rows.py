"""The Catalog screen's columns, cells, sorting and detail text (no widgets here).

Pure presentation over :class:`~gpuplan.core.catalog.offers.Offer`: which columns exist and
in what priority, the text of each cell, the order a header click asks for, and the
detail panel for one offer.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from decimal import Decimal

from rich.text import Text

from gpuplan.core.catalog.offers import Offer, PricingModel
from gpuplan.core.catalog.query import STALE_AFTER, Catalog, is_stale, tflops_per_dollar
from gpuplan.core.clouds import facts_of
from gpuplan.core.planner.spot_realism import OutlierKey, spot_outliers
from gpuplan.tui import format as fmt
from gpuplan.tui.table import Column

COLUMNS: tuple[Column, ...] = (
    Column("provider", "cloud", 4, min_width=5, max_width=9),
    Column("instance", "instance", 8, min_width=8, max_width=24, stretch=64),
    Column("region", "region", 1, min_width=9, max_width=16),
    Column("gpu", "GPUs", 2, min_width=8, max_width=14),
    Column("on_demand", "on-dem", 0),
    Column("spot", "spot", 1),
    Column("per_gpu", "$/GPU-h", 1),
    Column("tflops", "TF/s/$", 2),
    Column("reserved_1y", "1y", 3),
    Column("reserved_3y", "3y", 3),
)
"""Every column ``s`` sorts by (:data:`SORT_CYCLE`) comes before the reserved prices and
the names: at 80 columns a sort never sorts by a column it cannot show, and never adds
or drops one."""
NUMERIC = frozenset({"on_demand", "spot", "per_gpu", "tflops", "reserved_1y", "reserved_3y"})
SORT_CYCLE: tuple[tuple[str, bool] | None, ...] = (
    None,
    ("on_demand", False),
    ("spot", False),
    ("per_gpu", False),
    ("tflops", True),
)
"""What ``s`` steps through: (column, descending); None is provider order."""


def split_words(text: str) -> list[str]:
    """A filter box's comma-separated words, blanks dropped."""
    return [part.strip() for part in text.split(",") if part.strip()]


def text_matches(offer: Offer, text: str) -> bool:
    """Free-text search over what the table shows (case-insensitive, every word must hit)."""
    haystack = " ".join((offer.provider.value, offer.instance_type, offer.region, offer.gpu))
    return all(word in haystack.lower() for word in text.lower().split())


OUTLIER = "!"
"""After a spot price far below the same instance's other regions (see :func:`outliers`)."""


def outliers(catalog: Catalog) -> dict[OutlierKey, str]:
    """Spot prices under half the median of the same instance elsewhere, with the reason:
    the planner's own rule (:func:`gpuplan.core.planner.spot_realism.spot_outliers`) over
    the whole catalog, so a filter never changes which rows are flagged."""
    return spot_outliers(catalog.offers)


def outlier_key(offer: Offer) -> OutlierKey:
    return (offer.provider.value, offer.instance_type, offer.region)


def cells(
    offer: Offer, catalog: Catalog, pricing: PricingModel, outlier: bool = False
) -> dict[str, str]:
    """Every column's text for one offer (the screen picks the columns that fit); a spot
    outlier's spot price (and its $/GPU-h when that is spot) ends in ``!``."""
    flag = OUTLIER if outlier else ""
    per_gpu_flag = flag if pricing is PricingModel.SPOT else ""
    return {
        "provider": offer.provider.value,
        "instance": offer.instance_type,
        "region": offer.region,
        "gpu": f"{fmt.count(offer.gpu_count)}x {offer.gpu}",
        "on_demand": fmt.money(offer.on_demand_hourly),
        "spot": fmt.money(offer.spot_hourly) + flag,
        "per_gpu": fmt.money(offer.price_per_gpu_hour(pricing)) + per_gpu_flag,
        "tflops": fmt.number(tflops_per_dollar(offer, catalog.gpus, pricing)),
        "reserved_1y": fmt.money(offer.reserved_1y_hourly),
        "reserved_3y": fmt.money(offer.reserved_3y_hourly),
    }


def sort_value(
    column: str, catalog: Catalog, pricing: PricingModel
) -> Callable[[Offer], float | str | tuple[str, float] | None]:
    """The value a header click sorts ``column`` by (None: missing, always listed last)."""

    def price(value: Decimal | None) -> float | None:
        return None if value is None else float(value)

    getters: dict[str, Callable[[Offer], float | str | tuple[str, float] | None]] = {
        "provider": lambda o: o.provider.value,
        "instance": lambda o: o.instance_type,
        "region": lambda o: o.region,
        "gpu": lambda o: (o.gpu, o.gpu_count),
        "on_demand": lambda o: price(o.on_demand_hourly),
        "spot": lambda o: price(o.spot_hourly),
        "per_gpu": lambda o: price(o.price_per_gpu_hour(pricing)),
        "tflops": lambda o: tflops_per_dollar(o, catalog.gpus, pricing),
        "reserved_1y": lambda o: price(o.reserved_1y_hourly),
        "reserved_3y": lambda o: price(o.reserved_3y_hourly),
    }
    return getters[column]


def sort_offers(
    offers: list[Offer], column: str, descending: bool, catalog: Catalog, pricing: PricingModel
) -> list[Offer]:
    """Offers ordered by ``column``; rows without a value go last either way."""
    value = sort_value(column, catalog, pricing)
    present = [o for o in offers if value(o) is not None]
    missing = [o for o in offers if value(o) is None]
    present.sort(key=lambda o: value(o), reverse=descending)  # type: ignore[arg-type,return-value]
    return present + missing


def offer_detail(
    offer: Offer, catalog: Catalog, outlier: str | None = None, today: date | None = None
) -> Text:
    """The detail panel: the GPU's datasheet figures and the instance around it, and why
    its spot price is flagged when it is."""
    spec = catalog.gpus.get(offer.gpu)
    peaks = [
        f"{name} {fmt.number(value)}"
        for name, value in (
            ("fp32", spec.fp32_tflops),
            ("tf32", spec.tf32_tflops),
            ("bf16", spec.bf16_tflops),
            ("fp16", spec.fp16_tflops),
            ("fp8", spec.fp8_tflops),
        )
        if value is not None
    ]
    link = spec.interconnect
    if spec.interconnect_gbs:
        link += f" {fmt.number(spec.interconnect_gbs)} GB/s"
    text = Text()
    text.append(spec.name, style="bold")
    text.append(
        f" · {spec.vendor} {spec.architecture} {spec.form_factor} ({spec.launch_year}) · "
        f"{fmt.number(spec.memory_gb)} GB · {spec.memory_bandwidth_tbs:g} TB/s · {link}\n"
    )
    text.append(f"dense TFLOP/s: {', '.join(peaks)}\n")
    text.append(
        f"{offer.instance_type} in {offer.region}: {fmt.count(offer.gpu_count)}x {offer.gpu} "
        f"{fmt.number(offer.gpu_memory_gb)} GB · {offer.vcpus} vCPU · "
        f"{fmt.number(offer.memory_gb)} GB RAM · {network_text(offer)}\n"
    )
    spot_zone = f"spot zone {offer.spot_zone} · " if offer.spot_zone else ""
    billing = facts_of(offer.provider).billing
    stale = today is not None and is_stale(offer, today)
    mark = f" (stale: over {STALE_AFTER.days} days)" if stale else ""
    text.append(f"{spot_zone}as of {offer.as_of.isoformat()}{mark} · ")
    text.append(f"{'billing: ' + billing + ' · ' if billing else ''}source: {offer.source}")
    if outlier:
        text.append(f"\n{OUTLIER} {outlier}", style="bold red")
    return text


def network_text(offer: Offer) -> str:
    """The interconnect and network, saying the bandwidth once ("PCIe; EFA 3,200 Gbit/s")."""
    link = offer.interconnect or "-"
    if offer.network_gbps is None:
        return link
    speed = f"{fmt.number(offer.network_gbps)} Gbit/s"
    raw = f"{offer.network_gbps:g} Gbps"
    if raw in link:
        return link.replace(raw, speed)
    return f"{link} · network {speed}"
