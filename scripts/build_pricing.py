#!/usr/bin/env python3
"""Rebuilds pricing/aws.csv, gcp.csv and azure.csv from recorded reference price rows.

Usage: ``python scripts/build_pricing.py [REFERENCE_DIR] [--out PRICING_DIR]``

REFERENCE_DIR holds the GPU rows of a public multi-cloud price catalog (default:
``../shared/data/reference-prices`` beside the repository; its SOURCE.md says where
they come from). The script keeps the instance families gpuplan covers, takes the
lowest spot zone per region (AWS Local Zones excluded), drops spot figures capped at
on-demand, applies the instance facts and sourced price supplements kept beside the
catalog (pricing/instance_specs.csv, pricing/supplements.csv), derives reserved rates from
commitment discounts and writes the three files sorted by (family, size, region). Same
input, same bytes. pricing/README.md explains each rule.

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
from functools import cache
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
# AWS rows may carry a Capacity Block rate; GCP rows sold only as a whole-machine
# commitment or DWS reservation (added_offers.csv) carry totals beside the parts.
# A price read on another day than the row's on-demand carries its own date column
# (<model>_as_of): a Capacity Block rate from the 2024 page, a GCP spot price beside an
# on-demand GPU list price from Cyclenerd 2025-03. The row's as_of is never the rebuild day.
AWS_HEADER = [
    *AWS_AZURE_HEADER[:-2],
    "capacity_block_hourly",
    "capacity_block_as_of",
    "as_of",
    "source",
]
GCP_HEADER = (
    _COMMON + "host_on_demand_hourly,gpu_on_demand_hourly,host_spot_hourly,gpu_spot_hourly,"
    "host_reserved_1y_hourly,gpu_reserved_1y_hourly,host_reserved_3y_hourly,"
    "gpu_reserved_3y_hourly,reserved_1y_hourly,reserved_3y_hourly,dws_calendar_hourly,"
    "spot_zone,spot_as_of,as_of,source"
).split(",")

# --- Data files beside the catalog (each figure with its source; README explains) -----
# instance_specs.csv: instance facts from the providers' size tables. AWS rows leave GPU
# count, vCPUs and RAM empty: they come from the reference rows. GCP rows name the GPU as
# the reference spells it (reference_gpu); N1 configurations are generated (gcp_configs).
# supplements.csv: price facts the reference lacks or gets wrong, one kind per table:
#   azure_offer  - an Azure (size, region) price the reference does not have;
#   gcp_gpu_list - GCP list price per GPU where the reference holds a discounted SKU
#                  (empty = no list price found: on-demand left empty);
#   aws_ri_1y    - one AWS 1-year RI rate per family and region (instances.vantage.sh);
#                  its ratio to on-demand holds for every size of the family there;
#   aws_capacity_block - an AWS Capacity Block rate for a (type, region) the reference has.
# An azure_offer's as_of (the day its price was read) becomes its row's as_of.
# added_offers.csv: whole rows for families the reference lacks (shape, prices, as_of,
# source), appended as they are where the reference has no row for them.
SPECS_FILE = REPO / "pricing" / "instance_specs.csv"
SUPPLEMENTS_FILE = REPO / "pricing" / "supplements.csv"
ADDED_FILE = REPO / "pricing" / "added_offers.csv"
# GCP GPU limits per N1 size: GPU in the reference -> canonical name, {count: max vCPUs}.
N1_GPUS = {
    "T4": ("T4", {1: 48, 2: 48, 4: 96}),
    "V100": ("V100-16GB", {1: 12, 2: 24, 4: 48, 8: 96}),
    "P100": ("P100", {1: 16, 2: 32, 4: 96}),
}
N1_SIZES = (4, 8, 16, 32, 64, 96)
GCP_NO_ON_DEMAND = {"a3-highgpu-1g", "a3-highgpu-2g", "a3-highgpu-4g"}  # Spot/Flex-start only
CUD = "GCP resource-based CUD 37%/55% (GCP CUD docs)"
CYC = "Cyclenerd GCP pricing.yml 2025-03"
CYC_AS_OF = "2025-03-06"
"""The day Cyclenerd's pricing.yml was generated: a GCP row whose on-demand GPU part is
its list price was read that day (its spot price on the reference's day)."""
GCP_CUD: dict[str, tuple[Ratios, str]] = {
    "a2-highgpu": ((D("0.63"), D("0.35")), f"CUD ratios from {CYC}"),
    "a2-megagpu": ((D("0.63"), D("0.35")), f"CUD ratios from {CYC} (a2-highgpu)"),
    "a3-highgpu-8g": ((D("0.6937"), D("0.4392")), f"CUD ratios from {CYC}"),
    "a3-megagpu": ((D("0.6880"), D("0.4356")), f"CUD ratios from {CYC}"),
    "g2-standard": ((D("0.63"), D("0.45")), CUD),
    "n1-standard": ((D("0.63"), D("0.45")), CUD),
}
VANTAGE = "1y RI: instances.vantage.sh 2026-08 (tsaol/aws-gpu)"
# No 3-year figure at hand: estimated at 0.43/0.63 of the 1-year rate (README).
AWS_3Y_OVER_1Y = D("0.43") / D("0.63")
AWS_3Y_NOTE = "3y RI: estimate (README)"
AWS_NO_RI_NOTE = "reserved: none listed (README)"
AZURE_RI: Ratios = (D("0.63"), D("0.43"))
AZURE_RI_NOTE = "reserved: estimate, -37%/-57% (README)"
Money = Decimal | None
AzurePrice = tuple[Money, Money, Money, Money, str, str]  # od, spot, 1y, 3y, source, as_of


@dataclass(frozen=True)
class Supplements:
    azure: dict[tuple[str, str], AzurePrice]
    gcp_gpu: dict[tuple[str, str], tuple[Decimal | None, str]]
    aws_ri_1y: dict[tuple[str, str], Decimal]
    aws_cb: dict[tuple[str, str], tuple[Decimal, str, str]]  # rate, "source (as_of)", as_of


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


@cache
def specs(provider: str) -> dict[str, tuple[str, Spec]]:
    """Instance facts of one provider: type -> (GPU name in the reference, spec)."""
    found: dict[str, tuple[str, Spec]] = {}
    for r in read_rows(SPECS_FILE):
        if r["provider"] == provider:
            spec = Spec(
                r["gpu"], r["gpu_memory_gb"], r["interconnect"], r["network_gbps"],
                r["gpu_count"], r["vcpus"], r["memory_gb"],
            )  # fmt: skip
            found[r["instance_type"]] = (r["reference_gpu"], spec)
    return found


@cache
def supplements() -> Supplements:
    """The price facts of supplements.csv, by kind (see the comment at the top)."""
    sup = Supplements({}, {}, {}, {})
    for r in read_rows(SUPPLEMENTS_FILE):
        key, on_demand = (r["name"], r["region"]), dec(r["on_demand_hourly"])
        if r["kind"] == "azure_offer":
            spot, one_year, three_years = (
                dec(r[f"{c}_hourly"]) for c in ("spot", "reserved_1y", "reserved_3y")
            )
            sup.azure[key] = (on_demand, spot, one_year, three_years, r["source"], r["as_of"])
        elif r["kind"] == "gcp_gpu_list":
            sup.gcp_gpu[key] = (on_demand, r["source"])
        elif r["kind"] == "aws_ri_1y" and on_demand is not None:
            sup.aws_ri_1y[key] = D(r["reserved_1y_hourly"]) / on_demand
        elif r["kind"] == "aws_capacity_block" and r["capacity_block_hourly"]:
            note = f"capacity block: {r['source']} (as_of {r['as_of']})"
            sup.aws_cb[key] = (D(r["capacity_block_hourly"]), note, r["as_of"])
        else:
            raise ValueError(f"{SUPPLEMENTS_FILE}: unknown or incomplete row {r}")
    return sup


def gcp_configs() -> list[GcpConfig]:
    configs = [
        GcpConfig(name, name, ref_gpu, int(spec.gpu_count), spec)
        for name, (ref_gpu, spec) in specs("gcp").items()
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
    rows = list(rows)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=header, lineterminator="\n", restval="")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


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
        if ref["InstanceType"] in specs("aws"):
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
    one_year = supplements().aws_ri_1y.get((family_of(itype), region))
    ratios = (one_year, one_year * AWS_3Y_OVER_1Y) if one_year else (None, None)
    ri_note = f"{VANTAGE}; {AWS_3Y_NOTE}" if one_year else AWS_NO_RI_NOTE
    source = f"{REF.format('v8 aws/vms.csv')}; {ri_note}"
    if on_demand is None:
        source += "; on-demand not in source (gap, README)"
    block, block_note, block_day = supplements().aws_cb.get((itype, region), (None, "", ""))
    if block_note:
        source += f"; {block_note}"
    first = refs[0]
    return {
        "instance_type": itype,
        "region": region,
        **specs("aws")[itype][1].cells(
            first["AcceleratorCount"], first["vCPUs"], first["MemoryGiB"]
        ),
        "on_demand_hourly": money(on_demand),
        "spot_hourly": money(spot),
        "spot_zone": zone if spot is not None else "",
        "reserved_1y_hourly": scaled(on_demand, ratios[0], "0.000001"),
        "reserved_3y_hourly": scaled(on_demand, ratios[1]),
        "capacity_block_hourly": money(block),
        "capacity_block_as_of": block_day,
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
    if (config.ref_gpu, region) in supplements().gcp_gpu:
        per_gpu, note = supplements().gcp_gpu[(config.ref_gpu, region)]
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
        **_gcp_dates(note, host_od is not None, host_spot is not None),
        "source": "; ".join(n for n in notes if n),
    }


def _gcp_dates(note: str, on_demand: bool, spot: bool) -> Row:
    """The row's as_of (its on-demand's day), and its spot's day where that differs: an
    on-demand built on Cyclenerd's GPU list price was read on Cyclenerd's day."""
    if on_demand and CYC in note:
        return {"as_of": CYC_AS_OF, "spot_as_of": AS_OF if spot else ""}
    return {"as_of": AS_OF, "spot_as_of": ""}


# --- Azure --------------------------------------------------------------------------


def azure_rows(reference: Path) -> list[Row]:
    found: dict[tuple[str, str], AzurePrice] = {}
    for ref in read_rows(reference / "azure.csv"):
        key = (ref["InstanceType"], ref["Region"])
        if key[0] in specs("azure") and key not in found:
            on_demand, spot = dec(ref["Price"]), dec(ref["SpotPrice"])
            found[key] = (on_demand, spot, None, None, REF.format("v6 azure/vms.csv"), AS_OF)
    for key, extra in supplements().azure.items():
        found.setdefault(key, extra)
    rows = [azure_offer(t, r, price) for (t, r), price in found.items()]
    return sorted(rows, key=sort_key)


def azure_offer(itype: str, region: str, price: AzurePrice) -> Row:
    on_demand, spot, one_year, three_years, source, as_of = price
    spot = drop_capped(f"azure {itype} {region}", spot, on_demand)
    if one_year is not None and three_years is not None:
        reserved = (money(one_year, "0.0001"), money(three_years, "0.0001"))
        note = "reserved: the listed 1y/3y rates (README)"
    else:
        reserved = (scaled(on_demand, AZURE_RI[0]), scaled(on_demand, AZURE_RI[1]))
        note = AZURE_RI_NOTE
    return {
        "instance_type": itype,
        "region": region,
        **specs("azure")[itype][1].cells(),
        "on_demand_hourly": money(on_demand),
        "spot_hourly": money(spot),
        "reserved_1y_hourly": reserved[0],
        "reserved_3y_hourly": reserved[1],
        "as_of": as_of,
        "source": f"{source}; {note}",
    }


def with_added(provider: str, rows: list[Row]) -> list[Row]:
    """The reference rows plus added_offers.csv rows for keys the reference lacks."""
    have = {(r["instance_type"], r["region"]) for r in rows}
    extra = [
        {k: v for k, v in r.items() if k != "provider" and v}  # a stray price column raises
        for r in read_rows(ADDED_FILE)
        if r["provider"] == provider and (r["instance_type"], r["region"]) not in have
    ]
    return sorted(rows + extra, key=sort_key)


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
        "aws.csv": write_csv(out / "aws.csv", AWS_HEADER, with_added("aws", aws_rows(ref))),
        "gcp.csv": write_csv(out / "gcp.csv", GCP_HEADER, with_added("gcp", gcp_rows(ref))),
        "azure.csv": write_csv(
            out / "azure.csv", AWS_AZURE_HEADER, with_added("azure", azure_rows(ref))
        ),
    }
    for name, count in written.items():
        print(f"{out / name}: {count} offers")
    for line in CAPPED:
        print(f"spot left empty, capped at on-demand: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
