"""AWS on moto: GPU memory (agent) and EC2 CPUUtilization feed the idle decision, and
metrics belong to an instance by its id only (two VPCs reusing one private IP)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from freezegun import freeze_time

from gpuplan.core.lifecycle.idle import IdleDecision, IdleRule, IdleVerdict, decide, period_starts
from gpuplan.core.lifecycle.instances import GpuInstance, HostSamples, InstanceState
from gpuplan.providers.aws.provider import AwsAdapter
from tests.fakes.aws_world import NOW, World

RULE = IdleRule()
LOOKBACK = period_starts(RULE, NOW)  # 180 min: the live-process window
TOTAL_MIB = 23028.0


def aws(world: World) -> AwsAdapter:
    return AwsAdapter(
        "us-east-1",
        ec2_client=world.client("ec2", "us-east-1"),
        cloudwatch_client=world.client("cloudwatch", "us-east-1"),
    )


def put(world: World, namespace: str, rows: list[dict[str, Any]]) -> None:
    cw = world.client("cloudwatch", "us-east-1")
    for i in range(0, len(rows), 500):
        cw.put_metric_data(Namespace=namespace, MetricData=rows[i : i + 500])


def agent(world: World, dims: dict[str, str], util: float, used_mib: float | None) -> None:
    """Utilisation and (when given) memory per period, dimensions as the agent sends them."""
    dimensions = [{"Name": k, "Value": v} for k, v in dims.items()]
    rows: list[dict[str, Any]] = []
    for start in LOOKBACK:
        at = start + timedelta(seconds=30)
        rows.append(_row("nvidia_smi_utilization_gpu", dimensions, at, util))
        if used_mib is not None:
            rows.append(_row("nvidia_smi_memory_used", dimensions, at, used_mib))
            rows.append(_row("nvidia_smi_memory_total", dimensions, at, TOTAL_MIB))
    put(world, "CWAgent", rows)


def ec2_cpu(world: World, instance_id: str, percent: float) -> None:
    """Basic monitoring: one point every 5 minutes."""
    dims = [{"Name": "InstanceId", "Value": instance_id}]
    put(world, "AWS/EC2", [_row("CPUUtilization", dims, t, percent) for t in LOOKBACK])


def _row(name: str, dims: list[dict[str, str]], at: datetime, value: float) -> dict[str, Any]:
    return {"MetricName": name, "Dimensions": dims, "Timestamp": at, "Value": value}


def survey(world: World) -> tuple[dict[str, IdleDecision], dict[str, Any], list[str]]:
    provider = aws(world)
    calls: list[str] = []
    provider._cw.meta.events.register(
        "before-call.*.*", lambda model, **_: calls.append(model.name)
    )
    listed = provider.list_instances()
    running = [i for i in listed if i.state is InstanceState.RUNNING]
    start, end = LOOKBACK[0], LOOKBACK[-1] + timedelta(minutes=5)
    samples = provider.fetch_utilisation(running, start=start, end=end, period_minutes=5)
    return {i.instance_id: _decide(i, samples.get(i.instance_id)) for i in listed}, samples, calls


def _decide(inst: GpuInstance, samples: Any) -> IdleDecision:
    return decide(
        samples,
        started_at=inst.started_at,
        labels=inst.labels,
        state=inst.state,
        rule=RULE,
        now=NOW,
        gpu_count=inst.gpu_count,
    )


def dims_of(instance_id: str) -> dict[str, str]:
    return {"InstanceId": instance_id, "index": "0", "name": "NVIDIA A10G", "host": "h"}


def test_memory_and_cpu_decide_with_one_batch(world: World) -> None:
    abandoned = world.launch()
    loaded = world.launch()
    cpu_phase = world.launch()
    for iid, used, cpu in ((abandoned, 20.0, 1.0), (loaded, 14000.0, 2.0), (cpu_phase, 20.0, 85.0)):
        agent(world, dims_of(iid), 0.0, used)
        ec2_cpu(world, iid, cpu)
    got, samples, calls = survey(world)
    assert calls == ["ListMetrics"] * 3 + ["GetMetricData"]
    assert got[abandoned].verdict is IdleVerdict.IDLE
    assert "no process" in got[abandoned].reason and "CPU 1%" in got[abandoned].reason
    held = samples[loaded]
    assert isinstance(held, HostSamples)
    assert round(max(held.memory["0"].values())) == 61
    assert got[loaded].verdict is IdleVerdict.IDLE  # quiet for the whole 180-min window
    assert "live-process window" in got[loaded].reason
    assert got[cpu_phase].memory_percent is not None and got[cpu_phase].cpu_percent == 85.0


def test_live_process_is_busy_until_the_long_window_has_passed(world: World) -> None:
    loaded = world.launch()
    cpu_phase = world.launch()
    agent(world, dims_of(loaded), 0.0, 14000.0)
    agent(world, dims_of(cpu_phase), 0.0, 20.0)
    ec2_cpu(world, loaded, 2.0)
    ec2_cpu(world, cpu_phase, 90.0)
    # Busy two hours ago: 115 quiet minutes, more than the 60-min window, less than 180.
    busy_at = LOOKBACK[12] + timedelta(seconds=30)
    for iid in (loaded, cpu_phase):
        dims = [{"Name": k, "Value": v} for k, v in dims_of(iid).items()]
        put(world, "CWAgent", [_row("nvidia_smi_utilization_gpu", dims, busy_at, 95.0)])
    got, _, _ = survey(world)
    assert got[loaded].verdict is IdleVerdict.BUSY
    assert "a process holds GPU memory 61" in got[loaded].reason
    assert got[cpu_phase].verdict is IdleVerdict.BUSY
    assert "(CPU phase)" in got[cpu_phase].reason


def test_without_memory_or_cpu_the_utilisation_only_rule_applies_and_says_so(
    world: World,
) -> None:
    iid = world.launch()
    agent(world, dims_of(iid), 0.0, None)
    got, _, _ = survey(world)
    assert got[iid].verdict is IdleVerdict.IDLE
    assert "utilisation only" in got[iid].reason


def two_vpcs_same_ip(world: World) -> tuple[str, str, str]:
    ec2 = world.client("ec2", "us-east-1")
    ids: list[str] = []
    for _ in range(2):
        vpc = ec2.create_vpc(CidrBlock="10.0.0.0/16")["Vpc"]["VpcId"]
        subnet = ec2.create_subnet(VpcId=vpc, CidrBlock="10.0.1.0/24")["Subnet"]["SubnetId"]
        with freeze_time(NOW - timedelta(days=1)):
            answer = ec2.run_instances(
                ImageId="ami-12345678", MinCount=1, MaxCount=1, InstanceType="g5.xlarge",
                SubnetId=subnet, PrivateIpAddress="10.0.1.7",
            )  # fmt: skip
        ids.append(answer["Instances"][0]["InstanceId"])
    host = ec2.describe_instances(InstanceIds=[ids[0]])["Reservations"][0]["Instances"][0]
    return ids[0], ids[1], str(host["PrivateDnsName"])


def test_two_vpcs_one_private_ip_the_machine_without_agent_is_unknown(world: World) -> None:
    with_agent, without, host = two_vpcs_same_ip(world)
    agent(world, {"index": "0", "name": "NVIDIA A10G", "host": host}, 0.0, 20.0)
    got, samples, _ = survey(world)
    assert got[without].verdict is IdleVerdict.UNKNOWN
    assert got[with_agent].verdict is IdleVerdict.UNKNOWN  # its host name is not unique
    assert samples == {}


def test_owner_stopped_the_agent_machine_its_series_still_go_to_no_one(world: World) -> None:
    with_agent, without, host = two_vpcs_same_ip(world)
    agent(world, {"index": "0", "name": "NVIDIA A10G", "host": host}, 0.0, 20.0)
    world.stop(with_agent)
    got, samples, _ = survey(world)
    assert got[without].verdict is IdleVerdict.UNKNOWN
    assert got[with_agent].verdict is IdleVerdict.OUT_OF_SCOPE
    assert samples == {}


def test_a_unique_host_name_matches_and_the_verdict_says_so(world: World) -> None:
    iid = world.launch()
    (inst,) = aws(world).list_instances()
    host = inst.attributes["private_dns"]
    agent(world, {"index": "0", "name": "NVIDIA A10G", "host": host}, 0.0, 20.0)
    ec2_cpu(world, iid, 1.0)
    got, _, _ = survey(world)
    assert got[iid].verdict is IdleVerdict.IDLE
    assert f"matched by host name {host}" in got[iid].reason
