"""deploy/aws-iam-policy.json lists exactly the AWS actions the adapter calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from botocore.stub import Stubber

from gpuplan.core.catalog import Catalog
from gpuplan.core.idle import IdleRule, window_bounds
from gpuplan.providers.aws.provider import AwsProvider
from tests.lifecycle.helpers import providers
from tests.lifecycle.world import NOW, World, flat

POLICY = Path(__file__).resolve().parents[2] / "deploy" / "aws-iam-policy.json"
PREFIX = {"ec2": "ec2", "cloudwatch": "cloudwatch", "sts": "sts"}


def _policy_actions() -> set[str]:
    doc = json.loads(POLICY.read_text(encoding="utf-8"))
    return {a for s in doc["Statement"] for a in s["Action"]}


def test_every_adapter_call_is_allowed_and_nothing_more(world: World, lc_catalog: Catalog) -> None:
    calls: set[str] = set()

    def count(event_name: str, **_: Any) -> None:
        _, service, operation = event_name.split(".")
        calls.add(f"{PREFIX[service]}:{operation}")

    for service in ("ec2", "cloudwatch"):
        world.client(service, "us-east-1").meta.events.register("before-call.*.*", count)
    # moto lacks DescribeReservedInstances: a Stubber answers it on a separate client,
    # counted one step earlier (the Stubber itself answers at before-call).
    stubbed = world.session.client("ec2", region_name="us-east-1")
    stubbed.meta.events.register("before-parameter-build.*.*", count)
    stub = Stubber(stubbed)
    stub.add_response("describe_reserved_instances", {"ReservedInstances": []})
    a = world.launch(tags={"team": "research"})
    b = world.launch(tags={"team": "research"}, spot=True)
    c = world.launch(hibernate=True)
    world.publish(a, flat(0.0))
    calls.clear()  # only what the adapter calls from here on

    (aws,) = providers(world, lc_catalog, ["us-east-1"])
    listed = {i.instance_id: i for i in aws.list_instances()}
    start, end = window_bounds(IdleRule(), NOW)
    aws.fetch_utilisation(list(listed.values()), start=start, end=end, period_minutes=5)
    aws.refresh(listed[a])
    aws.tag(listed[a], {"gpuplan-stopped-at": "20261202t101500z"})
    aws.untag(listed[a], ["gpuplan-stop-after"])
    aws.stop(listed[a])
    aws.stop(listed[c], hibernate=True)
    aws.terminate(listed[b])
    assert {a, b, c} <= set(listed)
    with stub:
        reserved = AwsProvider("us-east-1", ec2_client=stubbed, cloudwatch_client=None)
        assert reserved.reserved_types() == set()

    allowed = _policy_actions()
    assert calls <= allowed, f"calls missing from the IAM policy: {sorted(calls - allowed)}"
    assert allowed <= calls, f"IAM policy grants more than is called: {sorted(allowed - calls)}"


def test_tag_statement_is_limited_to_gpuplan_keys() -> None:
    doc = json.loads(POLICY.read_text(encoding="utf-8"))
    tagging = next(s for s in doc["Statement"] if "ec2:CreateTags" in s["Action"])
    assert tagging["Condition"]["ForAllValues:StringLike"]["aws:TagKeys"] == ["gpuplan-*"]
