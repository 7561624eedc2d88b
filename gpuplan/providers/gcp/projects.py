"""GCP project discovery through Resource Manager v3 (google-cloud-resource-manager).

``folders`` and ``organization`` are walked: per node of the tree, one
``projects.list(parent)`` (projects directly under it) and one ``folders.list(parent)``
(its sub-folders), each a page per up to 1000 entries (the server's page size may be
smaller). ``list`` is strongly consistent, where ``search`` may lag behind a new project
by minutes. ``project_labels`` alone is one ``projects.search`` with the first label
(search ORs several terms: the rest, and the state, are checked here); with a tree, the
labels are checked on what the walk found, at no extra call.

Only ACTIVE projects and folders count: a project in DELETE_REQUESTED (the 30-day
undelete window) is left out even where the server returns it (``search`` does; ``list``
does not without ``show_deleted``). A node that cannot be read is a problem line naming
it (``gcp folders/123: cannot list its projects: 403 ...``) and the rest is still walked.
Project ids come out sorted and once each. The REST transport is used, like the
Compute Engine client: one HTTP stack, and an ``http://`` endpoint works for a local
proxy or fake. Permissions: deploy/gcp-discovery-role.yaml.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from gpuplan.providers.base import ProviderError
from gpuplan.providers.found import FoundScopes
from gpuplan.providers.gcp.clients import read_retry, sdk_errors

if TYPE_CHECKING:
    from google.auth.credentials import Credentials
    from google.cloud.resourcemanager_v3 import FoldersClient, ProjectsClient

T = TypeVar("T")
_REQUEST = re.compile(r"^(GET|POST) \S+: ")


@dataclass
class ResourceManager:
    """The two Resource Manager clients discovery needs; built or passed in."""

    projects: ProjectsClient
    folders: FoldersClient


def make_resource_manager(
    endpoint: str | None = None, credentials: Credentials | None = None
) -> ResourceManager:
    """REST clients on Google's endpoint or ``endpoint`` (ADC when no credentials)."""
    from google.api_core.client_options import ClientOptions
    from google.auth.exceptions import DefaultCredentialsError
    from google.cloud import resourcemanager_v3

    options = ClientOptions(api_endpoint=endpoint) if endpoint else None
    try:
        return ResourceManager(
            resourcemanager_v3.ProjectsClient(
                credentials=credentials, client_options=options, transport="rest"
            ),
            resourcemanager_v3.FoldersClient(
                credentials=credentials, client_options=options, transport="rest"
            ),
        )
    except DefaultCredentialsError as exc:
        first = str(exc).split(". ", 1)[0]
        raise ProviderError(f"no Application Default Credentials ({first})") from None


def parents_of(folders: Iterable[str], organization: str | None) -> list[str]:
    """``folders/123`` and ``organizations/456`` from the policy's ids (prefix optional)."""
    out = [f"folders/{f.removeprefix('folders/')}" for f in folders]
    if organization:
        out.append(f"organizations/{organization.removeprefix('organizations/')}")
    return list(dict.fromkeys(out))


def discover(
    rm: ResourceManager,
    *,
    parents: Sequence[str] = (),
    labels: Mapping[str, str] | None = None,
    retry_initial_s: float = 1.0,
    retry_timeout_s: float = 60.0,
) -> FoundScopes:
    """ACTIVE projects under ``parents`` (recursively), carrying every label in ``labels``.

    No parents: a search on the labels across every project the identity may see; that
    search failing raises ProviderError (nothing is known then).
    """
    wanted = dict(labels or {})
    retry = read_retry(retry_initial_s, retry_timeout_s)
    if not parents:
        found = _search(rm, wanted, retry)
        return FoundScopes(sorted({_id(p) for p in found if _keep(p, wanted)}))
    out = FoundScopes()
    ids: set[str] = set()
    for parent in parents:
        ids.update(_id(p) for p in _walk(rm, parent, retry, out.problems) if _keep(p, wanted))
    out.ids = sorted(ids)
    return out


def _walk(rm: ResourceManager, root: str, retry: Any, problems: list[str]) -> list[Any]:
    """Every project under ``root``, through ACTIVE sub-folders; unreadable nodes noted."""
    found: list[Any] = []
    pending, seen = [root], {root}
    while pending:
        parent = pending.pop()
        listed = _guard(
            f"gcp {parent}: cannot list its projects",
            functools.partial(_all, rm.projects.list_projects, parent=parent, retry=retry),
            problems,
        )
        found.extend(listed or ())
        children = _guard(
            f"gcp {parent}: cannot list its folders",
            functools.partial(_all, rm.folders.list_folders, parent=parent, retry=retry),
            problems,
        )
        for folder in children or ():
            if _active(folder) and folder.name not in seen:
                seen.add(folder.name)
                pending.append(folder.name)
    return found


def _all(call: Callable[..., Iterable[Any]], **kwargs: Any) -> list[Any]:
    """Every item of a paged listing (the pager fetches the pages)."""
    return list(call(**kwargs))


def _search(rm: ResourceManager, labels: Mapping[str, str], retry: Any) -> list[Any]:
    key = min(labels)
    query = f"labels.{key}:{labels[key] or '*'}"
    try:
        return list(rm.projects.search_projects(query=query, retry=retry))
    except sdk_errors() as exc:
        raise ProviderError(f"gcp: cannot search projects ({query}): {_why(exc)}") from None


def _guard(what: str, call: Callable[[], T], problems: list[str]) -> T | None:
    try:
        return call()
    except sdk_errors() as exc:
        problems.append(f"{what}: {_why(exc)}")
        return None


def _keep(project: Any, labels: Mapping[str, str]) -> bool:
    return _active(project) and all(project.labels.get(k) == v for k, v in labels.items())


def _active(node: Any) -> bool:
    return str(getattr(node.state, "name", node.state)) == "ACTIVE"


def _id(project: Any) -> str:
    return str(project.project_id)


def _why(exc: Exception) -> str:
    from google.api_core import exceptions as gexc

    if isinstance(exc, gexc.RetryError):
        return f"gave up after retries ({exc.cause})"
    if isinstance(exc, gexc.GoogleAPICallError):
        # The REST transport leads with "GET <url>: "; the node is already named.
        return f"{exc.code} {_REQUEST.sub('', str(exc.message), count=1)}"
    return f"{type(exc).__name__}: {exc}"
