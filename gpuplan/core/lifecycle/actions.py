"""Which provider steps carry out each policy action, per cloud: one table, pure data.

A policy asks for an :class:`~gpuplan.core.lifecycle.instances.Action` (stop, hibernate, suspend,
terminate ...); each cloud carries it out as a sequence of :class:`ProviderStep` s
(usually one: AWS stop is ``StopInstances``, Azure stop is a deallocate, because a
powered-off VM keeps billing), or refuses it with the reason (:class:`Refusal`:
suspend is GCP's alone). The executor runs the steps in order, each recorded in the
ledger before its call and settled after (:mod:`gpuplan.usecases.lifecycle.executor`), so a
run killed between two steps of a composite action (e.g. snapshot then stop) is
resumed or reported by the next run, never orphaned. The adapters read the same
table to know which call an action is, the policy check to refuse an action no cloud
in scope offers, and the registry to say what each action calls.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol, runtime_checkable

from gpuplan.core.catalog.kinds import Provider
from gpuplan.core.lifecycle.instances import NEEDS, Action, Capability, GpuInstance


class Call(StrEnum):
    """One call an adapter makes for a step: an acting action, or a preparing step."""

    SNAPSHOT = "snapshot"
    """Snapshot the instance's disks (a preparing step: the instance keeps running)."""
    STOP = "stop"
    HIBERNATE = "hibernate"
    SUSPEND = "suspend"
    DEALLOCATE = "deallocate"
    TERMINATE = "terminate"
    START = "start"

    @property
    def action(self) -> Action | None:
        """The :class:`Action` this call is (``adapter.act``); None for a preparing step."""
        return None if self is Call.SNAPSHOT else Action(self.value)


@dataclass(frozen=True)
class ProviderStep:
    """One step of an action on one cloud: the call and the cloud API it uses."""

    call: Call
    how: str
    """The cloud's own name for it (``StopInstances``, ``instances.suspend`` ...)."""


@dataclass(frozen=True)
class Steps:
    """How a cloud carries out an action: its steps, in order (at least one)."""

    steps: tuple[ProviderStep, ...]

    def __post_init__(self) -> None:
        if not self.steps or self.steps[-1].call.action is None:
            raise ValueError("an action's last step must be an acting call")

    @property
    def do(self) -> Action:
        """The provider action the steps amount to (recorded in the ledger, and ``DONE``)."""
        last = self.steps[-1].call.action
        assert last is not None  # checked in __post_init__
        return last

    @property
    def how(self) -> str:
        """What the steps call, for people: ``"CreateSnapshots, then StopInstances"``."""
        return ", then ".join(s.how for s in self.steps)


@dataclass(frozen=True)
class Refusal:
    """An action a cloud does not offer, and why."""

    reason: str


Entry = Steps | Refusal
ActionTable = Mapping[Provider, Mapping[Action, Entry]]


def one(call: Call, how: str) -> Steps:
    """A single-step action."""
    return Steps((ProviderStep(call, how),))


NOT_HERE = Refusal("not an action of this cloud")
ACTIONS: dict[Provider, Mapping[Action, Entry]] = {}
"""Per cloud: each acting :class:`Action` -> its steps, or why the cloud refuses it. Every
cloud's row comes with its registry entry (``CloudEntry.steps``, the built-in clouds' in
their packages), put here by :func:`register` in registration order."""


def acting_capabilities(row: Mapping[Action, Entry]) -> frozenset[Capability]:
    """The capabilities an adapter declares for the actions of its cloud's ``row``
    (those with steps), so what a cloud can do is written once, in its row."""
    return frozenset(NEEDS[action] for action, found in row.items() if isinstance(found, Steps))


def register(provider: Provider, rows: Mapping[Action, Entry]) -> None:
    """Add (or replace) one cloud's row; the cloud registry calls this for an entry."""
    ACTIONS[provider] = dict(rows)


def unregister(provider: Provider) -> None:
    """Drop a cloud's row (a cloud a test registered, once the test is done)."""
    ACTIONS.pop(provider, None)


def entry(provider: Provider, action: Action, table: ActionTable = ACTIONS) -> Entry:
    """How ``provider`` carries out ``action`` (a refusal when the table has no row)."""
    return table.get(provider, {}).get(action, NOT_HERE)


def provider_action(provider: Provider, action: Action, table: ActionTable = ACTIONS) -> Action:
    """The provider action a policy action becomes (Azure stop = deallocate); the action
    itself where the cloud refuses it (the planner then skips it as not supported)."""
    found = entry(provider, action, table)
    return found.do if isinstance(found, Steps) else action


def provider_call(provider: Provider, action: Action, table: ActionTable = ACTIONS) -> Call | None:
    """The acting call an adapter makes for ``action`` (its last step); None: refused."""
    found = entry(provider, action, table)
    return found.steps[-1].call if isinstance(found, Steps) else None


def offered_by(action: Action, table: ActionTable = ACTIONS) -> tuple[Provider, ...]:
    """The clouds that carry out ``action``, in the table's order."""
    return tuple(p for p, rows in table.items() if isinstance(rows.get(action), Steps))


def describe(found: Entry) -> str:
    """What the registry says of an action: the calls it makes, or ``"refused: why"``."""
    return found.how if isinstance(found, Steps) else f"refused: {found.reason}"


def described(provider: Provider, table: ActionTable = ACTIONS) -> dict[Action, str]:
    """Every acting action of ``provider`` -> :func:`describe` (a registry entry's
    ``actions``)."""
    return {action: describe(found) for action, found in table.get(provider, {}).items()}


@runtime_checkable
class Snapshotter(Protocol):
    """An adapter that can snapshot an instance's disks (the ``snapshot`` step)."""

    def snapshot(self, instance: GpuInstance, label: str) -> str:
        """Snapshot ``instance``'s disks, the snapshot labelled ``label`` (a tag that the
        ledger recorded before the call); the snapshot's id."""
        ...

    def snapshots_labelled(self, instance: GpuInstance, label: str) -> list[str]:
        """The ids of ``instance``'s snapshots labelled ``label``: what a call cut short
        by a kill made, though its answer never came back."""
        ...


class StepState(StrEnum):
    """Where one step of a composite action stands (the ledger's ``action_steps.state``)."""

    PLANNED = "planned"
    """Recorded with the action's intent; its call not made yet."""
    PENDING = "pending"
    """Its call is being made (committed right before it): a kill here leaves this."""
    DONE = "done"
    FAILED = "failed"
    NOT_DONE = "not done"
    """Never called: an earlier step failed, or a killed run's action was not resumed."""
    INTERRUPTED = "interrupted"
    """Its call was in flight when the run was killed, and the action was not resumed:
    whether the call took effect is not known (e.g. a snapshot may be partial)."""
