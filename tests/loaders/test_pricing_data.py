"""The bundled catalog in pricing/ covers what gpuplan promises, with honest prices.

Loads the shipped files through the real loader and checks: every instance family with
all its sizes in the named regions (the exceptions must match the gap table in
pricing/README.md, both ways), the traps of the reference data (host-only GCP prices,
an 8-GPU size listed with 12 GPUs, fractional Azure GPUs, spot at or above on-demand,
the same GCP GPU at very different prices across regions) and a clean load.
"""

from __future__ import annotations

import csv
import re
from collections import defaultdict
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.core.catalog.offers import Offer, PricingModel, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.clouds import facts_of
from gpuplan.loaders.catalog import bundled_catalog_path, load_catalog

AS_OF_NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
PRICED = {p for p in Provider if facts_of(p).catalog_file}
"""Every cloud with a catalog file (Kubernetes nodes are priced from the clouds' files)."""
NAMED_REGIONS = {
    Provider.AWS: ("us-east-1", "us-west-2", "eu-west-1"),
    Provider.GCP: ("us-central1", "us-east4", "europe-west4"),
    Provider.AZURE: ("eastus", "westus2", "westeurope"),
}


def _sizes(prefix: str, *names: str) -> tuple[str, ...]:
    return tuple(f"{prefix}{name}" for name in names)


def _n1(gpu: str, limits: dict[int, int]) -> tuple[str, ...]:
    """GCP's documented N1 limits: {GPUs: most vCPUs the machine may have}."""
    return tuple(
        f"n1-standard-{size}+{count}x{gpu}"
        for size in (4, 8, 16, 32, 64, 96)
        for count, most in limits.items()
        if size <= most
    )


G_SIZES = ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge")
FAMILIES: dict[tuple[Provider, str], tuple[str, ...]] = {
    (Provider.AWS, "p6-b200"): ("p6-b200.48xlarge",),
    (Provider.AWS, "p5"): ("p5.4xlarge", "p5.48xlarge"),
    (Provider.AWS, "p5e"): ("p5e.48xlarge",),
    (Provider.AWS, "p5en"): ("p5en.48xlarge",),
    (Provider.AWS, "p4d"): ("p4d.24xlarge",),
    (Provider.AWS, "p4de"): ("p4de.24xlarge",),
    (Provider.AWS, "p3"): ("p3.2xlarge", "p3.8xlarge", "p3.16xlarge"),
    (Provider.AWS, "p3dn"): ("p3dn.24xlarge",),
    (Provider.AWS, "g6e"): _sizes("g6e.", *G_SIZES, "48xlarge"),
    (Provider.AWS, "g6"): _sizes("g6.", *G_SIZES, "48xlarge"),
    (Provider.AWS, "g5"): _sizes("g5.", *G_SIZES, "48xlarge"),
    (Provider.AWS, "g4dn"): _sizes("g4dn.", *G_SIZES[:6], "metal"),
    (Provider.GCP, "a4-highgpu"): ("a4-highgpu-8g",),
    (Provider.GCP, "a3-ultragpu"): ("a3-ultragpu-8g",),
    (Provider.GCP, "a3-megagpu"): ("a3-megagpu-8g",),
    (Provider.GCP, "a3-highgpu"): _sizes("a3-highgpu-", "1g", "2g", "4g", "8g"),
    (Provider.GCP, "a3-edgegpu"): ("a3-edgegpu-8g",),
    (Provider.GCP, "a2-ultragpu"): _sizes("a2-ultragpu-", "1g", "2g", "4g", "8g"),
    (Provider.GCP, "a2-highgpu"): _sizes("a2-highgpu-", "1g", "2g", "4g", "8g"),
    (Provider.GCP, "a2-megagpu"): ("a2-megagpu-16g",),
    (Provider.GCP, "g2-standard"): _sizes(
        "g2-standard-", "4", "8", "12", "16", "24", "32", "48", "96"
    ),
    (Provider.GCP, "n1+T4"): _n1("T4", {1: 48, 2: 48, 4: 96}),
    (Provider.GCP, "n1+V100"): _n1("V100-16GB", {1: 12, 2: 24, 4: 48, 8: 96}),
    (Provider.GCP, "n1+P100"): _n1("P100", {1: 16, 2: 32, 4: 96}),
    (Provider.AZURE, "ND H200 v5"): ("Standard_ND96isr_H200_v5",),
    (Provider.AZURE, "ND H100 v5"): ("Standard_ND96isr_H100_v5",),
    (Provider.AZURE, "ND MI300X v5"): ("Standard_ND96isr_MI300X_v5",),
    (Provider.AZURE, "ND A100 v4"): ("Standard_ND96asr_v4",),
    (Provider.AZURE, "NDm A100 v4"): ("Standard_ND96amsr_A100_v4",),
    (Provider.AZURE, "NC H100 v5"): ("Standard_NC40ads_H100_v5", "Standard_NC80adis_H100_v5"),
    (Provider.AZURE, "NC A100 v4"): _sizes(
        "Standard_NC", "24ads_A100_v4", "48ads_A100_v4", "96ads_A100_v4"
    ),
    (Provider.AZURE, "NCads A10 v4"): _sizes(
        "Standard_NC", "8ads_A10_v4", "16ads_A10_v4", "32ads_A10_v4"
    ),
    (Provider.AZURE, "NVadsA10 v5"): _sizes(
        "Standard_NV",
        "6ads_A10_v5",
        "12ads_A10_v5",
        "18ads_A10_v5",
        "36ads_A10_v5",
        "36adms_A10_v5",
        "72ads_A10_v5",
    ),
    (Provider.AZURE, "NCasT4_v3"): _sizes(
        "Standard_NC", "4as_T4_v3", "8as_T4_v3", "16as_T4_v3", "64as_T4_v3"
    ),
    (Provider.AZURE, "NCs_v3"): _sizes("Standard_NC", "6s_v3", "12s_v3", "24s_v3", "24rs_v3"),
}

# (provider, family, region) -> sizes missing there ("*" = the whole family). Each entry
# is a row of the gap table in pricing/README.md; the test below holds the two together.
ALL = "*"
GAPS: dict[tuple[str, str, str], str] = {
    ("aws", "p6-b200", "eu-west-1"): ALL,
    ("aws", "p5", "eu-west-1"): ALL,
    ("aws", "p5e", "us-east-1"): ALL,
    ("aws", "p5e", "eu-west-1"): ALL,
    ("aws", "p5en", "eu-west-1"): ALL,
    ("aws", "p4de", "eu-west-1"): ALL,
    ("aws", "g6e", "eu-west-1"): ALL,
    ("aws", "g6", "eu-west-1"): ALL,
    ("gcp", "a4-highgpu", "us-east4"): ALL,
    ("gcp", "a4-highgpu", "europe-west4"): ALL,
    ("gcp", "a2-highgpu", "us-east4"): ALL,
    ("gcp", "a2-megagpu", "us-east4"): ALL,
    ("gcp", "n1+V100", "us-east4"): ALL,
    ("gcp", "n1+P100", "us-east4"): ALL,
    **{("azure", "ND H200 v5", region): ALL for region in NAMED_REGIONS[Provider.AZURE]},
    **{("azure", "ND MI300X v5", region): ALL for region in NAMED_REGIONS[Provider.AZURE]},
    ("azure", "NCads A10 v4", "eastus"): ALL,
    ("azure", "NCads A10 v4", "westus2"): ALL,
    ("azure", "ND H100 v5", "westus2"): ALL,
    ("azure", "NC H100 v5", "westus2"): ALL,
    ("azure", "NC H100 v5", "westeurope"): ALL,
}
# Offers with no on-demand price, each a documented gap or "not sold on-demand".
NO_ON_DEMAND = (
    ("aws", r"p5e\.48xlarge", r".*"),
    ("gcp", r"a3-highgpu-[124]g", r".*"),
    ("gcp", r"a3-(high|edge|mega)gpu-8g", r"asia-northeast1"),
    ("gcp", r"a3-ultragpu-8g", r"europe-west4"),
    ("gcp", r"a4-highgpu-8g", r"us-central1"),  # DWS calendar mode and CUDs only
)
README = Path(__file__).resolve().parents[2] / "pricing" / "README.md"


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return load_catalog(now=AS_OF_NOW)


def _by_region(catalog: Catalog) -> dict[tuple[str, str], set[str]]:
    found: dict[tuple[str, str], set[str]] = defaultdict(set)
    for offer in catalog.offers:
        found[(offer.provider.value, offer.region)].add(offer.instance_type)
    return found


def _only(catalog: Catalog, instance_type: str, region: str | None = None) -> list[Offer]:
    return [
        o
        for o in catalog.offers
        if o.instance_type == instance_type and (region is None or o.region == region)
    ]


def test_bundled_catalog_notices_name_only_the_old_azure_rows(catalog: Catalog) -> None:
    # Prices read from the 2023-12 Retail Prices snapshot carry that date (README).
    # Only some Azure rows are old: no notice on every command, the rows carry their date.
    assert not catalog.notices
    old = [o for o in catalog.offers if o.as_of.year < 2025]
    assert len(old) == 30 and {o.provider.value for o in old} == {"azure"}
    assert len(catalog.offers) > 500
    # Each row is dated by the reading of its on-demand (else its only) price.
    big_three = (Provider.AWS, Provider.GCP, Provider.AZURE)
    dates = {o.as_of.isoformat() for o in catalog.offers if o.provider in big_three}
    assert dates == {"2023-12-18", "2024-09-01", "2025-03-06", "2026-09-27", "2026-12-02"}
    assert all(o.source.strip() for o in catalog.offers)
    later = load_catalog(now=datetime(2030, 2, 1, tzinfo=UTC)).notices
    assert len(later) == 9 and all("all offers have prices over 90 days" in n for n in later)


def test_the_files_are_the_bundled_ones(catalog: Catalog) -> None:
    assert (bundled_catalog_path() / "gcp.csv").is_file()
    assert {o.provider for o in catalog.offers} == PRICED


@pytest.mark.parametrize(("provider", "family"), list(FAMILIES), ids=lambda v: str(v))
def test_family_has_all_its_sizes_in_the_named_regions(
    catalog: Catalog, provider: Provider, family: str
) -> None:
    found = _by_region(catalog)
    sizes = set(FAMILIES[(provider, family)])
    for region in NAMED_REGIONS[provider]:
        missing = sizes - found[(provider.value, region)]
        documented = GAPS.get((provider.value, family, region), "")
        expected = sizes if documented == ALL else set(documented.split())
        assert missing == expected, f"{family} in {region}: missing {sorted(missing)}"


def test_gaps_match_the_readme_table() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Coverage gaps", 1)[1].split("\n## ", 1)[0]
    rows: set[tuple[str, str, str]] = set()
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 4 and cells[0] in {"aws", "gcp", "azure"}:
            for family in cells[1].split(", "):
                rows.update((cells[0], family, region) for region in cells[2].split(", "))
    assert rows == set(GAPS)


def test_every_offer_has_on_demand_or_is_a_documented_gap(catalog: Catalog) -> None:
    for offer in catalog.offers:
        if offer.on_demand_hourly is not None:
            continue
        assert any(
            p == offer.provider.value
            and re.fullmatch(t, offer.instance_type)
            and re.fullmatch(r, offer.region)
            for p, t, r in NO_ON_DEMAND
        ), offer.key
        sold = (PricingModel.SPOT, PricingModel.CAPACITY_BLOCK, PricingModel.DWS_CALENDAR)
        assert any(offer.price(m) is not None for m in sold), offer.key


def test_no_spot_at_or_above_on_demand(catalog: Catalog) -> None:
    for offer in catalog.offers:
        if offer.spot_hourly is not None and offer.on_demand_hourly is not None:
            assert offer.spot_hourly < offer.on_demand_hourly, offer.key


def test_commitments_cost_less_than_on_demand(catalog: Catalog) -> None:
    for offer in catalog.offers:
        one, three = offer.reserved_1y_hourly, offer.reserved_3y_hourly
        if one is not None and three is not None:
            # Without on-demand (sold by reservation only) the dearest block price is the
            # reference: a commitment must undercut it.
            ceiling = offer.on_demand_hourly or offer.dws_calendar_hourly
            assert ceiling is not None, offer.key
            assert three < one < ceiling, offer.key


def test_spot_names_a_zone_and_never_a_local_zone(catalog: Catalog) -> None:
    for offer in catalog.offers:
        if offer.provider not in (Provider.AWS, Provider.GCP) or offer.spot_hourly is None:
            continue  # Azure spot has no zone; CoreWeave prices spot for North America
        assert offer.spot_zone, offer.key
        assert not re.search(r"-(lax|atl)\d", offer.spot_zone), offer.key


def test_gcp_a2_highgpu_1g_is_host_plus_gpu(catalog: Catalog) -> None:
    (offer,) = _only(catalog, "a2-highgpu-1g", "us-central1")
    assert offer.on_demand_hourly is not None
    assert abs(offer.on_demand_hourly - Decimal("3.67")) <= Decimal("3.67") * Decimal("0.05")
    assert offer.parts is not None
    parts = offer.parts[PricingModel.ON_DEMAND]
    assert Decimal("0.70") < parts.host < Decimal("0.80")
    assert Decimal("2.85") < parts.accelerators < Decimal("3.00")


def test_gcp_gpu_list_prices_agree_across_regions(catalog: Catalog) -> None:
    per_gpu: dict[str, list[Decimal]] = defaultdict(list)
    for offer in catalog.offers:
        if offer.provider is Provider.GCP and offer.parts and offer.on_demand_hourly:
            accelerators = offer.parts[PricingModel.ON_DEMAND].accelerators
            per_gpu[offer.gpu].append(accelerators / Decimal(str(offer.gpu_count)))
    assert {"A100-40GB", "A100-80GB", "H100", "H200", "L4", "T4"} <= set(per_gpu)
    for gpu, prices in per_gpu.items():
        assert max(prices) / min(prices) < Decimal("1.5"), (gpu, min(prices), max(prices))


def test_nd96isr_h100_v5_has_eight_gpus(catalog: Catalog) -> None:
    offers = _only(catalog, "Standard_ND96isr_H100_v5")
    assert offers
    assert {(o.gpu, o.gpu_count, o.gpu_memory_gb) for o in offers} == {("H100", 8.0, 80.0)}


def test_nvadsa10_v5_sizes_carry_fractional_gpus(catalog: Catalog) -> None:
    expected = {
        "Standard_NV6ads_A10_v5": (0.1667, 4),
        "Standard_NV12ads_A10_v5": (0.3333, 8),
        "Standard_NV18ads_A10_v5": (0.5, 12),
        "Standard_NV36ads_A10_v5": (1, 24),
        "Standard_NV36adms_A10_v5": (1, 24),
        "Standard_NV72ads_A10_v5": (2, 24),
    }
    seen = {o.instance_type: o for o in catalog.offers if o.instance_type in expected}
    assert any(o.gpu_count < 1 for o in seen.values())
    for name, offer in seen.items():
        assert (offer.gpu, offer.gpu_count, offer.gpu_memory_gb) == ("A10", *expected[name])


def test_h100_is_offered_by_all_three_providers(catalog: Catalog) -> None:
    h100 = [o for o in catalog.offers if o.gpu == "H100" and o.on_demand_hourly is not None]
    assert {o.provider for o in h100} == PRICED
    nvl = {o.gpu for o in catalog.offers if o.instance_type.startswith("Standard_NC40ads_H100")}
    assert nvl == {"H100-NVL"}


@pytest.mark.parametrize(
    ("instance_type", "region", "on_demand"),
    [
        ("p5.48xlarge", "us-east-1", "55.04"),
        ("g5.xlarge", "us-east-1", "1.006"),
        ("g4dn.xlarge", "us-east-1", "0.526"),
        ("Standard_ND96isr_H100_v5", "eastus", "98.32"),
        ("Standard_NC24ads_A100_v4", "eastus", "3.673"),
        ("Standard_NC4as_T4_v3", "eastus", "0.526"),
        ("Standard_ND96isr_H100_v5", "westeurope", "127.816"),
        ("Standard_NC24ads_A100_v4", "westeurope", "4.775"),
        ("Standard_NV12ads_A10_v5", "eastus", "0.908"),
        ("Standard_ND96isr_H200_v5", "eastus2", "84.8"),
    ],
)
def test_known_list_prices(
    catalog: Catalog, instance_type: str, region: str, on_demand: str
) -> None:
    (offer,) = _only(catalog, instance_type, region)
    assert offer.on_demand_hourly == Decimal(on_demand)


def test_h200_carries_its_listed_reservation_rates(catalog: Catalog) -> None:
    (offer,) = _only(catalog, "Standard_ND96isr_H200_v5")
    assert (offer.gpu, offer.gpu_count, offer.gpu_memory_gb) == ("H200", 8.0, 141.0)
    assert (offer.reserved_1y_hourly, offer.reserved_3y_hourly) == (
        Decimal("46.5212"),
        Decimal("42.2219"),
    )


def test_westeurope_sits_a_regional_premium_above_eastus(catalog: Catalog) -> None:
    """Neighbour check: each Azure size priced in both regions costs 0-35% more there."""
    azure = {
        (o.instance_type, o.region): o.on_demand_hourly
        for o in catalog.offers
        if o.provider is Provider.AZURE and o.on_demand_hourly is not None
    }
    pairs = [
        (name, price, azure[(name, "eastus")])
        for (name, region), price in azure.items()
        if region == "westeurope" and (name, "eastus") in azure
    ]
    assert len(pairs) >= 15
    for name, west, east in pairs:
        assert east <= west <= east * Decimal("1.35"), (name, east, west)


def test_supplements_name_a_source_and_known_sizes() -> None:
    root = README.parent
    with (root / "instance_specs.csv").open(encoding="utf-8") as handle:
        known = {(r["provider"], r["instance_type"]) for r in csv.DictReader(handle)}
    with (root / "supplements.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["kind"] for r in rows} == {
        "azure_offer",
        "gcp_gpu_list",
        "aws_ri_1y",
        "aws_capacity_block",
    }
    for row in rows:
        assert row["source"].strip(), row
        if row["kind"] == "azure_offer":
            assert ("azure", row["name"]) in known, row
            assert Decimal(row["on_demand_hourly"]) > 0, row
            assert row["as_of"], row  # the day its price was read: the row's as_of
        if row["kind"] == "aws_capacity_block":
            assert Decimal(row["capacity_block_hourly"]) > 0 and row["as_of"], row


# --- The generator, on a tiny synthetic reference (it never needs the real one) ------

AWS_REF = (
    (
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
        "Region,AvailabilityZone,Arch\n"
    )
    + """g5.xlarge,A10G,1.0,4.0,16.0,{},1.006,0.450700,us-west-2,usw2-az1,x86_64
g5.xlarge,A10G,1.0,4.0,16.0,{},1.006,0.424600,us-west-2,usw2-az2,x86_64
g5.xlarge,A10G,1.0,4.0,16.0,{},1.006,0.063100,us-west-2,usw2-lax1-az1,x86_64
p5.48xlarge,H100,8.0,192.0,2048.0,{},55.04,55.040000,us-east-1,use1-az1,x86_64
"""
)
GCP_REF = (
    (
        "InstanceType,vCPUs,MemoryGiB,AcceleratorName,AcceleratorCount,GpuInfo,Region,"
        "AvailabilityZone,Price,SpotPrice\n"
    )
    + """a2-highgpu-1g,12.0,85.0,,,,us-central1,us-central1-a,0.73948,0.36975
a4-highgpu-8g,224.0,3968.0,,,,us-central1,us-central1-b,0.0,0.0
,,,A100,1,{},us-central1,us-central1-a,2.93391,1.4341
,,,B200,8,{},us-central1,us-central1-b,90.216,32.6064
"""
)
AZURE_REF = (
    (
        "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,GpuInfo,Price,SpotPrice,"
        "Region,Generation\n"
    )
    + """Standard_ND96isr_H100_v5,H100,12,96.0,1900,H100,98.32,98.32,eastus,V2
Standard_NC12_Promo,K80,2,12.0,112,K80,0.36,,westus2,V1
"""
)


def _build(tmp_path: Path) -> Catalog:
    import importlib.util
    import shutil
    import sys

    script = Path(__file__).resolve().parents[2] / "scripts" / "build_pricing.py"
    spec = importlib.util.spec_from_file_location("build_pricing_under_test", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve annotations through sys.modules
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    ref, out = tmp_path / "ref", tmp_path / "out"
    ref.mkdir()
    out.mkdir()
    for name, text in (("aws.csv", AWS_REF), ("gcp.csv", GCP_REF), ("azure.csv", AZURE_REF)):
        (ref / name).write_text(text, encoding="utf-8")
    shutil.copy(bundled_catalog_path() / "gpus.toml", out / "gpus.toml")
    assert module.main([str(ref), "--out", str(out)]) == 0
    first = (out / "gcp.csv").read_bytes()
    assert module.main([str(ref), "--out", str(out)]) == 0
    assert (out / "gcp.csv").read_bytes() == first
    return load_catalog(out, now=AS_OF_NOW)


def test_generator_applies_the_rules(tmp_path: Path) -> None:
    built = _build(tmp_path)
    # Only the supplements' 2023-12 Azure rows are old; their own date travels with them.
    assert not built.notices  # only some rows are old: their dates travel with them
    assert {o.as_of.isoformat() for o in built.offers if o.provider.value == "azure"} >= {
        "2023-12-18"
    }
    offers = {(o.instance_type, o.region): o for o in built.offers}
    g5 = offers[("g5.xlarge", "us-west-2")]
    assert (g5.spot_hourly, g5.spot_zone) == (Decimal("0.4246"), "usw2-az2")
    assert g5.reserved_1y_hourly == Decimal("0.63378")
    p5 = offers[("p5.48xlarge", "us-east-1")]
    assert p5.spot_hourly is None and p5.reserved_1y_hourly is None
    a2 = offers[("a2-highgpu-1g", "us-central1")]
    assert a2.on_demand_hourly == Decimal("3.67339")
    # The reference's 0.0 placeholder never becomes a price; the added row (DWS calendar
    # mode and commitments only) is appended with its own date.
    a4 = offers[("a4-highgpu-8g", "us-central1")]
    assert (a4.on_demand_hourly, a4.spot_hourly) == (None, None)
    assert (a4.dws_calendar_hourly, a4.as_of.isoformat()) == (Decimal("90.22"), "2026-09-27")
    nd = offers[("Standard_ND96isr_H100_v5", "eastus")]
    assert (nd.gpu_count, nd.spot_hourly) == (8.0, None)
    assert ("Standard_NC12_Promo", "westus2") not in offers


def test_a_price_read_on_another_day_carries_that_day(catalog: Catalog) -> None:
    """The row's as_of is its on-demand's (else its only price's) reading, never a rebuild
    day; a price of another day (a 2024 Capacity Block rate, a 2025 GCP GPU list price)
    carries its own date, which is what the planner and the stale marks read."""
    from datetime import date

    by_key = {o.key: o for o in catalog.offers}
    p5e = by_key[("aws", "p5e.48xlarge", "us-east-2")]
    assert p5e.as_of == date(2026, 12, 2)
    assert p5e.price_as_of(PricingModel.CAPACITY_BLOCK) == date(2024, 12, 31)
    a2 = by_key[("gcp", "a2-highgpu-1g", "europe-west4")]
    assert a2.price_as_of(PricingModel.ON_DEMAND) == date(2025, 3, 6)
    assert a2.price_as_of(PricingModel.SPOT) == date(2026, 12, 2)
