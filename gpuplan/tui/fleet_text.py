"""Words for the Fleet screen's stop dialog and notifications, from the use case's result."""

from __future__ import annotations

from rich.text import Text

from gpuplan.core.lifecycle.instances import Action, GpuInstance
from gpuplan.core.lifecycle.plan import Outcome
from gpuplan.tui import format as fmt
from gpuplan.tui.fleet_rows import is_workload
from gpuplan.usecases.lifecycle.executor import InstanceResult
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult


def plan_text(plan: StopIdleResult, live: bool, noun: str = "instance") -> Text:
    """The dry-run plan for one instance (``noun``: "instance" or "workload"), and what
    confirming will do in this mode."""
    out = Text()
    if plan.aborted:
        out.append(plan.aborted + "\n", style="bold red")
    for problem in plan.problems:
        out.append(f"problem: {problem}\n", style="red")
    if not plan.outcomes:
        out.append(f"The {noun} was not listed again; nothing to plan.\n", style="red")
    for outcome in plan.outcomes:
        item = outcome.item
        inst = item.instance
        out.append(f"{inst.instance_id}", style="bold")
        out.append(f"  {inst.instance_type} · {inst.region} · {fmt.money(inst.hourly_usd)} $/h\n")
        out.append(f"verdict: {item.decision.verdict.value}: {item.decision.reason}\n")
        out.append(f"plan: {item.step.value} → {item.planned_action.value}", style="bold")
        if item.do is not Action.NONE and item.do is not item.planned_action:
            out.append(f" (carried out as {item.do.value})")
        out.append("\n")
        if item.note:
            out.append(f"note: {item.note}\n")
        if inst.risk.refused:
            out.append(f"refused: {inst.risk.refused}\n", style="red")
        if inst.risk.undo and item.planned_action is not Action.NONE:
            out.append(f"undo: {inst.risk.undo}\n")
        for warning in item.warnings:
            out.append(f"warning: {warning}\n", style="yellow")
    out.append("\n")
    if live:
        out.append(
            f"LIVE: on yes, the {noun} is re-read and re-checked, then the plan is carried "
            "out and recorded in the ledger.",
            style="bold red",
        )
    else:
        out.append(
            "DRY RUN: on yes, this plan is recorded in the ledger; nothing is "
            + ("scaled down or suspended." if noun == "workload" else "stopped."),
            style="bold green",
        )
    return out


def unit_noun(inst: GpuInstance) -> str:
    """What the dialog calls the unit: a Kubernetes workload is not an instance."""
    return "workload" if is_workload(inst) else "instance"


def stop_title(inst: GpuInstance, live: bool) -> str:
    """The stop dialog's title: a workload is scaled down or suspended, not stopped."""
    noun = unit_noun(inst)
    if live:
        verb = "Stop the workload" if noun == "workload" else "Stop"
        return f"{verb} {inst.instance_id}?"
    what = "workload " if noun == "workload" else ""
    return f"Dry run: plan the stop of {what}{inst.instance_id}?"


def outcome_word(outcome: InstanceResult, dry_run: bool) -> str:
    """What happened to one instance, in the plan's words: a dry run "would stop"."""
    if dry_run and outcome.outcome is Outcome.NONE:
        planned = outcome.item.planned_action
        if planned is Action.NONE:
            return Outcome.NONE.value
        return f"would {planned.value} (dry run, nothing changed)"
    return outcome.outcome.value


def acted_outcomes(result: StopIdleResult) -> dict[str, Outcome]:
    """Instance id -> what a live run did to it (acted or failed), shown until the next
    refresh agrees; a dry run did nothing."""
    out: dict[str, Outcome] = {}
    for o in result.outcomes:
        if result.dry_run:
            continue
        if o.outcome.acted or o.outcome is Outcome.FAILED:
            out[o.item.instance.instance_id] = o.outcome
    return out


def outcome_message(result: StopIdleResult) -> tuple[str, bool]:
    """One line for a notification, and whether something failed."""
    if result.aborted:
        return result.aborted, True
    parts = [
        f"{o.item.instance.instance_id}: {outcome_word(o, result.dry_run)}"
        + (f" ({o.detail})" if o.detail else "")
        for o in result.outcomes
    ]
    mode = "dry run recorded" if result.dry_run else "done"
    text = f"{mode}, ledger run {result.run_id}: " + ("; ".join(parts) or "nothing to do")
    if result.problems:
        text += " · problems: " + "; ".join(result.problems)
    return text, result.failed
