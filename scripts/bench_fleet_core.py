"""Benchmark (not a test) of the lifecycle core's own cost on a big fleet; writes
benchmarks/results/fleet_core.md.

No cloud and no wire: 10,000 GPU instances (``--instances``) across AWS, GCP and Azure
held by the in-memory fake provider (``gpuplan/providers/fake.py``), one hour of
5-minute utilisation per GPU generated up front (seeded), and then, timed phase by
phase:

- ``list``: ``FakeAdapter.list_instances`` for the three clouds;
- ``decide``: the pure idle decision (``gpuplan.core.lifecycle.idle.decide``) for every instance;
- ``plan``: lifecycle planning (``gpuplan.core.lifecycle.plan``) per cloud;
- ``dry run``: the whole ``stop-idle`` use case without acting
  (``gpuplan.usecases.lifecycle.stop_idle.run_stop_idle(apply=False)``: survey, decide, plan).

Fleet mix (by instance number): 40% busy, 30% idle, 10% thin metrics (half the periods
missing), 10% no metrics at all, 10% split between boot grace, exempt tag, managed by a
group and stopped. Two thirds are 1-GPU types (g-types), one third 8-GPU types
(p-types): the decision looks at every GPU's series. Time is the median of
``--repeats`` runs; peak memory is one more pass under ``tracemalloc`` (Python
allocations made by that phase; the fleet and its samples are counted apart).

Run: ``python scripts/bench_fleet_core.py`` from the repository root (under a minute).
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import resource
import statistics
import sys
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "results" / "fleet_core.md"
sys.path.insert(0, str(ROOT))

from gpuplan.core.catalog.offers import Provider  # noqa: E402
from gpuplan.core.lifecycle.idle import IdleRule, decide, period_starts  # noqa: E402
from gpuplan.core.lifecycle.instances import Capability, GpuInstance, HostSamples, InstanceState  # noqa: E402
from gpuplan.core.lifecycle.plan import ActionRule, plan  # noqa: E402
from gpuplan.core.policy import Policy  # noqa: E402
from gpuplan.providers.fake import FakeAdapter  # noqa: E402
from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle  # noqa: E402

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
MIB = 1024 * 1024
# (type, GPU, GPUs per instance) per cloud: g-types with 1 GPU, p-types with 8.
TYPES = {
    Provider.AWS: (("g5.xlarge", "A10G", 1), ("p4d.24xlarge", "A100-40GB", 8)),
    Provider.GCP: (("g2-standard-8", "L4", 1), ("a2-highgpu-8g", "A100-40GB", 8)),
    Provider.AZURE: (
        ("Standard_NC24ads_A100_v4", "A100-80GB", 1),
        ("Standard_ND96asr_v4", "A100-40GB", 8),
    ),
}
ACCOUNTS = {
    Provider.AWS: "123456789012",
    Provider.GCP: "research-ml-prod",
    Provider.AZURE: "00000000-0000-0000-0000-000000000001",
}
CAPS = frozenset(
    {Capability.LIST, Capability.METRICS, Capability.STOP, Capability.DEALLOCATE, Capability.TAG}
)
POLICY = Policy.model_validate(
    {
        "version": 1,
        "name": "bench",
        "scope": {
            "aws": {"regions": ["us-east-1"]},
            "gcp": {"projects": [ACCOUNTS[Provider.GCP]]},
            "azure": {"subscriptions": [ACCOUNTS[Provider.AZURE]]},
        },
    }
)


def make_fleet(count: int, rule: IdleRule) -> tuple[list[GpuInstance], dict[str, HostSamples]]:
    """``count`` instances and their samples; the mix is in the module docstring."""
    rng = random.Random(7)
    periods = period_starts(rule, NOW)
    providers = list(TYPES)
    fleet: list[GpuInstance] = []
    samples: dict[str, HostSamples] = {}
    for n in range(count):
        provider = providers[n % 3]
        kind, gpu, gpus = TYPES[provider][1 if n // 3 % 3 == 0 else 0]
        cls = n % 10
        labels = {"team": "research"}
        state, managed, started = InstanceState.RUNNING, None, NOW - timedelta(days=1)
        if cls == 9:
            sub = n // 10 % 4
            if sub == 0:
                started = NOW - timedelta(minutes=5)
            elif sub == 1:
                labels["gpuplan-keep"] = "yes"
            elif sub == 2:
                managed = "auto scaling group train-asg"
            else:
                state = InstanceState.STOPPED
        iid = f"{provider.value}-{n:06d}"
        fleet.append(
            GpuInstance(
                provider=provider,
                account=ACCOUNTS[provider],
                region="us-east-1",
                instance_id=iid,
                instance_type=kind,
                state=state,
                started_at=started,
                labels=labels,
                gpu=gpu,
                gpu_count=gpus,
                managed_by=managed,
            )
        )
        if cls == 8 or state is InstanceState.STOPPED:
            continue
        low, high = (55.0, 98.0) if cls < 4 else (0.0, 3.0)
        kept = periods[::2] if cls == 7 else periods
        samples[iid] = HostSamples(
            utilisation={
                str(g): {t: round(rng.uniform(low, high), 1) for t in kept} for g in range(gpus)
            }
        )
    return fleet, samples


def timed(step: Callable[[], Any], repeats: int) -> tuple[list[float], float, Any]:
    """(seconds per untraced run, traced peak MiB of one more run, the result)."""
    seconds = []
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    gc.collect()
    tracemalloc.start()
    result = step()
    peak = tracemalloc.get_traced_memory()[1] / MIB
    tracemalloc.stop()
    return seconds, peak, result


def main() -> int:
    parser = argparse.ArgumentParser(description="Lifecycle core cost on a big fake fleet.")
    parser.add_argument("--instances", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    began = time.perf_counter()
    rule = IdleRule(match_labels={"team": "research"})
    # Azure's "stop" is carried out as deallocate (gpuplan.core.lifecycle.instances.Action).
    actions = {
        p: ActionRule(action=POLICY.idle.action.for_provider(p), reason_code=rule.code)
        for p in TYPES
    }
    gc.collect()
    tracemalloc.start()
    start = time.perf_counter()
    fleet, samples = make_fleet(args.instances, rule)
    build_s = time.perf_counter() - start
    fleet_mib = tracemalloc.get_traced_memory()[0] / MIB
    tracemalloc.stop()
    fakes = [FakeAdapter(p, fleet, capabilities=CAPS) for p in TYPES]
    for fake in fakes:
        fake.samples = {i: samples[i] for i in fake.instances if i in samples}

    def listing() -> list[GpuInstance]:
        return [i for f in fakes for i in f.list_instances()]

    def deciding() -> list[Any]:
        return [
            (
                i,
                decide(
                    samples.get(i.instance_id),
                    started_at=i.started_at,
                    labels=i.labels,
                    state=i.state,
                    rule=rule,
                    now=NOW,
                    gpu_count=i.gpu_count,
                    managed_by=i.managed_by,
                ),
                CAPS,
            )
            for i in fleet
        ]

    decisions = deciding()

    def planning() -> list[Any]:
        return [plan([d for d in decisions if d[0].provider is p], actions[p], NOW) for p in TYPES]

    def dry_run() -> Any:
        return run_stop_idle(POLICY, fakes, apply=False, now=NOW)

    phases = {
        "list (3 fake clouds)": timed(listing, args.repeats),
        "decide (core.idle)": timed(deciding, args.repeats),
        "plan (core.lifecycle)": timed(planning, args.repeats),
        "dry run (usecases.stop_idle)": timed(dry_run, args.repeats),
    }
    result = phases["dry run (usecases.stop_idle)"][2]
    verdicts = Counter(o.item.decision.verdict.value for o in result.outcomes)
    steps = Counter(p.step.value for part in phases["plan (core.lifecycle)"][2] for p in part.items)
    calls = Counter(c.method for f in fakes for c in f.calls)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    gpus = sum(i.gpu_count for i in fleet)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        report(args, phases, build_s, fleet_mib, gpus, verdicts, steps, calls, result, rss, began),
        encoding="utf-8",
    )
    print(OUT.read_text(encoding="utf-8"))
    return 0


def report(
    args: argparse.Namespace,
    phases: dict[str, tuple[list[float], float, Any]],
    build_s: float,
    fleet_mib: float,
    gpus: float,
    verdicts: Counter[str],
    steps: Counter[str],
    calls: Counter[str],
    result: Any,
    rss: float,
    began: float,
) -> str:
    n = args.instances
    stamp = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    flags = "" if (n, args.repeats) == (10_000, 5) else f" --instances {n} --repeats {args.repeats}"
    rows = [
        f"| {name} | {statistics.median(s):.3f} | {min(s):.3f} | {max(s):.3f} | "
        f"{1e6 * statistics.median(s) / n:.1f} | {peak:.1f} |"
        for name, (s, peak, _) in phases.items()
    ]
    return "\n".join(
        [
            "# Lifecycle core on a big fleet (in-memory fake provider)",
            "",
            f"Written by `python scripts/bench_fleet_core.py{flags}` on {stamp}; "
            f"Python {platform.python_version()}, {platform.machine()}, "
            f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f} at the end "
            f"(shared machine). Took {time.perf_counter() - began:.0f} s.",
            "",
            f"Fleet: {n:,} instances, {gpus:,.0f} GPUs, AWS/GCP/Azure in turn; 60-minute "
            "window of 5-minute periods (12 per GPU). Mix and phases: see the script's "
            f"docstring. Building the fleet models and samples took {build_s:.2f} s and "
            f"holds {fleet_mib:.1f} MiB (not counted below).",
            "",
            f"| phase | median s ({args.repeats} runs) | min s | max s | us per instance | "
            "peak MiB (tracemalloc) |",
            "|---|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"Process peak RSS at the end: {rss:.0f} MiB (fleet, samples and every phase).",
            "",
            "Verdicts (dry run): "
            + ", ".join(f"{k} {v:,}" for k, v in sorted(verdicts.items()))
            + ". Plan steps: "
            + ", ".join(f"{k} {v:,}" for k, v in sorted(steps.items()))
            + ".",
            "",
            f"With the default `max_actions_per_run` (10) the plan is aborted, as it should "
            f"be: {result.aborted or 'not aborted'}.",
            "",
            "Calls on the fake providers over all runs: "
            + ", ".join(f"{k} {v}" for k, v in sorted(calls.items()))
            + f" ({args.repeats + 1} dry runs and {args.repeats + 1} listings, three clouds "
            "each: one list and one utilisation batch per cloud per run, none per instance).",
            "",
        ]
    )


if __name__ == "__main__":
    raise SystemExit(main())
