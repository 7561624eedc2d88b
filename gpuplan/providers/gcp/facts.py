"""GCP's facts for the catalog, the planner and region naming: no SDK, no pydantic.

The shells register these before reading the catalog
(:func:`gpuplan.usecases.clouds.entries.register_facts`); the entry
(:mod:`gpuplan.providers.gcp.entry`) is built from them. The known regions are those
Google Cloud documents ("Regions and zones", read 2026-11).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from gpuplan.core.catalog.kinds import PricingModel, Provider, ReservationRules
from gpuplan.core.catalog.region_naming import PrefixNaming, RegionGroup, names
from gpuplan.core.clouds import CloudFacts

if TYPE_CHECKING:
    from gpuplan.core.catalog.skypilot_rows import VmRow

GCP = Provider.named("gcp")
"""GCP's provider value: what GCP's own code compares and builds offers with."""

_GCP_REGIONS = names(
    "us-central1 us-east1 us-east4 us-east5 us-south1 us-west1 us-west2 us-west3 us-west4 "
    "northamerica-northeast1 northamerica-northeast2 northamerica-south1 "
    "southamerica-east1 southamerica-west1 europe-central2 europe-north1 europe-north2 "
    "europe-southwest1 europe-west1 europe-west2 europe-west3 europe-west4 europe-west6 "
    "europe-west8 europe-west9 europe-west10 europe-west12 asia-east1 asia-east2 "
    "asia-northeast1 asia-northeast2 asia-northeast3 asia-south1 asia-south2 "
    "asia-southeast1 asia-southeast2 australia-southeast1 australia-southeast2 "
    "me-central1 me-central2 me-west1 africa-south1"
)
_GCP_PREFIX = {
    "us": RegionGroup.US,
    "northamerica": RegionGroup.CANADA,
    "southamerica": RegionGroup.SOUTH_AMERICA,
    "europe": RegionGroup.EUROPE,
    "asia": RegionGroup.ASIA,
    "australia": RegionGroup.OCEANIA,
    "me": RegionGroup.MIDDLE_EAST,
    "africa": RegionGroup.AFRICA,
}
_GCP_SPECIAL = {"northamerica-south1": RegionGroup.US}  # Querétaro: with the US (as AWS mx-)

NAMING = PrefixNaming(_GCP_REGIONS, _GCP_PREFIX, special=_GCP_SPECIAL)


def combine_rows(rows: list[VmRow]) -> tuple[list[VmRow], list[str]]:
    """Host and accelerator rows of a SkyPilot vms.csv joined (:mod:`.skypilot`, loaded
    only for ``catalog import``)."""
    from gpuplan.providers.gcp.skypilot import combine_rows as combine

    return combine(rows)


FACTS = CloudFacts(
    GCP,
    "gcp.csv",
    NAMING,
    "GCP local SSD",
    billing="per second, 1 min minimum (Compute Engine docs)",
    title="GCP",
    secret_env=("GOOGLE_OAUTH_ACCESS_TOKEN",),
    credentials="GCP needs Application Default Credentials and the Cloud Billing API, and "
    "for discovery GPUPLAN_GCP_PROJECT (compute.machineTypes.list, "
    "compute.acceleratorTypes.list)",
    endpoint_env=("GPUPLAN_GCP_BILLING_ENDPOINT", "GPUPLAN_GCP_COMPUTE_ENDPOINT"),
    skypilot=True,
    spot_node_labels={
        "cloud.google.com/gke-spot": ("true",),
        "cloud.google.com/gke-preemptible": ("true",),
    },
    reservations={
        PricingModel.FLEX_START: ReservationRules(
            min_hours=1,
            max_hours=7 * 24,
            step_hours=1,
            lead_days=None,
            paid_upfront=False,
            summary="queued until capacity is free, runs at most 7 days, billed for run time",
            source="Google Cloud docs, Dynamic Workload Scheduler Flex-start VMs",
        ),
        PricingModel.DWS_CALENDAR: ReservationRules(
            min_hours=24,
            max_hours=90 * 24,
            step_hours=24,
            lead_days=56,
            paid_upfront=False,
            summary="reservation of 1-90 whole days, booked up to 8 weeks ahead, charged for "
            "the whole reservation",
            source="Google Cloud docs, future reservations in calendar mode",
        ),
    },
    skypilot_rows=combine_rows,
)
