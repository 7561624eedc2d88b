"""Kubernetes at scale: 5,000 pods on 500 GPU nodes, through ``gpuplan.cli.main.main()``.

The fake API server (tests/fakes/kubernetes, TLS on loopback, the real lightkube client)
holds 500 p4d.24xlarge / g5.48xlarge nodes (8 GPUs each) and 5,000 pods: 4,000 hold one
GPU (400 Deployments x 5 through ReplicaSets, 250 Kubeflow Notebooks and 250 plain
StatefulSets x 2, 250 CronJob Jobs and 250 Jobs, 500 bare pods) and 1,000 are CPU pods.
Prometheus answers from canned series (one per GPU pod, computed per query, half of them
idle), so the figure is gpuplan's own work plus the loopback wire, not a PromQL engine.

Measured (median of ``--runs``): ``fleet --json`` and the ``stop-idle`` dry run (which
sends the capped would-be actions through ``dryRun=All``), wall and CPU time, API
requests and list pages. Writes benchmarks/results/kubernetes.md. Takes about a minute.

    python scripts/bench_kubernetes.py [--runs 3] [--page-size 500]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from gpuplan.cli.main import main  # noqa: E402
from tests.fakes.http import FakeApi, Reply, Request, serve  # noqa: E402
from tests.fakes.kubernetes import scenario as s  # noqa: E402
from tests.fakes.kubernetes.server import KubeApi, serve_cluster  # noqa: E402

NODES, GPUS_PER_NODE = 500, 8


@dataclass
class CannedPrometheus(FakeApi):
    """Every GPU pod's series for any query, built from the query's own range."""

    pods: list[tuple[str, str, bool]] = field(default_factory=list)
    """(namespace, pod, idle)."""

    def __post_init__(self) -> None:
        self.route("POST", r"/api/v1/query_range", "query_range", self._answer)

    def _answer(self, request: Request) -> Reply:
        form = {k: v[-1] for k, v in parse_qs(request.body.decode()).items()}
        start, end, step = float(form["start"]), float(form["end"]), float(form["step"])
        query = form["query"]
        times = []
        t = start
        while t <= end:
            times.append(t)
            t += step
        result = []
        for ns, pod, idle in self.pods:
            if "PROF" in query:
                continue  # no profiling metric in this cluster: DCGM_FI_DEV_GPU_UTIL is read
            if "container_cpu" in query:
                labels, value = {"namespace": ns, "pod": pod}, "0.01" if idle else "2"
            elif "FB_USED" in query:
                labels, value = {"namespace": ns, "pod": pod, "gpu": "0"}, "0"
            elif "FB_FREE" in query:
                labels, value = {"namespace": ns, "pod": pod, "gpu": "0"}, "81920"
            else:
                labels, value = {"namespace": ns, "pod": pod, "gpu": "0"}, "0" if idle else "80"
            result.append({"metric": labels, "values": [[x, value] for x in times]})
        return 200, {}, {"status": "success", "data": {"resultType": "matrix", "result": result}}


def build(api: KubeApi, prom: CannedPrometheus) -> None:
    for n in range(NODES):
        kind = "p4d.24xlarge" if n % 2 else "g5.48xlarge"
        spot = {"karpenter.sh/capacity-type": "spot"} if n % 5 == 0 else {}
        s.node(api, f"node-{n}", kind, "us-east-1", GPUS_PER_NODE, spot=spot)
    slots = iter((f"node-{n}", g) for g in range(GPUS_PER_NODE) for n in range(NODES))

    def gpu_pod(ns: str, name: str, owner: tuple[str, str] | None) -> None:
        node, _ = next(slots)
        s.pod(api, ns, name, node, 1, owner=owner)
        prom.pods.append((ns, name, len(prom.pods) % 2 == 0))

    for d in range(400):
        ns = f"team-{d % 20}"
        s.owner(api, "Deployment", ns, f"web-{d}", replicas=5)
        s.owner(api, "ReplicaSet", ns, f"web-{d}-rs", replicas=5, parent=("Deployment", f"web-{d}"))
        for i in range(5):
            gpu_pod(ns, f"web-{d}-rs-{i}", ("ReplicaSet", f"web-{d}-rs"))
    for k in range(500):
        ns = f"team-{k % 20}"
        parent = ("Notebook", f"nb-{k}") if k % 2 else None
        if parent:
            s.owner(api, "Notebook", ns, f"nb-{k}")
        s.owner(api, "StatefulSet", ns, f"nb-{k}", replicas=2, parent=parent)
        for i in range(2):
            gpu_pod(ns, f"nb-{k}-{i}", ("StatefulSet", f"nb-{k}"))
    for j in range(500):
        ns = f"batch-{j % 10}"
        parent = ("CronJob", f"cron-{j}") if j % 2 else None
        if parent:
            s.owner(api, "CronJob", ns, f"cron-{j}")
        s.owner(api, "Job", ns, f"job-{j}", parent=parent)
        gpu_pod(ns, f"job-{j}-x", ("Job", f"job-{j}"))
    for b in range(500):
        gpu_pod(f"scratch-{b % 10}", f"bare-{b}", None)
    for c in range(1000):
        s.pod(api, f"web-{c % 10}", f"cpu-{c}", f"node-{c % NODES}", 0)


def timed(args: list[str]) -> tuple[float, float, int, Any]:
    out = io.StringIO()
    wall, cpu = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(args)
    return time.perf_counter() - wall, time.process_time() - cpu, code, json.loads(out.getvalue())


def run(runs: int, page_size: int) -> str:
    api, prom = KubeApi(), CannedPrometheus()
    build(api, prom)
    gpu_pods = len(prom.pods)
    all_pods = sum(1 for k in api.objects if k[1] == "pods")
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp, serve(prom) as prom_url:
        folder = Path(tmp)
        os.environ.update(HOME=tmp, GPUPLAN_DB=str(folder / "ledger.sqlite3"))
        with serve_cluster(api, folder) as cluster:
            policy = folder / "policy.yaml"
            policy.write_text(
                "version: 1\nname: bench\nidle:\n  allow_data_loss: false\n  metrics:\n"
                f"    prometheus:\n      url: {prom_url}\nscope:\n  kubernetes:\n"
                f"    kubeconfig: {cluster.kubeconfig}\n    page_size: {page_size}\n"
            )
            for command in (["fleet"], ["stop-idle"]):
                walls, cpus = [], []
                for _ in range(runs):
                    api.requests.clear()
                    wall, cpu, code, record = timed([*command, "--policy", str(policy), "--json"])
                    walls.append(wall)
                    cpus.append(cpu)
                units = record.get("instances") or record.get("decisions") or []
                pages = sum(1 for r in api.requests if r.method == "GET" and "limit" in r.query)
                dry = sum(1 for r in api.requests if r.query.get("dryRun") == "All")
                rows.append(
                    f"| `{' '.join(command)} --json` | {len(units)} | "
                    f"{statistics.median(walls):.2f} s | {statistics.median(cpus):.2f} s | "
                    f"{len(api.requests)} ({pages} list pages, {dry} dryRun=All) | {code} |"
                )
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return "\n".join(
        [
            "# Kubernetes: 5,000 pods on 500 GPU nodes",
            "",
            f"Written by `scripts/bench_kubernetes.py --runs {runs} --page-size {page_size}` on "
            f"{datetime.now(UTC):%Y-%m-%d %H:%M}Z, {platform.machine()} "
            f"({os.cpu_count()} CPUs, load average {load:.2f}), Python "
            f"{platform.python_version()}.",
            "",
            f"{NODES} nodes x {GPUS_PER_NODE} GPUs, {all_pods} pods ({gpu_pods} with one GPU, "
            f"{all_pods - gpu_pods} CPU pods), {len(api.objects)} objects in all; the real "
            "lightkube client over TLS on loopback; Prometheus canned (half the GPU pods "
            "idle). Median of the runs, in-process through `main()`; CPU is the whole "
            "process's, so it includes the two fake servers' threads (building and "
            "serving the JSON), not only gpuplan:",
            "",
            "| command | workloads | wall | CPU | API requests | exit |",
            "|---|---|---|---|---|---|",
            *rows,
            "",
            "Exit 1 on `stop-idle`: the circuit breaker trips when half the fleet is idle on "
            "utilisation and CPU at once (by design; the dry run then previews nothing)."
            if "| 1 |" in rows[-1]
            else "",
        ]
    )


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--page-size", type=int, default=500)
    p.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "kubernetes.md")
    return p.parse_args()


if __name__ == "__main__":
    opts = parse()
    text = run(opts.runs, opts.page_size)
    opts.out.write_text(text.rstrip() + "\n", encoding="utf-8")
    print(text)
