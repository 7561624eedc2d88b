"""The Fleet screen names a Kubernetes workload by ``namespace/Kind/name``."""

from __future__ import annotations

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import GpuInstance, InstanceState
from gpuplan.tui.fleet_rows import unit_name


def _unit(**kw: object) -> GpuInstance:
    return GpuInstance(
        provider=Provider.AWS,
        account="a",
        region="us-east-1",
        instance_id="ml/Notebook/nb",
        name="nb",
        instance_type="p4d.24xlarge",
        state=InstanceState.RUNNING,
        **kw,  # type: ignore[arg-type]
    )


def test_a_workload_row_shows_namespace_kind_and_name() -> None:
    unit = _unit(attributes={"namespace": "ml", "owner_kind": "Notebook", "owner_name": "nb"})
    assert unit_name(unit) == "ml/Notebook/nb"
    assert unit_name(_unit()) == "nb"  # an instance keeps its name
