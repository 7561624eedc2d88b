"""What the Fleet screen shows of one refresh, and where its adapters come from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from gpuplan.core.lifecycle.idle import IdleVerdict
from gpuplan.core.lifecycle.plan import Outcome
from gpuplan.tui import format as fmt
from gpuplan.tui.context import TuiContext

if TYPE_CHECKING:
    from gpuplan.core.catalog.query import Catalog
    from gpuplan.core.policy import Policy
    from gpuplan.providers.base import CloudAdapter
    from gpuplan.usecases.lifecycle.survey import Seen


@dataclass
class FleetView:
    """What one refresh saw: rows, the series behind each sparkline, and problems."""

    policy: Policy
    seen: list[Seen] = field(default_factory=list)
    series: dict[str, list[float | None]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    now: datetime | None = None
    """When the survey ran (exemptions that end are judged at this time)."""
    stranded: list[dict[str, object]] = field(default_factory=list)
    """Kubernetes nodes' GPUs that no pod requests, one record per node
    (:func:`gpuplan.usecases.lifecycle.survey.stranded_gpus`)."""


def stranded_text(records: Sequence[Mapping[str, object]]) -> Text:
    """One line per node with GPUs no pod requests: ``stranded: node gpu-1 (p4d.24xlarge,
    us-east-1, on_demand): 3 of 8 GPUs, $12.29/h``; empty when there are none."""
    out = Text()
    for i, r in enumerate(records):
        price = r.get("hourly_usd")
        money = (
            f"${float(price):,.2f}/h"
            if isinstance(price, (int, float, Decimal))
            else "price unknown"
        )
        out.append("\n" if i else "")
        out.append("stranded: ", style="bold")
        out.append(
            f"node {r['node']} ({r['instance_type']}, {r['region']}, {r['pricing']}): "
            f"{r['gpus']} of {r['node_gpus']} GPUs requested by no pod, {money}"
        )
    return out


def stranded_part(view: FleetView) -> str:
    """``, 3 GPUs stranded $12.29/h``: the GPUs no pod requests, all nodes together."""
    if not view.stranded:
        return ""
    gpus = sum(int(str(r["gpus"])) for r in view.stranded)
    prices = [r.get("hourly_usd") for r in view.stranded]
    known = [Decimal(str(p)) for p in prices if isinstance(p, (int, float, Decimal))]
    money = f" ${sum(known, Decimal(0)):,.2f}/h" if known else ""
    return f", {fmt.plural(gpus, 'GPU')} stranded{money}"


def exempt_part(view: FleetView) -> str:
    """``, exempt $55.04/h (ml x1)``: the running exempt instances' dollars and holders."""
    if view.now is None:
        return ""
    from gpuplan.usecases.audit.exempt_report import exempt_summary

    found = exempt_summary((s.instance for s in view.seen), view.policy, view.now)
    if not found["instances"]:
        return ""
    who = ", ".join(f"{h['holder']} x{h['instances']}" for h in found["by_holder"])
    return f", exempt ${found['usd_per_hour']:,.2f}/h ({who})"


def idle_summary(view: FleetView, acted: Mapping[str, Outcome] | None = None) -> str:
    """``team: 5 instances, 2 idle, 1 stopped``: an instance this screen just stopped
    counts as stopped, not idle, until the cloud agrees."""
    acted = acted or {}
    gone = {i for i, outcome in acted.items() if outcome is not Outcome.FAILED}
    idle = sum(
        1
        for s in view.seen
        if s.decision.verdict is IdleVerdict.IDLE and s.instance.instance_id not in gone
    )
    stopped = sum(1 for s in view.seen if s.instance.instance_id in gone)
    text = f"{view.policy.name}: {fmt.plural(len(view.seen), 'instance')}, {idle} idle"
    if stopped:
        text += f", {stopped} stopped"
    text += exempt_part(view)
    text += stranded_part(view)
    return text + (f", {fmt.plural(len(view.problems), 'problem')} (!)" if view.problems else "")


def load_adapters(
    context: TuiContext, path: Path, catalog: Catalog | None
) -> tuple[Policy, Catalog, list[CloudAdapter], list[str]]:
    """The policy at ``path``, the catalog (loaded once), and the policy's adapters with
    the problems met building them: the context's factory, else the real clouds."""
    from gpuplan.loaders.catalog import load_catalog
    from gpuplan.usecases.policy import gpu_table, load_policy

    policy = load_policy(path, gpus=gpu_table(context.catalog_dir))
    if catalog is None:
        catalog = load_catalog(context.catalog_dir)
    build = context.adapters_for
    if build is None:
        import os

        from gpuplan.usecases.clouds.adapters import build_adapters

        built = build_adapters(policy, catalog, os.environ)
        return policy, catalog, built.adapters, built.problems
    adapters, problems = build(policy, catalog)
    return policy, catalog, adapters, problems
