"""Policies and providers for the stop-idle tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botocore.awsrequest import AWSResponse

from gpuplan.core.catalog.query import Catalog
from gpuplan.core.policy import Policy
from gpuplan.providers.aws.provider import AwsAdapter
from tests.fakes.aws_world import World


def policy(**idle: Any) -> Policy:
    """The research policy. The scenario types (g5, p5) carry instance-store NVMe, which
    every stop erases, so these tests about idle decisions allow data loss; the default
    (such instances skipped) has its own tests in test_data_loss.py."""
    idle = {"allow_data_loss": True, **idle}
    return Policy.model_validate(
        {
            "version": 1,
            "name": "research",
            "scope": {
                "aws": {"regions": ["us-east-1", "us-west-2"]},
                "match_labels": {"team": "research"},
            },
            "idle": idle,
        }
    )


def providers(
    world: World,
    catalog: Catalog | None,
    regions: Sequence[str] = ("us-east-1", "us-west-2"),
) -> list[AwsAdapter]:
    return [
        AwsAdapter(
            r,
            ec2_client=world.client("ec2", r),
            cloudwatch_client=world.client("cloudwatch", r),
            catalog=catalog,
        )
        for r in regions
    ]


class Faults:
    """Answers the first ``times`` sends of one operation with an HTTP error (at the
    wire, through botocore's before-send event, the way moto itself plugs in)."""

    def __init__(self, status: int, code: str, times: int) -> None:
        self.status, self.code, self.times, self.sent = status, code, times, 0

    def __call__(self, request: Any, **_: Any) -> AWSResponse | None:
        self.sent += 1
        if self.sent > self.times:
            return None
        body = (
            f'{{"__type": "{self.code}", "message": "injected"}}'
            if "json" in str(request.headers.get("Content-Type", ""))
            else f"<Response><Errors><Error><Code>{self.code}</Code><Message>injected"
            f"</Message></Error></Errors></Response>"
        ).encode()
        return AWSResponse(request.url, self.status, {}, _Raw(body))


class _Raw:
    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Any:
        yield self.body

    def read(self, *_: Any) -> bytes:
        return self.body
