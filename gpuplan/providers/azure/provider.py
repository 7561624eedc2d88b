"""The Azure lifecycle adapter: one subscription, Compute + Azure Monitor metrics.

Credentials come from azure-identity's ``DefaultAzureCredential`` unless one is passed
in. ``arm_endpoint`` and ``metrics_endpoint`` come from the policy (sovereign clouds);
token scopes follow the endpoints. Listing is one paged
``virtualMachines.listAll(statusOnly=true)`` per subscription (power state inline), or
one ``virtualMachines.list($expand=instanceView)`` per resource group when the policy
names groups; plus the scale sets (to report Uniform GPU scale sets, whose VMs never
appear in the VM listing), and resource SKUs once per location with GPU sizes (GPU
counts the catalog lacks, temporary disk sizes).

The policy's ``stop`` is carried out as **deallocate**: a powered-off VM keeps billing.
Tags are set through the Tags API at the VM's scope (``Microsoft.Resources/tags/write``)
rather than a VM update, which would need write access to the VM itself. Retries are
azure-core's (429 and 5xx, honouring ``Retry-After``) with every count explicit and a
jittered back-off (:mod:`gpuplan.providers.azure.retry`); failures leave as
:class:`ProviderError`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.actions import Call, provider_call
from gpuplan.core.lifecycle.instances import (
    Action,
    Capability,
    GpuInstance,
    HostSamples,
    InstanceState,
)
from gpuplan.providers.azure import metrics, vms
from gpuplan.providers.azure.actions import CAPABILITIES
from gpuplan.providers.azure.facts import AZURE
from gpuplan.providers.azure.metrics import MetricNames as AzureMetricNames
from gpuplan.providers.base import MetricsSource, ProviderError, unsupported
from gpuplan.providers.catalog_view import CatalogView

if TYPE_CHECKING:
    from azure.core.credentials import TokenCredential
    from azure.mgmt.compute import ComputeManagementClient
    from azure.monitor.querymetrics import MetricsClient

T = TypeVar("T")
PUBLIC_ARM = "https://management.azure.com"
TAGS_API_VERSION = "2021-04-01"


def default_credential(environ: Mapping[str, str] | None = None) -> TokenCredential:
    """The standard chain (environment, workload identity, managed identity, CLI...).

    An ``AZURE_AUTHORITY_HOST`` that is none of Microsoft's clouds (Azure Stack Hub, a
    private authority) cannot be checked through Microsoft's instance discovery, so
    discovery is turned off for it, as azure-identity documents for such authorities.
    The chain's own warning lists every link that failed over a dozen lines; the adapter
    reports the failure in one line per subscription instead.
    """
    import logging
    import os
    from urllib.parse import urlsplit

    from azure.identity import AzureAuthorityHosts, DefaultAzureCredential

    env = os.environ if environ is None else environ
    authority = env.get("AZURE_AUTHORITY_HOST", "")
    host = urlsplit(authority if "//" in authority else f"//{authority}").hostname or ""
    known = {
        AzureAuthorityHosts.AZURE_PUBLIC_CLOUD,
        AzureAuthorityHosts.AZURE_GOVERNMENT,
        AzureAuthorityHosts.AZURE_CHINA,
    }
    logging.getLogger("azure.identity").setLevel(logging.ERROR)
    if host and host not in known:
        return DefaultAzureCredential(disable_instance_discovery=True)
    return DefaultAzureCredential()


_NAMES = AzureMetricNames()
"""The default metric names (``idle.metrics.azure``'s defaults)."""
SNAPSHOT_OF_TAG = "gpuplan-snapshot-of"
"""Tag on a snapshot gpuplan took: the id of the VM whose disk it holds."""


class AzureAdapter:
    """GPU VMs of one subscription: list, utilisation, deallocate, tags."""

    def __init__(
        self,
        subscription: str,
        *,
        resource_groups: Sequence[str] = (),
        namespace: str = _NAMES.namespace,
        metric: str = _NAMES.utilisation,
        metric_names: AzureMetricNames | None = None,
        catalog: Catalog | None = None,
        credential: TokenCredential | None = None,
        arm_endpoint: str | None = None,
        metrics_endpoint: str | None = None,
        polling_interval_s: float = 15.0,
        retry_total: int = 6,
        retry_backoff_s: float = 0.8,
        metrics: MetricsSource | None = None,
    ) -> None:
        self.subscription = subscription
        self._metrics = metrics
        self._group_names = tuple(dict.fromkeys(resource_groups))
        self._namespace = namespace
        self._metric = metric
        self._names = metric_names or AzureMetricNames(namespace, metric)
        self._catalog = CatalogView.of(catalog, AZURE)
        self._credential = credential or default_credential()
        self._arm = (arm_endpoint or PUBLIC_ARM).rstrip("/")
        self._metrics_endpoint = metrics_endpoint
        self._poll_s = polling_interval_s
        self._retry_total = retry_total
        self._retry_backoff_s = retry_backoff_s
        self._compute: ComputeManagementClient | None = None
        self._metrics_clients: dict[str, MetricsClient] = {}
        self._sku_gpus: dict[str, dict[str, float]] = {}
        self._temp_disk_mb: dict[str, dict[str, float]] = {}
        self._notices: list[str] = []

    @property
    def provider(self) -> Provider:
        return AZURE

    @property
    def capabilities(self) -> frozenset[Capability]:
        return CAPABILITIES

    @property
    def scope(self) -> str:
        return f"azure {self.subscription}"

    def drain_notices(self) -> list[str]:
        out, self._notices = self._notices, []
        return out

    # -- clients -----------------------------------------------------------------

    @property
    def compute(self) -> ComputeManagementClient:
        if self._compute is None:
            from azure.mgmt.compute import ComputeManagementClient

            from gpuplan.providers.azure.retry import retry_policy

            self._compute = ComputeManagementClient(
                self._credential,
                self.subscription,
                base_url=self._arm,
                credential_scopes=[f"{self._arm}/.default"],
                polling_interval=self._poll_s,
                retry_policy=retry_policy(self._retry_total, self._retry_backoff_s),
            )
        return self._compute

    def _metrics_client(self, region: str) -> MetricsClient:
        if region not in self._metrics_clients:
            from azure.monitor.querymetrics import MetricsClient

            from gpuplan.providers.azure.retry import retry_policy

            self._metrics_clients[region] = MetricsClient(
                metrics.endpoint_for(self._metrics_endpoint, region),
                self._credential,
                audience=metrics.audience_for(self._metrics_endpoint),
                retry_policy=retry_policy(self._retry_total, self._retry_backoff_s),
            )
        return self._metrics_clients[region]

    # -- listing -----------------------------------------------------------------

    def list_instances(self) -> list[GpuInstance]:
        def call() -> list[GpuInstance]:
            raw = self._list_vms()
            self._learn_skus((str(vm.location), _size(vm)) for vm in raw)
            found = [self._map(vm) for vm in raw]
            self._note_uniform_scale_sets()
            return [vm for vm in found if vm is not None]

        return self._guard("listing VMs", call)

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        group = instance.attributes.get("resource_group") or vms.resource_group(
            instance.instance_id
        )
        name = instance.name or vms.last_segment(instance.instance_id)
        vm = self._guard(
            f"reading {name}",
            lambda: self.compute.virtual_machines.get(group, name, expand="instanceView"),
        )
        fresh = self._map(vm)
        if fresh is None:
            raise ProviderError(f"{self.scope}: {name} no longer carries a GPU")
        return fresh

    def _map(self, vm: Any) -> GpuInstance | None:
        return vms.to_instance(
            vm,
            subscription=self.subscription,
            catalog=self._catalog,
            sku_gpus=self._sku_gpus.get(str(vm.location), {}),
            temp_disk_mb=self._temp_disk_mb.get(str(vm.location), {}),
        )

    def _list_vms(self) -> list[Any]:
        """The whole subscription with power state inline, or each resource group in
        scope (a role assigned per group cannot list the subscription)."""
        operations = self.compute.virtual_machines
        if not self._group_names:
            return list(operations.list_all(status_only="true"))
        found: list[Any] = []
        for group in self._group_names:
            found.extend(operations.list(group, expand="instanceView"))
        return found

    def _list_scale_sets(self) -> list[Any]:
        operations = self.compute.virtual_machine_scale_sets
        if not self._group_names:
            return list(operations.list_all())
        return [s for group in self._group_names for s in operations.list(group)]

    def _learn_skus(self, located_sizes: Any) -> None:
        """Ask resource SKUs once per location with GPU-family sizes: GPU counts the
        catalog lacks, and every size's temporary disk (erased by deallocate)."""
        locations = {
            location
            for location, size in located_sizes
            if vms.GPU_FAMILY.match(size) and location not in self._sku_gpus
        }
        from azure.core.exceptions import HttpResponseError

        for location in sorted(locations):
            try:
                skus = list(self.compute.resource_skus.list(filter=f"location eq '{location}'"))
            except HttpResponseError as exc:
                self._notices.append(
                    f"{self.scope}: resource SKUs in {location} unreadable ({exc.status_code}); "
                    "GPU sizes missing from the catalog are left out there, and temporary "
                    "disks are unknown (such VMs are not deallocated)"
                )
                skus = []
            self._sku_gpus[location] = vms.sku_gpu_counts(skus)
            self._temp_disk_mb[location] = vms.sku_capability(skus, "MaxResourceVolumeMB")

    def _note_uniform_scale_sets(self) -> None:
        scale_sets = self._list_scale_sets()
        self._learn_skus(
            (str(s.location), vms.text(s.sku.name) if s.sku else "") for s in scale_sets
        )
        merged: dict[str, float] = {}
        for table in self._sku_gpus.values():
            merged.update(table)
        names = vms.uniform_gpu_scale_sets(scale_sets, self._catalog, merged)
        if names:
            self._notices.append(
                f"{self.scope}: GPU scale sets in Uniform mode (AKS node pools) are not "
                f"listed or stopped by gpuplan; scale them down yourself: {', '.join(names)}"
            )

    # -- metrics -----------------------------------------------------------------

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]:
        if self._metrics is not None:
            return self._metrics.fetch_utilisation(
                instances, start=start, end=end, period_minutes=period_minutes
            )
        by_region: dict[str, list[str]] = {}
        for item in instances:
            if item.account == self.subscription:
                by_region.setdefault(item.region, []).append(item.instance_id)
        out: dict[str, HostSamples] = {}
        for region, ids in sorted(by_region.items()):
            found = self._guard(
                f"reading {self._namespace}/{self._metric} in {region}",
                functools.partial(
                    metrics.fetch_region,
                    self._metrics_client,
                    region=region,
                    resource_ids=ids,
                    names=self._names,
                    start=start,
                    end=end,
                    period_minutes=period_minutes,
                ),
            )
            out.update(found)
        return out

    # -- actions -----------------------------------------------------------------

    def act(self, instance: GpuInstance, action: Action) -> InstanceState:
        """The call :data:`~gpuplan.core.lifecycle.actions.ACTIONS` names (stop = deallocate)."""
        call = provider_call(AZURE, action)
        if call is Call.DEALLOCATE:
            return self.deallocate(instance)
        if call is Call.TERMINATE:
            return self.terminate(instance)
        if call is Call.START:
            return self.start(instance)
        raise unsupported(self.scope, action)

    def deallocate(self, instance: GpuInstance) -> InstanceState:
        """Deallocate (power-off alone keeps billing)."""
        group, name = self._where(instance)
        self._guard(
            f"deallocating {name}",
            lambda: self.compute.virtual_machines.begin_deallocate(group, name).result(),
        )
        return InstanceState.DEALLOCATED

    def start(self, instance: GpuInstance) -> InstanceState:
        group, name = self._where(instance)
        self._guard(
            f"starting {name}",
            lambda: self.compute.virtual_machines.begin_start(group, name).result(),
        )
        return InstanceState.RUNNING

    def terminate(self, instance: GpuInstance) -> InstanceState:
        group, name = self._where(instance)
        self._guard(
            f"deleting {name}",
            lambda: self.compute.virtual_machines.begin_delete(group, name).result(),
        )
        return InstanceState.TERMINATED

    def snapshot(self, instance: GpuInstance, label: str) -> str:
        """A snapshot (a copy) of each managed disk of ``instance`` (OS and data disks),
        each tagged ``label`` (``gpuplan-step=<token>``) and with the VM's id, in its
        resource group; the snapshots' names, comma-joined."""
        from azure.mgmt.compute import models

        group, name = self._where(instance)
        vm = self._guard(f"reading {name}", lambda: self.compute.virtual_machines.get(group, name))
        key, _, value = label.partition("=")
        made: list[str] = []
        for n, disk in enumerate(_managed_disks(vm)):
            snap = f"gpuplan-{value}-{n}"
            body = models.Snapshot(
                location=str(vm.location),
                properties=models.SnapshotProperties(
                    creation_data=models.CreationData(create_option="Copy", source_resource_id=disk)
                ),
                tags={key: value, SNAPSHOT_OF_TAG: instance.instance_id[:256]},
            )
            self._create_snapshot(group, snap, body, f"snapshotting {name}")
            made.append(snap)
        return ",".join(made)

    def _create_snapshot(self, group: str, snap: str, body: Any, what: str) -> None:
        def call() -> None:
            self.compute.snapshots.begin_create_or_update(group, snap, body).result()

        self._guard(what, call)

    def snapshots_labelled(self, instance: GpuInstance, label: str) -> list[str]:
        """The VM's resource group's snapshots tagged ``label``."""
        group, name = self._where(instance)
        key, _, value = label.partition("=")
        found = self._guard(
            f"listing snapshots of {name}",
            lambda: list(self.compute.snapshots.list_by_resource_group(group)),
        )
        return [str(s.name) for s in found if (s.tags or {}).get(key) == value]

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        self._tags(instance, "Merge", dict(tags))

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        present = {k: instance.labels[k] for k in keys if k in instance.labels}
        if present:
            self._tags(instance, "Delete", present)

    def _tags(self, instance: GpuInstance, operation: str, tags: dict[str, str]) -> None:
        from azure.core.rest import HttpRequest

        url = f"{self._arm}{instance.instance_id}/providers/Microsoft.Resources/tags/default"
        request = HttpRequest(
            "PATCH",
            url,
            params={"api-version": TAGS_API_VERSION},
            json={"operation": operation, "properties": {"tags": tags}},
        )

        def call() -> None:
            response = self.compute.send_request(request)
            response.raise_for_status()

        self._guard(f"tagging {instance.name}", call)

    # -- helpers -----------------------------------------------------------------

    def _where(self, instance: GpuInstance) -> tuple[str, str]:
        group = instance.attributes.get("resource_group") or vms.resource_group(
            instance.instance_id
        )
        return group, instance.name or vms.last_segment(instance.instance_id)

    def _guard(self, what: str, call: Callable[[], T]) -> T:
        from azure.core import exceptions as aexc

        try:
            return call()
        except aexc.ResourceNotFoundError:
            raise ProviderError(f"{self.scope}: {what}: not found (deleted?)") from None
        except aexc.ClientAuthenticationError as exc:
            raise ProviderError(
                f"{self.scope}: {what}: not authenticated ({_first(exc)})"
            ) from None
        except aexc.HttpResponseError as exc:
            raise ProviderError(f"{self.scope}: {what}: {exc.status_code} {_first(exc)}") from None
        except aexc.AzureError as exc:
            raise ProviderError(f"{self.scope}: {what}: {_first(exc)}") from None


def _managed_disks(vm: Any) -> list[str]:
    """The resource ids of a VM's managed disks: the OS disk, then the data disks."""
    profile = vm.properties.storage_profile if vm.properties else None
    if profile is None:
        return []
    disks = [profile.os_disk, *(profile.data_disks or ())]
    return [str(d.managed_disk.id) for d in disks if d is not None and d.managed_disk is not None]


def _size(vm: Any) -> str:
    props = vm.properties
    return vms.text(props.hardware_profile.vm_size) if props and props.hardware_profile else ""


def _first(exc: Exception) -> str:
    """The first line of an SDK message (they run to many lines of JSON)."""
    text = str(getattr(exc, "message", None) or exc)
    return text.strip().splitlines()[0][:300] if text.strip() else type(exc).__name__
