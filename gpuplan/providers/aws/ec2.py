"""EC2 payloads -> :class:`GpuInstance`: listing, GPU type facts, managed detection.

Listing is one paginated ``DescribeInstances`` per region; GPU facts come from the
catalog and from ``DescribeInstanceTypes`` (``GpuInfo``), asked once per unseen type
batch. A type EC2 does not know (moto lacks ``p3.2xlarge``) is dropped with a notice,
never an error for the run. Spot request types (one-time or persistent) come from
``DescribeSpotInstanceRequests``; when that cannot be read the instance counts as
one-time, which is the safe side (it is then never stopped).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState, RiskFacts
from gpuplan.providers.aws.facts import AWS

LISTED_STATES = ("pending", "running", "stopping", "stopped")
TYPES_PER_CALL = 100
# Tags AWS services put on instances they own. Stopping such an instance only makes
# its owner replace it (or breaks the service), so they are ``managed``.
MANAGED_TAGS: tuple[tuple[str, str], ...] = (
    ("aws:autoscaling:groupName", "Auto Scaling group"),
    ("eks:nodegroup-name", "EKS node group"),
    ("aws:eks:cluster-name", "EKS cluster"),
    ("karpenter.sh/nodepool", "Karpenter node pool"),
    ("karpenter.sh/provisioner-name", "Karpenter provisioner"),
    ("aws:ec2spot:fleet-request-id", "Spot Fleet"),
    ("aws:ec2:fleet-id", "EC2 Fleet"),
    ("aws:elasticmapreduce:job-flow-id", "EMR cluster"),
    ("aws:batch:compute-environment", "AWS Batch compute environment"),
    ("AWSBatchServiceTag", "AWS Batch"),
    ("parallelcluster:cluster-name", "AWS ParallelCluster"),
)
MANAGED_PREFIXES: tuple[tuple[str, str], ...] = (
    ("aws:sagemaker:", "SageMaker"),
    ("sagemaker:", "SageMaker"),
    ("aws:batch:", "AWS Batch"),
    ("aws:eks:", "EKS"),
)


@dataclass(frozen=True)
class TypeFacts:
    """What matters about an instance type for idle detection and actions."""

    gpu: str | None
    gpu_count: float
    instance_store_gb: int = 0


def managed_by(tags: Mapping[str, str]) -> str | None:
    """The managed service that owns an instance, from its tags; None when nobody does."""
    for key, label in MANAGED_TAGS:
        if key in tags:
            return f"{label} {tags[key]}".strip()
    for prefix, label in MANAGED_PREFIXES:
        if any(k.startswith(prefix) for k in tags):
            return label
    return None


def tags_of(raw: Mapping[str, Any]) -> dict[str, str]:
    return {t["Key"]: t.get("Value", "") for t in raw.get("Tags") or ()}


def describe_types(ec2: Any, names: Iterable[str]) -> tuple[dict[str, dict[str, Any]], list[str]]:
    """(type -> DescribeInstanceTypes entry, unknown types); survives unknown names."""
    wanted = sorted(set(names))
    found: dict[str, dict[str, Any]] = {}
    for i in range(0, len(wanted), TYPES_PER_CALL):
        chunk = wanted[i : i + TYPES_PER_CALL]
        try:
            found.update(_types_call(ec2, chunk))
        except ClientError as exc:
            if _code(exc) != "InvalidInstanceType":
                raise
            for name in chunk:  # one unknown name fails the whole call: ask one by one
                try:
                    found.update(_types_call(ec2, [name]))
                except ClientError as one:
                    if _code(one) != "InvalidInstanceType":
                        raise
    return found, [n for n in wanted if n not in found]


def _types_call(ec2: Any, names: list[str]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for page in ec2.get_paginator("describe_instance_types").paginate(InstanceTypes=names):
        for entry in page["InstanceTypes"]:
            out[entry["InstanceType"]] = entry
    return out


def type_facts(name: str, entry: Mapping[str, Any] | None, catalog: Catalog | None) -> TypeFacts:
    """GPU name and count from the catalog first, else from GpuInfo."""
    store = int(((entry or {}).get("InstanceStorageInfo") or {}).get("TotalSizeInGB") or 0)
    offer = _catalog_offer(catalog, name)
    if offer is not None:
        return TypeFacts(offer.gpu, offer.gpu_count, store)
    gpus = ((entry or {}).get("GpuInfo") or {}).get("Gpus") or []
    if not gpus:
        return TypeFacts(None, 0, store)
    count = sum(int(g.get("Count", 0)) for g in gpus)
    raw_name = str(gpus[0].get("Name", ""))
    gpu = raw_name
    if catalog is not None:
        spec = catalog.gpus.lookup(raw_name)
        gpu = spec.name if spec is not None else raw_name
    return TypeFacts(gpu or None, count, store)


def _catalog_offer(catalog: Catalog | None, name: str) -> Any:
    if catalog is None:
        return None
    for offer in catalog.offers:
        if offer.provider is AWS and offer.instance_type == name:
            return offer
    return None


def hourly_price(
    catalog: Catalog | None, name: str, region: str, pricing: PricingModel
) -> Decimal | None:
    if catalog is None:
        return None
    for offer in catalog.offers:
        if offer.provider is AWS and offer.instance_type == name and offer.region == region:
            return offer.price(pricing) or offer.price(PricingModel.ON_DEMAND)
    return None


def spot_request_types(ec2: Any, instance_ids: Iterable[str]) -> dict[str, str]:
    """Spot instance id -> request type (``one-time`` / ``persistent``); what cannot be
    read is absent, and absent counts as one-time (never stopped)."""
    ids = sorted(set(instance_ids))
    out: dict[str, str] = {}
    for i in range(0, len(ids), 100):
        try:
            page = ec2.describe_spot_instance_requests(
                Filters=[{"Name": "instance-id", "Values": ids[i : i + 100]}]
            )
        except (ClientError, BotoCoreError):
            continue
        for req in page.get("SpotInstanceRequests", ()):
            if req.get("InstanceId"):
                out[req["InstanceId"]] = str(req.get("Type", ""))
    return out


def to_instance(
    raw: Mapping[str, Any],
    *,
    region: str,
    account: str,
    facts: TypeFacts,
    catalog: Catalog | None,
    spot_types: Mapping[str, str],
) -> GpuInstance:
    tags = tags_of(raw)
    spot = raw.get("InstanceLifecycle") == "spot"
    pricing = PricingModel.SPOT if spot else PricingModel.ON_DEMAND
    risk = RiskFacts(
        hibernation_enabled=bool((raw.get("HibernationOptions") or {}).get("Configured")),
        spot_one_time=spot and spot_types.get(raw["InstanceId"], "one-time") != "persistent",
        root_instance_store=raw.get("RootDeviceType") == "instance-store",
        # InstanceStorageInfo counts every instance-store volume of the type, on any
        # device (p4d: 8 x 1000 GB NVMe), not only an instance-store root.
        instance_store_gb=facts.instance_store_gb,
    )
    attributes = {"private_dns": str(raw.get("PrivateDnsName") or "")}
    stopped = stopped_at(raw)
    if stopped:
        attributes["stopped_at"] = stopped
    return GpuInstance(
        provider=AWS,
        account=account,
        region=region,
        zone=(raw.get("Placement") or {}).get("AvailabilityZone"),
        instance_id=raw["InstanceId"],
        name=tags.get("Name"),
        instance_type=raw["InstanceType"],
        state=_state(str((raw.get("State") or {}).get("Name", ""))),
        started_at=raw.get("LaunchTime"),
        labels=tags,
        pricing=pricing,
        gpu=facts.gpu,
        gpu_count=facts.gpu_count,
        hourly_usd=hourly_price(catalog, raw["InstanceType"], region, pricing),
        managed_by=managed_by(tags),
        risk=risk,
        attributes=attributes,
    )


_TRANSITION = re.compile(r"\((\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2}) (?:GMT|UTC)\)")


def stopped_at(raw: Mapping[str, Any]) -> str:
    """When a stopped instance stopped (ISO 8601), from EC2's ``StateTransitionReason``
    (``User initiated (2026-10-23 10:00:00 GMT)``); "" when not stopped or not said."""
    if str((raw.get("State") or {}).get("Name", "")) != "stopped":
        return ""
    found = _TRANSITION.search(str(raw.get("StateTransitionReason") or "")[:200])
    return f"{found.group(1)}T{found.group(2)}+00:00" if found else ""


def _state(name: str) -> InstanceState:
    mapping = {"shutting-down": InstanceState.STOPPING}
    if name in mapping:
        return mapping[name]
    try:
        return InstanceState(name)
    except ValueError:
        return InstanceState.UNKNOWN


def state_of(name: str) -> InstanceState:
    """The state EC2 answered with (``shutting-down`` counts as stopping)."""
    return _state(name)


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))
