"""Environment variables that turn on and point the instance-type listing APIs.

Kept apart from the listing modules so that reading them imports no SDK.
"""

GCP_PROJECT_ENV = "GPUPLAN_GCP_PROJECT"
"""The project whose zones' machine types are listed (Compute Engine API)."""
GCP_COMPUTE_ENDPOINT_ENV = "GPUPLAN_GCP_COMPUTE_ENDPOINT"
"""An alternative Compute Engine endpoint (a mirror; ``http://`` goes anonymous, REST)."""
AZURE_SUBSCRIPTION_ENV = "AZURE_SUBSCRIPTION_ID"
"""The subscription whose resource SKUs are listed (Azure Resource Manager)."""
AZURE_ARM_ENDPOINT_ENV = "GPUPLAN_AZURE_ARM_ENDPOINT"
"""An alternative Resource Manager endpoint (a sovereign cloud or a test fake)."""
