"""A refresh over wire fakes built from the bundled catalog reproduces that catalog.

This is the check that the fixtures are realistic and that nothing is lost on the way
API -> quotes -> offers -> CSV -> loader: every bundled offer comes back, nothing is
added, and prices are equal (AWS, Azure) or within 0.1 % (GCP, whose host price is
rebuilt from per-vCPU and per-GiB SKU rates fitted to the bundled host prices).
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.core.catalog.offers import Offer, PricingModel, Provider
from gpuplan.loaders.catalog import BUNDLED, load_catalog
from gpuplan.providers.aws.price_list import TYPES_PER_QUERY
from gpuplan.providers.azure.retail_prices import ENDPOINT_ENV as AZURE_ENV
from gpuplan.providers.gcp.billing_catalog import ENDPOINT_ENV as GCP_ENV
from gpuplan.usecases.catalog.refresh import refresh_catalog
from tests.providers.pricing import azure_fake, gcp_fake
from tests.providers.pricing.aws_fixtures import price_list, spot_history
from tests.providers.pricing.test_aws_refresh import NOW, FakeAws


def _bundled(provider: Provider) -> list[Offer]:
    return [o for o in load_catalog().offers if o.provider is provider]


def _compare(user: Path, provider: Provider, tolerance: Decimal) -> None:
    bundled = {o.key: o for o in _bundled(provider)}
    assert all(o.origin == BUNDLED for o in bundled.values())
    fresh = {o.key: o for o in load_catalog(user).offers if o.provider is provider}
    assert fresh.keys() == bundled.keys()
    for key, old in bundled.items():
        new = fresh[key]
        assert new.origin == str(user / f"{provider.value}.csv")
        for model in PricingModel:
            a, b = old.price(model), new.price(model)
            assert (a is None) == (b is None), (key, model)
            if a is not None and b is not None:
                assert abs(a - b) <= tolerance * a, (key, model, a, b)
        if provider is not Provider.GCP:  # GCP spot is regional: SKUs name no zone
            assert new.spot_zone == old.spot_zone
        assert (new.gpu, new.gpu_count, new.vcpus) == (old.gpu, old.gpu_count, old.vcpus)


def test_azure_refresh_reproduces_bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with azure_fake.serve(
        azure_fake.AzureRetailFake(azure_fake.azure_items(_bundled(Provider.AZURE)), page_size=100)
    ) as fake:
        monkeypatch.setenv(AZURE_ENV, fake.endpoint)
        report = refresh_catalog(now=NOW, providers=[Provider.AZURE], catalog_dir=tmp_path)
    assert report.ok and report.outcomes[0].diff.empty
    _compare(tmp_path, Provider.AZURE, Decimal(0))


def test_gcp_refresh_reproduces_bundled(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    skus = gcp_fake.billing_skus(_bundled(Provider.GCP))
    with gcp_fake.serve(gcp_fake.BillingFake(skus, page_size=200)) as fake:
        monkeypatch.setenv(GCP_ENV, fake.endpoint)
        report = refresh_catalog(now=NOW, providers=[Provider.GCP], catalog_dir=tmp_path)
    (gcp,) = report.outcomes
    assert report.ok and not gcp.diff.added and not gcp.diff.removed
    _compare(tmp_path, Provider.GCP, Decimal("0.001"))


def test_aws_refresh_reproduces_bundled(tmp_path: Path) -> None:
    offers = _bundled(Provider.AWS)
    types = sorted({o.instance_type for o in offers})
    fake = FakeAws()
    for region in sorted({o.region for o in offers}):
        here = [o for o in offers if o.region == region]
        for start in range(0, len(types), TYPES_PER_QUERY):
            chunk = types[start : start + TYPES_PER_QUERY]
            entries = price_list(o for o in here if o.instance_type in chunk)
            fake.price_pages(
                region, chunk, [entries[i : i + 50] for i in range(0, len(entries), 50)] or [[]]
            )
        fake.ec2_for(region)
        fake.spot_pages(region, types, [spot_history(here, NOW)])
    with fake:
        report = refresh_catalog(
            now=NOW,
            providers=[Provider.AWS],
            catalog_dir=tmp_path,
            fetchers={Provider.AWS: fake.fetcher},
        )
    assert report.ok, report.outcomes[0].failures
    assert report.outcomes[0].diff.empty
    _compare(tmp_path, Provider.AWS, Decimal(0))
