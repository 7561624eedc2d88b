"""AWS's facts for the catalog, the planner and region naming: no SDK, no pydantic.

The shells register these before reading the catalog
(:func:`gpuplan.usecases.clouds.entries.register_facts`); the entry
(:mod:`gpuplan.providers.aws.entry`) is built from them. The known regions are those AWS
documents ("Regions and Zones", read 2026-11).
"""

from __future__ import annotations

from gpuplan.core.catalog.kinds import PricingModel, Provider, ReservationRules
from gpuplan.core.catalog.region_naming import PrefixNaming, RegionGroup, names
from gpuplan.core.clouds import CloudFacts

AWS = Provider.named("aws")
"""AWS's provider value: what AWS's own code compares and builds offers with."""

_AWS_REGIONS = names(
    "us-east-1 us-east-2 us-west-1 us-west-2 us-gov-east-1 us-gov-west-1 ca-central-1 "
    "ca-west-1 mx-central-1 sa-east-1 eu-central-1 eu-central-2 eu-west-1 eu-west-2 "
    "eu-west-3 eu-north-1 eu-south-1 eu-south-2 ap-east-1 ap-south-1 ap-south-2 "
    "ap-northeast-1 ap-northeast-2 ap-northeast-3 ap-southeast-1 ap-southeast-2 "
    "ap-southeast-3 ap-southeast-4 ap-southeast-5 ap-southeast-7 me-south-1 me-central-1 "
    "il-central-1 af-south-1"
)
_AWS_PREFIX = {
    "us": RegionGroup.US,
    "ca": RegionGroup.CANADA,
    "mx": RegionGroup.US,
    "sa": RegionGroup.SOUTH_AMERICA,
    "eu": RegionGroup.EUROPE,
    "ap": RegionGroup.ASIA,
    "me": RegionGroup.MIDDLE_EAST,
    "il": RegionGroup.MIDDLE_EAST,
    "af": RegionGroup.AFRICA,
}

NAMING = PrefixNaming(
    _AWS_REGIONS,
    _AWS_PREFIX,
    special=dict.fromkeys(
        ("ap-southeast-2", "ap-southeast-4", "ap-southeast-6"), RegionGroup.OCEANIA
    ),
)


def is_local_zone(zone: str, region: str) -> bool:
    """True for a Local or Wavelength Zone listed under its parent region.

    Their spot prices are often far below the region's and they use the parent's
    on-demand price, so the regional spot summary leaves them out. Works on zone names
    (``us-east-1a`` vs ``us-east-1-atl-2a``) and zone IDs (``use1-az1`` vs ``use1-atl2-az1``).
    """
    if zone.startswith(region):
        return zone[len(region) :].startswith("-")
    return zone.count("-") > 1


FACTS = CloudFacts(
    AWS,
    "aws.csv",
    NAMING,
    "AWS instance store (NVMe on g4dn, g5, g6, p4d, p5 ...)",
    billing="per second, 60 s minimum (Linux; EC2 pricing page)",
    title="AWS",
    secret_env=("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"),
    credentials="AWS needs pricing:GetProducts, ec2:DescribeSpotPriceHistory, "
    "ec2:DescribeInstanceTypes and ec2:DescribeInstanceTypeOfferings (the usual boto3 chain)",
    endpoint_env=("AWS_ENDPOINT_URL",),
    skypilot=True,
    spot_node_labels={"eks.amazonaws.com/capacityType": ("SPOT",)},
    spot_evidence="AWS Spot Instance Advisor puts most GPU types in its highest bucket (>20% "
    "of instances interrupted per month)",
    reservations={
        PricingModel.CAPACITY_BLOCK: ReservationRules(
            min_hours=24,
            max_hours=182 * 24,
            step_hours=24,
            lead_days=56,
            paid_upfront=True,
            summary="blocks of 1-14 days in 1-day steps (up to 182 days in 7-day steps), booked "
            "up to 8 weeks ahead, paid in full when reserved",
            source="AWS EC2 User Guide, Capacity Blocks for ML",
        ),
    },
    outside_region=is_local_zone,
)
