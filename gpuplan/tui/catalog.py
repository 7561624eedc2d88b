"""Catalog screen: the offers table with a filter bar, sorting and a GPU detail panel.

Filtering and sorting are :func:`gpuplan.usecases.catalog.find_offers`; this module
only turns the filter bar's text into its arguments and the offers into table rows.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Header, Input, Select, Static

from gpuplan.core.catalog import Catalog, SortKey, tflops_per_dollar
from gpuplan.core.errors import GpuplanError
from gpuplan.core.offers import Offer, PricingModel
from gpuplan.tui import format as fmt
from gpuplan.tui.context import TuiContext

ANY_PRICING = "any"
PRICING_CHOICES: list[tuple[str, str]] = [
    ("any pricing", ANY_PRICING),
    ("on-demand", PricingModel.ON_DEMAND.value),
    ("spot", PricingModel.SPOT.value),
    ("reserved 1y", PricingModel.RESERVED_1Y.value),
    ("reserved 3y", PricingModel.RESERVED_3Y.value),
]
SORT_CYCLE: tuple[SortKey | None, ...] = (
    None,
    SortKey.PRICE,
    SortKey.PRICE_PER_GPU,
    SortKey.TFLOPS_PER_DOLLAR,
)
COLUMNS: tuple[tuple[str, str], ...] = (
    ("provider", "provider"),
    ("instance", "instance"),
    ("region", "region"),
    ("gpu", "GPUs"),
    ("on_demand", "on-dem"),
    ("spot", "spot"),
    ("per_gpu", "$/GPU-h"),
    ("tflops", "TF/s/$"),
    ("reserved_1y", "1y"),
    ("reserved_3y", "3y"),
)
HEADER_SORT = {
    "on_demand": SortKey.PRICE,
    "spot": SortKey.PRICE,
    "reserved_1y": SortKey.PRICE,
    "reserved_3y": SortKey.PRICE,
    "per_gpu": SortKey.PRICE_PER_GPU,
    "tflops": SortKey.TFLOPS_PER_DOLLAR,
}


def split_words(text: str) -> list[str]:
    """A filter box's comma-separated words, blanks dropped."""
    return [part.strip() for part in text.split(",") if part.strip()]


def text_matches(offer: Offer, text: str) -> bool:
    """Free-text search over what the table shows (case-insensitive, every word must hit)."""
    haystack = " ".join((offer.provider.value, offer.instance_type, offer.region, offer.gpu))
    return all(word in haystack.lower() for word in text.lower().split())


class CatalogScreen(Screen[None]):
    """Offers from the catalog, filtered by the bar at the top, one GPU in detail below."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "Filter"),
        Binding("s", "cycle_sort", "Sort"),
        Binding("escape", "to_table", "Table", show=False),
    ]

    DEFAULT_CSS = """
    CatalogScreen #filters { height: 1; }
    CatalogScreen #filters Input { width: 1fr; margin: 0 1 0 0; }
    CatalogScreen #filters Select { width: 18; margin: 0 1 0 0; }
    CatalogScreen #search { width: 2fr; }
    CatalogScreen #status { height: 1; padding: 0 1; color: $text-muted; }
    CatalogScreen #status.error { color: $error; }
    CatalogScreen #offers { height: 1fr; }
    CatalogScreen #detail { height: 5; padding: 0 1; border-top: solid $primary; }
    """

    def __init__(self, context: TuiContext) -> None:
        super().__init__()
        self.context = context
        self.catalog: Catalog | None = None
        self.sort: SortKey | None = None
        self.shown: dict[str, Offer] = {}
        self.shown_keys: list[tuple[str, str, str]] | None = None
        self.shown_pricing: PricingModel | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="filters"):
            yield Input(placeholder="provider", id="provider", compact=True)
            yield Input(placeholder="GPU", id="gpu", compact=True)
            yield Input(placeholder="region", id="region", compact=True)
            yield Select(
                PRICING_CHOICES, value=ANY_PRICING, allow_blank=False, id="pricing", compact=True
            )
            yield Input(placeholder="/ search", id="search", compact=True)
        yield Static(id="status")
        table: DataTable[str | Text] = DataTable(id="offers", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static(id="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "Catalog"
        table = self.query_one("#offers", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        from gpuplan.loaders.catalog import load_catalog

        try:
            self.catalog = load_catalog(self.context.catalog_dir, now=self.context.clock())
        except GpuplanError as exc:
            self._show_status(str(exc), error=True)
            self.notify(str(exc), title="catalog", severity="error")
            return
        for notice in self.catalog.notices:
            self.notify(notice, title="catalog", severity="warning")
        self.apply_filters()
        table.focus()

    # --- filtering ---------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        self.apply_filters()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_to_table()

    def on_select_changed(self, event: Select.Changed) -> None:
        self.apply_filters()

    def pricing(self) -> PricingModel | None:
        value = self.query_one("#pricing", Select).value
        return None if value == ANY_PRICING else PricingModel(str(value))

    def apply_filters(self) -> None:
        """Ask the use case for the offers the filter bar describes and show them."""
        if self.catalog is None:
            return
        from gpuplan.usecases.catalog import find_offers

        def words(widget_id: str) -> list[str]:
            return split_words(self.query_one(f"#{widget_id}", Input).value)

        try:
            offers = find_offers(
                self.catalog,
                providers=words("provider"),
                gpus=words("gpu"),
                regions=words("region"),
                pricing=self.pricing(),
                sort=self.sort,
            )
        except GpuplanError as exc:
            self.shown_keys = None
            self._fill([])
            self._show_status(str(exc), error=True)
            return
        search = self.query_one("#search", Input).value
        offers = [o for o in offers if text_matches(o, search)]
        self._show_status(self._summary(len(offers)))
        shown = [o.key for o in offers]
        if shown == self.shown_keys and self.pricing() == self.shown_pricing:
            return  # e.g. the pricing Select announcing its first value: nothing changed
        self.shown_keys, self.shown_pricing = shown, self.pricing()
        self._fill(offers)

    def _summary(self, shown: int) -> str:
        assert self.catalog is not None
        as_of = self.catalog.as_of.isoformat() if self.catalog.as_of else "unknown"
        sort = self.sort.value if self.sort else "provider"
        total = len(self.catalog.offers)
        return (
            f"{shown} of {total} offers · USD per hour · list prices as of {as_of} · sort: {sort}"
        )

    def _show_status(self, text: str, *, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(Text(text))
        status.set_class(error, "error")

    def _fill(self, offers: list[Offer]) -> None:
        assert self.catalog is not None or not offers
        table = self.query_one("#offers", DataTable)
        table.clear()
        self.shown = {}
        shown_pricing = self.pricing() or PricingModel.ON_DEMAND
        for offer in offers:
            key = "|".join(offer.key)
            self.shown[key] = offer
            table.add_row(*self._row(offer, shown_pricing), key=key)
        self._show_detail(offers[0] if offers else None)

    def _row(self, offer: Offer, pricing: PricingModel) -> list[str | Text]:
        assert self.catalog is not None
        # Text, not str: DataTable parses str cells as markup, a cost per cell on start-up.
        cells: list[str | Text] = [
            Text(offer.provider.value),
            Text(offer.instance_type),
            Text(offer.region),
            Text(f"{fmt.count(offer.gpu_count)}x {offer.gpu}"),
        ]
        tflops = tflops_per_dollar(offer, self.catalog.gpus, pricing)
        numbers = [
            fmt.money(offer.on_demand_hourly),
            fmt.money(offer.spot_hourly),
            fmt.money(offer.price_per_gpu_hour(pricing)),
            fmt.number(tflops),
            fmt.money(offer.reserved_1y_hourly),
            fmt.money(offer.reserved_3y_hourly),
        ]
        cells.extend(Text(n, justify="right") for n in numbers)
        return cells

    # --- sorting -----------------------------------------------------------------

    def action_cycle_sort(self) -> None:
        index = SORT_CYCLE.index(self.sort)
        self.sort = SORT_CYCLE[(index + 1) % len(SORT_CYCLE)]
        self.apply_filters()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        self.sort = HEADER_SORT.get(str(event.column_key.value))
        self.apply_filters()

    # --- detail ------------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(self.shown.get(str(event.row_key.value)))

    def _show_detail(self, offer: Offer | None) -> None:
        detail = self.query_one("#detail", Static)
        if offer is None or self.catalog is None:
            detail.update("No offer selected.")
            return
        detail.update(offer_detail(offer, self.catalog))

    # --- focus -------------------------------------------------------------------

    def action_filter(self) -> None:
        self.query_one("#search", Input).focus()

    def action_to_table(self) -> None:
        self.query_one("#offers", DataTable).focus()


def offer_detail(offer: Offer, catalog: Catalog) -> Text:
    """The detail panel: the GPU's datasheet figures and the instance around it."""
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
    network = f"{fmt.number(offer.network_gbps)} Gbit/s" if offer.network_gbps else "network -"
    text.append(
        f"{offer.instance_type} in {offer.region}: {fmt.count(offer.gpu_count)}x {offer.gpu} "
        f"{fmt.number(offer.gpu_memory_gb)} GB · {offer.vcpus} vCPU · "
        f"{fmt.number(offer.memory_gb)} GB RAM · {offer.interconnect or '-'} · {network}\n"
    )
    spot_zone = f"spot zone {offer.spot_zone} · " if offer.spot_zone else ""
    text.append(f"{spot_zone}as of {offer.as_of.isoformat()} · source: {offer.source}")
    return text
