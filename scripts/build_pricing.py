#!/usr/bin/env python3
"""Rebuilds pricing/aws.csv, gcp.csv and azure.csv from recorded reference price rows.

Usage: ``python scripts/build_pricing.py [REFERENCE_DIR] [--out PRICING_DIR]``

REFERENCE_DIR holds the GPU rows of a public multi-cloud price catalog (default:
``../shared/data/reference-prices`` beside the repository; its SOURCE.md says where
they come from). The script keeps the instance families gpuplan covers, takes the
lowest spot zone per region (AWS Local Zones excluded), drops spot figures capped at
on-demand, applies the corrections and supplements below (each with its source),
derives reserved rates from commitment discounts and writes the three files sorted by
(family, size, region). Same input, same bytes. pricing/README.md explains each rule.

Only needed to refresh the catalog: nothing imports this at run time or in CI.
"""

from __future__ import annotations

import argparse
import csv
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_REFERENCE = REPO.parent / "shared" / "data" / "reference-prices"
AS_OF = "2026-12-02"
REF = "public multi-cloud catalog (skypilot-catalog {}), recorded 2026-12-02"
SPOT_CAP = Decimal("0.99")  # spot within 1% of on-demand is a cap (spot unavailable)
D = Decimal
Row = dict[str, str]
Ratios = tuple[Decimal, Decimal]

_COMMON = "instance_type,region,gpu,gpu_count,gpu_memory_gb,vcpus,memory_gb,interconnect,"
_COMMON += "network_gbps,"
AWS_AZURE_HEADER = (
    _COMMON + "on_demand_hourly,spot_hourly,spot_zone,reserved_1y_hourly,reserved_3y_hourly,"
    "as_of,source"
).split(",")
GCP_HEADER = (
    _COMMON + "host_on_demand_hourly,gpu_on_demand_hourly,host_spot_hourly,gpu_spot_hourly,"
    "host_reserved_1y_hourly,gpu_reserved_1y_hourly,host_reserved_3y_hourly,"
    "gpu_reserved_3y_hourly,spot_zone,as_of,source"
).split(",")

# --- Instance facts (provider documentation) ----------------------------------------
# AWS: type | GPU | GB per GPU | GPU link; instance network | network Gbit/s.
# vCPUs, RAM and GPU count come from the reference rows (they match AWS's own pages).
AWS_SPECS_TEXT = """
p6-b200.48xlarge | B200 | 179 | NVLink 5 1800 GB/s; EFA 3200 Gbps | 3200
p5.48xlarge | H100 | 80 | NVLink 4 900 GB/s; EFA 3200 Gbps | 3200
p5.4xlarge | H100 | 80 | single GPU; EFA 100 Gbps | 100
p5e.48xlarge | H200 | 141 | NVLink 4 900 GB/s; EFA 3200 Gbps | 3200
p5en.48xlarge | H200 | 141 | NVLink 4 900 GB/s; EFA 3200 Gbps | 3200
p4d.24xlarge | A100-40GB | 40 | NVLink 3 600 GB/s; EFA 400 Gbps | 400
p4de.24xlarge | A100-80GB | 80 | NVLink 3 600 GB/s; EFA 400 Gbps | 400
p3.2xlarge | V100-16GB | 16 | single GPU | 10
p3.8xlarge | V100-16GB | 16 | NVLink 2 300 GB/s | 10
p3.16xlarge | V100-16GB | 16 | NVLink 2 300 GB/s | 25
p3dn.24xlarge | V100-32GB | 32 | NVLink 2 300 GB/s; EFA 100 Gbps | 100
g6e.xlarge | L40S | 48 | PCIe | 20
g6e.2xlarge | L40S | 48 | PCIe | 20
g6e.4xlarge | L40S | 48 | PCIe | 20
g6e.8xlarge | L40S | 48 | PCIe | 25
g6e.16xlarge | L40S | 48 | PCIe | 35
g6e.12xlarge | L40S | 48 | PCIe; EFA 100 Gbps | 100
g6e.24xlarge | L40S | 48 | PCIe; EFA 200 Gbps | 200
g6e.48xlarge | L40S | 48 | PCIe; EFA 400 Gbps | 400
g6.xlarge | L4 | 24 | PCIe | 10
g6.2xlarge | L4 | 24 | PCIe | 10
g6.4xlarge | L4 | 24 | PCIe | 25
g6.8xlarge | L4 | 24 | PCIe | 25
g6.16xlarge | L4 | 24 | PCIe | 25
g6.12xlarge | L4 | 24 | PCIe | 40
g6.24xlarge | L4 | 24 | PCIe | 50
g6.48xlarge | L4 | 24 | PCIe | 100
g5.xlarge | A10G | 24 | PCIe | 10
g5.2xlarge | A10G | 24 | PCIe | 10
g5.4xlarge | A10G | 24 | PCIe | 25
g5.8xlarge | A10G | 24 | PCIe; EFA 25 Gbps | 25
g5.16xlarge | A10G | 24 | PCIe; EFA 25 Gbps | 25
g5.12xlarge | A10G | 24 | PCIe; EFA 40 Gbps | 40
g5.24xlarge | A10G | 24 | PCIe; EFA 50 Gbps | 50
g5.48xlarge | A10G | 24 | PCIe; EFA 100 Gbps | 100
g4dn.xlarge | T4 | 16 | PCIe | 25
g4dn.2xlarge | T4 | 16 | PCIe | 25
g4dn.4xlarge | T4 | 16 | PCIe | 25
g4dn.8xlarge | T4 | 16 | PCIe; EFA 50 Gbps | 50
g4dn.16xlarge | T4 | 16 | PCIe; EFA 50 Gbps | 50
g4dn.12xlarge | T4 | 16 | PCIe; EFA 50 Gbps | 50
g4dn.metal | T4 | 16 | PCIe; EFA 100 Gbps | 100
"""
# GCP: machine | GPU name in the reference | GPU | count | GB per GPU | vCPUs | RAM GB |
# GPU link; network | network Gbit/s. N1 configurations are generated (gcp_configs).
GCP_SPECS_TEXT = """
a3-ultragpu-8g | H200 | H200 | 8 | 141 | 224 | 2952 | NVLink 4 900 GB/s; RDMA 3200 Gbps | 3600
a3-megagpu-8g | H100-MEGA | H100 | 8 | 80 | 208 | 1872 | NVLink 4 900 GB/s; TCPXO 1600 Gbps | 1800
a3-highgpu-1g | H100 | H100 | 1 | 80 | 26 | 234 | single GPU | 25
a3-highgpu-2g | H100 | H100 | 2 | 80 | 52 | 468 | NVLink 4 900 GB/s | 50
a3-highgpu-4g | H100 | H100 | 4 | 80 | 104 | 936 | NVLink 4 900 GB/s | 100
a3-highgpu-8g | H100 | H100 | 8 | 80 | 208 | 1872 | NVLink 4 900 GB/s; TCPX 800 Gbps | 1000
a3-edgegpu-8g | H100 | H100 | 8 | 80 | 208 | 1872 | NVLink 4 900 GB/s | 800
a2-ultragpu-1g | A100-80GB | A100-80GB | 1 | 80 | 12 | 170 | single GPU | 24
a2-ultragpu-2g | A100-80GB | A100-80GB | 2 | 80 | 24 | 340 | NVLink 3 600 GB/s | 32
a2-ultragpu-4g | A100-80GB | A100-80GB | 4 | 80 | 48 | 680 | NVLink 3 600 GB/s | 50
a2-ultragpu-8g | A100-80GB | A100-80GB | 8 | 80 | 96 | 1360 | NVLink 3 600 GB/s | 100
a2-highgpu-1g | A100 | A100-40GB | 1 | 40 | 12 | 85 | single GPU | 24
a2-highgpu-2g | A100 | A100-40GB | 2 | 40 | 24 | 170 | NVLink 3 600 GB/s | 32
a2-highgpu-4g | A100 | A100-40GB | 4 | 40 | 48 | 340 | NVLink 3 600 GB/s | 50
a2-highgpu-8g | A100 | A100-40GB | 8 | 40 | 96 | 680 | NVLink 3 600 GB/s | 100
a2-megagpu-16g | A100 | A100-40GB | 16 | 40 | 96 | 1360 | NVLink 3 600 GB/s (NVSwitch) | 100
g2-standard-4 | L4 | L4 | 1 | 24 | 4 | 16 | PCIe | 10
g2-standard-8 | L4 | L4 | 1 | 24 | 8 | 32 | PCIe | 16
g2-standard-12 | L4 | L4 | 1 | 24 | 12 | 48 | PCIe | 16
g2-standard-16 | L4 | L4 | 1 | 24 | 16 | 64 | PCIe | 32
g2-standard-24 | L4 | L4 | 2 | 24 | 24 | 96 | PCIe | 32
g2-standard-32 | L4 | L4 | 1 | 24 | 32 | 128 | PCIe | 32
g2-standard-48 | L4 | L4 | 4 | 24 | 48 | 192 | PCIe | 50
g2-standard-96 | L4 | L4 | 8 | 24 | 96 | 384 | PCIe | 100
"""
# GCP N1 GPU limits: GPU in the reference -> canonical name, {count: max vCPUs}.
N1_GPUS = {
    "T4": ("T4", {1: 48, 2: 48, 4: 96}),
    "V100": ("V100-16GB", {1: 12, 2: 24, 4: 48, 8: 96}),
    "P100": ("P100", {1: 16, 2: 32, 4: 96}),
}
N1_SIZES = (4, 8, 16, 32, 64, 96)
# Azure: size less 'Standard_' | GPU | GPUs (fraction below 1) | GB per GPU (or slice) |
# vCPUs | RAM GiB | GPU link; network | network Gbit/s ('' = not published).
AZURE_SPECS_TEXT = """
ND96isr_H100_v5 | H100 | 8 | 80 | 96 | 1900 | NVLink 4 900 GB/s; InfiniBand 3200 Gbps | 3200
ND96amsr_A100_v4 | A100-80GB | 8 | 80 | 96 | 1900 | NVLink 3 600 GB/s; InfiniBand 1600 Gbps | 1600
ND96asr_v4 | A100-40GB | 8 | 40 | 96 | 900 | NVLink 3 600 GB/s; InfiniBand 1600 Gbps | 1600
NC40ads_H100_v5 | H100-NVL | 1 | 94 | 40 | 320 | single GPU | 40
NC80adis_H100_v5 | H100-NVL | 2 | 94 | 80 | 640 | NVLink bridge (pair) | 80
NC24ads_A100_v4 | A100-80GB | 1 | 80 | 24 | 220 | PCIe | 20
NC48ads_A100_v4 | A100-80GB | 2 | 80 | 48 | 440 | PCIe | 40
NC96ads_A100_v4 | A100-80GB | 4 | 80 | 96 | 880 | PCIe | 80
NV6ads_A10_v5 | A10 | 0.1667 | 4 | 6 | 55 | GPU partition (1/6) | 5
NV12ads_A10_v5 | A10 | 0.3333 | 8 | 12 | 110 | GPU partition (1/3) | 10
NV18ads_A10_v5 | A10 | 0.5 | 12 | 18 | 220 | GPU partition (1/2) | 20
NV36ads_A10_v5 | A10 | 1 | 24 | 36 | 440 | PCIe | 40
NV36adms_A10_v5 | A10 | 1 | 24 | 36 | 880 | PCIe | 80
NV72ads_A10_v5 | A10 | 2 | 24 | 72 | 880 | PCIe | 80
NC4as_T4_v3 | T4 | 1 | 16 | 4 | 28 | PCIe | 8
NC8as_T4_v3 | T4 | 1 | 16 | 8 | 56 | PCIe | 8
NC16as_T4_v3 | T4 | 1 | 16 | 16 | 110 | PCIe | 8
NC64as_T4_v3 | T4 | 4 | 16 | 64 | 440 | PCIe | 32
NC6s_v3 | V100-16GB | 1 | 16 | 6 | 112 | PCIe |
NC12s_v3 | V100-16GB | 2 | 16 | 12 | 224 | PCIe |
NC24s_v3 | V100-16GB | 4 | 16 | 24 | 448 | PCIe |
NC24rs_v3 | V100-16GB | 4 | 16 | 24 | 448 | PCIe; InfiniBand (RDMA) |
"""

# --- Supplements and corrections (facts with their source; README explains each) --
CUD = "GCP resource-based CUD 37%/55% (GCP CUD docs)"
CYC = "Cyclenerd GCP pricing.yml 2025-03"
# GCP GPU on-demand per GPU where the reference shows a discounted SKU instead of the
# list price; None = no list price found, on-demand left empty.
GCP_GPU_FIX: dict[tuple[str, str], tuple[Decimal | None, str]] = {
    ("A100", "europe-west4"): (D("2.933912"), f"A100 list from {CYC} a2-highgpu-1g minus host"),
    ("A100", "asia-northeast1"): (D("3.101561"), f"A100 list from {CYC} a2-highgpu-1g minus host"),
    ("A100-80GB", "us-central1"): (D("3.928082"), f"A100 80GB list from {CYC}"),
    ("A100-80GB", "us-east4"): (D("4.424186"), f"A100 80GB list from {CYC}"),
    ("A100-80GB", "europe-west4"): (D("4.325208"), f"A100 80GB list from {CYC}"),
    ("H100", "us-central1"): (D("9.79655"), "H100 list as in the catalog's us-east4 row"),
    ("H100", "us-west1"): (D("9.79655"), "H100 list as in the catalog's us-east4 row"),
    ("H100", "asia-northeast1"): (None, "H100 list not found"),
    ("H100-MEGA", "asia-northeast1"): (None, "H100 Mega list not found"),
    ("H200", "europe-west4"): (None, "H200 list not found"),
}
GCP_NO_ON_DEMAND = {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}  # Spot/Flex-start only
GCP_CUD: dict[str, tuple[Ratios, str]] = {
    "a2-highgpu": ((D("0.63"), D("0.35")), f"CUD ratios from {CYC}"),
    "a2-megagpu": ((D("0.63"), D("0.35")), f"CUD ratios from {CYC} (a2-highgpu)"),
    "a3-highgpu-8g": ((D("0.6937"), D("0.4392")), f"CUD ratios from {CYC}"),
    "a3-megagpu": ((D("0.6880"), D("0.4356")), f"CUD ratios from {CYC}"),
    "g2-standard": ((D("0.63"), D("0.45")), CUD),
    "n1-standard": ((D("0.63"), D("0.45")), CUD),
}
# AWS 1-year standard RI, no upfront: (reserved, on-demand) $/h of one size per family and
# region from instances.vantage.sh (via tsaol/aws-gpu data/*.js, 2026-08-26); the ratio
# holds for every size of the family there. Families absent have no RI listed.
VANTAGE = "1y RI: instances.vantage.sh 2026-08 (tsaol/aws-gpu)"
_US = ("us-east-1", "us-east-2", "us-west-2")
_RI_SAMPLES = {
    "g4dn": {**dict.fromkeys(_US, ("2.465", "3.912")), "ap-northeast-1": ("3.604", "5.281"),
             "eu-central-1": ("3.337", "4.89"), "eu-west-1": ("2.977", "4.362")},
    "g5": {**dict.fromkeys(_US, ("3.57336", "5.672")), "ap-northeast-1": ("5.18244", "8.22609"),
           "eu-central-1": ("4.46848", "7.09282"), "eu-west-1": ("3.98895", "6.33167")},
    "g6": {**dict.fromkeys(_US, ("2.99564", "4.6016")), "ap-northeast-1": ("4.34457", "6.67369"),
           "eu-central-1": ("3.74604", "5.75429")},
    "g6e": {**dict.fromkeys(_US, ("6.61036", "10.49264")),
            "ap-northeast-1": ("9.58698", "15.21742"), "eu-central-1": ("8.26562", "13.12002")},
    "p4d": {"us-east-1": ("13.921094", "21.957642"), "us-east-2": ("13.921092", "21.95764"),
            "us-west-2": ("13.921092", "21.95764"), "eu-west-1": ("15.08188", "23.71569"),
            "eu-central-1": ("17.392445", "27.43298"), "ap-northeast-1": ("19.579678", "30.09784")},
    "p4de": {**dict.fromkeys(("us-east-1", "us-west-2"), ("17.401365", "27.44705")),
             "eu-central-1": ("21.740553", "34.29122"), "ap-northeast-1": ("24.474597", "37.6223")},
    "p3dn": {**dict.fromkeys(("us-east-1", "us-west-2"), ("19.215", "31.212")),
             "eu-west-1": ("20.817", "33.711"), "ap-northeast-1": ("27.025", "42.783")},
}  # fmt: skip
AWS_RI_1Y = {
    (family, region): D(reserved) / D(on_demand)
    for family, regions in _RI_SAMPLES.items()
    for region, (reserved, on_demand) in regions.items()
}
# No 3-year figure at hand: estimated at 0.43/0.63 of the 1-year rate (README).
AWS_3Y_OVER_1Y = D("0.43") / D("0.63")
AWS_3Y_NOTE = "3y RI: estimate (README)"
AWS_NO_RI_NOTE = "reserved: none listed (README)"
AZURE_RI: Ratios = (D("0.63"), D("0.43"))
AZURE_RI_NOTE = "reserved: estimate, -37%/-57% (README)"
CLOUDYPAD = "cloudypad docs/azure costs (Azure US pricing, Sep 2024)"
AZURE_EXTRA: dict[tuple[str, str], tuple[Decimal | None, Decimal | None, str]] = {
    ("Standard_NV6ads_A10_v5", "eastus"): (D("0.454"), None, CLOUDYPAD),
}

CAPPED: list[str] = []


@dataclass(frozen=True)
class Spec:
    gpu: str
    gpu_memory_gb: str
    interconnect: str
    network_gbps: str
    gpu_count: str = ""
    vcpus: str = ""
    memory_gb: str = ""

    def cells(self, count: str = "", vcpus: str = "", memory: str = "") -> Row:
        return {
            "gpu": self.gpu,
            "gpu_count": number(self.gpu_count or count),
            "gpu_memory_gb": number(self.gpu_memory_gb),
            "vcpus": number(self.vcpus or vcpus),
            "memory_gb": number(self.memory_gb or memory),
            "interconnect": self.interconnect,
            "network_gbps": number(self.network_gbps) if self.network_gbps else "",
        }


@dataclass(frozen=True)
class GcpConfig:
    name: str
    machine: str
    ref_gpu: str
    count: int
    spec: Spec


def table(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("|")] for line in text.strip().splitlines()]


AWS_SPECS = {r[0]: Spec(r[1], r[2], r[3], r[4]) for r in table(AWS_SPECS_TEXT)}
AZURE_SPECS = {
    f"Standard_{r[0]}": Spec(r[1], r[3], r[6], r[7], r[2], r[4], r[5])
    for r in table(AZURE_SPECS_TEXT)
}


def gcp_configs() -> list[GcpConfig]:
    configs = [
        GcpConfig(r[0], r[0], r[1], int(r[3]), Spec(r[2], r[4], r[7], r[8], r[3], r[5], r[6]))
        for r in table(GCP_SPECS_TEXT)
    ]
    for size in N1_SIZES:
        for ref_gpu, (gpu, limits) in N1_GPUS.items():
            for count, max_vcpus in limits.items():
                if size <= max_vcpus:
                    machine = f"n1-standard-{size}"
                    memory = str(D("3.75") * size)
                    network = str(min(2 * size, 32))
                    spec = Spec(gpu, "16", "PCIe", network, str(count), str(size), memory)
                    name = f"{machine}+{count}x{gpu}"
                    configs.append(GcpConfig(name, machine, ref_gpu, count, spec))
    return configs


def family_of(name: str) -> str:
    if name.startswith("Standard_"):
        return re.sub(r"^Standard_([A-Z]+)\d+", r"\1", name)
    if "+" in name:
        return name.split("+")[0].rsplit("-", 1)[0] + "+" + name.split("x", 1)[-1]
    if "." in name:
        return name.split(".")[0]
    return name.rsplit("-", 1)[0]


# --- Shared helpers -----------------------------------------------------------------


def money(value: Decimal | None, places: str = "0.000001") -> str:
    """A price cell: empty for None, plain decimal notation, no trailing zeros."""
    if value is None:
        return ""
    return f"{value.quantize(D(places)).normalize():f}"


def number(value: str) -> str:
    return f"{D(value).normalize():f}"


def dec(cell: str) -> Decimal | None:
    """A positive price, or None for empty cells and the 0.0 placeholders."""
    value = D(cell) if cell.strip() else D(0)
    return value if value > 0 else None


def drop_capped(where: str, spot: Decimal | None, on_demand: Decimal | None) -> Decimal | None:
    if spot is not None and on_demand is not None and spot >= on_demand * SPOT_CAP:
        CAPPED.append(f"{where}: spot {money(spot)} vs on-demand {money(on_demand)}")
        return None
    return spot


def read_rows(path: Path) -> list[Row]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def write_csv(path: Path, header: list[str], rows: Iterable[Row]) -> int:
    count = 0
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({key: row.get(key, "") for key in header})
            count += 1
    return count


def sort_key(row: Row) -> tuple[str, float, float, str, str]:
    name = row["instance_type"]
    return (family_of(name), float(row["gpu_count"]), float(row["vcpus"]), name, row["region"])


def scaled(value: Decimal | None, ratio: Decimal | None, places: str = "0.0001") -> str:
    return money(value * ratio, places) if value is not None and ratio is not None else ""


# --- AWS ----------------------------------------------------------------------------

LOCAL_ZONE = re.compile(r"^[a-z]+\d-[a-z]+\d-az\d+$")  # usw2-lax1-az1, use1-atl2-az1


def aws_rows(reference: Path) -> list[Row]:
    grouped: dict[tuple[str, str], list[Row]] = defaultdict(list)
    for ref in read_rows(reference / "aws.csv"):
        if ref["InstanceType"] in AWS_SPECS:
            grouped[(ref["InstanceType"], ref["Region"])].append(ref)
    return sorted((aws_offer(t, r, refs) for (t, r), refs in grouped.items()), key=sort_key)


def aws_offer(itype: str, region: str, refs: list[Row]) -> Row:
    on_demand = dec(refs[0]["Price"])
    zones = [
        (price, ref["AvailabilityZone"])
        for ref in refs
        if not LOCAL_ZONE.match(ref["AvailabilityZone"]) and (price := dec(ref["SpotPrice"]))
    ]
    spot, zone = min(zones) if zones else (None, "")
    spot = drop_capped(f"aws {itype} {region} ({zone})", spot, on_demand)
    one_year = AWS_RI_1Y.get((family_of(itype), region))
    ratios = (one_year, one_year * AWS_3Y_OVER_1Y) if one_year else (None, None)
    ri_note = f"{VANTAGE}; {AWS_3Y_NOTE}" if one_year else AWS_NO_RI_NOTE
    source = f"{REF.format('v8 aws/vms.csv')}; {ri_note}"
    if on_demand is None:
        source += "; on-demand not in source (gap, README)"
    first = refs[0]
    return {
        "instance_type": itype,
        "region": region,
        **AWS_SPECS[itype].cells(first["AcceleratorCount"], first["vCPUs"], first["MemoryGiB"]),
        "on_demand_hourly": money(on_demand),
        "spot_hourly": money(spot),
        "spot_zone": zone if spot is not None else "",
        "reserved_1y_hourly": scaled(on_demand, ratios[0], "0.000001"),
        "reserved_3y_hourly": scaled(on_demand, ratios[1]),
        "as_of": AS_OF,
        "source": source,
    }


# --- GCP ----------------------------------------------------------------------------

Price = tuple[Decimal | None, Decimal | None]  # (on-demand, spot)
Hosts = dict[tuple[str, str, str], Price]  # (machine, region, zone)
Gpus = dict[tuple[str, int, str, str], Price]  # (GPU, count, region, zone)


def gcp_tables(reference: Path) -> tuple[Hosts, Gpus]:
    hosts: Hosts = {}
    gpus: Gpus = {}
    for ref in read_rows(reference / "gcp.csv"):
        price = (dec(ref["Price"]), dec(ref["SpotPrice"]))
        zone = ref["AvailabilityZone"]
        if ref["InstanceType"]:
            hosts[(ref["InstanceType"], ref["Region"], zone)] = price
        else:
            count = int(float(ref["AcceleratorCount"]))
            gpus[(ref["AcceleratorName"], count, ref["Region"], zone)] = price
    return hosts, gpus


def gcp_rows(reference: Path) -> list[Row]:
    hosts, gpus = gcp_tables(reference)
    rows = []
    for config in gcp_configs():
        for region in sorted({r for (m, r, _z) in hosts if m == config.machine}):
            zones = sorted(
                z
                for (m, r, z) in hosts
                if (m, r) == (config.machine, region)
                and (config.ref_gpu, config.count, r, z) in gpus
            )
            row = gcp_offer(config, region, zones, hosts, gpus) if zones else None
            if row is not None:
                rows.append(row)
    return sorted(rows, key=sort_key)


def gcp_on_demand(
    config: GcpConfig, region: str, zone: str, hosts: Hosts, gpus: Gpus
) -> tuple[Decimal | None, Decimal | None, str]:
    """(host, GPU) on-demand parts and a note on any correction; None when not sold."""
    host = hosts[(config.machine, region, zone)][0]
    gpu = gpus[(config.ref_gpu, config.count, region, zone)][0]
    note = ""
    if (config.ref_gpu, region) in GCP_GPU_FIX:
        per_gpu, note = GCP_GPU_FIX[(config.ref_gpu, region)]
        gpu = per_gpu * config.count if per_gpu is not None else None
    if config.machine in GCP_NO_ON_DEMAND:
        host, gpu, note = None, None, "no on-demand (Spot/Flex-start only)"
    if host is None or gpu is None:
        return None, None, note or "on-demand not in source"
    return host, gpu, note


def gcp_spot(
    config: GcpConfig, region: str, zones: list[str], hosts: Hosts, gpus: Gpus
) -> tuple[Decimal | None, Decimal | None, str]:
    """The (host, GPU) spot pair of the cheapest zone that prices both, and its zone."""
    best: tuple[Decimal, Decimal, str] | None = None
    for zone in zones:
        host = hosts[(config.machine, region, zone)][1]
        gpu = gpus[(config.ref_gpu, config.count, region, zone)][1]
        if host is not None and gpu is not None and (best is None or host + gpu < sum(best[:2])):
            best = (host, gpu, zone)
    return best if best else (None, None, "")


def gcp_offer(
    config: GcpConfig, region: str, zones: list[str], hosts: Hosts, gpus: Gpus
) -> Row | None:
    host_od, gpu_od, note = gcp_on_demand(config, region, zones[0], hosts, gpus)
    host_spot, gpu_spot, zone = gcp_spot(config, region, zones, hosts, gpus)
    if host_spot is not None and gpu_spot is not None and host_od is not None and gpu_od:
        where = f"gcp {config.name} {region} ({zone})"
        if drop_capped(where, host_spot + gpu_spot, host_od + gpu_od) is None:
            host_spot = gpu_spot = None
    if host_od is None and host_spot is None:
        return None
    family = next((f for f in GCP_CUD if config.machine.startswith(f)), None)
    ratios, cud_note = GCP_CUD[family] if family and host_od is not None else ((None, None), "")
    notes = [REF.format("v8 gcp/vms.csv") + ", host + GPU SKUs", note, cud_note]
    return {
        "instance_type": config.name,
        "region": region,
        **config.spec.cells(),
        "host_on_demand_hourly": money(host_od),
        "gpu_on_demand_hourly": money(gpu_od),
        "host_spot_hourly": money(host_spot),
        "gpu_spot_hourly": money(gpu_spot),
        "host_reserved_1y_hourly": scaled(host_od, ratios[0]),
        "gpu_reserved_1y_hourly": scaled(gpu_od, ratios[0]),
        "host_reserved_3y_hourly": scaled(host_od, ratios[1]),
        "gpu_reserved_3y_hourly": scaled(gpu_od, ratios[1]),
        "spot_zone": zone if host_spot is not None else "",
        "as_of": AS_OF,
        "source": "; ".join(n for n in notes if n),
    }


# --- Azure --------------------------------------------------------------------------


def azure_rows(reference: Path) -> list[Row]:
    found: dict[tuple[str, str], tuple[Decimal | None, Decimal | None, str]] = {}
    for ref in read_rows(reference / "azure.csv"):
        key = (ref["InstanceType"], ref["Region"])
        if key[0] in AZURE_SPECS and key not in found:
            found[key] = (dec(ref["Price"]), dec(ref["SpotPrice"]), REF.format("v6 azure/vms.csv"))
    for key, extra in AZURE_EXTRA.items():
        found.setdefault(key, extra)
    rows = [azure_offer(t, r, *price) for (t, r), price in found.items()]
    return sorted(rows, key=sort_key)


def azure_offer(
    itype: str, region: str, on_demand: Decimal | None, spot: Decimal | None, source: str
) -> Row:
    spot = drop_capped(f"azure {itype} {region}", spot, on_demand)
    return {
        "instance_type": itype,
        "region": region,
        **AZURE_SPECS[itype].cells(),
        "on_demand_hourly": money(on_demand),
        "spot_hourly": money(spot),
        "reserved_1y_hourly": scaled(on_demand, AZURE_RI[0]),
        "reserved_3y_hourly": scaled(on_demand, AZURE_RI[1]),
        "as_of": AS_OF,
        "source": f"{source}; {AZURE_RI_NOTE}",
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Rebuild pricing/*.csv from reference rows.")
    parser.add_argument("reference", nargs="?", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--out", type=Path, default=REPO / "pricing")
    args = parser.parse_args(argv)
    ref: Path = args.reference
    if not all((ref / name).is_file() for name in ("aws.csv", "gcp.csv", "azure.csv")):
        parser.error(f"{ref}: expected aws.csv, gcp.csv and azure.csv reference rows")
    out: Path = args.out
    written = {
        "aws.csv": write_csv(out / "aws.csv", AWS_AZURE_HEADER, aws_rows(ref)),
        "gcp.csv": write_csv(out / "gcp.csv", GCP_HEADER, gcp_rows(ref)),
        "azure.csv": write_csv(out / "azure.csv", AWS_AZURE_HEADER, azure_rows(ref)),
    }
    for name, count in written.items():
        print(f"{out / name}: {count} offers")
    for line in CAPPED:
        print(f"spot left empty, capped at on-demand: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
