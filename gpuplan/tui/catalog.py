"""Catalog screen: the offers table with a filter bar, sorting and a GPU detail panel.

Filtering is :func:`gpuplan.usecases.catalog.lookup.find_offers` (region groups such as
``europe`` expanded by :mod:`gpuplan.core.catalog.regions`); this module turns the filter bar's
text into its arguments and the offers into rows. Typing is debounced and at most
:data:`MAX_ROWS` rows are drawn, so a keystroke never waits behind a long redraw.
Columns are chosen by priority for the terminal's width.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.timer import Timer
from textual.widgets import Footer, Header, Input, Select, Static

from gpuplan.core.catalog.offers import Offer, PricingModel, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.errors import GpuplanError
from gpuplan.tui.catalog_rows import (
    COLUMNS,
    NUMERIC,
    OUTLIER,
    SORT_CYCLE,
    cells,
    offer_detail,
    outlier_key,
    outliers,
    sort_offers,
    split_words,
    text_matches,
)
from gpuplan.tui.context import TuiContext
from gpuplan.tui.keys import LEAVE_FIELD, RoutedScreen, command, focus_now
from gpuplan.tui.table import FieldInput, NavTable, choose_columns, fit_text, header

ANY_PRICING = "any"
PRICING_CHOICES: list[tuple[str, str]] = [
    ("any pricing", ANY_PRICING),
    ("on-demand", PricingModel.ON_DEMAND.value),
    ("spot", PricingModel.SPOT.value),
    ("reserved 1y", PricingModel.RESERVED_1Y.value),
    ("reserved 3y", PricingModel.RESERVED_3Y.value),
]
MAX_ROWS = 200
"""Rows drawn at once; the status line says when more matched (narrow the filter)."""
DEBOUNCE_S = 0.15
"""Typing pauses this long before the table is filtered again."""
LABELS = {c.key: c.label for c in COLUMNS}


class CatalogScreen(RoutedScreen):
    """Offers from the catalog, filtered by the bar at the top, one GPU in detail below."""

    BINDINGS: ClassVar[list[BindingType]] = [
        command("slash", "filter", "Filter"),
        command("s", "cycle_sort", "Sort"),
        Binding("escape", "to_table", "Table", show=False),
        *LEAVE_FIELD,
    ]

    DEFAULT_CSS = """
    CatalogScreen #filters { height: 1; }
    CatalogScreen #filters Input { width: 1fr; margin: 0 1 0 0; }
    CatalogScreen #filters Input:focus { background: $accent 40%; text-style: bold; }
    CatalogScreen #filters Select { width: 16; margin: 0 1 0 0; }
    CatalogScreen #search { width: 2fr; }
    CatalogScreen #status { height: 1; padding: 0 1; color: $text-muted; }
    CatalogScreen #status.error { color: $error; }
    CatalogScreen #offers { height: 1fr; }
    CatalogScreen #detail { height: 5; padding: 0 1; border-top: solid $primary; }
    CatalogScreen #detail.flagged { height: auto; max-height: 8; }
    """

    def __init__(self, context: TuiContext) -> None:
        super().__init__()
        self.context = context
        self.catalog: Catalog | None = None
        self.sort: tuple[str, bool] | None = None
        """(column key, descending), or None for provider order."""
        self.offers: list[Offer] = []
        self.shown: dict[str, Offer] = {}
        self._pending: Timer | None = None
        self._layout: dict[str, int] = {}
        self.outliers: dict[tuple[str, str, str], str] = {}
        """Spot outliers of the whole catalog: (provider, instance, region) -> why."""
        self._applied: tuple[str, ...] = ()
        """The filter bar's text the table shows."""
        self._drawn_width = 0
        """The table width the columns were last chosen for."""

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="filters"):
            yield FieldInput(placeholder="provider", id="provider", compact=True)
            yield FieldInput(placeholder="GPU", id="gpu", compact=True)
            yield FieldInput(placeholder="region/europe", id="region", compact=True)
            yield Select(
                PRICING_CHOICES, value=ANY_PRICING, allow_blank=False, id="pricing", compact=True
            )
            yield FieldInput(placeholder="/ search", id="search", compact=True)
        yield Static(id="status")
        yield NavTable(id="offers", cursor_type="row", zebra_stripes=True)
        yield Static(id="detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self.sub_title = "Catalog"
        from gpuplan.loaders.catalog import load_catalog

        table = self.query_one("#offers", NavTable)
        try:
            # fast: plain rows, no pydantic (same offers, same errors; read-only here)
            self.catalog = load_catalog(
                self.context.catalog_dir, now=self.context.clock(), fast=True
            )
        except GpuplanError as exc:
            self._show_status(str(exc), error=True)
            self.app.call_later(self._report, exc)
            return
        self.outliers = outliers(self.catalog)
        for notice in self.catalog.notices:
            self.notify(notice, title="catalog", severity="warning")
        self.apply_filters()
        table.focus()

    def _report(self, error: GpuplanError) -> None:
        report = getattr(self.app, "report_problem", None)
        if report is not None:
            report("catalog", error)

    # --- filtering ---------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        self.schedule_filter()

    def action_leave_field(self, submit: bool) -> None:
        """``enter`` or ``escape``: the table takes the focus now, and the filter runs
        without its debounce as soon as the field has taken the keys queued for it."""
        field = self.focused
        self.action_to_table()
        if field is not None:
            field.call_later(self.apply_filters)

    def on_select_changed(self, event: Select.Changed) -> None:
        self.schedule_filter()

    def schedule_filter(self) -> None:
        """Filter once typing pauses; a newer keystroke cancels the pending run. Text the
        table already shows (``enter`` filtered it first) is not filtered again."""
        if self._pending is not None:
            self._pending.stop()
            self._pending = None
        if self._filter_text() != self._applied:
            self._pending = self.set_timer(DEBOUNCE_S, self.apply_filters)

    def _filter_text(self) -> tuple[str, ...]:
        boxes = ("provider", "gpu", "region", "search")
        pricing = str(self.query_one("#pricing", Select).value)
        return (*(self.query_one(f"#{b}", Input).value for b in boxes), pricing)

    def pricing(self) -> PricingModel | None:
        value = self.query_one("#pricing", Select).value
        return None if value == ANY_PRICING else PricingModel(str(value))

    def apply_filters(self) -> None:
        """Ask the use case for the offers the filter bar describes and show them."""
        if self._pending is not None:  # run now: a filter still waiting would only redo it
            self._pending.stop()
            self._pending = None
        if self.catalog is None:
            return
        self._applied = self._filter_text()
        from gpuplan.core.catalog.regions import expand_regions
        from gpuplan.usecases.catalog.lookup import find_offers

        def words(widget_id: str) -> list[str]:
            return split_words(self.query_one(f"#{widget_id}", Input).value)

        try:
            regions = expand_regions(words("region"), self._regions(), what="region")
            offers = find_offers(
                self.catalog,
                providers=words("provider"),
                gpus=words("gpu"),
                regions=regions,
                pricing=self.pricing(),
            )
        except GpuplanError as exc:
            self.offers = []
            self._fill()
            self._show_status(str(exc), error=True)
            return
        if words("region") and not regions:
            offers = []  # a group with no region in the catalog: nothing, not everything
        search = self.query_one("#search", Input).value
        self.offers = [o for o in offers if text_matches(o, search)]
        self._fill()

    def _regions(self) -> dict[Provider, set[str]]:
        assert self.catalog is not None
        out: dict[Provider, set[str]] = {}
        for offer in self.catalog.offers:
            out.setdefault(offer.provider, set()).add(offer.region)
        return out

    def _summary(self, offers: list[Offer]) -> str:
        assert self.catalog is not None
        dates = sorted({o.as_of for o in offers})
        as_of = "unknown"
        if dates:
            as_of = dates[0].isoformat()
            if len(dates) > 1:
                as_of = f"{as_of} (oldest row; newest {dates[-1].isoformat()})"
        shown = f"{len(offers)}/{len(self.catalog.offers)} offers"
        if len(offers) > MAX_ROWS:
            shown += f" ({MAX_ROWS} drawn)"
        priced = (self.pricing() or PricingModel.ON_DEMAND).value.replace("_", "-")
        sort = "cloud"
        if self.sort is not None:
            sort = LABELS[self.sort[0]] + ("▼" if self.sort[1] else "▲")
        # Most wanted first: a narrow terminal cuts the end of the line.
        return f"sort: {sort} · {shown} · USD, $/GPU-h {priced} · as of {as_of}"

    def _show_status(self, text: str, *, error: bool = False) -> None:
        status = self.query_one("#status", Static)
        status.update(Text(text, no_wrap=True, overflow="ellipsis"))
        status.set_class(error, "error")

    # --- drawing -----------------------------------------------------------------

    def _fill(self) -> None:
        """Draw the current offers: sorted, capped, in the columns that fit the width."""
        table = self.query_one("#offers", NavTable)
        table.clear(columns=True)
        self.shown = {}
        if self.catalog is None:
            return
        pricing = self.pricing() or PricingModel.ON_DEMAND
        offers = self.offers
        if self.sort is not None:
            offers = sort_offers(offers, self.sort[0], self.sort[1], self.catalog, pricing)
        drawn = offers[:MAX_ROWS]
        every = [cells(o, self.catalog, pricing, outlier_key(o) in self.outliers) for o in offers]
        rows = every[:MAX_ROWS]
        # Widths from every offer the filter keeps, not the rows the sort draws, and not
        # the sort arrow: a sort must not reflow, add or drop columns (table.header).
        natural = {c.key: max([len(r[c.key]) for r in every] + [len(c.label)]) for c in COLUMNS}
        self._drawn_width = self._table_width()
        self._layout = choose_columns(COLUMNS, natural, self._drawn_width)
        for key, width in self._layout.items():
            sorted_here = self.sort is not None and self.sort[0] == key
            label = header(LABELS[key], sorted_here, bool(self.sort and self.sort[1]), width)
            # A fixed width: an auto width is measured at the next layout and raced the draw.
            table.add_column(label, key=key, width=width)
        for offer, row in zip(drawn, rows, strict=True):
            key = "|".join(offer.key)
            self.shown[key] = offer
            table.add_row(*self._cells(row), key=key)
        self._show_status(self._summary(offers))
        self._show_detail(drawn[0] if drawn else None)

    def _cells(self, row: dict[str, str]) -> list[str | Text]:
        # Text, not str: DataTable parses str cells as markup, a cost per cell on start-up.
        return [
            number_cell(row[key]) if key in NUMERIC else Text(fit_text(row[key], width))
            for key, width in self._layout.items()
        ]

    def _table_width(self) -> int:
        width = self.app.size.width
        return max(20, width - 3)  # the focus bar on the left, the scrollbar on the right

    def on_resize(self, event: events.Resize) -> None:
        """Redraw for a new width only: the first layout sends resize events at the width
        the table was just drawn for (each redraw measured every cell again)."""
        if self.catalog is not None and self._table_width() != self._drawn_width:
            self._fill()

    # --- sorting -----------------------------------------------------------------

    def action_cycle_sort(self) -> None:
        index = SORT_CYCLE.index(self.sort) if self.sort in SORT_CYCLE else 0
        self.sort = SORT_CYCLE[(index + 1) % len(SORT_CYCLE)]
        self._fill()

    def on_data_table_header_selected(self, event: NavTable.HeaderSelected) -> None:
        """Sort by the clicked column; a second click on it reverses the order."""
        key = str(event.column_key.value)
        same = self.sort is not None and self.sort[0] == key
        self.sort = (key, not self.sort[1]) if same and self.sort else (key, False)
        self._fill()

    # --- detail ------------------------------------------------------------------

    def on_data_table_row_highlighted(self, event: NavTable.RowHighlighted) -> None:
        self._show_detail(self.shown.get(str(event.row_key.value)))

    def _show_detail(self, offer: Offer | None) -> None:
        detail = self.query_one("#detail", Static)
        if offer is None or self.catalog is None:
            detail.remove_class("flagged")
            detail.update("No offer selected.")
            return
        outlier = self.outliers.get(outlier_key(offer))
        detail.set_class(outlier is not None, "flagged")  # room for the reason
        today = self.context.clock().date()
        detail.update(offer_detail(offer, self.catalog, outlier, today))

    # --- focus -------------------------------------------------------------------

    def action_filter(self) -> None:
        focus_now(self.query_one("#search", Input))

    def action_to_table(self) -> None:
        focus_now(self.query_one("#offers", NavTable))


def number_cell(text: str) -> Text:
    """A right-aligned number; a spot outlier's ``!`` in bold red."""
    if not text.endswith(OUTLIER):
        return Text(text, justify="right")
    out = Text(text[:-1], justify="right")
    out.append(OUTLIER, style="bold red")
    return out
