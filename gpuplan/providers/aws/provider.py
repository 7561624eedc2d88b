"""``AwsAdapter``: one region of one AWS account, behind the CloudAdapter Protocol.

Clients are injected (tests point them at moto) or built from a session (standard
credential chain, a profile, ``role_arn`` through STS, or a member account's role). An
adapter for a member account names it in its scope (``aws 111122223333/us-east-1``); when
that account's role cannot be assumed, each call says so, naming the role. Every SDK
failure leaves this module as a :class:`ProviderError` naming the scope and the call,
after botocore's own retries; the use case decides what a failure means for the run.

Clients built here retry in botocore's **adaptive** mode (:data:`RETRY_MODE`): standard
mode's retries (throttling and 5xx, exponential back-off with full jitter, at most
``max_attempts`` retries after the first call, a retry quota) plus a client-side token
bucket that slows the client down once the service throttles it. A client serves one
region of one account, which is the unit AWS throttles, so surveying many scopes at once
backs off per account and region instead of failing them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any

from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.actions import Call, provider_call
from gpuplan.core.lifecycle.instances import (
    Action,
    Capability,
    GpuInstance,
    HostSamples,
    InstanceState,
)
from gpuplan.providers.aws import cloudwatch, ec2
from gpuplan.providers.aws.actions import CAPABILITIES
from gpuplan.providers.aws.facts import AWS
from gpuplan.providers.aws.session import DEFAULT_ATTEMPTS, RoleNotAssumable, client_config
from gpuplan.providers.base import MetricsSource, ProviderError, unsupported

RETRY_MODE = "adaptive"
"""botocore's retry mode for the clients this module builds (``standard``: no rate
limiting on the client side)."""

_NAMES = cloudwatch.MetricNames()
"""The default metric names (``idle.metrics.aws``'s defaults)."""


SNAPSHOT_OF_TAG = "gpuplan-snapshot-of"
"""Tag on a snapshot gpuplan took: the instance whose disk it holds."""


class AwsAdapter:
    """GPU instances of one region: list, fetch utilisation, stop, tag."""

    def __init__(
        self,
        region: str,
        *,
        ec2_client: Any,
        cloudwatch_client: Any,
        catalog: Catalog | None = None,
        namespace: str = _NAMES.namespace,
        metric: str = _NAMES.utilisation,
        metric_names: cloudwatch.MetricNames | None = None,
        metrics: MetricsSource | None = None,
        account: str | None = None,
    ) -> None:
        self.region = region
        self.account = account
        """The member account this adapter speaks for; None: the session's own."""
        self._names = metric_names or cloudwatch.MetricNames(namespace, metric)
        self._host_counts: Counter[str] | None = None
        self._metrics = metrics
        self._ec2 = ec2_client
        self._cw = cloudwatch_client
        self._catalog = catalog
        self._namespace = namespace
        self._metric = metric
        self._types: dict[str, ec2.TypeFacts] = {}
        self._notices: list[str] = []

    @classmethod
    def from_session(
        cls,
        session: Any,
        region: str,
        *,
        catalog: Catalog | None = None,
        max_attempts: int = DEFAULT_ATTEMPTS,
        retry_mode: str = RETRY_MODE,
        namespace: str = _NAMES.namespace,
        metric: str = _NAMES.utilisation,
        metric_names: cloudwatch.MetricNames | None = None,
        metrics: MetricsSource | None = None,
        account: str | None = None,
    ) -> AwsAdapter:
        # session.client_config sets timeouts and the user agent; only the retries change.
        retries = Config(retries={"mode": retry_mode, "max_attempts": max_attempts})
        config = client_config(max_attempts).merge(retries)
        return cls(
            region,
            ec2_client=session.client("ec2", region_name=region, config=config),
            cloudwatch_client=session.client("cloudwatch", region_name=region, config=config),
            catalog=catalog,
            namespace=namespace,
            metric=metric,
            metric_names=metric_names,
            metrics=metrics,
            account=account,
        )

    @property
    def provider(self) -> Provider:
        return AWS

    @property
    def capabilities(self) -> frozenset[Capability]:
        return CAPABILITIES

    @property
    def scope(self) -> str:
        if self.account:
            return f"aws {self.account}/{self.region}"
        return f"aws {self.region}"

    def drain_notices(self) -> list[str]:
        out, self._notices = self._notices, []
        return out

    def list_instances(self) -> list[GpuInstance]:
        with self._errors("DescribeInstances"):
            raws = list(self._describe(Filters=[_state_filter()]))
            self._host_counts = Counter(str(r.get("PrivateDnsName") or "") for _, r in raws)
            return self._map(raws)

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        with self._errors(f"DescribeInstances {instance.instance_id}"):
            raws = list(self._describe(InstanceIds=[instance.instance_id]))
            mapped = self._map(raws)
        if not mapped:
            raise ProviderError(f"{self.scope}: {instance.instance_id} no longer exists")
        return mapped[0]

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]:
        if not instances:
            return {}
        if self._metrics is not None:
            return self._metrics.fetch_utilisation(
                instances, start=start, end=end, period_minutes=period_minutes
            )
        with self._errors("ListMetrics/GetMetricData"):
            return dict(
                cloudwatch.read_all(
                    self._cw,
                    instances,
                    self._names,
                    start=start,
                    end=end,
                    period_minutes=period_minutes,
                    host_counts=self._host_counts,
                )
            )

    def act(self, instance: GpuInstance, action: Action) -> InstanceState:
        """The call :data:`~gpuplan.core.lifecycle.actions.ACTIONS` names for ``action``."""
        call = provider_call(AWS, action)
        if call is Call.STOP:
            return self.stop(instance)
        if call is Call.HIBERNATE:
            return self.stop(instance, hibernate=True)
        if call is Call.TERMINATE:
            return self.terminate(instance)
        if call is Call.START:
            return self.start(instance)
        raise unsupported(self.scope, action)

    def stop(self, instance: GpuInstance, *, hibernate: bool = False) -> InstanceState:
        with self._errors(f"StopInstances {instance.instance_id}"):
            kwargs: dict[str, Any] = {"InstanceIds": [instance.instance_id]}
            if hibernate:
                kwargs["Hibernate"] = True
            answer = self._ec2.stop_instances(**kwargs)
            return ec2.state_of(answer["StoppingInstances"][0]["CurrentState"]["Name"])

    def start(self, instance: GpuInstance) -> InstanceState:
        with self._errors(f"StartInstances {instance.instance_id}"):
            answer = self._ec2.start_instances(InstanceIds=[instance.instance_id])
            return ec2.state_of(answer["StartingInstances"][0]["CurrentState"]["Name"])

    def terminate(self, instance: GpuInstance) -> InstanceState:
        with self._errors(f"TerminateInstances {instance.instance_id}"):
            answer = self._ec2.terminate_instances(InstanceIds=[instance.instance_id])
            return ec2.state_of(answer["TerminatingInstances"][0]["CurrentState"]["Name"])

    def snapshot(self, instance: GpuInstance, label: str) -> str:
        """``CreateSnapshots`` of every EBS volume of ``instance``, each snapshot tagged with
        ``label`` (``gpuplan-step=<token>``) and the instance id; the ids, comma-joined."""
        key, _, value = label.partition("=")
        iid = instance.instance_id
        with self._errors(f"CreateSnapshots {iid}"):
            answer = self._ec2.create_snapshots(
                InstanceSpecification={"InstanceId": iid},
                Description=f"gpuplan: disks of {iid} before terminate",
                TagSpecifications=[
                    {
                        "ResourceType": "snapshot",
                        "Tags": [
                            {"Key": key, "Value": value},
                            {"Key": SNAPSHOT_OF_TAG, "Value": iid},
                        ],
                    }
                ],
            )
        return ",".join(str(s["SnapshotId"]) for s in answer.get("Snapshots", ()))

    def snapshots_labelled(self, instance: GpuInstance, label: str) -> list[str]:
        """This account's snapshots tagged ``label``: what a ``CreateSnapshots`` cut short
        by a kill made."""
        key, _, value = label.partition("=")
        with self._errors(f"DescribeSnapshots {instance.instance_id}"):
            pages = self._ec2.get_paginator("describe_snapshots").paginate(
                OwnerIds=["self"], Filters=[{"Name": f"tag:{key}", "Values": [value]}]
            )
            return [str(s["SnapshotId"]) for page in pages for s in page.get("Snapshots", ())]

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        with self._errors(f"CreateTags {instance.instance_id}"):
            self._ec2.create_tags(
                Resources=[instance.instance_id],
                Tags=[{"Key": k, "Value": v} for k, v in tags.items()],
            )

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        with self._errors(f"DeleteTags {instance.instance_id}"):
            self._ec2.delete_tags(Resources=[instance.instance_id], Tags=[{"Key": k} for k in keys])

    def reserved_types(self) -> set[str]:
        """Instance types with active reserved instances in this region (savings doubt)."""
        with self._errors("DescribeReservedInstances"):
            answer = self._ec2.describe_reserved_instances(
                Filters=[{"Name": "state", "Values": ["active"]}]
            )
        return {str(r["InstanceType"]) for r in answer.get("ReservedInstances", ())}

    def _describe(self, **kwargs: Any) -> Iterator[tuple[str, dict[str, Any]]]:
        for page in self._ec2.get_paginator("describe_instances").paginate(**kwargs):
            for reservation in page.get("Reservations", ()):
                for raw in reservation.get("Instances", ()):
                    yield str(reservation.get("OwnerId", "")), raw

    def _map(self, raws: list[tuple[str, dict[str, Any]]]) -> list[GpuInstance]:
        self._learn_types({raw["InstanceType"] for _, raw in raws})
        gpu_raws = [(a, r) for a, r in raws if self._types[r["InstanceType"]].gpu_count > 0]
        spots = [r["InstanceId"] for _, r in gpu_raws if r.get("InstanceLifecycle") == "spot"]
        spot_types = ec2.spot_request_types(self._ec2, spots) if spots else {}
        return [
            ec2.to_instance(
                raw,
                region=self.region,
                account=account,
                facts=self._types[raw["InstanceType"]],
                catalog=self._catalog,
                spot_types=spot_types,
            )
            for account, raw in gpu_raws
        ]

    def _learn_types(self, names: set[str]) -> None:
        unseen = names - self._types.keys()
        if not unseen:
            return
        entries, unknown = ec2.describe_types(self._ec2, unseen)
        for name in unseen:
            self._types[name] = ec2.type_facts(name, entries.get(name), self._catalog)
        for name in unknown:
            if self._types[name].gpu_count == 0:
                self._notices.append(
                    f"{self.scope}: instance type {name} is unknown to EC2's type list "
                    "and the catalog; its instances are left out"
                )

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except RoleNotAssumable as exc:
            raise ProviderError(f"{self.scope}: {exc.message}") from exc
        except ClientError as exc:
            err = exc.response.get("Error", {})
            raise ProviderError(
                f"{self.scope}: {what}: {err.get('Code', 'error')}: {err.get('Message', '')}"
            ) from exc
        except BotoCoreError as exc:
            raise ProviderError(f"{self.scope}: {what}: {exc}") from exc


def _state_filter() -> dict[str, Any]:
    return {"Name": "instance-state-name", "Values": list(ec2.LISTED_STATES)}
