"""The Kubernetes workloads of a ``fleet`` or ``stop-idle`` listing, as a second table:
namespace, owner kind/name, GPUs, node, dollars per hour and verdict (and the action)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gpuplan.cli.render import format_cell, format_count, render_table

HEADERS = ("namespace", "owner", "GPUs", "node", "$/h", "verdict", "action")


def print_workloads(records: Sequence[dict[str, Any]]) -> None:
    """The table, when any record is a workload; nothing otherwise."""
    units = [r for r in records if "owner_kind" in r]
    if not units:
        return
    rows = [
        [
            r["namespace"],
            f"{r['owner_kind']}/{r['owner_name']}",
            format_count(r["gpu_count"]),
            ",".join(r["nodes"]),
            format_cell(r["hourly_usd"], money=True),
            r["verdict"],
            r.get("action") or r.get("skip") or "",
        ]
        for r in units
    ]
    right = [False, False, True, False, True, False, False]
    print("\nKubernetes workloads:")
    print(render_table(HEADERS, rows, align_right=right, drop=(3,), wrap_last=True))
