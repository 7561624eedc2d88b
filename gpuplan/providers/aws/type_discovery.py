"""AWS GPU instance types per region: ``DescribeInstanceTypeOfferings`` + ``DescribeInstanceTypes``.

For each region, the offerings (``LocationType=region``) say which types the region
sells; ``DescribeInstanceTypes`` (paginated) says which of them carry GPUs (``GpuInfo``):
the GPU's name and count, memory per GPU, default vCPUs, memory, network performance.
A type whose GPU count is 0 (a fractional GPU such as g6f) is left out with a note.

Needs ``ec2:DescribeInstanceTypes`` and ``ec2:DescribeInstanceTypeOfferings``. Clients are
arguments; by default boto3 builds them (``AWS_ENDPOINT_URL`` or
``AWS_ENDPOINT_URL_EC2`` and the usual credential chain), imported only then.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from gpuplan.core.catalog.discovery import Discovery, FoundType
from gpuplan.core.wording import plural
from gpuplan.providers.aws.facts import AWS
from gpuplan.providers.pricing import Progress, no_progress, paging
from gpuplan.providers.pricing.paging import PageCapError, capped

OFFERINGS = paging.read("instance type offerings", paging.Cap(100, 120.0))
TYPES = paging.read("instance types", paging.Cap(100, 120.0))
"""Paginated: ~10 pages of 100."""

MIB_PER_GB = 1024
_GBIT = re.compile(r"(\d+(?:\.\d+)?)\s*Gigabit")


def discover_aws_types(
    regions: Iterable[str],
    *,
    ec2_client_for: Callable[[str], Any] | None = None,
    progress: Progress = no_progress,
) -> Discovery:
    """GPU instance types offered in each region; a failed region lands in ``failures``."""
    from botocore.exceptions import BotoCoreError, ClientError

    if ec2_client_for is None:
        import boto3

        ec2_client_for = lambda region: boto3.client("ec2", region_name=region)  # noqa: E731
    result = Discovery(AWS)
    for region in sorted(set(regions)):
        try:
            client = ec2_client_for(region)
            offered = _offered(client, region)
            found = [
                f for f in _gpu_types(client, region, result.notes) if f.instance_type in offered
            ]
        except (BotoCoreError, ClientError, PageCapError, KeyError, TypeError, ValueError) as exc:
            result.failures[region] = f"{type(exc).__name__}: {exc}"
            progress(f"aws {region}: instance types: failed: {exc}")
            continue
        progress(f"aws {region}: {plural(len(found), 'GPU instance type')} offered")
        result.found.extend(found)
        result.regions.add(region)
    return result


def _offered(client: Any, region: str) -> set[str]:
    paginator = client.get_paginator("describe_instance_type_offerings")
    pages = paginator.paginate(
        LocationType="region", Filters=[{"Name": "location", "Values": [region]}]
    )
    read = capped(pages, OFFERINGS, f"aws {region}")
    return {o["InstanceType"] for page in read for o in page.get("InstanceTypeOfferings", [])}


def _gpu_types(client: Any, region: str, notes: list[str]) -> list[FoundType]:
    found: list[FoundType] = []
    paginator = client.get_paginator("describe_instance_types")
    pages = paginator.paginate(PaginationConfig={"PageSize": 100})
    for page in capped(pages, TYPES, f"aws {region}"):
        for info in page.get("InstanceTypes", []):
            item = found_type(info, region)
            if item is not None:
                found.append(item)
            elif info.get("GpuInfo", {}).get("Gpus"):
                notes.append(f"{info['InstanceType']}: fractional GPU (count 0), left out")
    return found


def found_type(info: dict[str, Any], region: str) -> FoundType | None:
    """A DescribeInstanceTypes entry as a found type, None without a whole GPU."""
    gpus = info.get("GpuInfo", {}).get("Gpus") or []
    if len(gpus) != 1 or not gpus[0].get("Count"):
        return None
    gpu = gpus[0]
    per_gpu = gpu.get("MemoryInfo", {}).get("SizeInMiB")
    network = _GBIT.search(str(info.get("NetworkInfo", {}).get("NetworkPerformance", "")))
    return FoundType(
        instance_type=info["InstanceType"],
        region=region,
        gpu_name=str(gpu["Name"]),
        gpu_count=float(gpu["Count"]),
        vcpus=int(info["VCpuInfo"]["DefaultVCpus"]),
        memory_gb=round(info["MemoryInfo"]["SizeInMiB"] / MIB_PER_GB, 1),
        gpu_memory_gb=round(per_gpu / MIB_PER_GB) if per_gpu else None,
        network_gbps=float(network.group(1)) if network else None,
    )
