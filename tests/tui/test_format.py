"""Numbers as the TUI shows them: humane counts, durations, money."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from gpuplan.tui import format as fmt
from gpuplan.tui.catalog_rows import network_text
from gpuplan.tui.table import Column, choose_columns, fit_text


def test_counts_durations_and_money() -> None:
    assert fmt.count(1 / 6) == "0.17" and fmt.count(0.5) == "0.5" and fmt.count(8) == "8"
    assert fmt.hours(36) == "36.0 h" and fmt.hours(60) == "2.5 d"
    assert fmt.hours(1677.1 * 24) == "4.6 y"  # not "1,677.1 d"
    assert fmt.hours(70 * 24) == "70 d"
    assert fmt.money(Decimal("78114.128")) == "78,114.13"
    assert fmt.compact_money(Decimal("12345678")) == "12.3M"
    assert fmt.plural(1, "GPU") == "1 GPU" and fmt.plural(1234, "offer") == "1,234 offers"


def test_network_bandwidth_said_once() -> None:
    from gpuplan.core.catalog.offers import Offer, Provider

    offer = Offer(
        provider=Provider.AWS,
        instance_type="p5.48xlarge",
        region="us-east-1",
        gpu="H100",
        gpu_count=8,
        gpu_memory_gb=80,
        vcpus=192,
        memory_gb=2048,
        interconnect="NVSwitch; EFA 3200 Gbps",
        network_gbps=3200,
        as_of=date(2026, 12, 1),
        source="test",
    )
    assert network_text(offer) == "NVSwitch; EFA 3,200 Gbit/s"


def test_columns_by_priority_and_ellipsis() -> None:
    columns = (
        Column("name", "name", 9, min_width=6, max_width=30),
        Column("price", "price", 0),
        Column("region", "region", 1, min_width=8, max_width=16),
    )
    widths = {"name": 30, "price": 6, "region": 14}
    assert list(choose_columns(columns, widths, 20)) == ["price", "region"]
    assert choose_columns(columns, widths, 60) == {"name": 30, "price": 6, "region": 14}
    assert fit_text("Standard_ND96isr_H100_v5", 10) == "Standard_…"
    assert fit_text("p5", 10) == "p5"
