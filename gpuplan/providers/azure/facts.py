"""Azure's facts for the catalog, the planner and region naming: no SDK, no pydantic.

The shells register these before reading the catalog
(:func:`gpuplan.usecases.clouds.entries.register_facts`); the entry
(:mod:`gpuplan.providers.azure.entry`) is built from them. The known regions are those
Azure documents ("Azure geographies", read 2026-11).
"""

from __future__ import annotations

from gpuplan.core.catalog.kinds import Provider
from gpuplan.core.catalog.region_naming import RegionGroup, WordNaming, names
from gpuplan.core.clouds import CloudFacts

AZURE = Provider.named("azure")
"""Azure's provider value: what Azure's own code compares and builds offers with."""

_AZURE_REGIONS = names(
    "eastus eastus2 centralus northcentralus southcentralus westcentralus westus westus2 "
    "westus3 canadacentral canadaeast brazilsouth mexicocentral northeurope westeurope "
    "uksouth ukwest francecentral francesouth germanywestcentral germanynorth "
    "swedencentral switzerlandnorth switzerlandwest norwayeast norwaywest polandcentral "
    "italynorth spaincentral eastasia southeastasia japaneast japanwest koreacentral "
    "koreasouth centralindia southindia westindia jioindiawest indonesiacentral "
    "malaysiawest newzealandnorth australiaeast australiasoutheast australiacentral "
    "uaenorth uaecentral qatarcentral israelcentral southafricanorth southafricawest"
)
_AZURE_WORDS: tuple[tuple[str, RegionGroup], ...] = (
    ("us", RegionGroup.US),
    ("mexico", RegionGroup.US),
    ("canada", RegionGroup.CANADA),
    ("brazil", RegionGroup.SOUTH_AMERICA),
    ("europe", RegionGroup.EUROPE),
    ("uk", RegionGroup.EUROPE),
    ("france", RegionGroup.EUROPE),
    ("germany", RegionGroup.EUROPE),
    ("sweden", RegionGroup.EUROPE),
    ("switzerland", RegionGroup.EUROPE),
    ("norway", RegionGroup.EUROPE),
    ("poland", RegionGroup.EUROPE),
    ("italy", RegionGroup.EUROPE),
    ("spain", RegionGroup.EUROPE),
    ("asia", RegionGroup.ASIA),
    ("japan", RegionGroup.ASIA),
    ("korea", RegionGroup.ASIA),
    ("india", RegionGroup.ASIA),
    ("indonesia", RegionGroup.ASIA),
    ("malaysia", RegionGroup.ASIA),
    ("australia", RegionGroup.OCEANIA),
    ("newzealand", RegionGroup.OCEANIA),
    ("uae", RegionGroup.MIDDLE_EAST),
    ("qatar", RegionGroup.MIDDLE_EAST),
    ("israel", RegionGroup.MIDDLE_EAST),
    ("southafrica", RegionGroup.AFRICA),
)

NAMING = WordNaming(_AZURE_REGIONS, _AZURE_WORDS, not_with={"us": "australia"})

FACTS = CloudFacts(
    AZURE,
    "azure.csv",
    NAMING,
    "the Azure temporary disk (every N-series size)",
    title="Azure",
    billing="per second, no minimum stated (Linux VMs pricing page: pay as you go, by the second)",
    secret_env=("AZURE_CLIENT_SECRET",),
    credentials="Azure's Retail Prices API is public, discovery needs AZURE_SUBSCRIPTION_ID "
    "(Microsoft.Compute/skus/read)",
    endpoint_env=("GPUPLAN_AZURE_PRICES_ENDPOINT", "GPUPLAN_AZURE_ARM_ENDPOINT"),
    skypilot=True,
    spot_node_labels={"kubernetes.azure.com/scalesetpriority": ("spot",)},
)
