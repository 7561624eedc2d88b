"""deploy/aws-iam-policy.json and aws-iam-terminate.json grant exactly what the adapter calls.

The base policy must equal the calls of every non-terminating action (list, metrics,
re-check, tag, untag, stop, hibernate, start, reservations); the opt-in terminate file must
equal what terminating adds. Any extra grant, a missing one, a wildcard action, a write
on ``Resource: *``, a stop or tag write not limited to GPU instance types, or a tag
statement without its ``Null`` guard fails here.
"""

from __future__ import annotations

import csv
import fnmatch
import json
from pathlib import Path
from typing import Any

import pytest
from botocore.stub import Stubber

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.idle import IdleRule, window_bounds
from gpuplan.core.lifecycle.instances import InstanceState
from gpuplan.providers.aws.provider import AwsAdapter
from gpuplan.usecases.clouds.registry import entry_of
from tests.fakes.aws_helpers import providers
from tests.fakes.aws_world import NOW, World, flat

POLICY = Path(__file__).resolve().parents[3] / entry_of(Provider.AWS).permission_file
DEPLOY = POLICY.parent
TERMINATE = DEPLOY / "aws-iam-terminate.json"
PREFIX = {"ec2": "ec2", "cloudwatch": "cloudwatch", "sts": "sts"}
TAG_ON_CREATE = {"ec2:CreateTags"}
"""``CreateSnapshots`` with ``TagSpecifications`` needs ``ec2:CreateTags`` on the snapshot
(IAM checks it; no CreateTags call is made), granted only with ``ec2:CreateAction``."""
SNAPSHOTS = ("arn:aws:ec2:*:*:volume/*", "arn:aws:ec2:*::snapshot/*")
NON_GPU_TYPES = ("m5.large", "c7g.xlarge", "t3.micro", "r6i.8xlarge", "x2idn.32xlarge")


def _doc(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return doc


def _actions(path: Path) -> set[str]:
    return {a for s in _doc(path)["Statement"] for a in s["Action"]}


def _type_patterns(statement: dict[str, Any]) -> list[str]:
    patterns: list[str] = statement["Condition"]["StringLike"]["ec2:InstanceType"]
    return patterns


def _allows_type(statement: dict[str, Any], instance_type: str) -> bool:
    """IAM StringLike on ec2:InstanceType: ``*`` and ``?`` wildcards, case-sensitive."""
    return any(fnmatch.fnmatchcase(instance_type, p) for p in _type_patterns(statement))


def _record_calls(world: World) -> set[str]:
    calls: set[str] = set()

    def count(event_name: str, **_: Any) -> None:
        _, service, operation = event_name.split(".")
        calls.add(f"{PREFIX[service]}:{operation}")

    for service in ("ec2", "cloudwatch"):
        world.client(service, "us-east-1").meta.events.register("before-call.*.*", count)
    return calls


def test_every_adapter_call_is_allowed_and_nothing_more(world: World, lc_catalog: Catalog) -> None:
    calls = _record_calls(world)
    # moto lacks DescribeReservedInstances: a Stubber answers it on a separate client,
    # counted one step earlier (the Stubber itself answers at before-call).
    stubbed = world.session.client("ec2", region_name="us-east-1")
    stubbed.meta.events.register(
        "before-parameter-build.*.*",
        lambda event_name, **_: calls.add("ec2:" + event_name.split(".")[-1]),
    )
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
    assert aws.start(aws.refresh(listed[a])) in (InstanceState.PENDING, InstanceState.RUNNING)
    with stub:
        reserved = AwsAdapter("us-east-1", ec2_client=stubbed, cloudwatch_client=None)
        assert reserved.reserved_types() == set()
    base_calls = set(calls)
    calls.clear()
    # stopped_for: snapshot the disks (tagged on create), find them by label, terminate.
    label = "gpuplan-step=abc123"
    made = aws.snapshot(listed[b], label)
    assert aws.snapshots_labelled(listed[b], label) == made.split(",")
    aws.terminate(listed[b])
    terminate_calls = (calls - base_calls) | TAG_ON_CREATE
    assert {a, b, c} <= set(listed)

    allowed = _actions(POLICY)
    assert base_calls <= allowed, f"calls missing from the IAM policy: {base_calls - allowed}"
    assert allowed <= base_calls, f"IAM policy grants more than is called: {allowed - base_calls}"
    opt_in = _actions(TERMINATE)
    assert (
        terminate_calls
        == opt_in
        == {
            "ec2:TerminateInstances",
            "ec2:CreateSnapshots",
            "ec2:DescribeSnapshots",
            *TAG_ON_CREATE,
        }
    )
    assert "ec2:TerminateInstances" not in allowed  # never in the default policy
    for statement in _doc(POLICY)["Statement"]:
        assert set(statement["Action"]) <= base_calls, f"{statement['Sid']} grants unused calls"


@pytest.mark.parametrize("path", [POLICY, TERMINATE], ids=lambda p: p.name)
def test_no_wildcard_actions_and_writes_only_on_instances(path: Path) -> None:
    for statement in _doc(path)["Statement"]:
        assert statement["Effect"] == "Allow"
        assert not any("*" in action for action in statement["Action"])
        writes = [
            a
            for a in statement["Action"]
            if not a.split(":")[1].startswith(("Describe", "List", "Get"))
        ]
        if writes and statement["Resource"] != "arn:aws:ec2:*:*:instance/*":
            # Only the snapshot before terminate writes elsewhere: volumes read into
            # snapshots, and tags on the snapshots it creates (at creation only).
            assert path == TERMINATE, statement["Sid"]
            resources = statement["Resource"]
            assert set([resources] if isinstance(resources, str) else resources) <= set(
                SNAPSHOTS
            ), statement["Sid"]
            assert set(writes) <= {"ec2:CreateSnapshots", "ec2:CreateTags"}, statement["Sid"]
            if "ec2:CreateTags" in writes:
                assert statement["Condition"] == {
                    "StringEquals": {"ec2:CreateAction": "CreateSnapshots"}
                }


def _gpu_types_in_catalog() -> set[str]:
    path = Path(__file__).resolve().parents[3] / "pricing" / "aws.csv"
    with path.open(encoding="utf-8", newline="") as handle:
        return {row["instance_type"] for row in csv.DictReader(handle)}


def test_stop_terminate_and_tag_writes_are_limited_to_gpu_instance_types() -> None:
    limited = [
        s
        for path in (POLICY, TERMINATE)
        for s in _doc(path)["Statement"]
        if {"ec2:StopInstances", "ec2:TerminateInstances", "ec2:CreateTags", "ec2:StartInstances"}
        & set(s["Action"])
        and s["Resource"] == "arn:aws:ec2:*:*:instance/*"
    ]
    assert len(limited) == 3
    gpu_types = _gpu_types_in_catalog()
    assert len(gpu_types) > 20
    for statement in limited:
        missed = sorted(t for t in gpu_types if not _allows_type(statement, t))
        assert not missed, f"{statement['Sid']} would refuse catalog GPU types {missed[:5]}"
        assert not any(_allows_type(statement, t) for t in NON_GPU_TYPES), statement["Sid"]
        assert _allows_type(statement, "g5.xlarge")  # the type the moto test stops


def test_tag_statement_is_limited_to_gpuplan_keys_with_a_null_guard() -> None:
    tagging = next(s for s in _doc(POLICY)["Statement"] if "ec2:CreateTags" in s["Action"])
    assert set(tagging["Action"]) == {"ec2:CreateTags", "ec2:DeleteTags"}
    assert tagging["Condition"]["ForAllValues:StringLike"]["aws:TagKeys"] == ["gpuplan-*"]
    # ForAllValues is true for a request with no tag keys at all (DeleteTags without
    # keys deletes every tag): the Null guard requires the key to be present.
    assert tagging["Condition"]["Null"] == {"aws:TagKeys": "false"}
