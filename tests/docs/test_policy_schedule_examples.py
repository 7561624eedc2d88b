"""The ``schedules:`` examples of docs/policy.md are run: each YAML block of the section
loads as a policy, every key of ``schedules:`` has an example, and the error lines the
section quotes are what ``policy check`` says."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gpuplan.core.lifecycle.schedule_clock import period_at
from gpuplan.core.policy import Policy
from gpuplan.core.policy.schedules import Schedule, Schedules
from gpuplan.loaders.policy_file import PolicyFileError, load_policy_file
from gpuplan.providers.url_parts import split_url

DOC = Path(__file__).resolve().parents[2] / "docs" / "policy.md"
HEADING = "## Schedules: off-hours and on-hours"


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(HEADING)
    return text[start : text.index("\n## ", start + len(HEADING))]


def examples() -> list[str]:
    return re.findall(r"```yaml\n(.*?)```", section(), flags=re.S)


def load(text: str, folder: Path) -> Policy:
    for name in re.findall(r"holidays_file: (\S+)", text):
        (folder / name).write_text("2026-07-03\n# Independence Day\n", encoding="utf-8")
    path = folder / "p.yaml"
    path.write_text(text, encoding="utf-8")
    return load_policy_file(path, split=split_url)


def test_the_section_has_examples() -> None:
    assert len(examples()) >= 2


@pytest.mark.parametrize("index", range(len(examples())))
def test_each_example_loads(index: int, tmp_path: Path) -> None:
    policy = load(examples()[index], tmp_path)
    assert policy.schedules.named


def test_every_schedules_key_has_an_example() -> None:
    written = set(re.findall(r"^\s*([a-z_]+):", "\n".join(examples()), flags=re.M))
    keys = {*Schedules.model_fields, *Schedule.model_fields}
    assert keys <= written, f"keys of schedules: without an example: {keys - written}"


def test_the_examples_mean_what_the_prose_says(tmp_path: Path) -> None:
    first, second = (load(text, tmp_path) for text in examples()[:2])
    office = first.schedules.named["office"]
    assert first.schedules.pick({}) == (None, "no gpuplan-schedule tag (schedules apply to "
                                        "tagged instances only)")  # fmt: skip
    assert period_at(office, datetime(2026, 12, 2, 10, tzinfo=UTC)).on  # Wed 11:00 Berlin
    assert not period_at(office, datetime(2026, 12, 2, 18, tzinfo=UTC)).on  # 19:00
    assert not period_at(office, datetime(2026, 12, 24, 10, tzinfo=UTC)).on  # a holiday
    assert second.schedules.pick({})[0] == "office"
    assert second.schedules.pick({"team-hours": "late"})[0] == "late"
    assert second.schedules.pick({"team-hours": "off"})[0] is None
    assert second.schedules.enforce_off_hours
    assert "2026-07-03" in second.schedules.named["office"].holidays


def test_the_quoted_errors_are_what_policy_check_says(tmp_path: Path) -> None:
    quoted = re.sub(r"\s+", " ", section())
    bad = examples()[0].replace("Europe/Berlin", "Europe/Atlantis")
    with pytest.raises(PolicyFileError) as caught:
        load(bad, tmp_path)
    line = str(caught.value).replace(str(tmp_path) + "/", "")
    assert f"`{line}`" in quoted
    holidays = examples()[1]
    with pytest.raises(PolicyFileError) as caught:
        path = tmp_path / "p.yaml"
        path.write_text(holidays, encoding="utf-8")
        (tmp_path / "holidays-us.txt").write_text(
            "2026-07-03\n# Independence Day, observed\nJuly 4\n", encoding="utf-8"
        )
        load_policy_file(path, split=split_url)
    line = str(caught.value).replace(str(tmp_path) + "/", "")
    assert f"`{line}`" in quoted
