"""What GCP does for each policy action: its row of the action table, and the adapter's
capabilities read from it (one declaration; the GCP registry entry names the row).

Pure data (no Google SDK).
"""

from __future__ import annotations

from gpuplan.core.lifecycle.actions import NOT_HERE, Call, Entry, Refusal, acting_capabilities, one
from gpuplan.core.lifecycle.instances import Action, Capability

STEPS: dict[Action, Entry] = {
    Action.STOP: one(Call.STOP, "instances.stop"),
    Action.HIBERNATE: Refusal("GCP's memory-preserving stop is suspend"),
    Action.SUSPEND: one(Call.SUSPEND, "instances.suspend"),
    Action.DEALLOCATE: NOT_HERE,
    Action.TERMINATE: one(Call.TERMINATE, "instances.delete"),
    Action.START: one(Call.START, "instances.start"),
}
"""Each acting action -> the Compute Engine call, or why it is refused."""

CAPABILITIES = frozenset({Capability.LIST, Capability.METRICS, Capability.TAG}) | (
    acting_capabilities(STEPS)
)
"""What the adapter does: list, read metrics, tag, and every action of :data:`STEPS`."""
