"""Google SDK clients for one adapter: built from the policy's endpoints and
Application Default Credentials (or passed in), with the retry rules the adapter uses.

The zone-operations client gets the same client options as the instances client: the
SDK's own ``ExtendedOperation.result()`` polls through a client of its own that ignores a
custom endpoint. An ``http://`` monitoring endpoint means plain-text gRPC to a local
collector or proxy; no credentials travel over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpuplan.providers.base import ProviderError

if TYPE_CHECKING:
    from google.api_core.retry import Retry
    from google.auth.credentials import Credentials
    from google.cloud.compute_v1 import (
        DisksClient,
        InstancesClient,
        SnapshotsClient,
        ZoneOperationsClient,
    )
    from google.cloud.monitoring_v3 import MetricServiceClient


@dataclass
class GcpClients:
    """The SDK clients one project needs; built from configuration or passed in."""

    instances: InstancesClient
    operations: ZoneOperationsClient
    metrics: MetricServiceClient | None = None
    disks: DisksClient | None = None
    """Snapshots of an instance's disks (lifetimes' ``stopped_for``); None: not offered."""
    snapshots: SnapshotsClient | None = None


def make_clients(
    *,
    compute_endpoint: str | None = None,
    monitoring_endpoint: str | None = None,
    credentials: Credentials | None = None,
) -> GcpClients:
    """Clients on Google's endpoints or the configured ones (ADC when no credentials)."""
    from google.api_core.client_options import ClientOptions
    from google.auth.exceptions import DefaultCredentialsError
    from google.cloud import compute_v1

    options = ClientOptions(api_endpoint=compute_endpoint) if compute_endpoint else None
    try:
        instances = compute_v1.InstancesClient(credentials=credentials, client_options=options)
        operations = compute_v1.ZoneOperationsClient(
            credentials=credentials, client_options=options
        )
        metrics = _metrics_client(monitoring_endpoint, credentials)
        disks = compute_v1.DisksClient(credentials=credentials, client_options=options)
        snapshots = compute_v1.SnapshotsClient(credentials=credentials, client_options=options)
    except DefaultCredentialsError as exc:
        first = str(exc).split(". ", 1)[0]
        raise ProviderError(f"no Application Default Credentials ({first})") from None
    return GcpClients(instances, operations, metrics, disks, snapshots)


def _metrics_client(endpoint: str | None, credentials: Credentials | None) -> MetricServiceClient:
    from google.api_core.client_options import ClientOptions
    from google.cloud import monitoring_v3

    if endpoint and endpoint.startswith("http://"):
        # Plain-text gRPC (a local collector or proxy): no credentials travel over it.
        import grpc  # type: ignore[import-untyped]  # grpcio ships no type hints
        from google.auth.credentials import AnonymousCredentials
        from google.cloud.monitoring_v3.services.metric_service.transports import (
            MetricServiceGrpcTransport,
        )

        # No 4 MB receive cap: a full 100,000-point page is larger (the SDK's own channel
        # sets the same option).
        channel = grpc.insecure_channel(
            endpoint.removeprefix("http://").rstrip("/"),
            options=[("grpc.max_receive_message_length", -1)],
        )
        anonymous = AnonymousCredentials()  # type: ignore[no-untyped-call]  # untyped in google-auth
        transport = MetricServiceGrpcTransport(channel=channel, credentials=anonymous)
        return monitoring_v3.MetricServiceClient(transport=transport)
    host = endpoint.removeprefix("https://").rstrip("/") if endpoint else None
    options = ClientOptions(api_endpoint=host) if host else None
    return monitoring_v3.MetricServiceClient(credentials=credentials, client_options=options)


def read_retry(initial_s: float, timeout_s: float) -> Retry:
    from google.api_core import exceptions as gexc
    from google.api_core.retry import Retry, if_exception_type

    transient = if_exception_type(
        gexc.TooManyRequests,
        gexc.InternalServerError,
        gexc.BadGateway,
        gexc.ServiceUnavailable,
        gexc.GatewayTimeout,
        gexc.DeadlineExceeded,
    )
    return Retry(
        predicate=transient,
        initial=initial_s,
        maximum=initial_s * 32,
        multiplier=2,
        timeout=timeout_s,
    )


def action_retry(initial_s: float, timeout_s: float) -> Retry:
    from google.api_core import exceptions as gexc
    from google.api_core.retry import Retry, if_exception_type

    refused = if_exception_type(gexc.TooManyRequests, gexc.ServiceUnavailable)
    return Retry(
        predicate=refused,
        initial=initial_s,
        maximum=initial_s * 32,
        multiplier=2,
        timeout=timeout_s,
    )


def sdk_errors() -> tuple[type[Exception], ...]:
    """What the Google SDK raises for a failed call: API errors, retry exhaustion, auth,
    transport (the requests and gRPC layers)."""
    import requests
    from google.api_core import exceptions as gexc
    from google.auth import exceptions as aexc

    return (
        gexc.GoogleAPICallError,
        gexc.RetryError,
        aexc.GoogleAuthError,
        requests.RequestException,
    )
