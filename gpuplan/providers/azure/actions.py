"""What Azure does for each policy action: its row of the action table, and the adapter's
capabilities read from it (one declaration; the Azure registry entry names the row).

Pure data (no Azure SDK).
"""

from __future__ import annotations

from gpuplan.core.lifecycle.actions import NOT_HERE, Call, Entry, Refusal, acting_capabilities, one
from gpuplan.core.lifecycle.instances import Action, Capability

STEPS: dict[Action, Entry] = {
    # A powered-off VM keeps billing: the policy's stop is a deallocate.
    Action.STOP: one(Call.DEALLOCATE, "virtualMachines.deallocate (a powered-off VM still bills)"),
    Action.HIBERNATE: Refusal("not offered by gpuplan on Azure yet"),
    Action.SUSPEND: NOT_HERE,
    Action.DEALLOCATE: one(Call.DEALLOCATE, "virtualMachines.deallocate"),
    Action.TERMINATE: one(Call.TERMINATE, "virtualMachines.delete"),
    Action.START: one(Call.START, "virtualMachines.start"),
}
"""Each acting action -> the Azure Resource Manager call, or why it is refused."""

CAPABILITIES = frozenset({Capability.LIST, Capability.METRICS, Capability.TAG}) | (
    acting_capabilities(STEPS)
)
"""What the adapter does: list, read metrics, tag, and every action of :data:`STEPS`."""
