"""Kubernetes workloads on the Fleet screen and its audit view: namespace, owner, GPUs,
node, $/h and verdict columns appear when a row is a workload (and fit 80 columns), the
GPUs no pod requests show per node, and an idle workload stop-idle refuses gets the
reason, never stop-idle advice."""

from __future__ import annotations

from decimal import Decimal

from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from gpuplan.core.lifecycle.instances import GpuInstance, RiskFacts
from gpuplan.tui.app import GpuplanApp
from gpuplan.tui.context import TuiContext
from gpuplan.tui.table import CELL_PADDING
from tests.tui.conftest import drive
from tests.tui.fleet_fake import (
    LifecycleFake,
    audit_samples,
    demo_fleet,
    flat_samples,
    gpu_instance,
)
from tests.tui.test_fleet_audit import open_audit
from tests.tui.test_fleet_screen import cells, on_fake, open_fleet


class ClusterFake(LifecycleFake):
    """The Fleet fake with Kubernetes units and one node's stranded GPUs."""

    def stranded_records(self) -> list[dict[str, object]]:
        return [
            {"scope": "kubernetes prod", "node": "gpu-c", "instance_type": "p5.48xlarge",
             "region": "us-east-1", "pricing": "spot", "gpus": 3, "node_gpus": 8,
             "hourly_usd": 20.64},
        ]  # fmt: skip


def workload(key: str, node: str, gpus: int, refused: str = "") -> GpuInstance:
    namespace, kind, name = key.split("/")
    hourly = Decimal("55.04") * gpus / 8
    return gpu_instance(key, name).model_copy(
        update={
            "gpu_count": gpus,
            "hourly_usd": hourly,
            "risk": RiskFacts(refused=refused),
            "attributes": {
                "namespace": namespace,
                "owner_kind": kind,
                "owner_name": name,
                "nodes": node,
                "pods": f"{name}-0",
            },
        }
    )


NOTEBOOK = "ml/Notebook/alice"
SERVING = "serving/Deployment/llm-eval"
AGENT = "gpu-ops/DaemonSet/dcgm-probe"
REFUSED = f"DaemonSet {AGENT}: gpuplan never acts on a DaemonSet"


def cluster() -> ClusterFake:
    fake = ClusterFake(
        [
            workload(NOTEBOOK, "gpu-a", 2),
            workload(SERVING, "gpu-b", 4),
            workload(AGENT, "gpu-a", 1, refused=REFUSED),
            gpu_instance("i-0busy", "llama-pretrain"),
        ]
    )
    fake.utilisation = {
        NOTEBOOK: flat_samples(0.5, gpus=2),
        SERVING: flat_samples(80.0, gpus=4),
        AGENT: flat_samples(0.5, gpus=1),
        "i-0busy": flat_samples(85.0),
    }
    return fake


def used_width(screen_table: DataTable[object]) -> int:
    return sum(c.width + CELL_PADDING for c in screen_table.columns.values())


def test_workload_columns_and_stranded_gpus_at_120_columns(tui_context: TuiContext) -> None:
    app = GpuplanApp(on_fake(tui_context, cluster()))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        rows = {s.instance.instance_id: at for at, s in enumerate(screen.rows)}
        assert cells(screen, "instance")[rows[NOTEBOOK]] == NOTEBOOK
        at = rows[NOTEBOOK]
        assert cells(screen, "namespace")[at] == "ml"
        assert cells(screen, "owner")[at] == "Notebook/alice"
        assert cells(screen, "node")[at] == "gpu-a"
        assert cells(screen, "gpus")[at].startswith("2x")
        assert cells(screen, "hourly")[at] == "13.76"
        assert cells(screen, "verdict")[at] == "idle"
        assert cells(screen, "verdict")[rows[SERVING]] == "busy"
        assert cells(screen, "namespace")[rows["i-0busy"]] == ""  # an instance
        spare = screen.query_one("#stranded", Static)
        assert spare.display
        text = str(spare.render())
        assert "node gpu-c (p5.48xlarge, us-east-1, spot): 3 of 8 GPUs" in text
        assert "$20.64/h" in text
        assert "3 GPUs stranded $20.64/h" in str(screen.query_one("#status", Static).render())

    drive(app, script, size=(120, 30))


def test_workload_columns_fit_80_columns(tui_context: TuiContext) -> None:
    app = GpuplanApp(on_fake(tui_context, cluster()))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        table = screen.query_one("#instances", DataTable)
        keys = [str(k.value) for k in table.columns]
        # the existing priorities first (instance, verdict, idle, $/h, region), then the
        # namespace; lower-priority columns are dropped, never squeezed past the width
        assert {"instance", "verdict", "idle", "hourly", "namespace"} <= set(keys)
        assert used_width(table) <= 80 - 3
        assert "ml" in cells(screen, "namespace")

    drive(app, script, size=(80, 24))


def test_no_workload_columns_without_workloads(tui_context: TuiContext) -> None:
    app = GpuplanApp(on_fake(tui_context, demo_fleet()))

    async def script(pilot: Pilot[None]) -> None:
        screen = await open_fleet(app, pilot)
        keys = {str(k.value) for k in screen.query_one("#instances", DataTable).columns}
        assert not keys & {"namespace", "owner", "node"}
        assert not screen.query_one("#stranded", Static).display

    drive(app, script, size=(160, 30))


def audit_cluster() -> ClusterFake:
    from datetime import timedelta

    from tests.tui.fleet_fake import NOW

    month = NOW - timedelta(days=30)
    units = [workload(NOTEBOOK, "gpu-a", 8), workload(AGENT, "gpu-a", 8, refused=REFUSED)]
    fake = ClusterFake([u.model_copy(update={"started_at": month}) for u in units])
    fake.samples = {
        NOTEBOOK: audit_samples([0.0] * 8, 0.0, 1.0),
        AGENT: audit_samples([0.0] * 8, 0.0, 1.0),
    }
    return fake


def test_audit_view_names_workloads_and_never_advises_a_refused_stop(
    tui_context: TuiContext,
) -> None:
    app = GpuplanApp(on_fake(tui_context, audit_cluster()))

    async def script(pilot: Pilot[None]) -> None:
        _, pane = await open_audit(app, pilot)
        found = {a.subject.instance_id: a for a in pane.rows}
        kinds = {key: [v.kind.value for v in a.advice] for key, a in found.items()}
        assert "stop-idle" in kinds[NOTEBOOK]
        assert "stop-idle" not in kinds[AGENT] and "idle-refused" in kinds[AGENT]
        refused = next(v for v in found[AGENT].advice if v.kind.value == "idle-refused")
        assert REFUSED in refused.action
        column = {str(k.value) for k in pane.table.columns}
        assert {"instance", "namespace", "owner"} <= column
        names = [str(c) for c in pane.table.get_column("instance")]
        assert {n[:18] for n in names} == {NOTEBOOK[:18], AGENT[:18]}  # namespace/Kind/name
        owners = [str(c) for c in pane.table.get_column("owner")]
        assert "Notebook/alice" in owners

    drive(app, script, size=(160, 30))
