"""The one GCP family table: the listing, the price refresh and the SkyPilot import agree."""

from __future__ import annotations

import pytest

from gpuplan.providers.gcp.billing_catalog import FAMILIES as PRICED
from gpuplan.providers.gcp.families import FAMILIES, family_of, fixed_gpu_count
from gpuplan.providers.gcp.machines import family_gpus


@pytest.mark.parametrize(
    ("machine_type", "gpu", "count"),
    [
        ("a2-highgpu-1g", "A100-40GB", 1),
        ("a2-megagpu-16g", "A100-40GB", 16),
        ("a2-ultragpu-8g", "A100-80GB", 8),
        ("a3-ultragpu-8g-nolssd", "H200", 8),
        ("a3-megagpu-8g", "H100", 8),
        ("a4x-highgpu-4g", "GB200", 4),
        ("g2-standard-48", "L4", 4),
        ("g2-standard-5", "L4", 0),  # not a G2 size: no count guessed
        ("n1-standard-8", None, 0),
        ("e2-standard-4", None, 0),
    ],
)
def test_machine_types_name_their_gpus(machine_type: str, gpu: str | None, count: int) -> None:
    facts = family_gpus(machine_type)
    assert (facts.gpu, facts.gpu_count) == (gpu, count)
    assert fixed_gpu_count(machine_type) == count


def test_every_priced_family_is_in_the_one_table() -> None:
    fixed = {(f.prefix, f.host_sku, f.gpu_sku) for f in FAMILIES}
    for prefix, host, gpu in PRICED:
        assert prefix == "n1-standard-" or (prefix, host, gpu) in fixed
    unpriced = [f.prefix for f in FAMILIES if f.host_sku is None]
    assert unpriced == ["a4x-"]  # no Cloud Billing SKU family known yet: said, not guessed
    assert family_of("a4-highgpu-8g") is not None and family_of("a4x-highgpu-4g") is not None
