"""A fifth cloud is its package and one registry entry: Toycloud, from tests/fakes/toycloud/.

The entry is registered at run time (nothing under ``gpuplan/`` names Toycloud), and
then the real code paths run against it: ``gpuplan catalog`` and ``gpuplan catalog
refresh`` through the CLI's ``main()``, the fleet survey and the stop-idle dry run
through the use cases over the adapters the entry's builder makes.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core import clouds
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.catalog.regions import RegionGroup, provider_region_problem, region_group
from gpuplan.providers.cloud_entry import BuildContext
from gpuplan.usecases.clouds import registry as cloud_registry
from gpuplan.usecases.lifecycle.concurrency import parse_service_limits
from gpuplan.usecases.lifecycle.stop_idle import decision_record, run_stop_idle
from gpuplan.usecases.lifecycle.survey import idle_rule, survey
from gpuplan.usecases.policy import policy_schema_text
from tests.fakes.contract import policy
from tests.fakes.toycloud import adapter
from tests.fakes.toycloud.entry import ENTRY

ROOT = Path(__file__).resolve().parents[3]
PACKAGE = ROOT / "tests" / "fakes" / "toycloud"
NOW = adapter.STARTED + timedelta(days=1)


@pytest.fixture
def toy() -> Iterator[Provider]:
    """Toycloud registered for one test: its one entry, and nothing else."""
    before = (tuple(Provider), clouds.registered(), cloud_registry.entries())
    cloud_registry.register(ENTRY)
    try:
        yield ENTRY.provider
    finally:
        cloud_registry.unregister(ENTRY.provider)
    assert (tuple(Provider), clouds.registered(), cloud_registry.entries()) == before


def test_adding_a_cloud_is_its_package_and_one_entry(toy: Provider) -> None:
    # The registry grew by exactly the one entry; the identity and the lower layers'
    # facts came from it.
    assert cloud_registry.entries()[-1] is ENTRY
    assert [e.provider for e in cloud_registry.entries()] == [*Provider]
    assert [*Provider][-1] is toy
    assert Provider("toy") is toy and clouds.facts_of(toy) == ENTRY.facts
    # No module of gpuplan names it: every other table reads the entry.
    mention = re.compile(r"[\"']toy[\"']|toy\.csv|toycloud", re.IGNORECASE)
    named = [p for p in (ROOT / "gpuplan").rglob("*.py") if mention.search(p.read_text())]
    assert named == []
    assert ENTRY.scopes.__module__ == "tests.fakes.toycloud.adapter"
    assert (PACKAGE / ENTRY.catalog_file).is_file()
    assert (ROOT / ENTRY.permission_file).is_file()


def test_importing_the_entry_defines_nothing() -> None:
    assert "toy" not in [p.value for p in Provider]
    assert ENTRY not in cloud_registry.entries()


def test_region_naming_and_service_limits_come_from_the_entry(toy: Provider) -> None:
    assert region_group(toy, "eu-toy1") is RegionGroup.EUROPE
    assert provider_region_problem(toy, "us-toy1") is None
    assert "not of toy" in (provider_region_problem(toy, "us-east-1") or "")
    assert parse_service_limits("toy.telemetry=3") == {"toy.telemetry": 3}


def _catalog_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "catalog"
    folder.mkdir()
    shutil.copy(PACKAGE / ENTRY.catalog_file, folder / ENTRY.catalog_file)
    return folder


def test_catalog_lists_its_offers(
    toy: Provider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _catalog_dir(tmp_path)
    args = ["--provider", "toy", "--region", "europe", "--json", "--catalog-dir", str(folder)]
    code = main(["catalog", *args])
    assert code == 0
    rows = json.loads(capsys.readouterr().out)
    offers = rows["offers"] if isinstance(rows, dict) else rows
    assert [(o["provider"], o["instance_type"], o["region"]) for o in offers] == [
        ("toy", "toy.h100x8", "eu-toy1")
    ]


def test_catalog_refresh_prices_and_discovers(
    toy: Provider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _catalog_dir(tmp_path)
    code = main(["catalog", "refresh", "--provider", "toy", "--json", "--catalog-dir", str(folder)])
    out = capsys.readouterr().out
    assert code == 0, out
    written = (folder / ENTRY.catalog_file).read_text()
    assert "toy.l4x1,us-toy1,L4" in written  # discovered by its listing, priced by its API
    assert "toy.h100x8,us-toy1,H100,8,80,192,2048,NVLink,400,29" in written
    assert "Toycloud price list" in written


def test_fleet_survey_and_stop_idle_dry_run(toy: Provider) -> None:
    team = policy({"aws": {"regions": ["us-east-1"]}})
    context = BuildContext(team, None, None, {})
    adapters = list(cloud_registry.entry_of(toy).scopes(context).values())
    assert [a.scope for a in adapters] == ["toy eu-toy1", "toy us-toy1"]

    seen = survey(adapters, idle_rule(team), NOW)
    verdicts = {s.instance.instance_id: s.decision.verdict.value for s in seen.seen}
    assert verdicts == {
        "eu-toy1-idle": "idle",
        "eu-toy1-busy": "busy",
        "us-toy1-idle": "idle",
        "us-toy1-busy": "busy",
    }, seen.problems

    result = run_stop_idle(team, adapters, apply=False, now=NOW)
    assert result.problems == []
    planned = {
        r["instance_id"]: (r["planned_action"], r["action"])
        for r in map(decision_record, result.outcomes)
    }
    assert planned == {
        "eu-toy1-idle": ("stop", "none"),
        "eu-toy1-busy": ("none", "none"),
        "us-toy1-idle": ("stop", "none"),
        "us-toy1-busy": ("none", "none"),
    }
    assert all(a.calls and not any(c.method == "act" for c in a.calls) for a in adapters)


def _policy_file(tmp_path: Path, scope: str, *, data_loss: bool = True) -> Path:
    stated = "  allow_data_loss: false\n" if data_loss else ""
    path = tmp_path / "team.yaml"
    path.write_text(
        "version: 1\nname: toy-team\n"
        f"scope:\n{scope}"
        "  match_labels: {team: research}\n"
        f"idle:\n  action: stop\n  max_actions_per_run: 10\n{stated}"
    )
    return path


def test_a_policy_names_the_cloud_and_the_commands_act_on_it(
    toy: Provider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Through the CLI with a policy file: its ``scope.toy`` section is checked by the
    entry's model, ``fleet`` surveys only the regions it lists, ``stop-idle`` plans
    (dry run) a stop for the idle instance there and acts on nothing."""
    path = _policy_file(tmp_path, "  toy:\n    regions: [us-toy1]\n")
    assert main(["policy", "check", str(path)]) == 0, capsys.readouterr()
    capsys.readouterr()

    folder = _catalog_dir(tmp_path)
    assert main(["fleet", "--policy", str(path), "--json", "--catalog-dir", str(folder)]) == 0
    listed = json.loads(capsys.readouterr().out)["instances"]
    verdicts = {r["instance_id"]: r["verdict"] for r in listed}
    assert verdicts == {"us-toy1-idle": "idle", "us-toy1-busy": "busy"}

    db = tmp_path / "ledger.db"
    args = ["--policy", str(path), "--json", "--db", str(db), "--catalog-dir", str(folder)]
    assert main(["stop-idle", *args]) == 0
    out = json.loads(capsys.readouterr().out)
    planned = {d["instance_id"]: (d["planned_action"], d["action"]) for d in out["decisions"]}
    assert planned == {"us-toy1-idle": ("stop", "none"), "us-toy1-busy": ("none", "none")}


def test_its_section_is_checked_and_its_data_loss_named(
    toy: Provider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    unstated = _policy_file(tmp_path, "  toy:\n    regions: [us-toy1]\n", data_loss=False)
    assert main(["policy", "check", str(unstated)]) == 2
    assert "Toycloud scratch disks" in capsys.readouterr().err
    wrong = _policy_file(tmp_path, "  toy:\n    regions: [mars-1]\n")
    assert main(["policy", "check", str(wrong)]) == 2
    err = capsys.readouterr().err
    assert "not a Toycloud region: mars-1" in err and str(wrong) in err


def test_its_endpoints_get_the_link_local_guard(
    toy: Provider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A registered cloud's ``*_endpoint`` keys are outgoing URLs like the built-in
    clouds': one pointing at the metadata service is refused at its line, redacted."""
    section = "  toy:\n    regions: [us-toy1]\n    api_endpoint: http://u:p@169.254.169.254/x\n"
    path = _policy_file(tmp_path, section)
    assert main(["policy", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:6:" in err and "link-local" in err and "u:p" not in err, err
    assert "scope.toy.api_endpoint" in err, err
    fine = _policy_file(
        tmp_path, "  toy:\n    regions: [us-toy1]\n    api_endpoint: https://toy.example.com\n"
    )
    assert main(["policy", "check", str(fine)]) == 0, capsys.readouterr()


def test_its_section_is_in_the_policy_schema(toy: Provider) -> None:
    """The JSON Schema editors validate against is generated with the registered
    sections: ``scope.toy`` is a property of Scope, checked by ToyScope's own schema."""
    schema = json.loads(policy_schema_text())
    scope = schema["$defs"]["Scope"]
    assert scope["additionalProperties"] is False
    assert scope["properties"]["toy"]["anyOf"][0] == {"$ref": "#/$defs/ToyScope"}
    toy_schema = schema["$defs"]["ToyScope"]
    assert toy_schema["required"] == ["regions"]
    assert {"regions", "api_endpoint"} <= set(toy_schema["properties"])


def test_its_metrics_section_is_checked_defaulted_and_in_the_schema(
    toy: Provider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``idle.metrics.toy`` comes from the entry as the built-in clouds' sections do: checked
    by its model (an error names file, line and field), present with its defaults when
    the file omits it, and a property of MetricsSettings in the generated schema."""
    scope = "  toy:\n    regions: [us-toy1]\n"
    omitted = _policy_file(tmp_path, scope)
    assert main(["policy", "show", str(omitted), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["idle"]["metrics"]
    assert list(shown)[:4] == ["aws", "gcp", "azure", "toy"]
    assert shown["toy"] == {"metric": "toy_gpu_busy", "resolution_seconds": 60}

    path = _policy_file(tmp_path, scope)
    path.write_text(
        path.read_text() + "  metrics:\n    toy:\n      metric: busy\n      resolution_seconds: 5\n"
    )
    assert main(["policy", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:14:" in err and "idle.metrics.toy.resolution_seconds" in err, err
    path.write_text(path.read_text().replace("resolution_seconds: 5", "resolution_seconds: 30"))
    assert main(["policy", "check", str(path)]) == 0, capsys.readouterr()

    schema = json.loads(policy_schema_text())
    metrics = schema["$defs"]["MetricsSettings"]
    assert metrics["additionalProperties"] is False
    assert metrics["properties"]["toy"] == {"$ref": "#/$defs/ToyMetrics"}
    assert set(schema["$defs"]["ToyMetrics"]["properties"]) == {"metric", "resolution_seconds"}


def test_its_bill_keys_sit_beside_the_common_ones(
    toy: Provider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The entry's ``bill_keys`` are keys of ``bill`` like the built-in clouds' (AWS's
    ``aws_cur_export``): checked with the common keys in one pass, after them in the
    dumped policy, and properties of BillSettings in the schema."""
    path = _policy_file(tmp_path, "  toy:\n    regions: [us-toy1]\n")
    text = path.read_text()
    path.write_text(text + "bill:\n  gap_percent: 5\n  toy_invoice_days: 14\n")
    assert main(["policy", "show", str(path), "--json"]) == 0
    bill = json.loads(capsys.readouterr().out)["bill"]
    assert list(bill)[:3] == ["team_label", "gap_percent", "gap_min_usd"]
    assert list(bill)[-1] == "toy_invoice_days" and bill["toy_invoice_days"] == 14

    path.write_text(text + "bill:\n  gap_percent: 500\n  toy_invoice_days: 0\n")
    assert main(["policy", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:12:" in err and "bill.gap_percent" in err, err
    assert f"{path}:13:" in err and "bill.toy_invoice_days" in err, err

    properties = json.loads(policy_schema_text())["$defs"]["BillSettings"]["properties"]
    assert list(properties)[-1] == "toy_invoice_days"
    assert properties["toy_invoice_days"]["maximum"] == 90


def test_without_the_entry_its_section_is_an_unknown_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _policy_file(tmp_path, "  toy:\n    regions: [us-toy1]\n")
    assert main(["policy", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "scope.toy" in err and ":4" in err, err
    schema = json.loads(policy_schema_text())["$defs"]
    assert "toy" not in schema["Scope"]["properties"]
    assert "toy" not in schema["MetricsSettings"]["properties"]
    assert "toy_invoice_days" not in schema["BillSettings"]["properties"]


def test_estimate_ranks_its_offers_with_spot(
    toy: Provider, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The planner prices a registered cloud's offers, spot included (no per-cloud table)."""
    folder = _catalog_dir(tmp_path)
    args = ["--params", "7B", "--tokens", "100B", "--provider", "toy", "--json"]
    assert main(["estimate", *args, "--catalog-dir", str(folder)]) == 0
    options = json.loads(capsys.readouterr().out)["options"]
    assert {o["provider"] for o in options} == {"toy"}
    assert {o["pricing"] for o in options} >= {"on_demand", "spot"}
