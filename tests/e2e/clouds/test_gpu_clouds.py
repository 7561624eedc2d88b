"""The GPU clouds (Lambda, CoreWeave, Nebius, Crusoe, RunPod, Vast.ai) as catalog entries.

Each is a built-in registry entry of the catalog-only kind: its offers are priced and
planned from ``pricing/<cloud>.csv``, and every lifecycle feature is refused as data
(``{feature: reason}``), which ``policy check`` and ``gpuplan fleet`` report with exit 2.
"""

from __future__ import annotations

import csv
import re
from datetime import date
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.clouds import Feature, facts_of, registered
from gpuplan.usecases.clouds import registry as cloud_registry

ROOT = Path(__file__).resolve().parents[3]
NAMES = ("lambda", "coreweave", "nebius", "crusoe", "runpod", "vast")


def _rows(name: str) -> list[dict[str, str]]:
    with (ROOT / "pricing" / f"{name}.csv").open(newline="") as f:
        return list(csv.DictReader(f))


def test_each_gpu_cloud_is_a_registered_catalog_only_entry() -> None:
    entries = cloud_registry.entries_by_provider()
    gpu_clouds = [facts_of(p) for p in registered() if facts_of(p).catalog_only]
    assert [f.provider.value for f in gpu_clouds] == list(NAMES)
    for facts in gpu_clouds:
        entry = entries[facts.provider]
        assert entry.catalog_only and entry.facts == facts_of(facts.provider)
        assert set(entry.unsupported) == set(Feature)
        assert facts.billing, facts.provider


@pytest.mark.parametrize("name", NAMES)
def test_every_row_quotes_its_page_and_the_day_it_was_read(name: str) -> None:
    rows = _rows(name)
    assert rows
    for row in rows:
        source = row["source"]
        assert re.search(r"https://\S+", source), row["instance_type"]
        assert f"read {row['as_of']}" in source, row["instance_type"]
        assert date.fromisoformat(row["as_of"]) <= date(2026, 12, 4)
        link = row["interconnect"]
        assert "InfiniBand" in link, row["instance_type"]
        has_fabric = "no InfiniBand" not in link
        assert has_fabric == bool(row["network_gbps"]), row["instance_type"]


def test_vast_rows_state_a_statistic_of_the_offers_not_one_offer() -> None:
    for row in _rows("vast"):
        assert re.search(r"(median|average) of \d+|median per GPU", row["source"])
        assert "not the cheapest" in row["source"] or "average" in row["source"]


def _policy(tmp_path: Path, scope: str) -> Path:
    path = tmp_path / "team.yaml"
    path.write_text(
        f"version: 1\nname: gpu-team\nscope:\n{scope}"
        "idle:\n  action: stop\n  max_actions_per_run: 10\n  allow_data_loss: false\n"
    )
    return path


@pytest.mark.parametrize("name", ["lambda", "vast"])
def test_a_policy_scoping_a_gpu_cloud_is_refused_with_the_entrys_reason(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _policy(tmp_path, f"  {name}:\n    regions: [anywhere]\n")
    assert main(["policy", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"scope.{name}" in err and "catalog-only cloud" in err and "team.yaml:5:" in err, err
    assert main(["fleet", "--policy", str(path)]) == 2
    assert "catalog-only cloud" in capsys.readouterr().err
    assert main(["stop-idle", "--policy", str(path)]) == 2


def test_the_catalog_lists_them_beside_the_big_three(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["catalog", "--gpu", "H100", "--gpus", "8", "--json"]) == 0
    import json

    clouds = {r["provider"] for r in json.loads(capsys.readouterr().out)}
    assert {"aws", "gcp", "azure", *NAMES} - {"vast"} <= clouds


def _mfu(capsys: pytest.CaptureFixture[str], gpus: str) -> dict[str, float]:
    import json

    args = ["estimate", "--params", "8B", "--tokens", "200B", "--gpu", "H100", "--gpus", gpus]
    assert main([*args, "--provider", "lambda,crusoe", "--pricing", "on_demand", "--json"]) == 0
    options = json.loads(capsys.readouterr().out)["options"]
    return {o["provider"]: o["mfu"] for o in options if "8x" in o["instance_type"]}


def test_the_multi_node_estimate_uses_each_offers_interconnect(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Lambda's on-demand 8x H100 has no InfiniBand, Crusoe's has 3,200 Gbit/s: on one
    node they plan the same; across eight, the one without a fabric is slower."""
    one_node = _mfu(capsys, "8")
    assert one_node["lambda"] == pytest.approx(one_node["crusoe"])
    eight_nodes = _mfu(capsys, "64")
    assert eight_nodes["lambda"] < eight_nodes["crusoe"] * 0.99
