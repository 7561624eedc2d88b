"""GCP GPU machine types per region from the Compute Engine API (google-cloud-compute).

``machineTypes.aggregatedList`` lists every zone's machine types; accelerator-optimized
types (a2, a3, a4, a4x, g2 ...) carry their GPUs in ``accelerators``
(``guestAcceleratorType`` such as ``nvidia-b200``, and a count). ``acceleratorTypes``
gives each GPU's description (``NVIDIA H100 80GB``), from which the memory per GPU is
read when it is stated. Zones are folded into their region; only the regions asked for
are kept. N1 machine types (GPUs attached separately) carry no accelerators and are not
listed here: the catalog keeps its N1 configurations.

Needs ``compute.machineTypes.list`` and ``compute.acceleratorTypes.list`` on the project.
An ``http://`` endpoint (a mirror, the tests' wire fake) goes over REST without
credentials; otherwise Application Default Credentials are used.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from gpuplan.core.catalog.discovery import Discovery, FoundType
from gpuplan.core.wording import plural
from gpuplan.providers.gcp.facts import GCP
from gpuplan.providers.pricing import Progress, no_progress, paging
from gpuplan.providers.pricing.paging import capped

MACHINE_TYPES = paging.read("machine types", paging.Cap(200, 300.0))
ACCELERATORS = paging.read("accelerator types", paging.Cap(200, 300.0))

_MEMORY = re.compile(r"(\d+)\s*GB", re.IGNORECASE)


def make_clients(endpoint: str | None) -> tuple[Any, Any]:
    """Machine-type and accelerator-type clients (anonymous REST for ``http://``)."""
    from google.api_core.client_options import ClientOptions
    from google.cloud import compute_v1

    kwargs: dict[str, Any] = {}
    if endpoint:
        kwargs["client_options"] = ClientOptions(api_endpoint=endpoint)
    if endpoint and endpoint.startswith("http://"):
        from google.auth.credentials import AnonymousCredentials

        kwargs["credentials"] = AnonymousCredentials()  # type: ignore[no-untyped-call]  # untyped in google-auth
    return compute_v1.MachineTypesClient(**kwargs), compute_v1.AcceleratorTypesClient(**kwargs)


def discover_gcp_types(
    project: str,
    regions: Iterable[str],
    *,
    endpoint: str | None = None,
    clients: tuple[Any, Any] | None = None,
    progress: Progress = no_progress,
) -> Discovery:
    """GPU machine types in each region; a failure of the global listing raises."""
    machines, accelerators = clients or make_clients(endpoint)
    wanted = set(regions)
    memory = _accelerator_memory(accelerators, project)
    result = Discovery(GCP)
    seen: set[tuple[str, str]] = set()
    pages = machines.aggregated_list(request={"project": project}).pages
    listed = (z for page in capped(pages, MACHINE_TYPES, "gcp") for z in page.items.items())
    for zone, scoped in listed:
        region = zone.removeprefix("zones/").rsplit("-", 1)[0]
        if region not in wanted:
            continue
        for machine in scoped.machine_types:
            item = found_type(machine, region, memory)
            if item is not None and (item.instance_type, region) not in seen:
                seen.add((item.instance_type, region))
                result.found.append(item)
    result.regions = wanted
    progress(
        f"gcp: {plural(len(result.found), 'GPU machine type')} in {plural(len(wanted), 'region')}"
    )
    return result


def _accelerator_memory(client: Any, project: str) -> dict[str, float]:
    """Accelerator type name -> GB per GPU, where its description states it."""
    out: dict[str, float] = {}
    pages = client.aggregated_list(request={"project": project}).pages
    for _, scoped in (z for page in capped(pages, ACCELERATORS, "gcp") for z in page.items.items()):
        for accel in scoped.accelerator_types:
            found = _MEMORY.search(accel.description or "")
            if found:
                out.setdefault(accel.name, float(found.group(1)))
    return out


def found_type(machine: Any, region: str, memory: dict[str, float]) -> FoundType | None:
    """A machine type with attached accelerators as a found type, None without GPUs."""
    accelerators = list(machine.accelerators)
    if len(accelerators) != 1 or accelerators[0].guest_accelerator_count <= 0:
        return None
    accel = accelerators[0]
    name = accel.guest_accelerator_type
    return FoundType(
        instance_type=machine.name,
        region=region,
        gpu_name=name,
        gpu_count=float(accel.guest_accelerator_count),
        vcpus=int(machine.guest_cpus),
        memory_gb=round(machine.memory_mb / 1024, 1),
        gpu_memory_gb=memory.get(name),
    )
