"""GCP project discovery through Resource Manager v3 on a wire fake, then stop-idle.

An organisation with a folder tree (``ml`` -> ``ml/vision``), a project in
DELETE_REQUESTED that must never be governed, a folder gpuplan may not list, and a
project whose Compute Engine API is disabled: that project is a named problem, the
others are surveyed and their idle instances stopped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from google.auth.credentials import AnonymousCredentials

from gpuplan.core.policy import Policy
from gpuplan.providers.gcp.entry import gcp_scopes
from gpuplan.usecases.clouds.adapters import BuildContext
from tests.fakes.contract import actions, policy
from tests.fakes.gcp_resource_manager import ResourceManagerFake
from tests.fakes.gcp_world import GcpWorld
from tests.fakes.http import serve
from tests.fakes.scenarios import Case

ORG = "organizations/4242"


@pytest.fixture
def tree() -> Iterator[tuple[ResourceManagerFake, str, dict[str, str]]]:
    rm = ResourceManagerFake()
    ml = rm.folder(ORG, "ml")
    vision = rm.folder(ml, "vision")
    secret = rm.folder(ORG, "secret")
    rm.folder(ml, "old", state="DELETE_REQUESTED")
    rm.project(ml, "ml-train", team="research")
    rm.project(vision, "vision-a", team="research")
    rm.project(vision, "vision-gone", state="DELETE_REQUESTED", team="research")
    rm.project(vision, "vision-nocompute", team="research")
    rm.project(ORG, "top-level", team="finance")
    rm.project(secret, "secret-proj", team="research")
    rm.denied.add(secret)
    folders = {"ml": ml, "vision": vision, "secret": secret}
    with serve(rm) as url:
        yield rm, url, folders


def _scope(gcp: GcpWorld, url: str, **discovery: Any) -> Policy:
    return policy(
        {
            "gcp": {
                **discovery,
                "resource_manager_endpoint": url,
                "compute_endpoint": gcp.compute_url,
                "monitoring_endpoint": "http://" + gcp.monitoring_address,
            }
        }
    )


def _build(gcp: GcpWorld, pol: Policy) -> Any:
    return gcp_scopes(BuildContext(pol, gcp.catalog, None, {}), credentials=AnonymousCredentials())


def test_folders_are_walked_and_the_disabled_api_is_a_named_problem(
    gcp: GcpWorld, tree: tuple[ResourceManagerFake, str, dict[str, str]]
) -> None:
    rm, url, folders = tree
    for project in ("ml-train", "vision-a", "vision-gone", "vision-nocompute"):
        gcp.build(Case(f"idle-{project}", "idle"), project=project)
    gcp.compute.disabled.add("vision-nocompute")
    pol = _scope(gcp, url, folders=[folders["ml"]])
    scopes = _build(gcp, pol)
    assert list(scopes) == ["ml-train", "vision-a", "vision-nocompute"]  # sorted, no deleted
    assert scopes.problems == []
    # ml and ml/vision: one projects.list and one folders.list each (pages of two).
    assert rm.calls["folders.list"] == 2 and rm.calls["projects.search"] == 0
    result = run_with(pol, scopes)
    assert actions(result) == {"idle-ml-train": "stopped", "idle-vision-a": "stopped"}
    (problem,) = result.problems
    assert problem.startswith("gcp vision-nocompute: listing failed: ")
    assert "403" in problem and "Compute Engine API has not been used" in problem
    assert gcp.compute.status("vision-gone", "idle-vision-gone") == "RUNNING"
    assert gcp.compute.status("vision-nocompute", "idle-vision-nocompute") == "RUNNING"
    assert result.failed  # exit 1


def run_with(pol: Policy, scopes: Any) -> Any:
    from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle
    from tests.fakes.scenarios import NOW

    return run_stop_idle(pol, list(scopes.values()), apply=True, now=NOW, problems=scopes.problems)


def test_an_organisation_with_a_folder_it_may_not_list(
    gcp: GcpWorld, tree: tuple[ResourceManagerFake, str, dict[str, str]]
) -> None:
    rm, url, folders = tree
    scopes = _build(gcp, _scope(gcp, url, organization="4242"))
    assert list(scopes) == ["ml-train", "top-level", "vision-a", "vision-nocompute"]
    secret = folders["secret"]
    assert scopes.problems == [
        f"gcp {secret}: cannot list its projects: 403 Permission denied on '{secret}'",
        f"gcp {secret}: cannot list its folders: 403 Permission denied on '{secret}'",
    ]
    assert rm.calls["projects.list"] == rm.calls["folders.list"]  # one of each per node


def test_labels_alone_search_and_deleted_projects_stay_out(
    gcp: GcpWorld, tree: tuple[ResourceManagerFake, str, dict[str, str]]
) -> None:
    rm, url, _ = tree
    rm.project("organizations/4242", "other-team", team="research", tier="gold")
    scopes = _build(gcp, _scope(gcp, url, project_labels={"team": "research", "tier": "gold"}))
    assert list(scopes) == ["other-team"]
    assert set(rm.queries) == {"labels.team:research"}  # the API ORs terms: the rest is ours
    assert len(rm.queries) == 3  # six research projects, pages of two
    scopes = _build(gcp, _scope(gcp, url, project_labels={"team": "research"}))
    assert "vision-gone" not in scopes  # search answers DELETE_REQUESTED projects too
    assert list(scopes) == sorted(
        ["ml-train", "vision-a", "vision-nocompute", "secret-proj", "other-team"]
    )


def test_labels_filter_a_folder_walk(
    gcp: GcpWorld, tree: tuple[ResourceManagerFake, str, dict[str, str]]
) -> None:
    rm, url, _ = tree
    scopes = _build(gcp, _scope(gcp, url, organization="4242", project_labels={"team": "finance"}))
    assert list(scopes) == ["top-level"]
    assert rm.calls["projects.search"] == 0
