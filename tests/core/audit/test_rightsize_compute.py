"""Right-sizing to a different GPU needs the compute the instance used, not only its
memory: a well-used H100 is not "oversized" because an L4 instance with enough memory is
cheaper (it was: $7,003 of a week counted oversized, with no advice to say why)."""

from __future__ import annotations

import pytest

from gpuplan.core.audit.advice import audit_instance
from gpuplan.core.audit.rightsize import cheapest_fit
from gpuplan.core.audit.split import AuditRule, Subject, Usage
from gpuplan.core.catalog.kinds import Precision, Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.loaders.catalog import load_catalog

WEEK = 168


def _peak(catalog: Catalog, gpu: str) -> float:
    peak = catalog.gpus.get(gpu).peak_tflops(Precision.BF16)
    assert peak is not None
    return peak


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    loaded = load_catalog()
    return loaded[0] if isinstance(loaded, tuple) else loaded


def _p5(catalog: Catalog) -> Subject:
    (offer,) = [o for o in catalog.offers
                if (o.instance_type, o.region) == ("p5.48xlarge", "us-east-1")]  # fmt: skip
    assert offer.on_demand_hourly is not None
    return Subject("i-h100", Provider.AWS, "us-east-1", "p5.48xlarge", offer.on_demand_hourly,
                   gpu_count=8)  # fmt: skip


def _usage(util: float) -> Usage:
    """Every GPU at ``util`` all week, a quarter of each H100's memory, a working CPU."""
    return Usage(60, [(util,) * 8] * WEEK, [25.0] * WEEK, [40.0] * WEEK)


def test_a_well_used_gpu_is_not_oversized_by_a_slower_cheaper_one(catalog: Catalog) -> None:
    audit = audit_instance(_p5(catalog), _usage(85.0), catalog.offers, AuditRule(), catalog.gpus)
    assert audit.resize is None
    assert audit.oversized == 0
    assert audit.advice == ()


def test_a_lightly_used_gpu_moves_to_one_that_still_gives_the_compute(catalog: Catalog) -> None:
    subject, usage = _p5(catalog), _usage(10.0)
    audit = audit_instance(subject, usage, catalog.offers, AuditRule(), catalog.gpus)
    resize = audit.resize
    assert resize is not None and resize.offer.gpu != "H100"
    used = 0.10 * 989.4 * 8
    assert resize.need.tflops == pytest.approx(used / 8, rel=0.01)  # all eight were busy
    assert _peak(catalog, resize.offer.gpu) * resize.offer.gpu_count >= used
    assert audit.oversized > 0
    (advice,) = [a for a in audit.advice if a.kind.value == "smaller-gpu"]
    assert f"{used / 8:,.0f} TFLOP/s each busy GPU used" in advice.action


def test_without_gpu_specs_a_different_gpu_never_fits(catalog: Catalog) -> None:
    subject, usage = _p5(catalog), _usage(10.0)
    resize = cheapest_fit(subject, usage, catalog.offers, AuditRule())
    assert resize is None or resize.offer.gpu == "H100"


def test_one_busy_gpu_of_eight_needs_one_gpu_as_fast_as_it_was_used(catalog: Catalog) -> None:
    busy_one = [(90.0,) + (0.0,) * 7] * WEEK
    usage = Usage(60, busy_one, [25.0] * WEEK, [6.0] * WEEK)  # 12 of 192 vCPUs
    resize = cheapest_fit(_p5(catalog), usage, catalog.offers, AuditRule(), catalog.gpus)
    assert resize is not None
    assert resize.need.gpus == 1
    assert resize.need.tflops == pytest.approx(0.9 * 989.4, rel=0.01)
    # p5.4xlarge (one H100, 16 vCPUs); no A100 or L40S instance is as fast per GPU
    assert (resize.offer.instance_type, resize.offer.gpu) == ("p5.4xlarge", "H100")


@pytest.mark.parametrize("util", [5.0, 20.0, 40.0, 60.0, 85.0, 100.0])
def test_no_resize_ever_gives_a_busy_gpu_less_compute_than_it_used(
    catalog: Catalog, util: float
) -> None:
    resize = cheapest_fit(_p5(catalog), _usage(util), catalog.offers, AuditRule(), catalog.gpus)
    if resize is None:
        return
    assert resize.offer.gpu_count >= 8
    assert _peak(catalog, resize.offer.gpu) >= util / 100 * 989.4
