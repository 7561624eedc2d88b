"""A Compute Engine REST fake: aggregated listing with pages, get, stop/suspend/start/delete,
setLabels with fingerprints, and zone operations that finish on a later poll.

Operation JSON and error bodies follow the public REST reference; names and
permissions per call are those of cloud.google.com/compute/docs/reference/rest/v1.
"""

from __future__ import annotations

import copy
import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from tests.fakes.http import FakeApi, Reply, Request

PREFIX = r"/compute/v1/projects/(?P<project>[^/]+)"
INSTANCE = PREFIX + r"/zones/(?P<zone>[^/]+)/instances/(?P<name>[^/]+)"
# The IAM permission each named call needs (cloud.google.com/compute/docs/access/iam).
PERMISSIONS = {
    "aggregatedList": "compute.instances.list",
    "get": "compute.instances.get",
    "stop": "compute.instances.stop",
    "suspend": "compute.instances.suspend",
    "start": "compute.instances.start",
    "delete": "compute.instances.delete",
    "setLabels": "compute.instances.setLabels",
    "operations.get": "compute.zoneOperations.get",
    "createSnapshot": "compute.disks.createSnapshot",
    "snapshots.list": "compute.snapshots.list",
}
ALSO_NEEDED = {"createSnapshot": ("compute.snapshots.create", "compute.snapshots.setLabels")}
"""Permissions a call needs beyond its own: disks.createSnapshot creates a snapshot, and
with labels on it sets them (cloud.google.com/compute/docs/access/iam)."""
_AFTER = {"stop": "TERMINATED", "suspend": "SUSPENDED", "start": "RUNNING", "delete": None}


@dataclass
class GcpComputeFake(FakeApi):
    instances: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    """(project, name) -> instance JSON."""
    snapshots: dict[tuple[str, str], dict[str, Any]] = field(default_factory=dict)
    """(project, snapshot name) -> snapshot JSON (``sourceDisk``, ``labels``)."""
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    polls_until_done: int = 1
    disabled: set[str] = field(default_factory=set)
    """Projects where the Compute Engine API is not enabled: every call answers 403."""
    _ids: Any = field(default_factory=lambda: itertools.count(1001))
    _ops: Any = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.route("GET", PREFIX + r"/aggregated/instances", "aggregatedList", self._list)
        self.route("GET", INSTANCE, "get", self._get)
        for verb in ("stop", "suspend", "start", "setLabels"):
            self.route("POST", INSTANCE + "/" + verb, verb, self._act(verb))
        self.route("DELETE", INSTANCE, "delete", self._act("delete"))
        self.route(
            "POST",
            PREFIX + r"/zones/(?P<zone>[^/]+)/disks/(?P<disk>[^/]+)/createSnapshot",
            "createSnapshot",
            self._create_snapshot,
        )
        self.route("GET", PREFIX + r"/global/snapshots", "snapshots.list", self._snapshots)
        self.route(
            "GET",
            PREFIX + r"/zones/(?P<zone>[^/]+)/operations/(?P<op>[^/]+)",
            "operations.get",
            self._operation,
        )

    def add(self, project: str, zone: str, name: str, machine_type: str, **extra: Any) -> str:
        """Add an instance (RUNNING unless ``status`` is given); returns its numeric id."""
        iid = str(next(self._ids))
        body = {
            "kind": "compute#instance",
            "id": iid,
            "name": name,
            "zone": f"https://www.googleapis.com/compute/v1/projects/{project}/zones/{zone}",
            "machineType": f"https://www.googleapis.com/compute/v1/projects/{project}/zones/"
            f"{zone}/machineTypes/{machine_type}",
            "status": "RUNNING",
            "labels": {},
            "labelFingerprint": "fp0",
            "creationTimestamp": "2026-11-01T00:00:00.000-07:00",
            "lastStartTimestamp": "2026-12-01T00:00:00.000-08:00",
            "scheduling": {"provisioningModel": "STANDARD", "preemptible": False},
            "disks": [
                {
                    "type": "PERSISTENT",
                    "boot": True,
                    "source": f"https://www.googleapis.com/compute/v1/projects/{project}/zones/"
                    f"{zone}/disks/{name}",
                }
            ],
        }
        body.update(copy.deepcopy(extra))  # the caller's dicts stay the caller's
        self.instances[(project, name)] = body
        return iid

    def status(self, project: str, name: str) -> str | None:
        found = self.instances.get((project, name))
        return None if found is None else str(found["status"])

    def _list(self, request: Request, project: str) -> Reply:
        if project in self.disabled:
            return 403, {}, service_disabled(project)
        rows = sorted(
            (body for (p, _), body in self.instances.items() if p == project),
            key=lambda b: int(b["id"]),
        )
        size = int(request.query.get("maxResults") or 500)
        start = int(request.query.get("pageToken") or 0)
        page = rows[start : start + size]
        items: dict[str, Any] = {}
        for body in page:
            zone = "zones/" + body["zone"].rsplit("/", 1)[-1]
            items.setdefault(zone, {"instances": []})["instances"].append(body)
        reply: dict[str, Any] = {"kind": "compute#instanceAggregatedList", "items": items}
        if start + size < len(rows):
            reply["nextPageToken"] = str(start + size)
        return 200, {}, reply

    def _get(self, request: Request, project: str, zone: str, name: str) -> Reply:
        body = self.instances.get((project, name))
        if body is None:
            return 404, {}, self.error_body(404, f"The resource '{name}' was not found")
        return 200, {}, body

    def _act(self, verb: str) -> Any:
        def handler(request: Request, project: str, zone: str, name: str) -> Reply:
            body = self.instances.get((project, name))
            if body is None:
                return 404, {}, self.error_body(404, f"The resource '{name}' was not found")
            if verb == "setLabels":
                wanted = request.json()
                if wanted.get("labelFingerprint") != body["labelFingerprint"]:
                    return 412, {}, self.error_body(412, "Labels fingerprint invalid")
                body["labels"] = wanted.get("labels", {})
                body["labelFingerprint"] = f"fp{next(self._ops)}"
                return 200, {}, self._new_op(project, zone, name, verb, done=True)
            if verb in ("stop", "suspend") and request.query.get("discardLocalSsd"):
                body["_discarded_local_ssd"] = request.query["discardLocalSsd"]
            if verb == "start" and body["status"] not in ("TERMINATED", "SUSPENDED"):
                return 400, {}, self.error_body(400, f"The instance '{name}' is not stopped")
            if verb == "start":
                body["lastStartTimestamp"] = datetime.now(UTC).isoformat()  # freezegun-aware
            body["status"] = {"stop": "STOPPING", "suspend": "SUSPENDING", "start": "STAGING"}.get(
                verb, "STOPPING"
            )
            return 200, {}, self._new_op(project, zone, name, verb, done=False)

        return handler

    def _create_snapshot(self, request: Request, project: str, zone: str, disk: str) -> Reply:
        body = request.json()
        name = str(body.get("name", ""))
        if (project, name) in self.snapshots:
            return 409, {}, self.error_body(409, f"The resource '{name}' already exists")
        self.snapshots[(project, name)] = {
            "name": name,
            "sourceDisk": f"projects/{project}/zones/{zone}/disks/{disk}",
            "labels": body.get("labels", {}),
            "status": "READY",
        }
        return 200, {}, self._new_op(project, zone, disk, "createSnapshot", done=True)

    def _snapshots(self, request: Request, project: str) -> Reply:
        wanted = request.query.get("filter", "")
        key, _, value = wanted.removeprefix("labels.").partition("=")
        items = [
            body
            for (p, _), body in sorted(self.snapshots.items())
            if p == project and (not wanted or body["labels"].get(key) == value)
        ]
        return 200, {}, {"kind": "compute#snapshotList", "items": items}

    def _new_op(self, project: str, zone: str, name: str, verb: str, *, done: bool) -> Any:
        op = {
            "kind": "compute#operation",
            "name": f"operation-{next(self._ops)}",
            "zone": zone,
            "operationType": verb,
            "targetLink": f"projects/{project}/zones/{zone}/instances/{name}",
            "status": "DONE" if done else "RUNNING",
            "_polls": 0,
            "_target": (project, name),
        }
        self.operations[op["name"]] = op
        return {k: v for k, v in op.items() if not k.startswith("_")}

    def _operation(self, request: Request, project: str, zone: str, op: str) -> Reply:
        found = self.operations.get(op)
        if found is None:
            return 404, {}, self.error_body(404, f"operation {op} not found")
        found["_polls"] += 1
        if found["status"] != "DONE" and found["_polls"] >= self.polls_until_done:
            found["status"] = "DONE"
            target = found["_target"]
            after = _AFTER.get(found["operationType"])
            if after is None:
                self.instances.pop(target, None)
            elif target in self.instances:
                self.instances[target]["status"] = after
        return 200, {}, {k: v for k, v in found.items() if not k.startswith("_")}


def service_disabled(project: str) -> Any:
    """The 403 Compute Engine answers in a project that has not enabled its API."""
    message = (
        f"Compute Engine API has not been used in project {project} before or it is "
        "disabled. Enable it by visiting https://console.developers.google.com/apis/api/"
        f"compute.googleapis.com/overview?project={project} then retry."
    )
    return {
        "error": {
            "code": 403,
            "message": message,
            "errors": [
                {"message": message, "domain": "usageLimits", "reason": "accessNotConfigured"}
            ],
            "status": "PERMISSION_DENIED",
            "details": [
                {
                    "@type": "type.googleapis.com/google.rpc.ErrorInfo",
                    "reason": "SERVICE_DISABLED",
                    "domain": "googleapis.com",
                    "metadata": {
                        "service": "compute.googleapis.com",
                        "consumer": f"projects/{project}",
                    },
                }
            ],
        }
    }
