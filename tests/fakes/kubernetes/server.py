"""A fake Kubernetes API server: objects in memory, served over TLS on 127.0.0.1.

Independent of the client: it knows the REST paths (``/api/v1/...``,
``/apis/<group>/<version>/...``), answers lists in pages (``limit``/``continue``),
applies merge, strategic-merge (built-in kinds only, as the real server: a custom
resource answers 415) and JSON patches, refuses a patch whose ``metadata.resourceVersion``
is stale (409), honours ``dryRun=All`` (the answer shows the change, nothing is stored),
answers 403 for verbs a test forbids (RBAC) and 429 with ``Retry-After`` when told to
throttle. Every request is in :attr:`KubeApi.requests`.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme
import yaml

from tests.fakes.http import FakeApi, Reply, Request, serve

CORE = "api/v1"
RESOURCES: dict[tuple[str, str], tuple[str, bool, bool]] = {
    # (prefix, plural) -> (kind, namespaced, built in)
    (CORE, "nodes"): ("Node", False, True),
    (CORE, "namespaces"): ("Namespace", False, True),
    (CORE, "pods"): ("Pod", True, True),
    ("apis/apps/v1", "deployments"): ("Deployment", True, True),
    ("apis/apps/v1", "statefulsets"): ("StatefulSet", True, True),
    ("apis/apps/v1", "replicasets"): ("ReplicaSet", True, True),
    ("apis/apps/v1", "daemonsets"): ("DaemonSet", True, True),
    ("apis/batch/v1", "jobs"): ("Job", True, True),
    ("apis/batch/v1", "cronjobs"): ("CronJob", True, True),
    ("apis/policy/v1", "poddisruptionbudgets"): ("PodDisruptionBudget", True, True),
    ("apis/kubeflow.org/v1", "notebooks"): ("Notebook", True, False),
}
SCALABLE = {"deployments", "statefulsets", "replicasets"}
MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
PATH = re.compile(
    r"^/(?P<prefix>api/v1|apis/[^/]+/[^/]+)(?:/namespaces/(?P<ns>[^/]+))?"
    r"/(?P<plural>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>scale|status))?)?$"
)
VERBS = {"GET": "get", "PATCH": "patch", "PUT": "update", "DELETE": "delete", "POST": "create"}


@dataclass(frozen=True)
class Logged:
    """One request as the server saw it."""

    method: str
    path: str
    query: dict[str, str]
    content_type: str

    @property
    def dry_run(self) -> bool:
        return self.query.get("dryRun") == "All"


@dataclass
class KubeApi(FakeApi):
    """The cluster's objects and the API server's rules."""

    objects: dict[tuple[str, str, str, str], dict[str, Any]] = field(default_factory=dict)
    """(prefix, plural, namespace, name) -> the object (namespace "" when cluster-wide)."""
    requests: list[Logged] = field(default_factory=list)
    forbidden: set[tuple[str, str]] = field(default_factory=set)
    """(verb, plural) pairs RBAC refuses (403)."""
    throttle: list[int] = field(default_factory=list)
    """Retry-After seconds of the next requests to answer 429, in order."""
    after_read: dict[str, Any] = field(default_factory=dict)
    """Path -> a function called once after a GET of that path is answered (a concurrent
    writer changing the object between a client's read and its write)."""
    token: str = "fake-token-for-tests"
    version: int = 1000
    mutex: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        for method in VERBS:
            self.route(method, r"/(?P<rest>.*)", "kube", self._handle)

    # --- building the cluster -------------------------------------------------------

    def add(self, prefix: str, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Store ``obj`` (a kind of :data:`RESOURCES`), given a uid and resourceVersion."""
        kind, namespaced, _ = RESOURCES[(prefix, plural)]
        meta = obj.setdefault("metadata", {})
        ns = meta.get("namespace", "") if namespaced else ""
        meta.setdefault("uid", f"uid-{plural}-{ns}-{meta['name']}")
        meta.setdefault("creationTimestamp", "2026-12-01T08:00:00Z")
        obj.setdefault("kind", kind)
        obj.setdefault("apiVersion", prefix.removeprefix("apis/").removeprefix("api/"))
        self._bump(obj)
        self.objects[(prefix, plural, ns, meta["name"])] = obj
        return obj

    def get(self, prefix: str, plural: str, ns: str, name: str) -> dict[str, Any]:
        return self.objects[(prefix, plural, ns, name)]

    def writes(self) -> list[Logged]:
        """Requests that change something (dry runs excluded)."""
        return [r for r in self.requests if r.method != "GET" and not r.dry_run]

    def snapshot(self) -> dict[tuple[str, str, str, str], dict[str, Any]]:
        return copy.deepcopy(self.objects)

    def touch(self, prefix: str, plural: str, ns: str, name: str) -> None:
        """Another writer changed the object: a new resourceVersion."""
        self._bump(self.get(prefix, plural, ns, name))

    def _bump(self, obj: dict[str, Any]) -> None:
        self.version += 1
        obj["metadata"]["resourceVersion"] = str(self.version)

    # --- serving --------------------------------------------------------------------

    def _handle(self, request: Request, rest: str) -> Reply:
        logged = Logged(
            request.method,
            request.path,
            dict(request.query),
            request.headers.get("content-type", "").split(";")[0],
        )
        self.requests.append(logged)
        if request.headers.get("authorization") != f"Bearer {self.token}":
            return _status(401, "Unauthorized", "no valid bearer token")
        if self.throttle:
            wait = self.throttle.pop(0)
            return 429, {"Retry-After": str(wait)}, _status_body(429, "TooManyRequests", "slow")
        match = PATH.match(request.path)
        if match is None or (match["prefix"], match["plural"]) not in RESOURCES:
            return _status(404, "NotFound", f"no such path {request.path}")
        prefix, plural, name, sub = match["prefix"], match["plural"], match["name"], match["sub"]
        verb = VERBS[request.method]
        if request.method == "GET" and name is None:
            verb = "list"
        if (verb, plural) in self.forbidden or (verb, f"{plural}/{sub}") in self.forbidden:
            return _status(
                403, "Forbidden", f'{plural} is forbidden: cannot {verb} resource "{plural}"'
            )
        ns = match["ns"] or ""
        with self.mutex:
            if name is None:
                return self._list(prefix, plural, ns, request.query)
            return self._one(request, prefix, plural, ns, name, sub)

    def _list(self, prefix: str, plural: str, ns: str, query: dict[str, str]) -> Reply:
        kind = RESOURCES[(prefix, plural)][0]
        items = [
            o
            for (p, pl, n, _), o in sorted(self.objects.items())
            if p == prefix and pl == plural and (not ns or n == ns)
        ]
        items = [o for o in items if _selected(o, query.get("labelSelector", ""))]
        start = int(base64.b64decode(query["continue"]).decode()) if query.get("continue") else 0
        limit = int(query.get("limit") or 0)
        page = items[start : start + limit] if limit else items[start:]
        meta: dict[str, Any] = {"resourceVersion": str(self.version)}
        if limit and start + limit < len(items):
            meta["continue"] = base64.b64encode(str(start + limit).encode()).decode()
        api = prefix.removeprefix("apis/").removeprefix("api/")
        return 200, {}, {"kind": f"{kind}List", "apiVersion": api, "metadata": meta, "items": page}

    def _one(
        self, request: Request, prefix: str, plural: str, ns: str, name: str, sub: str | None
    ) -> Reply:
        key = (prefix, plural, ns, name)
        obj = self.objects.get(key)
        if obj is None:
            return _status(404, "NotFound", f'{plural} "{name}" not found')
        if sub == "scale" and plural not in SCALABLE:
            return _status(404, "NotFound", f"{plural} has no scale subresource")
        dry = request.query.get("dryRun") == "All"
        if request.method == "GET":
            answer = copy.deepcopy(_scale(obj) if sub == "scale" else obj)
            hook = self.after_read.pop(request.path, None)
            if hook is not None:
                hook()
            return 200, {}, answer
        if request.method == "DELETE":
            if not dry:
                del self.objects[key]
            return 200, {}, obj
        body = request.json()
        if request.method == "PUT":
            return self._put(key, obj, body, sub, dry)
        return self._patch(request, key, obj, body, sub, dry, RESOURCES[(prefix, plural)][2])

    def _put(
        self,
        key: tuple[str, str, str, str],
        obj: dict[str, Any],
        body: Any,
        sub: str | None,
        dry: bool,
    ) -> Reply:
        stale = _stale(body, obj)
        if stale:
            return stale
        new = copy.deepcopy(obj)
        if sub == "scale":
            new.setdefault("spec", {})["replicas"] = int(body["spec"]["replicas"])
        else:
            new = body
        return self._store(key, new, dry, sub)

    def _patch(
        self,
        request: Request,
        key: tuple[str, str, str, str],
        obj: dict[str, Any],
        body: Any,
        sub: str | None,
        dry: bool,
        built_in: bool,
    ) -> Reply:
        kind = request.headers.get("content-type", "").split(";")[0]
        if kind == STRATEGIC and not built_in:
            return _status(
                415,
                "UnsupportedMediaType",
                "strategic merge patch is not supported for custom resources",
            )
        if kind not in (MERGE, STRATEGIC, JSON_PATCH):
            return _status(
                415,
                "UnsupportedMediaType",
                f"the body of the request was in an unknown format: {kind or 'none'}",
            )
        target = _scale(obj) if sub == "scale" else copy.deepcopy(obj)
        if kind == JSON_PATCH:
            if not isinstance(body, list):
                return _status(400, "BadRequest", "a JSON patch is a list of operations")
            try:
                patched = _json_patch(target, body)
            except (KeyError, IndexError, ValueError) as exc:
                return _status(422, "Invalid", f"json patch failed: {exc}")
        else:
            if not isinstance(body, dict):
                return _status(400, "BadRequest", "a merge patch is an object")
            stale = _stale(body, obj)
            if stale:
                return stale
            patched = _merge(target, body)
        if sub == "scale":
            new = copy.deepcopy(obj)
            new.setdefault("spec", {})["replicas"] = int(patched["spec"]["replicas"])
        else:
            new = patched
        return self._store(key, new, dry, sub)

    def _store(
        self, key: tuple[str, str, str, str], new: dict[str, Any], dry: bool, sub: str | None
    ) -> Reply:
        new = copy.deepcopy(new)
        if not dry:
            self._bump(new)
            self.objects[key] = new
        return 200, {}, _scale(new) if sub == "scale" else new


def _status_body(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


def _status(code: int, reason: str, message: str) -> Reply:
    return code, {}, _status_body(code, reason, message)


def _stale(body: Any, obj: dict[str, Any]) -> Reply | None:
    wanted = ((body or {}).get("metadata") or {}).get("resourceVersion")
    if wanted is not None and wanted != obj["metadata"]["resourceVersion"]:
        name = obj["metadata"]["name"]
        return _status(
            409,
            "Conflict",
            f'Operation cannot be fulfilled on "{name}": the '
            "object has been modified; please apply your changes to the latest "
            "version and try again",
        )
    return None


def _scale(obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    replicas = (obj.get("spec") or {}).get("replicas", 1)
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "resourceVersion", "uid")},
        "spec": {"replicas": replicas},
        "status": {"replicas": (obj.get("status") or {}).get("replicas", replicas)},
    }


def _merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch (null removes a key)."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


def _json_patch(doc: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    """RFC 6902, the operations a client sends for maps: add, replace, remove, test."""
    for op in ops:
        parts = [p.replace("~1", "/").replace("~0", "~") for p in op["path"].split("/")[1:]]
        parent: Any = doc
        for part in parts[:-1]:
            parent = parent[int(part)] if isinstance(parent, list) else parent[part]
        last = parts[-1]
        if op["op"] in ("add", "replace"):
            if op["op"] == "replace" and last not in parent:
                raise KeyError(op["path"])
            parent[last] = op["value"]
        elif op["op"] == "remove":
            del parent[last]
        elif op["op"] == "test":
            if parent.get(last) != op["value"]:
                raise ValueError(f"test failed at {op['path']}")
        else:
            raise ValueError(f"unsupported op {op['op']}")
    return doc


def _selected(obj: dict[str, Any], selector: str) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    for term in filter(None, selector.split(",")):
        if "!=" in term:
            k, v = term.split("!=", 1)
            if labels.get(k) == v:
                return False
        elif "=" in term:
            k, v = term.replace("==", "=").split("=", 1)
            if labels.get(k) != v:
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


@dataclass
class Cluster:
    """A served fake: its API, base URL and the kubeconfig file that trusts it."""

    api: KubeApi
    url: str
    kubeconfig: Path
    context: str


def write_kubeconfig(
    path: Path, url: str, ca: trustme.CA, token: str, contexts: tuple[str, ...]
) -> Path:
    """A kubeconfig whose clusters trust ``ca`` (certificate-authority-data) and whose
    users carry ``token``; one context per name, the first current."""
    ca_data = base64.b64encode(ca.cert_pem.bytes()).decode()
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": c, "cluster": {"server": url, "certificate-authority-data": ca_data}}
            for c in contexts
        ],
        "users": [{"name": f"{c}-user", "user": {"token": token}} for c in contexts],
        "contexts": [{"name": c, "context": {"cluster": c, "user": f"{c}-user"}} for c in contexts],
        "current-context": contexts[0],
    }
    path.write_text(yaml.safe_dump(config))
    os.chmod(path, 0o600)
    return path


@contextmanager
def serve_cluster(api: KubeApi, folder: Path, context: str = "test-cluster") -> Iterator[Cluster]:
    """Serve ``api`` over TLS with a fresh CA; the kubeconfig is written in ``folder``."""
    ca = trustme.CA()
    with serve(api, ca) as url:
        config = write_kubeconfig(folder / "kubeconfig", url, ca, api.token, (context,))
        yield Cluster(api, url, config, context)


def dumps(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True)
