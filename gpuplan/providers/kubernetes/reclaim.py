"""Reclaiming a workload's GPUs the way its owner expects, and giving them back.

- Deployment, StatefulSet (and a bare ReplicaSet): the replica count is written on the
  object (annotation :data:`REPLICAS_ANNOTATION`, a merge patch carrying the
  ``resourceVersion`` of the object just read, so a change in between answers 409 and
  nothing is done), then the ``scale`` subresource is patched to 0 (merge patch).
  Restore scales back to the recorded count and removes the annotation.
- Job, CronJob: ``spec.suspend: true`` (strategic merge); restore sets it false.
- Kubeflow Notebook: the annotation its controller obeys, ``kubeflow-resource-stopped``
  = the time (merge patch: a custom resource takes no strategic merge); restore removes it.
- A bare pod: deleted (its emptyDir is lost, nothing brings it back); no restore.

``dry_run`` sends the same writes with ``dryRun=All``: the API server checks them
(admission, RBAC, conflicts) and stores nothing.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from gpuplan.providers.base import ProviderError
from gpuplan.providers.kubernetes.client import call
from gpuplan.providers.kubernetes.discovery import (
    REPLICAS_ANNOTATION,
    STOP_ANNOTATION,
    notebook_resource,
)

SCALED = ("Deployment", "StatefulSet", "ReplicaSet")
SUSPENDED = ("Job", "CronJob")


def resource_of(kind: str) -> Any:
    from lightkube.resources.apps_v1 import Deployment, ReplicaSet, StatefulSet
    from lightkube.resources.batch_v1 import CronJob, Job
    from lightkube.resources.core_v1 import Pod

    table: dict[str, Any] = {
        "Deployment": Deployment,
        "StatefulSet": StatefulSet,
        "ReplicaSet": ReplicaSet,
        "Job": Job,
        "CronJob": CronJob,
        "Pod": Pod,
    }
    if kind == "Notebook":
        return notebook_resource()
    if kind not in table:
        raise ProviderError(f"kubernetes: gpuplan does not act on a {kind}")
    return table[kind]


def patch_type(kind: str) -> Any:
    """Merge patch for a custom resource (no strategic merge there), strategic otherwise."""
    from lightkube.types import PatchType

    return PatchType.MERGE if kind == "Notebook" else PatchType.STRATEGIC


def annotate(
    client: Any,
    namespace: str,
    kind: str,
    name: str,
    values: dict[str, str | None],
    *,
    dry_run: bool = False,
) -> None:
    """Set (or, with None, remove) annotations on the object."""
    from lightkube.types import PatchType

    body = {"metadata": {"annotations": values}}
    res = resource_of(kind)
    call(
        f"annotate {kind} {namespace}/{name}",
        lambda: client.patch(
            res, name, body, namespace=namespace, patch_type=PatchType.MERGE, dry_run=dry_run
        ),
    )


def reclaim(
    client: Any, namespace: str, kind: str, name: str, now: datetime, *, dry_run: bool = False
) -> str:
    """Stop the workload; what was done, in words (with the count to restore)."""
    where = f"{kind} {namespace}/{name}"
    res = resource_of(kind)
    if kind in SCALED:
        obj = call(f"read {where}", lambda: client.get(res, name, namespace=namespace))
        spec = obj.spec
        replicas = int(spec.replicas if spec is not None and spec.replicas is not None else 1)
        body = {
            "metadata": {
                "resourceVersion": obj.metadata.resourceVersion,
                "annotations": {REPLICAS_ANNOTATION: str(replicas)},
            }
        }
        from lightkube.types import PatchType

        call(
            f"record replicas on {where}",
            lambda: client.patch(
                res, name, body, namespace=namespace, patch_type=PatchType.MERGE, dry_run=dry_run
            ),
        )
        call(
            f"scale {where} to 0",
            lambda: client.patch(
                res.Scale,
                name,
                {"spec": {"replicas": 0}},
                namespace=namespace,
                patch_type=PatchType.MERGE,
                dry_run=dry_run,
            ),
        )
        return f"scaled {where} to 0 (was {replicas}; {REPLICAS_ANNOTATION}={replicas})"
    if kind in SUSPENDED:
        call(
            f"suspend {where}",
            lambda: client.patch(
                res,
                name,
                {"spec": {"suspend": True}},
                namespace=namespace,
                patch_type=patch_type(kind),
                dry_run=dry_run,
            ),
        )
        return f"suspended {where} (spec.suspend: true)"
    if kind == "Notebook":
        stamp = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        annotate(client, namespace, kind, name, {STOP_ANNOTATION: stamp}, dry_run=dry_run)
        return f"stopped {where} ({STOP_ANNOTATION}={stamp})"
    if kind == "Pod":
        call(
            f"delete {where}",
            lambda: client.delete(res, name, namespace=namespace, dry_run=dry_run),
        )
        return f"deleted bare pod {namespace}/{name}"
    raise ProviderError(f"kubernetes: gpuplan does not act on a {kind}")


def restore(client: Any, namespace: str, kind: str, name: str, *, dry_run: bool = False) -> str:
    """Undo :func:`reclaim`; what was done, in words. ProviderError when nothing to undo."""
    from lightkube.types import PatchType

    where = f"{kind} {namespace}/{name}"
    res = resource_of(kind)
    if kind == "Pod":
        raise ProviderError(f"{where}: a deleted bare pod cannot be restored")
    obj = call(f"read {where}", lambda: client.get(res, name, namespace=namespace))
    annotations = dict(obj.metadata.annotations or {})
    if kind in SCALED:
        recorded = annotations.get(REPLICAS_ANNOTATION)
        if recorded is None or not recorded.isdigit() or int(recorded) > 10_000:
            raise ProviderError(f"{where}: no replica count recorded ({REPLICAS_ANNOTATION})")
        call(
            f"scale {where} to {recorded}",
            lambda: client.patch(
                res.Scale,
                name,
                {"spec": {"replicas": int(recorded)}},
                namespace=namespace,
                patch_type=PatchType.MERGE,
                dry_run=dry_run,
            ),
        )
        annotate(client, namespace, kind, name, {REPLICAS_ANNOTATION: None}, dry_run=dry_run)
        return f"scaled {where} back to {recorded}"
    if kind in SUSPENDED:
        call(
            f"resume {where}",
            lambda: client.patch(
                res,
                name,
                {"spec": {"suspend": False}},
                namespace=namespace,
                patch_type=patch_type(kind),
                dry_run=dry_run,
            ),
        )
        return f"resumed {where} (spec.suspend: false)"
    if STOP_ANNOTATION not in annotations:
        raise ProviderError(f"{where}: not stopped ({STOP_ANNOTATION} absent)")
    annotate(client, namespace, kind, name, {STOP_ANNOTATION: None}, dry_run=dry_run)
    return f"started {where} ({STOP_ANNOTATION} removed)"
