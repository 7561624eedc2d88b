"""GCP's section of a policy (``scope.gcp``): its model, rules and scope test.

The projects (listed or discovered) and zones a policy governs, the rules across its
keys and which instances it leaves out. The GCP registry entry names the model.

Pydantic only (no Google SDK): policies are checked without the SDK.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

from pydantic import Field, WithJsonSchema

from gpuplan.core.catalog.regions import provider_region_problem
from gpuplan.core.policy.fields import HttpUrl, Identifier, TagName, TagValue, text_check
from gpuplan.core.policy.section import CloudSection, SubPath
from gpuplan.providers.gcp.facts import GCP

if TYPE_CHECKING:
    from gpuplan.core.lifecycle.instances import GpuInstance

FOLDER_PATTERN = r"^(?:folders/)?\d{1,32}$"
GcpFolderId = Annotated[
    str,
    text_check(FOLDER_PATTERN, "a GCP folder id ('123456789012' or 'folders/123456789012')"),
    WithJsonSchema({"type": "string", "pattern": FOLDER_PATTERN}),
]
ORGANIZATION_PATTERN = r"^(?:organizations/)?\d{1,32}$"
GcpOrganizationId = Annotated[
    str,
    text_check(
        ORGANIZATION_PATTERN,
        "a GCP organisation id ('123456789012' or 'organizations/123456789012')",
    ),
    WithJsonSchema({"type": "string", "pattern": ORGANIZATION_PATTERN}),
]


class GcpScope(CloudSection):
    """GCP projects (and optionally zones) this policy governs."""

    projects: list[Identifier] = Field(default_factory=list, min_length=1)
    """Project ids; or leave out and discover projects with ``folders``, ``organization``
    or ``project_labels``."""
    folders: list[GcpFolderId] = Field(default_factory=list, min_length=1)
    """Folders whose ACTIVE projects are governed, recursively through sub-folders."""
    organization: GcpOrganizationId | None = None
    """An organisation whose ACTIVE projects are governed, through every folder."""
    project_labels: dict[TagName, TagValue] = Field(default_factory=dict)
    """Only projects carrying every one of these labels; alone, searches every project the
    identity can see."""
    zones: list[Identifier] = Field(default_factory=list)
    """Zones to keep; empty: every zone."""
    compute_endpoint: HttpUrl | None = None
    """Compute Engine API endpoint (private service connect); default: Google's."""
    monitoring_endpoint: HttpUrl | None = None
    """Cloud Monitoring API endpoint; default: Google's."""
    resource_manager_endpoint: HttpUrl | None = None
    """Resource Manager API endpoint (project discovery); default: Google's."""

    @property
    def discovers(self) -> bool:
        """Projects come from Resource Manager rather than a list."""
        return bool(self.folders or self.organization or self.project_labels)

    def problems(self) -> list[tuple[SubPath, str]]:
        """Projects are listed or discovered, one way; every zone is in a GCP region."""
        found: list[tuple[SubPath, str]] = []
        for index, zone in enumerate(self.zones):
            why = provider_region_problem(GCP, zone.rsplit("-", 1)[0])
            if why:
                found.append((("zones", index), f"zone {why}"))
        if self.projects and self.discovers:
            found.append(
                (
                    ("projects",),
                    "list projects, or discover them with folders, organization or "
                    "project_labels, not both",
                )
            )
        elif not self.projects and not self.discovers:
            found.append(
                (
                    (),
                    "names no project: give projects, or folders, organization or "
                    "project_labels to discover them",
                )
            )
        return found

    def out_of_scope(self, instance: GpuInstance) -> str | None:
        # Discovered projects are known only to the builder, which lists nothing else:
        # the project check applies to listed ones.
        if self.projects and instance.account not in self.projects:
            return f"project {instance.account} is not in scope.gcp.projects"
        if self.zones and instance.zone not in self.zones:
            return f"zone {instance.zone} is not in scope.gcp.zones"
        return None
