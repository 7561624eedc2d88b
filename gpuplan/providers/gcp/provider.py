"""The GCP lifecycle adapter: one project, Compute Engine + Cloud Monitoring.

Credentials come from Application Default Credentials unless passed in. Endpoints come
from the policy (``compute_endpoint``, ``monitoring_endpoint``: private service connect,
restricted VPC); the zone-operations client is built with the same options as the
instances client, because the SDK's own ``ExtendedOperation.result()`` polls through a
client of its own that ignores a custom endpoint.

Listing is one paged ``aggregatedList`` per project; utilisation is one paged
``ListTimeSeries`` per project per run. Reads are retried on 429, 5xx and deadline
errors with exponential backoff; actions are retried on 429 and 503 only (the request
was refused, so nothing happened). After the last try the adapter raises
:class:`ProviderError`, one readable line.
"""

from __future__ import annotations

import functools
import time
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
from gpuplan.providers.base import MetricsSource, ProviderError, unsupported
from gpuplan.providers.catalog_view import CatalogView
from gpuplan.providers.gcp import machines, monitoring
from gpuplan.providers.gcp.actions import CAPABILITIES
from gpuplan.providers.gcp.clients import (
    GcpClients,
    action_retry,
    make_clients,
    read_retry,
    sdk_errors,
)
from gpuplan.providers.gcp.facts import GCP

if TYPE_CHECKING:
    from google.auth.credentials import Credentials
    from google.cloud.compute_v1 import DisksClient, Operation, SnapshotsClient

T = TypeVar("T")


SNAPSHOT_OF_LABEL = "gpuplan-snapshot-of"
"""Label on a snapshot gpuplan took: the id of the instance whose disk it holds."""


class GcpAdapter:
    """GPU instances of one GCP project: list, utilisation, stop/suspend, labels."""

    def __init__(
        self,
        project: str,
        *,
        zones: Sequence[str] = (),
        metric_type: str = monitoring.DEFAULT_METRIC,
        memory_type: str = monitoring.DEFAULT_MEMORY,
        cpu_type: str = monitoring.DEFAULT_CPU,
        catalog: Catalog | None = None,
        clients: GcpClients | None = None,
        compute_endpoint: str | None = None,
        monitoring_endpoint: str | None = None,
        credentials: Credentials | None = None,
        retry_initial_s: float = 1.0,
        retry_timeout_s: float = 120.0,
        poll_interval_s: float = 2.0,
        operation_timeout_s: float = 600.0,
        page_size: int = 500,
        metrics_page_size: int = monitoring.PAGE_SIZE,
        metrics: MetricsSource | None = None,
    ) -> None:
        self.project = project
        self._metrics = metrics
        self._zones = frozenset(zones)
        self._metric_type = metric_type
        self._metric_types = (metric_type, memory_type, cpu_type)
        self._catalog = CatalogView.of(catalog, GCP)
        self._clients = clients or make_clients(
            compute_endpoint=compute_endpoint,
            monitoring_endpoint=monitoring_endpoint,
            credentials=credentials,
        )
        self._read = read_retry(retry_initial_s, retry_timeout_s)
        self._act = action_retry(retry_initial_s, retry_timeout_s)
        self._poll_s = poll_interval_s
        self._op_timeout_s = operation_timeout_s
        self._page_size = page_size
        self._metrics_page_size = metrics_page_size

    @property
    def provider(self) -> Provider:
        return GCP

    @property
    def capabilities(self) -> frozenset[Capability]:
        return CAPABILITIES

    @property
    def scope(self) -> str:
        return f"gcp {self.project}"

    def drain_notices(self) -> list[str]:
        return []

    def list_instances(self) -> list[GpuInstance]:
        from google.cloud import compute_v1

        request = compute_v1.AggregatedListInstancesRequest(
            project=self.project, max_results=self._page_size
        )

        def call() -> list[GpuInstance]:
            found: list[GpuInstance] = []
            pager = self._clients.instances.aggregated_list(request=request, retry=self._read)
            for key, scoped in pager:
                if self._zones and key.removeprefix("zones/") not in self._zones:
                    continue
                for raw in scoped.instances:
                    item = machines.to_instance(raw, project=self.project, catalog=self._catalog)
                    if item is not None:
                        found.append(item)
            return found

        return self._guard("listing instances", call)

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
        ids = {i.instance_id for i in instances if i.account == self.project}
        metrics = self._clients.metrics
        if not ids or metrics is None:
            return {}
        found = self._guard(
            f"reading {self._metric_type}",
            lambda: monitoring.fetch_signals(
                metrics,
                project=self.project,
                metric_types=self._metric_types,
                start=start,
                end=end,
                period_minutes=period_minutes,
                instance_ids=ids,
                retry=self._read,
                page_size=self._metrics_page_size,
            ),
        )
        return dict(found)

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        raw = self._get(instance)
        fresh = machines.to_instance(raw, project=self.project, catalog=self._catalog)
        if fresh is None:
            raise ProviderError(f"{self.scope}: {instance.name} no longer carries a GPU")
        return fresh

    def act(self, instance: GpuInstance, action: Action) -> InstanceState:
        """The call :data:`~gpuplan.core.lifecycle.actions.ACTIONS` names for ``action``."""
        call = provider_call(GCP, action)
        if call is Call.STOP:
            return self.stop(instance)
        if call is Call.SUSPEND:
            return self.suspend(instance)
        if call is Call.TERMINATE:
            return self.terminate(instance)
        if call is Call.START:
            return self.start(instance)
        raise unsupported(self.scope, action)

    def stop(self, instance: GpuInstance) -> InstanceState:
        from google.cloud import compute_v1

        self._run(
            instance,
            "stop",
            lambda kw: self._clients.instances.stop_unary(
                request=compute_v1.StopInstanceRequest(
                    discard_local_ssd=_has_local_ssd(instance), **kw
                ),
                retry=self._act,
            ),
        )
        return InstanceState.STOPPED

    def suspend(self, instance: GpuInstance) -> InstanceState:
        from google.cloud import compute_v1

        self._run(
            instance,
            "suspend",
            lambda kw: self._clients.instances.suspend_unary(
                request=compute_v1.SuspendInstanceRequest(
                    discard_local_ssd=_has_local_ssd(instance), **kw
                ),
                retry=self._act,
            ),
        )
        return InstanceState.SUSPENDED

    def start(self, instance: GpuInstance) -> InstanceState:
        self._run(
            instance,
            "start",
            lambda kw: self._clients.instances.start_unary(**kw, retry=self._act),
        )
        return InstanceState.RUNNING

    def terminate(self, instance: GpuInstance) -> InstanceState:
        self._run(
            instance,
            "delete",
            lambda kw: self._clients.instances.delete_unary(**kw, retry=self._act),
        )
        return InstanceState.TERMINATED

    def snapshot(self, instance: GpuInstance, label: str) -> str:
        """``disks.createSnapshot`` of each persistent disk of ``instance``, each snapshot
        labelled ``label`` (``gpuplan-step=<token>``) and with the instance id; the
        snapshots' names, comma-joined."""
        from google.cloud import compute_v1

        disks, _ = self._snapshot_clients()
        key, _, value = label.partition("=")
        raw = self._get(instance)
        sources = [machines.last_segment(d.source) for d in raw.disks if d.type_ == "PERSISTENT"]
        made: list[str] = []
        for n, disk in enumerate(s for s in sources if s):
            name = f"gpuplan-{value}-{n}"
            body = compute_v1.Snapshot(
                name=name, labels={key: value, SNAPSHOT_OF_LABEL: str(instance.instance_id)}
            )

            def create(kw: dict[str, Any], disk: str = disk, body: Any = body) -> Operation:
                return disks.create_snapshot_unary(
                    project=kw["project"], zone=kw["zone"], disk=disk,
                    snapshot_resource=body, retry=self._act,
                )  # fmt: skip

            self._run(instance, f"createSnapshot {disk}", create)
            made.append(name)
        return ",".join(made)

    def snapshots_labelled(self, instance: GpuInstance, label: str) -> list[str]:
        """The project's snapshots labelled ``label`` (what a call cut short made)."""
        from google.cloud import compute_v1

        _, snapshots = self._snapshot_clients()
        key, _, value = label.partition("=")
        request = compute_v1.ListSnapshotsRequest(
            project=self.project, filter=f"labels.{key}={value}"
        )
        return self._guard(
            f"listing snapshots of {instance.name}",
            lambda: [s.name for s in snapshots.list(request=request, retry=self._read)],
        )

    def _snapshot_clients(self) -> tuple[DisksClient, SnapshotsClient]:
        disks, snapshots = self._clients.disks, self._clients.snapshots
        if disks is None or snapshots is None:
            raise ProviderError(f"{self.scope}: no disk or snapshot client: cannot snapshot")
        return disks, snapshots

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        self._relabel(instance, lambda labels: {**labels, **tags})

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        self._relabel(instance, lambda labels: {k: v for k, v in labels.items() if k not in keys})

    # -- helpers -------------------------------------------------------------------

    def _where(self, instance: GpuInstance) -> dict[str, Any]:
        return {"project": self.project, "zone": instance.zone, "instance": instance.name}

    def _get(self, instance: GpuInstance) -> Any:
        return self._guard(
            f"reading {instance.name}",
            lambda: self._clients.instances.get(**self._where(instance), retry=self._read),
        )

    def _relabel(
        self, instance: GpuInstance, change: Callable[[dict[str, str]], dict[str, str]]
    ) -> None:
        from google.api_core import exceptions as gexc
        from google.cloud import compute_v1

        for attempt in range(2):  # a concurrent label change moves the fingerprint: re-read once
            raw = self._get(instance)
            current = dict(raw.labels)
            wanted = change(current)
            if wanted == current:
                return
            body = compute_v1.InstancesSetLabelsRequest(
                labels=wanted, label_fingerprint=raw.label_fingerprint
            )

            def set_labels(kw: dict[str, Any], body: Any = body) -> Operation:
                return self._clients.instances.set_labels_unary(
                    instances_set_labels_request_resource=body, **kw, retry=self._act
                )

            try:
                self._run(instance, "setLabels", set_labels, raw_errors=(gexc.PreconditionFailed,))
                return
            except gexc.PreconditionFailed:
                if attempt:
                    raise ProviderError(
                        f"{self.scope}: labels of {instance.name} keep changing; not set"
                    ) from None

    def _run(
        self,
        instance: GpuInstance,
        verb: str,
        call: Callable[[dict[str, Any]], Operation],
        raw_errors: tuple[type[Exception], ...] = (),
    ) -> None:
        try:
            operation = call(self._where(instance))
        except raw_errors:
            raise
        except sdk_errors() as exc:
            raise self._error(f"{verb} {instance.name}", exc) from None
        self._wait(instance, verb, operation)

    def _wait(self, instance: GpuInstance, verb: str, operation: Operation) -> None:
        from google.cloud import compute_v1

        done = compute_v1.Operation.Status.DONE
        deadline = time.monotonic() + self._op_timeout_s
        delay = 0.0  # ask once at once (quick operations), then every poll interval
        while operation.status != done:
            if time.monotonic() > deadline:
                raise ProviderError(
                    f"{self.scope}: {verb} {instance.name}: operation {operation.name} "
                    f"not done after {self._op_timeout_s:g} s"
                )
            time.sleep(delay)
            delay = self._poll_s
            operation = self._guard(
                f"{verb} {instance.name}: waiting",
                functools.partial(
                    self._clients.operations.get,
                    project=self.project,
                    zone=instance.zone,
                    operation=operation.name,
                    retry=self._read,
                ),
            )
        errors = [e.message or e.code for e in operation.error.errors]
        if errors:
            raise ProviderError(f"{self.scope}: {verb} {instance.name} failed: {'; '.join(errors)}")

    def _guard(self, what: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except sdk_errors() as exc:
            raise self._error(what, exc) from None

    def _error(self, what: str, exc: Exception) -> ProviderError:
        from google.api_core import exceptions as gexc

        if isinstance(exc, gexc.NotFound):
            return ProviderError(f"{self.scope}: {what}: not found (deleted?)")
        if isinstance(exc, gexc.RetryError):
            cause = exc.cause
            return ProviderError(f"{self.scope}: {what}: gave up after retries ({cause})")
        if isinstance(exc, gexc.GoogleAPICallError):
            return ProviderError(f"{self.scope}: {what}: {exc.code} {exc.message}")
        return ProviderError(f"{self.scope}: {what}: {type(exc).__name__}: {exc}")


def _has_local_ssd(instance: GpuInstance) -> bool:
    """Stop and suspend must be told to discard local SSD data; the planner has already
    skipped such instances unless the policy allows data loss."""
    return instance.risk.local_ssd_count > 0
