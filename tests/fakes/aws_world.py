"""A small AWS world on moto: GPU instances launched at chosen times, and GPU metrics
published exactly as the CloudWatch agent publishes them (per GPU, dimensions
``InstanceId``, ``index``, ``name``, ``host``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from freezegun import freeze_time

from gpuplan.core.lifecycle.idle import IdleRule, period_starts

AMI = "ami-12345678"
"""Any id: the fixture turns off moto's default image list (slow to load)."""
NOW = datetime(2026, 12, 2, 10, 17, 30, tzinfo=UTC)
RULE = IdleRule()
PERIODS = period_starts(IdleRule(live_process_window_minutes=60), NOW)
"""The 60-min window: these worlds publish utilisation only (the utilisation-only rule)."""
GPU_NAMES = {"g5.xlarge": "NVIDIA A10G", "g5.48xlarge": "NVIDIA A10G", "p5.48xlarge": "NVIDIA H100"}
Pattern = Callable[[int, int], float | None]
"""(GPU index, period number) -> utilisation percent, None = nothing reported."""


def flat(value: float) -> Pattern:
    return lambda gpu, period: value


@dataclass
class World:
    session: boto3.Session
    ami: str = ""
    clients: dict[tuple[str, str], Any] = field(default_factory=dict)

    def client(self, service: str, region: str) -> Any:
        key = (service, region)
        if key not in self.clients:
            self.clients[key] = self.session.client(service, region_name=region)
        return self.clients[key]

    def launch(
        self,
        instance_type: str = "g5.xlarge",
        *,
        region: str = "us-east-1",
        tags: dict[str, str] | None = None,
        launched: datetime = NOW - timedelta(days=1),
        spot: bool = False,
        spot_type: str = "one-time",
        hibernate: bool = False,
    ) -> str:
        ec2 = self.client("ec2", region)
        ami = AMI
        with freeze_time(launched):
            if spot:
                req = ec2.request_spot_instances(
                    InstanceCount=1,
                    Type=spot_type,
                    LaunchSpecification={"ImageId": ami, "InstanceType": instance_type},
                )
                iid = str(req["SpotInstanceRequests"][0]["InstanceId"])
                if tags:
                    ec2.create_tags(
                        Resources=[iid], Tags=[{"Key": k, "Value": v} for k, v in tags.items()]
                    )
                return iid
            kwargs: dict[str, Any] = {
                "ImageId": ami,
                "MinCount": 1,
                "MaxCount": 1,
                "InstanceType": instance_type,
            }
            if tags:
                kwargs["TagSpecifications"] = [
                    {
                        "ResourceType": "instance",
                        "Tags": [{"Key": k, "Value": v} for k, v in tags.items()],
                    }
                ]
            if hibernate:
                kwargs["HibernationOptions"] = {"Configured": True}
            return str(ec2.run_instances(**kwargs)["Instances"][0]["InstanceId"])

    def launch_asg_member(self, region: str = "us-east-1") -> str:
        ec2 = self.client("ec2", region)
        ami = AMI
        ec2.create_launch_template(
            LaunchTemplateName="gpu-workers",
            LaunchTemplateData={"ImageId": ami, "InstanceType": "g5.xlarge"},
        )
        with freeze_time(NOW - timedelta(days=1)):
            self.client("autoscaling", region).create_auto_scaling_group(
                AutoScalingGroupName="gpu-workers",
                LaunchTemplate={"LaunchTemplateName": "gpu-workers"},
                MinSize=1,
                MaxSize=1,
                AvailabilityZones=[f"{region}a"],
                Tags=[
                    {
                        "Key": "team",
                        "Value": "research",
                        "PropagateAtLaunch": True,
                        "ResourceId": "gpu-workers",
                        "ResourceType": "auto-scaling-group",
                    }
                ],
            )
        group = self.client("autoscaling", region).describe_auto_scaling_groups()
        return str(group["AutoScalingGroups"][0]["Instances"][0]["InstanceId"])

    def publish(
        self,
        instance_id: str,
        pattern: Pattern,
        *,
        gpus: int = 1,
        region: str = "us-east-1",
        instance_type: str = "g5.xlarge",
        periods: list[datetime] | None = None,
    ) -> None:
        """One datapoint per GPU per period, 30 s into the period, as the agent would."""
        host = f"ip-10-0-{abs(hash(instance_id)) % 250}-1.ec2.internal"
        data = []
        for gpu in range(gpus):
            for n, start in enumerate(periods or PERIODS):
                value = pattern(gpu, n)
                if value is None:
                    continue
                data.append(
                    {
                        "MetricName": "nvidia_smi_utilization_gpu",
                        "Dimensions": [
                            {"Name": "InstanceId", "Value": instance_id},
                            {"Name": "index", "Value": str(gpu)},
                            {"Name": "name", "Value": GPU_NAMES.get(instance_type, "NVIDIA")},
                            {"Name": "host", "Value": host},
                        ],
                        "Timestamp": start + timedelta(seconds=30),
                        "Value": float(value),
                        "Unit": "Percent",
                    }
                )
        cw = self.client("cloudwatch", region)
        for i in range(0, len(data), 500):
            cw.put_metric_data(Namespace="CWAgent", MetricData=data[i : i + 500])

    def stop(self, instance_id: str, region: str = "us-east-1") -> None:
        self.client("ec2", region).stop_instances(InstanceIds=[instance_id])

    def state(self, instance_id: str, region: str = "us-east-1") -> str:
        ec2 = self.client("ec2", region)
        res = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
        return str(res[0]["Instances"][0]["State"]["Name"])

    def tags(self, instance_id: str, region: str = "us-east-1") -> dict[str, str]:
        ec2 = self.client("ec2", region)
        res = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"]
        return {t["Key"]: t["Value"] for t in res[0]["Instances"][0].get("Tags", [])}
