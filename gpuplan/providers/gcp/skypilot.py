"""GCP's rows of a SkyPilot vms.csv: host VM rows joined to accelerator rows.

GCP lists the host VM and the accelerators as separate rows: an a2/a3/a4/g2 machine type
carries fixed GPUs (:mod:`.families`) and its price is host + accelerator row of the
same zone; n1 hosts take attachable GPUs (T4, V100, P100 within GCP's vCPU limits per GPU
count) and become ``n1-standard-<N>+<count>x<GPU>`` offers, named as the bundled catalog
names them. GCP's facts hand :func:`combine_rows` to the importer.
"""

from __future__ import annotations

import re
from decimal import Decimal

from gpuplan.core.catalog.skypilot_rows import NAME_FIXES, VmRow
from gpuplan.providers.gcp.families import family_of, fixed_gpu_count

# GPUs an n1-standard host can take: GPU -> count -> most vCPUs (GCP's documented limits,
# as the bundled catalog applies them; see pricing/README.md).
N1_LIMITS = {
    "T4": {1: 48, 2: 48, 4: 96},
    "V100": {1: 12, 2: 24, 4: 48, 8: 96},
    "P100": {1: 16, 2: 32, 4: 96},
}


def combine_rows(rows: list[VmRow]) -> tuple[list[VmRow], list[str]]:
    """Host rows joined to the accelerator rows of the same zone: one row per configuration."""
    accel = {(r.gpu, r.count, r.zone): r for r in rows if not r.instance_type and r.gpu}
    combined: list[VmRow] = []
    unmatched: set[str] = set()
    for host in (r for r in rows if r.instance_type):
        for gpu, count, name in _configurations(host, accel):
            part = accel.get((gpu, count, host.zone))
            if part is None:
                unmatched.add(host.instance_type)
                continue
            combined.append(_join(host, part, name))
    notes = []
    if unmatched:
        shown = ", ".join(sorted(unmatched)[:6])
        notes.append(f"no accelerator row in the same zone for {shown}")
    return combined, notes


def _configurations(
    host: VmRow, accel: dict[tuple[str, float, str], VmRow]
) -> list[tuple[str, float, str]]:
    """(SkyPilot GPU name, count, offer name) for a host machine type."""
    name = host.instance_type
    family = family_of(name)
    if family is not None:
        count = fixed_gpu_count(name)
        if family.skypilot_gpu is None or not count:
            return []
        return [(family.skypilot_gpu, float(count), name)]
    n1 = re.match(r"^n1-standard-(\d+)$", name)
    if not n1:
        return []
    vcpus = int(n1.group(1))
    return [
        (gpu, count, f"{name}+{int(count)}x{NAME_FIXES.get(gpu, gpu)}")
        for gpu, count, zone in sorted(accel)
        if zone == host.zone and vcpus <= N1_LIMITS.get(gpu, {}).get(int(count), 0)
    ]


def _join(host: VmRow, part: VmRow, name: str) -> VmRow:
    def add(a: Decimal | None, b: Decimal | None) -> Decimal | None:
        if a is None or b is None:
            return None
        # A zero part (a4-highgpu hosts read 0.0 upstream) is a placeholder: keep the
        # sum at zero so the gates drop it instead of pricing the GPUs alone.
        return a + b if a > 0 and b > 0 else Decimal(0)

    return VmRow(
        instance_type=name,
        gpu=part.gpu,
        count=part.count,
        vcpus=host.vcpus,
        memory=host.memory,
        price=add(host.price, part.price),
        spot=add(host.spot, part.spot),
        region=host.region,
        zone=host.zone,
        host_price=host.price if part.price is not None else None,
        host_spot=host.spot if part.spot is not None else None,
    )
