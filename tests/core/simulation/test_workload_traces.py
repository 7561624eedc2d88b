"""``gpuplan simulate`` replays Kubernetes workloads as units: a trace folder whose
fleet.csv names ``namespace/Kind/name`` (series in ``<namespace>/<Kind>/<name>.csv``),
priced at the pod's share ($/h), reported by namespace and by owner (issue 35)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.lifecycle.simulation.traces import workload_parts

HOURS = 12


def series(path: Path, busy_hours: int) -> None:
    """Busy (90%) for ``busy_hours``, then idle (0%, memory freed, CPU quiet)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = ["minute,utilisation,gpu_memory_used_percent,cpu_percent"]
    for m in range(HOURS * 60):
        busy = m < busy_hours * 60
        rows.append(f"{m},{90 if busy else 0},{60 if busy else 0},{30 if busy else 1}")
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def folder(tmp_path: Path) -> Path:
    root = tmp_path / "traces"
    units = {
        "ml/Notebook/alice": ("p4d.24xlarge", "8.19", 2),  # 2 of 8 GPUs of a $32.77/h node
        "ml/Deployment/eval": ("p4d.24xlarge", "4.10", 12),  # busy throughout
        "research/Notebook/bob": ("g5.xlarge", "1.006", 1),
        "i-0plain": ("g5.xlarge", "1.006", 3),  # an instance beside them
    }
    root.mkdir()
    lines = ["instance_id,instance_type,trace_class,hourly_usd"]
    for unit, (kind, price, busy) in units.items():
        lines.append(f"{unit},{kind},notebook,{price}")
        *dirs, last = unit.split("/")
        series(root.joinpath(*dirs, f"{last}.csv"), busy)
    (root / "fleet.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def test_workload_units_replay_and_report_by_namespace_and_owner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["simulate", "--traces", str(folder(tmp_path)), "--json"])
    out = json.loads(capsys.readouterr().out)
    record = out[0] if isinstance(out, list) else out
    assert code == 0 and record["instances"] == 4
    assert set(record["by_namespace"]) == {"ml", "research"}  # the instance is in neither
    assert record["by_namespace"]["ml"]["units"] == 2
    owners = record["by_owner"]
    assert set(owners) == {"Notebook/alice", "Deployment/eval", "Notebook/bob"}
    assert owners["Deployment/eval"]["saved_usd"] == 0  # never idle, never stopped
    assert owners["Notebook/alice"]["saved_usd"] > 0  # idle 10 h at $8.19/h
    assert float(owners["Notebook/alice"]["saved_usd"]) <= 10 * 8.19


def test_a_bad_unit_id_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = folder(tmp_path)
    text = (root / "fleet.csv").read_text(encoding="utf-8")
    (root / "fleet.csv").write_text(text + "ml/../etc,g5.xlarge,x,1\n", encoding="utf-8")
    code = main(["simulate", "--traces", str(root), "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "not a usable instance id: 'ml/../etc'" in err and "fleet.csv" in err


def test_workload_ids() -> None:
    assert workload_parts("ml/Notebook/alice") == ("ml", "Notebook", "alice")
    assert workload_parts("ml/StatefulSet/db.v2") == ("ml", "StatefulSet", "db.v2")
    for bad in ("ml/Notebook", "ML/Notebook/a", "ml/Note-book/a", "ml/Notebook/..",
                "../Notebook/a", "ml/Notebook/a/b", "i-0abc"):  # fmt: skip
        assert workload_parts(bad) is None, bad


def test_the_table_lists_workloads_by_namespace_and_owner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["simulate", "--traces", str(folder(tmp_path))]) == 0
    out = capsys.readouterr().out
    assert "Kubernetes workloads by namespace:" in out and "Kubernetes workloads by owner:" in out
    after = out.split("Kubernetes workloads by owner:")[1]
    assert "Notebook/alice" in after and "Deployment/eval" in after
