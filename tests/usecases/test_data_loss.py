"""No data erased by default (issue 14, item 3), on moto: instance store on any device.

moto describes instance types as EC2 does: g4dn, g5, g6, p4d and p5 all carry NVMe
instance-store volumes (p4d: 8 x 1000 GB on an EBS root), which stop, hibernate and
terminate erase; g5g (T4G) has none.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.catalog.query import Catalog
from gpuplan.ledger import Ledger
from gpuplan.usecases.lifecycle.stop_idle import result_record, run_stop_idle
from tests.fakes.aws_helpers import policy, providers
from tests.fakes.aws_world import NOW, World, flat

TEAM = {"team": "research"}


def idle(world: World, kind: str, gpus: int = 1) -> str:
    iid = world.launch(kind, tags=TEAM)
    world.publish(iid, flat(0.5), instance_type=kind, gpus=gpus)
    return iid


def outcomes(result: object) -> dict[str, tuple[str, str]]:
    record = result_record(result)  # type: ignore[arg-type]
    return {d["instance_id"]: (d["action"], d["detail"]) for d in record["decisions"]}


def test_instance_store_on_any_device_is_skipped_by_default(
    world: World, lc_catalog: Catalog, tmp_path: Path
) -> None:
    p4d, g5 = idle(world, "p4d.24xlarge", gpus=8), idle(world, "g5.xlarge")
    g5g = idle(world, "g5g.xlarge")
    with Ledger(tmp_path / "l.db") as ledger:
        result = run_stop_idle(
            policy(allow_data_loss=False),
            providers(world, lc_catalog, ["us-east-1"]),
            apply=True,
            now=NOW,
            ledger=ledger,
        )
    got = outcomes(result)
    assert got[p4d] == ("skipped", "stop erases 8000 GB of instance-store (NVMe) data; "
                        "set allow_data_loss: true to allow")  # fmt: skip
    assert got[g5][0] == "skipped" and "250 GB" in got[g5][1]
    assert got[g5g][0] == "stopped"  # no instance store: nothing to lose
    assert world.state(p4d) == "running" and world.state(g5) == "running"
    assert world.state(g5g) == "stopped"


@pytest.mark.parametrize("action", ["stop", "hibernate"])
def test_allow_data_loss_lets_the_action_through(
    world: World, lc_catalog: Catalog, action: str
) -> None:
    g5 = idle(world, "g5.xlarge")
    result = run_stop_idle(
        policy(action=action),  # the helper's policy allows data loss
        providers(world, lc_catalog, ["us-east-1"]),
        apply=True,
        now=NOW,
    )
    assert outcomes(result)[g5][0] == "stopped"
    (item,) = [o.item for o in result.outcomes]
    assert any("instance-store" in w for w in item.warnings)


def test_policy_check_refuses_terminate_without_allow_data_loss(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "p.yaml"
    path.write_text("version: 1\nname: t\nscope: {}\nidle: {action: terminate}\n", encoding="utf-8")
    assert main(["policy", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "p.yaml:4:16: idle.action: terminate deletes the instance" in err
    assert "set idle.allow_data_loss: true" in err and "Traceback" not in err
    path.write_text(
        "version: 1\nname: t\nscope: {}\nidle: {action: terminate, allow_data_loss: true}\n",
        encoding="utf-8",
    )
    assert main(["policy", "check", str(path)]) == 0
    # Every command that loads the policy refuses it too: nothing is acted on.
    path.write_text("version: 1\nname: t\nscope: {}\nidle: {action: terminate}\n", encoding="utf-8")
    assert main(["stop-idle", "--policy", str(path), "--apply", "--db", str(tmp_path / "l")]) == 2
