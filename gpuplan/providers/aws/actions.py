"""What AWS does for each policy action: its row of the action table, and the adapter's
capabilities read from it (one declaration; the AWS registry entry names the row).

Pure data (no boto3).
"""

from __future__ import annotations

from gpuplan.core.lifecycle.actions import NOT_HERE, Call, Entry, acting_capabilities, one
from gpuplan.core.lifecycle.instances import Action, Capability

STEPS: dict[Action, Entry] = {
    Action.STOP: one(Call.STOP, "StopInstances"),
    Action.HIBERNATE: one(Call.HIBERNATE, "StopInstances Hibernate=true"),
    Action.SUSPEND: NOT_HERE,
    Action.DEALLOCATE: NOT_HERE,
    Action.TERMINATE: one(Call.TERMINATE, "TerminateInstances"),
    Action.START: one(Call.START, "StartInstances"),
}
"""Each acting action -> the EC2 call, or why it is refused."""

CAPABILITIES = frozenset({Capability.LIST, Capability.METRICS, Capability.TAG}) | (
    acting_capabilities(STEPS)
)
"""What the adapter does: list, read metrics, tag, and every action of :data:`STEPS`."""
