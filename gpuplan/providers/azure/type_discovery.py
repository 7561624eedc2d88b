"""Azure GPU VM sizes per region from the Resource SKUs API (azure-mgmt-compute).

``resource_skus.list(filter="location eq '<region>'")`` lists the sizes a region offers
with their capabilities: ``GPUs``, ``vCPUs``, ``MemoryGB``. Sizes with ``GPUs`` > 0 are
GPU sizes. Resource SKUs do not name the GPU model, so it is read from the size name
where Azure puts it (``Standard_ND96isr_H100_v5`` -> ``H100``,
``Standard_ND128isr_NDR_GB200_v6`` -> ``GB200``): each name segment is tried against the
spec table by the caller; a size whose name carries no model (``Standard_NC6s_v3``) is
reported as unknown under its segments, never guessed. A size that is restricted for
the subscription in that location (``restrictions`` of type ``Location``) is left out.

Needs ``Microsoft.Compute/skus/read`` on the subscription. The credential is azure-identity's
``DefaultAzureCredential`` unless one is passed; the endpoint is Resource Manager's, or
``GPUPLAN_AZURE_ARM_ENDPOINT`` (a sovereign cloud, a test fake; https only, as azure-core's
bearer-token policy requires).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gpuplan.core.catalog.discovery import Discovery, FoundType
from gpuplan.core.wording import plural
from gpuplan.providers.azure.facts import AZURE
from gpuplan.providers.pricing import Progress, no_progress, paging
from gpuplan.providers.pricing.paging import PageCapError, capped

SKUS = paging.read("resource SKUs", paging.Cap(200, 300.0))

PUBLIC_ARM = "https://management.azure.com"
_VERSION = re.compile(r"v\d+")


def make_client(subscription: str, endpoint: str | None, credential: Any = None) -> Any:
    from azure.mgmt.compute import ComputeManagementClient

    if credential is None:
        from azure.identity import DefaultAzureCredential

        credential = DefaultAzureCredential()
    arm = (endpoint or PUBLIC_ARM).rstrip("/")
    return ComputeManagementClient(
        credential, subscription, base_url=arm, credential_scopes=[f"{arm}/.default"]
    )


def discover_azure_types(
    subscription: str,
    regions: Iterable[str],
    *,
    endpoint: str | None = None,
    client: Any = None,
    credential: Any = None,
    progress: Progress = no_progress,
) -> Discovery:
    """GPU sizes offered in each region; a failed region lands in ``failures``."""
    from azure.core.exceptions import AzureError

    client = client or make_client(subscription, endpoint, credential)
    result = Discovery(AZURE)
    for region in sorted(set(regions)):
        try:
            paged = client.resource_skus.list(filter=f"location eq '{region}'").by_page()
            read = capped(paged, SKUS, f"azure {region}")
            skus = [sku for page in read for sku in page]
        except (AzureError, PageCapError) as exc:
            result.failures[region] = f"{type(exc).__name__}: {exc}"
            progress(f"azure {region}: resource SKUs: failed")
            continue
        found = [f for f in (found_type(s, region) for s in skus) if f is not None]
        progress(f"azure {region}: {plural(len(found), 'GPU size')} offered")
        result.found.extend(found)
        result.regions.add(region)
    return result


def gpu_from_size(size: str) -> tuple[str, ...]:
    """The segments of a size name after the size itself and before its version:
    ``Standard_ND96isr_H100_v5`` -> ("H100",), ``Standard_ND128isr_NDR_GB200_v6`` ->
    ("NDR", "GB200"), ``Standard_NC6s_v3`` -> ()."""
    segments = size.split("_")[2:]
    return tuple(s for s in segments if not _VERSION.fullmatch(s))


def found_type(sku: Any, region: str) -> FoundType | None:
    """A virtual-machine resource SKU with GPUs, None for anything else or restricted."""
    if getattr(sku, "resource_type", "") != "virtualMachines":
        return None
    if any(getattr(r, "type", "") == "Location" for r in getattr(sku, "restrictions", None) or []):
        return None
    caps = {c.name: c.value for c in getattr(sku, "capabilities", None) or []}
    try:
        gpus = float(caps.get("GPUs", 0))
        vcpus = int(caps["vCPUs"])
        memory = float(caps["MemoryGB"])
    except (KeyError, ValueError):
        return None
    if gpus <= 0:
        return None
    models = gpu_from_size(sku.name)
    return FoundType(
        instance_type=sku.name,
        region=region,
        gpu_name=" ".join(models) or f"(not named in {sku.name})",
        candidates=models,
        gpu_count=gpus,
        vcpus=vcpus,
        memory_gb=memory,
    )
