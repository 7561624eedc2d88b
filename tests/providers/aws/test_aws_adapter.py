"""The AWS adapter on moto: listing, GPU facts, managed detection, CloudWatch batches."""

from __future__ import annotations

from gpuplan.core.catalog.offers import PricingModel
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.idle import IdleRule, decide, window_bounds
from gpuplan.providers.aws.cloudwatch import chunk_count, match_series
from gpuplan.providers.aws.provider import AwsAdapter
from tests.fakes import aws_scenarios as scenarios
from tests.fakes.aws_world import NOW, World

RULE = IdleRule(match_labels={"team": "research"})


def provider(world: World, region: str, catalog: Catalog | None) -> AwsAdapter:
    return AwsAdapter(
        region,
        ec2_client=world.client("ec2", region),
        cloudwatch_client=world.client("cloudwatch", region),
        catalog=catalog,
    )


def test_scenario_verdicts(world: World, lc_catalog: Catalog) -> None:
    rows = scenarios.build(world)
    got: dict[str, str] = {}
    start, end = window_bounds(RULE, NOW)
    for region in ("us-east-1", "us-west-2"):
        aws = provider(world, region, lc_catalog)
        instances = aws.list_instances()
        samples = aws.fetch_utilisation(instances, start=start, end=end, period_minutes=5)
        for inst in instances:
            d = decide(
                samples.get(inst.instance_id),
                started_at=inst.started_at,
                labels=inst.labels,
                state=inst.state,
                rule=RULE,
                now=NOW,
                gpu_count=inst.gpu_count,
                managed_by=inst.managed_by,
            )
            got[inst.instance_id] = d.verdict.value
    expected = {r.instance_id: r.verdict for r in rows}
    named = {r.name: (got.get(r.instance_id), r.verdict) for r in rows}
    assert got == expected, named


def test_instance_facts(world: World, lc_catalog: Catalog) -> None:
    rows = {r.name: r for r in scenarios.build(world)}
    by_id = {i.instance_id: i for i in provider(world, "us-east-1", lc_catalog).list_instances()}
    spot = by_id[rows["one-time-spot"].instance_id]
    assert spot.pricing is PricingModel.SPOT
    assert spot.risk.spot_one_time
    assert str(spot.hourly_usd) == "0.45"
    p5 = by_id[rows["8-gpu-idle-scarce"].instance_id]
    assert (p5.gpu, p5.gpu_count, str(p5.hourly_usd)) == ("H100", 8, "55.04")
    asg = by_id[rows["asg-member"].instance_id]
    assert asg.managed_by == "Auto Scaling group gpu-workers"
    assert by_id[rows["idle"].instance_id].zone == "us-east-1a"


def test_non_gpu_and_unknown_types_do_not_break_the_run(world: World) -> None:
    gpu = world.launch("g6.xlarge")
    world.launch("m5.large")
    world.launch("p3.2xlarge")  # not in moto's type data
    aws = provider(world, "us-east-1", None)
    listed = aws.list_instances()
    assert [i.instance_id for i in listed] == [gpu]
    assert listed[0].gpu == "L4" and listed[0].hourly_usd is None
    notices = aws.drain_notices()
    assert any("p3.2xlarge" in n for n in notices), notices


def test_metric_calls_do_not_grow_with_instances(world: World) -> None:
    ids = [world.launch() for _ in range(12)]
    for iid in ids:
        world.publish(iid, lambda g, p: 1.0)
    calls: list[str] = []
    cw = world.client("cloudwatch", "us-east-1")
    cw.meta.events.register("before-call.*.*", lambda model, **_: calls.append(model.name))
    aws = provider(world, "us-east-1", None)
    start, end = window_bounds(RULE, NOW)
    samples = aws.fetch_utilisation(aws.list_instances(), start=start, end=end, period_minutes=5)
    assert calls == ["ListMetrics"] * 3 + ["GetMetricData"]  # utilisation, memory used/total
    assert set(samples) == set(ids)
    assert all(len(s.utilisation["0"]) == 12 for s in samples.values())


def test_spot_request_type_is_read(world: World) -> None:
    one = world.launch(spot=True)
    kept = world.launch(spot=True, spot_type="persistent")
    listed = {i.instance_id: i for i in provider(world, "us-east-1", None).list_instances()}
    assert listed[one].risk.spot_one_time
    assert not listed[kept].risk.spot_one_time


def test_series_without_instance_id_match_only_a_unique_full_host_name(world: World) -> None:
    iid = world.launch()
    (inst,) = provider(world, "us-east-1", None).list_instances()
    dns = inst.attributes["private_dns"]

    def metric(**dims: str) -> dict[str, object]:
        return {"Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()]}

    metrics = [
        metric(index="0", name="NVIDIA A10G", host=dns),
        metric(index="1", name="NVIDIA A10G", host=dns.split(".")[0]),
        metric(InstanceId="i-0someoneelse", index="0", name="NVIDIA A10G", host=dns),
    ]
    unique = match_series(metrics, [inst], host_counts={dns: 1})
    assert [(s.instance_id, s.gpu, s.host_match) for s in unique] == [(iid, "0", dns)]
    assert match_series(metrics, [inst], host_counts={dns: 2}) == []
    assert match_series(metrics, [inst]) == []  # nothing listed: no host matching at all


def test_chunks_of_500() -> None:
    assert [chunk_count(n) for n in (1, 500, 501, 1000, 1001)] == [1, 1, 2, 2, 3]


def test_get_metric_data_is_chunked_at_500_queries(world: World) -> None:
    iid = world.launch()
    world.publish(iid, lambda g, p: 1.0 if p == 0 else None, gpus=501)
    calls: list[int] = []
    cw = world.client("cloudwatch", "us-east-1")
    cw.meta.events.register(
        "before-parameter-build.cloudwatch.GetMetricData",
        lambda params, **_: calls.append(len(params["MetricDataQueries"])),
    )
    aws = provider(world, "us-east-1", None)
    start, end = window_bounds(RULE, NOW)
    samples = aws.fetch_utilisation(aws.list_instances(), start=start, end=end, period_minutes=5)
    assert calls == [500, 2]  # 501 GPU series and the instance's EC2 CPU
    assert len(samples[iid].utilisation) == 501
