"""An Azure Resource Manager + Azure Monitor batch-metrics fake.

VM listing with ``statusOnly`` and absolute ``nextLink`` paging, get with instance
view, deallocate/start/delete as long-running operations (202 + ``Azure-AsyncOperation`` +
``Location``, ``InProgress`` then ``Succeeded``), resource SKUs, scale sets, the Tags
API at a VM's scope, and ``metrics:getBatch`` over raw per-GPU points published as
Telegraf's ``azure_monitor`` output publishes them (namespace ``Telegraf/nvidia_smi``,
dimension ``index``), the tenant's subscription list (with states) and management-group
``descendants`` (child groups and subscriptions at any depth). Every request must carry
a bearer token.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import isodate

from tests.fakes.http import FakeApi, Reply, Request

SUB = r"/subscriptions/(?P<sub>[^/]+)"
VM = (
    SUB
    + r"/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft\.Compute/virtualMachines/(?P<name>[^/]+)"
)
OPS = SUB + r"/providers/Microsoft\.Compute/locations/(?P<loc>[^/]+)/operations/(?P<op>[^/]+)"
# The RBAC action each named call needs (learn.microsoft.com, Azure resource provider
# operations: Microsoft.Compute, Microsoft.Resources, Microsoft.Insights).
ACTIONS = {
    "vms.listAll": "Microsoft.Compute/virtualMachines/read",
    "vms.get": "Microsoft.Compute/virtualMachines/read",
    "vms.list": "Microsoft.Compute/virtualMachines/read",
    "vmss.list": "Microsoft.Compute/virtualMachineScaleSets/read",
    "vms.deallocate": "Microsoft.Compute/virtualMachines/deallocate/action",
    "vms.start": "Microsoft.Compute/virtualMachines/start/action",
    "vms.delete": "Microsoft.Compute/virtualMachines/delete",
    "operations.get": "Microsoft.Compute/locations/operations/read",
    "skus.list": "Microsoft.Compute/skus/read",
    "vmss.listAll": "Microsoft.Compute/virtualMachineScaleSets/read",
    "tags.update": "Microsoft.Resources/tags/write",
    "metrics.getBatch": "Microsoft.Insights/Metrics/Read",
    "subscriptions.list": "Microsoft.Resources/subscriptions/read",
    "managementGroups.descendants": "Microsoft.Management/managementGroups/descendants/read",
    "snapshots.put": "Microsoft.Compute/snapshots/write",
    "snapshots.list": "Microsoft.Compute/snapshots/read",
}
ALSO_NEEDED = {"snapshots.put": ("Microsoft.Compute/disks/read",)}
"""Actions a call needs beyond its own: a snapshot copied from a managed disk reads it."""
MG = r"/providers/Microsoft\.Management/managementGroups/(?P<group>[^/]+)"
_AFTER = {"deallocate": "PowerState/deallocated", "start": "PowerState/running", "delete": None}
LRO_RETRY_AFTER = "1"
"""Retry-After of a long-running operation, whole seconds as ARM sends it (the SDK parses
an int): azure-core reads "0" as "none given" and waits the client's polling interval
instead (15 s in production, so 15 s per operation in every subprocess test)."""


@dataclass
class AzureFake(FakeApi):
    vms: dict[str, dict[str, Any]] = field(default_factory=dict)
    """lower-case resource id -> VM JSON."""
    scale_sets: list[dict[str, Any]] = field(default_factory=list)
    skus: list[dict[str, Any]] = field(default_factory=list)
    temp_disk_mb: dict[str, int] = field(default_factory=dict)
    """VM size (lower case) -> its temporary disk; the SKU listing answers every size of
    a VM it holds with this (0 when not set), as Azure describes every size it offers."""
    points: dict[tuple[str, str, str, str], dict[datetime, float]] = field(default_factory=dict)
    """(resource id lower, namespace, metric, gpu index) -> time -> value."""
    operations: dict[str, dict[str, Any]] = field(default_factory=dict)
    page_size: int = 2
    polls_until_done: int = 2
    batch_sizes: list[int] = field(default_factory=list)
    subscriptions: dict[str, str] = field(default_factory=dict)
    """Subscriptions this identity can read: id -> state (Enabled, Disabled, Warned...)."""
    groups: dict[str, str] = field(default_factory=dict)
    """Management group -> its parent group ("" for the tenant root)."""
    placement: dict[str, str] = field(default_factory=dict)
    """Subscription id -> the management group it sits in (readable or not)."""
    denied_groups: set[str] = field(default_factory=set)
    """Groups whose descendants answer 403 AuthorizationFailed."""
    snapshots: dict[str, dict[str, Any]] = field(default_factory=dict)
    """lower-case snapshot id -> snapshot JSON (``creationData``, ``tags``)."""
    _ops: Any = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.require_bearer = True
        self.route(
            "GET", SUB + r"/providers/Microsoft\.Compute/virtualMachines", "vms.listAll", self._list
        )
        self.route("GET", VM, "vms.get", self._get)
        group = SUB + r"/resourceGroups/(?P<rg>[^/]+)/providers/Microsoft\.Compute/"
        self.route("GET", group + "virtualMachines", "vms.list", self._list)
        self.route("GET", group + "virtualMachineScaleSets", "vmss.list", self._scale_sets)
        self.route("POST", VM + "/deallocate", "vms.deallocate", self._act("deallocate"))
        self.route("POST", VM + "/start", "vms.start", self._act("start"))
        self.route("DELETE", VM, "vms.delete", self._act("delete"))
        self.route("GET", OPS, "operations.get", self._operation)
        self.route("PUT", group + r"snapshots/(?P<name>[^/]+)", "snapshots.put", self._put_snapshot)
        self.route("GET", group + "snapshots", "snapshots.list", self._list_snapshots)
        self.route("GET", OPS + "/result", "operations.get", self._result)
        self.route("GET", SUB + r"/providers/Microsoft\.Compute/skus", "skus.list", self._skus)
        self.route(
            "GET",
            SUB + r"/providers/Microsoft\.Compute/virtualMachineScaleSets",
            "vmss.listAll",
            self._scale_sets,
        )
        self.route(
            "PATCH", VM + r"/providers/Microsoft\.Resources/tags/default", "tags.update", self._tags
        )
        self.route("POST", SUB + r"/metrics:getBatch", "metrics.getBatch", self._batch)
        self.route("GET", r"/subscriptions", "subscriptions.list", self._subscriptions)
        self.route("GET", MG + "/descendants", "managementGroups.descendants", self._descendants)

    def error_body(self, status: int, message: str) -> Any:
        code = {403: "AuthorizationFailed", 404: "ResourceNotFound", 429: "TooManyRequests"}.get(
            status, "InternalError"
        )
        return {"error": {"code": code, "message": message}}

    # -- world -------------------------------------------------------------------

    def add_vm(self, sub: str, rg: str, name: str, size: str, **props: Any) -> str:
        rid = vm_id(sub, rg, name)
        power = props.pop("power", "running")
        body = {
            "id": rid,
            "name": name,
            "type": "Microsoft.Compute/virtualMachines",
            "location": props.pop("location", "eastus"),
            "tags": dict(
                props.pop("tags", None) or {}
            ),  # a copy: tagging must not edit the caller's dict
            "properties": {
                "vmId": f"00000000-0000-0000-0000-{len(self.vms):012d}",
                "hardwareProfile": {"vmSize": size},
                "priority": "Regular",
                "timeCreated": "2026-11-01T00:00:00Z",
                "provisioningState": "Succeeded",
                **props,
                "instanceView": {
                    "statuses": [
                        {"code": "ProvisioningState/succeeded", "time": "2026-12-01T08:00:00Z"},
                        {"code": f"PowerState/{power}"},
                    ]
                },
            },
        }
        self.vms[rid.lower()] = body
        return rid

    def power(self, rid: str) -> str | None:
        body = self.vms.get(rid.lower())
        if body is None:
            return None
        return str(body["properties"]["instanceView"]["statuses"][-1]["code"])

    def publish(
        self,
        rid: str,
        gpu: int,
        at: datetime,
        value: float,
        namespace: str = "Telegraf/nvidia_smi",
        metric: str = "utilization_gpu",
    ) -> None:
        key = (rid.lower(), namespace, metric, str(gpu))
        self.points.setdefault(key, {})[at] = value

    # -- compute -------------------------------------------------------------------

    def _list(self, request: Request, sub: str, rg: str | None = None) -> Reply:
        rows = [b for b in self.vms.values() if b["id"].split("/")[2] == sub]
        if rg is not None:
            rows = [b for b in rows if b["id"].split("/")[4].lower() == rg.lower()]
        start = int(request.query.get("$skiptoken") or 0)
        page = rows[start : start + self.page_size]
        wants_view = request.query.get("statusOnly") == "true" or (
            rg is not None and request.query.get("$expand") == "instanceView"
        )
        if not wants_view:
            page = [_without_view(b) for b in page]
        reply: dict[str, Any] = {"value": page}
        if start + self.page_size < len(rows):
            query = "&".join(f"{k}={v}" for k, v in request.query.items() if k != "$skiptoken")
            reply["nextLink"] = (
                f"{request.base_url}{request.path}?{query}&$skiptoken={start + self.page_size}"
            )
        return 200, {}, reply

    def _find(self, sub: str, rg: str, name: str) -> dict[str, Any] | None:
        rid = vm_id(sub, rg, name)
        return self.vms.get(rid.lower())

    def _get(self, request: Request, sub: str, rg: str, name: str) -> Reply:
        body = self._find(sub, rg, name)
        if body is None:
            return 404, {}, self.error_body(404, f"VM {name} not found")
        if request.query.get("$expand") != "instanceView":
            body = _without_view(body)
        return 200, {}, body

    def _act(self, verb: str) -> Any:
        def handler(request: Request, sub: str, rg: str, name: str) -> Reply:
            body = self._find(sub, rg, name)
            if body is None:
                return 404, {}, self.error_body(404, f"VM {name} not found")
            op = str(next(self._ops))
            self.operations[op] = {"verb": verb, "id": body["id"].lower(), "polls": 0}
            url = (
                f"{request.base_url}/subscriptions/{sub}/providers/Microsoft.Compute/"
                f"locations/{body['location']}/operations/{op}"
            )
            headers = {
                "Azure-AsyncOperation": f"{url}?api-version=2024-07-01",
                "Location": f"{url}/result?api-version=2024-07-01",
                "Retry-After": LRO_RETRY_AFTER,
            }
            return 202, headers, None

        return handler

    def _put_snapshot(self, request: Request, sub: str, rg: str, name: str) -> Reply:
        """Created at once (200, ``provisioningState: Succeeded``), as ARM may answer."""
        body = request.json()
        source = body["properties"]["creationData"]["sourceResourceId"]
        rid = (
            f"/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/snapshots/{name}"
        )
        snap = {
            "id": rid,
            "name": name,
            "type": "Microsoft.Compute/snapshots",
            "location": body["location"],
            "tags": body.get("tags", {}),
            "properties": {
                "creationData": {"createOption": "Copy", "sourceResourceId": source},
                "provisioningState": "Succeeded",
            },
        }
        self.snapshots[rid.lower()] = snap
        return 200, {}, snap

    def _list_snapshots(self, request: Request, sub: str, rg: str) -> Reply:
        prefix = f"/subscriptions/{sub}/resourcegroups/{rg.lower()}/"
        return 200, {}, {"value": [s for k, s in self.snapshots.items() if k.startswith(prefix)]}

    def _operation(self, request: Request, sub: str, loc: str, op: str) -> Reply:
        found = self.operations.get(op)
        if found is None:
            return 404, {}, self.error_body(404, "operation not found")
        found["polls"] += 1
        if found["polls"] < self.polls_until_done:
            return 200, {"Retry-After": LRO_RETRY_AFTER}, {"name": op, "status": "InProgress"}
        if not found.get("applied"):
            found["applied"] = True
            after = _AFTER[found["verb"]]
            if after is None:
                self.vms.pop(found["id"], None)
            elif found["id"] in self.vms:
                self.vms[found["id"]]["properties"]["instanceView"]["statuses"][-1]["code"] = after
        return 200, {}, {"name": op, "status": "Succeeded"}

    def _result(self, request: Request, sub: str, loc: str, op: str) -> Reply:
        return 200, {}, {}

    def _skus(self, request: Request, sub: str) -> Reply:
        wanted = request.query.get("$filter", "")
        rows = [s for s in self.skus if f"'{s['locations'][0]}'" in wanted or not wanted]
        rows = [*rows, *self._size_skus(wanted, {s["name"].lower() for s in rows})]
        return 200, {}, {"value": rows}

    def _size_skus(self, wanted: str, listed: set[str]) -> list[dict[str, Any]]:
        """One SKU row per VM size held, with its ``MaxResourceVolumeMB``."""
        rows: dict[str, dict[str, Any]] = {}
        for vm in self.vms.values():
            size = vm["properties"]["hardwareProfile"]["vmSize"]
            location = vm["location"]
            if size.lower() in listed or (wanted and f"'{location}'" not in wanted):
                continue
            volume = str(self.temp_disk_mb.get(size.lower(), 0))
            rows[size.lower()] = {
                "resourceType": "virtualMachines",
                "name": size,
                "locations": [location],
                "capabilities": [{"name": "MaxResourceVolumeMB", "value": volume}],
            }
        return list(rows.values())

    def _scale_sets(self, request: Request, sub: str, rg: str | None = None) -> Reply:
        prefix = f"/subscriptions/{sub}/" + ("" if rg is None else f"resourcegroups/{rg.lower()}/")
        return 200, {}, {"value": [s for s in self.scale_sets if prefix in s["id"].lower()]}

    def _tags(self, request: Request, sub: str, rg: str, name: str) -> Reply:
        body = self._find(sub, rg, name)
        if body is None:
            return 404, {}, self.error_body(404, f"VM {name} not found")
        patch = request.json()
        tags = patch["properties"]["tags"]
        if patch["operation"] == "Merge":
            body["tags"].update(tags)
        elif patch["operation"] == "Delete":
            for key in tags:
                body["tags"].pop(key, None)
        return 200, {}, {"properties": {"tags": body["tags"]}}

    # -- subscriptions and management groups ----------------------------------------

    def _subscriptions(self, request: Request) -> Reply:
        rows = [
            {
                "id": f"/subscriptions/{sub}",
                "subscriptionId": sub,
                "displayName": f"sub {sub[-4:]}",
                "state": state,
                "tenantId": "11111111-1111-1111-1111-111111111111",
            }
            for sub, state in sorted(self.subscriptions.items())
        ]
        return self._paged(request, rows)

    def _descendants(self, request: Request, group: str) -> Reply:
        if group in self.denied_groups or group not in self.groups:
            status = 403 if group in self.denied_groups else 404
            return status, {}, self.error_body(status, f"no access to management group {group}")
        below = self._below(group)
        rows: list[dict[str, Any]] = [
            {
                "id": f"/providers/Microsoft.Management/managementGroups/{child}",
                "type": "Microsoft.Management/managementGroups",
                "name": child,
                "properties": {"displayName": child, "parent": {"id": self.groups[child]}},
            }
            for child in below
        ]
        rows += [
            {
                "id": f"/subscriptions/{sub}",
                "type": "Microsoft.Management/managementGroups/subscriptions",
                "name": sub,
                "properties": {"displayName": sub, "parent": {"id": home}},
            }
            for sub, home in sorted(self.placement.items())
            if home == group or home in below
        ]
        return self._paged(request, rows)

    def _below(self, group: str) -> list[str]:
        out: list[str] = []
        pending = [group]
        while pending:
            parent = pending.pop()
            children = sorted(g for g, p in self.groups.items() if p == parent)
            out.extend(children)
            pending.extend(children)
        return out

    def _paged(self, request: Request, rows: list[dict[str, Any]]) -> Reply:
        start = int(request.query.get("$skiptoken") or 0)
        reply: dict[str, Any] = {"value": rows[start : start + self.page_size]}
        if start + self.page_size < len(rows):
            query = "&".join(f"{k}={v}" for k, v in request.query.items() if k != "$skiptoken")
            reply["nextLink"] = (
                f"{request.base_url}{request.path}?{query}&$skiptoken={start + self.page_size}"
            )
        return 200, {}, reply

    # -- metrics -------------------------------------------------------------------

    def _batch(self, request: Request, sub: str) -> Reply:
        ids = request.json().get("resourceids", [])
        self.batch_sizes.append(len(ids))
        if len(ids) > 50:
            return 400, {}, {"error": {"code": "BadRequest", "message": "at most 50 resources"}}
        q = request.query
        start = _parse_time(q["starttime"])
        end = _parse_time(q["endtime"])
        step = isodate.parse_duration(q["interval"])
        top = int(q.get("top") or 10)
        split = "index eq '*'" in q.get("filter", "")
        values = [
            self._resource_metrics(
                rid, q["metricnamespace"], q["metricnames"], start, end, step, split, top
            )
            for rid in ids
        ]
        return 200, {}, {"values": values}

    def _resource_metrics(
        self,
        rid: str,
        namespace: str,
        metrics: str,
        start: datetime,
        end: datetime,
        step: timedelta,
        split: bool,
        top: int,
    ) -> Any:
        """One resource's answer; ``metrics`` may name several, comma-separated."""
        return {
            "starttime": start.isoformat(),
            "endtime": end.isoformat(),
            "interval": isodate.duration_isoformat(step),
            "namespace": namespace,
            "resourceregion": "eastus",
            "resourceid": rid,
            "value": [
                {
                    "id": f"{rid}/providers/Microsoft.Insights/metrics/{metric}",
                    "type": "Microsoft.Insights/metrics",
                    "name": {"value": metric},
                    "unit": "Percent",
                    "timeseries": self._series(
                        rid, namespace, metric, start, end, step, split, top
                    ),
                    "displayDescription": "",
                }
                for metric in metrics.split(",")
            ],
        }

    def _series(
        self,
        rid: str,
        namespace: str,
        metric: str,
        start: datetime,
        end: datetime,
        step: timedelta,
        split: bool,
        top: int,
    ) -> list[dict[str, Any]]:
        series: dict[str, dict[datetime, float]] = {}
        for (res, ns, name, gpu), points in self.points.items():
            if res == rid.lower() and ns == namespace and name == metric:
                merged = series.setdefault(gpu if split else "", {})
                for t, v in points.items():
                    merged[t] = max(v, merged.get(t, v))
        timeseries = []
        for gpu, points in sorted(series.items())[:top]:
            peaks: dict[int, float] = {}  # interval number -> max: one pass, not one per step
            for at, v in points.items():
                if at >= start:
                    k = (at - start) // step
                    peaks[k] = max(v, peaks.get(k, v))
            data = []
            t, k = start, 0
            while t < end:
                entry: dict[str, Any] = {"timeStamp": t.strftime("%Y-%m-%dT%H:%M:%SZ")}
                if k in peaks:
                    entry["maximum"] = peaks[k]
                data.append(entry)
                t, k = t + step, k + 1
            meta = [{"name": {"value": "index"}, "value": gpu}] if split else []
            timeseries.append({"metadatavalues": meta, "data": data})
        return timeseries


def vm_id(sub: str, rg: str, name: str) -> str:
    return (
        f"/subscriptions/{sub}/resourceGroups/{rg}/providers/Microsoft.Compute/"
        f"virtualMachines/{name}"
    )


def _without_view(body: dict[str, Any]) -> dict[str, Any]:
    props = {k: v for k, v in body["properties"].items() if k != "instanceView"}
    return {**body, "properties": props}


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)
