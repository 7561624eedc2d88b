"""A new metrics source is its module and one registry entry: a toy source registered at
runtime is built by the adapter builder from a policy that names it, and its GPU memory
and CPU reach the idle decision (AWS on moto lists the instance)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from gpuplan.cli.main import main
from gpuplan.core.errors import InputError
from gpuplan.core.lifecycle.idle import IdleVerdict
from gpuplan.core.policy import Policy
from gpuplan.core.policy.metrics_settings import MetricsSettings
from gpuplan.usecases.clouds import metrics_sources
from gpuplan.usecases.clouds.adapters import build_adapters
from gpuplan.usecases.lifecycle.survey import idle_rule, survey
from tests.e2e.metrics_contract.toy_source import TOY_ENTRY, ToyMetrics, ToySource
from tests.fakes.aws_helpers import policy
from tests.fakes.aws_world import NOW, World


def toy_policy(toy: ToyMetrics, **metrics: object) -> Policy:
    base = policy()
    section = MetricsSettings.model_validate({**metrics, "toy": toy.model_dump()})
    return base.model_copy(update={"idle": base.idle.model_copy(update={"metrics": section})})


@pytest.fixture
def registered() -> Iterator[None]:
    """The toy source registered for one test: its one entry, nothing else."""
    before = list(metrics_sources.METRICS_ENTRIES)
    metrics_sources.register(TOY_ENTRY)
    try:
        yield
    finally:
        metrics_sources.unregister(TOY_ENTRY.name)
    assert before == metrics_sources.METRICS_ENTRIES


@pytest.mark.usefixtures("registered")
def test_the_fleet_builder_takes_the_toy_source_from_the_policy(world: World) -> None:
    iid = world.launch(tags={"team": "research"})
    pol = toy_policy(ToyMetrics(utilisation=0.0, memory_percent=60.0, cpu_percent=2.0))
    fleet = build_adapters(pol, None, {})
    assert fleet.problems == []
    seen = survey(fleet.adapters, idle_rule(pol), NOW).seen
    (only,) = (s for s in seen if s.instance.instance_id == iid)
    d = only.decision
    assert d.memory_percent == 60.0 and d.cpu_percent == 2.0
    assert d.verdict is IdleVerdict.IDLE
    assert "live-process window" in d.reason  # quiet, but a process holds GPU memory


@pytest.mark.usefixtures("registered")
def test_without_its_section_the_toy_is_not_built() -> None:
    assert metrics_sources.shared_source(policy()) is None
    toy = ToyMetrics(utilisation=1.0, memory_percent=0.0, cpu_percent=0.0)
    assert isinstance(metrics_sources.shared_source(toy_policy(toy)), ToySource)


@pytest.mark.usefixtures("registered")
def test_two_shared_sources_are_refused() -> None:
    toy = ToyMetrics(utilisation=1.0, memory_percent=0.0, cpu_percent=0.0)
    both = toy_policy(toy, prometheus={"url": "http://prometheus:9090"})
    with pytest.raises(InputError, match=r"idle\.metrics\.prometheus, idle\.metrics\.toy"):
        metrics_sources.shared_source(both)


def test_unregistered_the_toy_section_is_an_unknown_key() -> None:
    toy = ToyMetrics(utilisation=1.0, memory_percent=0.0, cpu_percent=0.0)
    with pytest.raises(ValidationError, match="toy"):
        toy_policy(toy)


POLICY = """version: 1
name: toy-metrics
scope: {{}}
idle:
  metrics:
    toy:
      utilisation: {utilisation}
      memory_percent: 10
      cpu_percent: 1
"""


@pytest.mark.usefixtures("registered")
def test_a_policy_file_names_the_source_and_its_section_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.yaml"
    good.write_text(POLICY.format(utilisation=3))
    assert main(["policy", "check", str(good)]) == 0, capsys.readouterr().err
    bad = tmp_path / "bad.yaml"
    bad.write_text(POLICY.format(utilisation="'lots'"))
    assert main(["policy", "check", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}:7:" in err and "idle.metrics.toy.utilisation" in err, err


def test_its_section_is_in_the_policy_schema_while_registered(
    request: pytest.FixtureRequest,
) -> None:
    """``idle.metrics.toy`` is in the generated JSON Schema exactly while registered."""
    from gpuplan.usecases.policy import policy_schema_text

    def toy_property() -> object:
        defs = json.loads(policy_schema_text())["$defs"]
        return defs["MetricsSettings"]["properties"].get("toy")

    assert toy_property() is None
    request.getfixturevalue("registered")
    assert toy_property() == {
        "anyOf": [{"$ref": f"#/$defs/{ToyMetrics.__name__}"}, {"type": "null"}],
        "default": None,
    }
