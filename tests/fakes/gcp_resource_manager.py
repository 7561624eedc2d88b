"""A Resource Manager v3 REST fake: folders and projects in a tree, listed and searched.

Follows the public v3 reference (cloud.google.com/resource-manager/reference/rest/v3):
``projects.list`` and ``folders.list`` answer the direct children of ``parent``, ACTIVE
ones only unless ``showDeleted=true``; ``projects.search`` answers every project whose
fields match *any* query term (the API ORs terms) in any state, as the reference says;
pages of ``page_size`` with ``nextPageToken``. A parent the caller may not read answers
403 PERMISSION_DENIED, as the API does for a folder without
``resourcemanager.projects.list``.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.http import FakeApi, Reply, Request

# The IAM permission each named call needs (cloud.google.com/resource-manager/docs/
# access-control-proj and access-control-folders).
PERMISSIONS = {
    "projects.list": "resourcemanager.projects.list",
    "projects.search": "resourcemanager.projects.get",
    "folders.list": "resourcemanager.folders.list",
}


@dataclass
class ResourceManagerFake(FakeApi):
    folders: dict[str, dict[str, Any]] = field(default_factory=dict)
    """``folders/N`` -> folder JSON."""
    projects: dict[str, dict[str, Any]] = field(default_factory=dict)
    """project id -> project JSON."""
    denied: set[str] = field(default_factory=set)
    """Parents (``folders/N``) whose listings answer 403."""
    page_size: int = 2
    queries: list[str] = field(default_factory=list)
    _numbers: Any = field(default_factory=lambda: itertools.count(100001))

    def __post_init__(self) -> None:
        self.route("GET", r"/v3/projects", "projects.list", self._list_projects)
        self.route("GET", r"/v3/projects:search", "projects.search", self._search)
        self.route("GET", r"/v3/folders", "folders.list", self._list_folders)

    def error_body(self, status: int, message: str) -> Any:
        state = {403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}
        return {"error": {"code": status, "message": message, "status": state.get(status, "")}}

    # -- world -------------------------------------------------------------------

    def folder(self, parent: str, name: str, state: str = "ACTIVE") -> str:
        key = f"folders/{next(self._numbers)}"
        self.folders[key] = {"name": key, "parent": parent, "displayName": name, "state": state}
        return key

    def project(
        self, parent: str, project_id: str, state: str = "ACTIVE", **labels: str
    ) -> dict[str, Any]:
        body = {
            "name": f"projects/{next(self._numbers)}",
            "parent": parent,
            "projectId": project_id,
            "displayName": project_id,
            "state": state,
            "labels": dict(labels),
        }
        self.projects[project_id] = body
        return body

    # -- API -----------------------------------------------------------------------

    def _list_projects(self, request: Request) -> Reply:
        return self._children(request, self.projects.values(), "projects")

    def _list_folders(self, request: Request) -> Reply:
        return self._children(request, self.folders.values(), "folders")

    def _children(self, request: Request, rows: Any, key: str) -> Reply:
        parent = request.query.get("parent", "")
        if parent in self.denied:
            return 403, {}, self.error_body(403, f"Permission denied on '{parent}'")
        deleted = request.query.get("showDeleted") == "true"
        found = [r for r in rows if r["parent"] == parent and (deleted or r["state"] == "ACTIVE")]
        return self._page(request, found, key)

    def _search(self, request: Request) -> Reply:
        query = request.query.get("query", "")
        self.queries.append(query)
        terms = [t.split(":", 1) for t in query.split()]
        found = [p for p in self.projects.values() if any(_matches(p, k, v) for k, v in terms)]
        return self._page(request, found if terms else list(self.projects.values()), "projects")

    def _page(self, request: Request, rows: list[dict[str, Any]], key: str) -> Reply:
        start = int(request.query.get("pageToken") or 0)
        reply: dict[str, Any] = {key: rows[start : start + self.page_size]}
        if start + self.page_size < len(rows):
            reply["nextPageToken"] = str(start + self.page_size)
        return 200, {}, reply


def _matches(project: dict[str, Any], key: str, value: str) -> bool:
    """One search term, case-insensitive as the API's; ``*`` matches any value."""
    if key.lower().startswith("labels."):
        label = project["labels"].get(key[len("labels.") :])
        return label is not None and (value == "*" or label.lower() == value.lower())
    if key.lower() in ("state", "lifecyclestate"):
        return str(project["state"]).lower() == value.lower()
    if key.lower() in ("id", "projectid"):
        return str(project["projectId"]).lower() == value.lower()
    if key.lower() == "parent":
        return str(project["parent"]) == value
    return False
