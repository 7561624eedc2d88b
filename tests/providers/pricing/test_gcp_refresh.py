"""GCP refresh through google-cloud-billing's REST transport against a local wire fake."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.offers import Offer, PricingModel, Provider
from gpuplan.loaders.catalog import load_catalog
from gpuplan.providers.gcp.billing_catalog import ENDPOINT_ENV
from tests.providers.pricing.gcp_fake import BillingFake, billing_skus, serve


def _gcp(directory: Path) -> list[Offer]:
    return [o for o in load_catalog(directory).offers if o.provider is Provider.GCP]


def _refresh(fake: BillingFake, directory: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setenv(ENDPOINT_ENV, fake.endpoint)
    return main(["catalog", "refresh", "--provider", "gcp", "--catalog-dir", str(directory)])


def _close(a: Decimal | None, b: Decimal | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= Decimal("0.000001") * max(abs(b), Decimal(1))


def test_refresh_prices_configurations_as_host_plus_gpus(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _gcp(catalog_dir)
    with serve(BillingFake(billing_skus(old), page_size=3)) as fake:
        code = _refresh(fake, catalog_dir, monkeypatch)
    out = capsys.readouterr()
    assert code == 0, out
    assert "0 price changes" in out.out
    assert len(fake.requests) >= 4  # several pages, followed by nextPageToken
    assert "gcp: SKU page 2" in out.err
    again = {o.key: o for o in _gcp(catalog_dir)}
    for offer in old:
        new = again[offer.key]
        assert new.parts is not None and offer.parts is not None
        for model in (PricingModel.ON_DEMAND, PricingModel.SPOT):
            assert _close(new.price(model), offer.price(model)), (offer.key, model)
            assert _close(new.parts[model].accelerators, offer.parts[model].accelerators)
            assert _close(new.parts[model].host, offer.parts[model].host)
        assert new.source == "Cloud Billing Catalog API"
    # The host and GPU parts land in their own columns of the written file.
    header = (catalog_dir / "gcp.csv").read_text().splitlines()[0]
    assert "host_on_demand_hourly,gpu_on_demand_hourly" in header


def test_a_gpu_price_cut_moves_only_that_configuration(
    catalog_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = _gcp(catalog_dir)
    skus = billing_skus(old)
    h100 = next(s for s in skus if s.description == "Nvidia H100 80GB GPU running in Americas")
    h100.pricing_info[0].pricing_expression.tiered_rates[0].unit_price.units = 2
    h100.pricing_info[0].pricing_expression.tiered_rates[0].unit_price.nanos = 0
    with serve(BillingFake(skus)) as fake:
        assert _refresh(fake, catalog_dir, monkeypatch) == 0
    a3 = next(o for o in _gcp(catalog_dir) if o.instance_type == "a3-highgpu-8g")
    assert a3.parts is not None
    assert a3.parts[PricingModel.ON_DEMAND].accelerators == 16
    assert "a3-highgpu-8g us-central1 on_demand 43.07 -> " in capsys.readouterr().out


@pytest.mark.parametrize(
    ("breakage", "needle"),
    [({"fail_pages": {2: 500}}, "backend error"), ({"truncate_pages": {2}}, "")],
)
def test_a_broken_page_fails_the_provider_and_keeps_data(
    catalog_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    breakage: dict[str, object],
    needle: str,
) -> None:
    before = (catalog_dir / "gcp.csv").read_bytes()
    with serve(BillingFake(billing_skus(_gcp(catalog_dir)), page_size=3, **breakage)) as fake:  # type: ignore[arg-type]
        code = _refresh(fake, catalog_dir, monkeypatch)
    out = capsys.readouterr().out
    assert code == 1
    assert "error: gcp: " in out and needle in out
    assert (catalog_dir / "gcp.csv").read_bytes() == before


@pytest.mark.parametrize(
    ("units", "nanos", "currency", "needle"),
    [
        (700, 0, "USD", "price 700 looks like a placeholder"),
        (0, 0, "USD", "price 0 is not positive"),
        (2, 500_000_000, "EUR", "currency 'EUR' is not USD"),
    ],
)
def test_hostile_sku_prices_reject_the_region(
    catalog_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    units: int,
    nanos: int,
    currency: str,
    needle: str,
) -> None:
    before = (catalog_dir / "gcp.csv").read_bytes()
    skus = billing_skus(_gcp(catalog_dir))
    a100 = next(s for s in skus if s.description == "Nvidia Tesla A100 GPU running in Americas")
    price = a100.pricing_info[0].pricing_expression.tiered_rates[0].unit_price
    price.units, price.nanos, price.currency_code = units, nanos, currency
    with serve(BillingFake(skus)) as fake:
        code = _refresh(fake, catalog_dir, monkeypatch)
    out = capsys.readouterr().out
    assert code == 1
    assert needle in out and f"SKU {a100.sku_id}" in out and "region not updated" in out
    assert (catalog_dir / "gcp.csv").read_bytes() == before
