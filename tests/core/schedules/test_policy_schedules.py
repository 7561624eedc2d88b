"""``schedules:`` in policy files: one readable line per mistake (file, line, field,
expected), exit 2 from ``policy check``; holiday files read relative to the policy."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.policy.schedules import Schedules
from gpuplan.loaders.policy_file import PolicyFileError, load_policy_file
from gpuplan.providers.url_parts import split_url

HEAD = "version: 1\nname: team\nscope:\n  aws:\n    regions: [us-east-1]\n"
GOOD = (
    HEAD + "schedules:\n"
    "  applies_to: all\n"
    "  default: office\n"
    "  named:\n"
    "    office:\n"
    "      timezone: Europe/Berlin\n"
    "      on_hours: '08:00'\n"
    "      off_hours: '19:00'\n"
    "      weekdays: [mon, tue, wed, thu, fri]\n"
    "      holidays: [2026-12-24, '2026-12-25']\n"
)


def _errors(err: str) -> list[str]:
    return [ln.removeprefix("gpuplan: error: ") for ln in err.splitlines() if "error:" in ln]


def test_a_good_schedule_loads(write_policy: Callable[[str | bytes, str], Path]) -> None:
    policy = load_policy_file(write_policy(GOOD, "p.yaml"), split=split_url)
    office = policy.schedules.named["office"]
    assert office.timezone == "Europe/Berlin"
    assert office.holidays == ["2026-12-24", "2026-12-25"]
    assert policy.schedules.pick({}) == ("office", "default schedule office (applies_to: all)")
    assert policy.schedules.pick({"gpuplan-schedule": "off"})[0] is None


@pytest.mark.parametrize(
    ("old", "new", "line", "field", "says"),
    [
        ("Europe/Berlin", "Europe/Atlantis", 11, "schedules.named.office.timezone",
         "unknown time zone 'Europe/Atlantis'"),
        ("'19:00'", "19:00", 13, "schedules.named.office.off_hours",
         "expected a time of day in quotes such as '19:00', got the number 1140"),
        ("'08:00'", "'25:00'", 12, "schedules.named.office.on_hours",
         "expected a time of day 'HH:MM' from 00:00 to 23:59"),
        ("'19:00'", "'07:00'", 13, "schedules.named.office.off_hours",
         "must be later than on_hours (08:00)"),
        ("default: office", "default: nights", 8, "schedules.default",
         "unknown schedule 'nights' (named: office)"),
        ("[mon, tue,", "[mon, mon, tue, funday,", 14, "schedules.named.office.weekdays",
         "expected a weekday"),
        ("'2026-12-25'", "'2026-13-25'", 15, "schedules.named.office.holidays",
         "expected a date such as 2026-12-25"),
    ],
)  # fmt: skip
def test_each_mistake_is_one_line_naming_file_line_and_field(
    old: str,
    new: str,
    line: int,
    field: str,
    says: str,
    write_policy: Callable[[str | bytes, str], Path],
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert old in GOOD
    path = write_policy(GOOD.replace(old, new), "bad.yaml")
    assert main(["policy", "check", str(path)]) == 2
    errors = _errors(capsys.readouterr().err)
    assert len(errors) == 1, errors
    assert errors[0].startswith(f"{path}:{line}:"), errors[0]
    assert f" {field}" in errors[0] and says in errors[0], errors[0]


def test_applies_to_all_needs_a_default(
    write_policy: Callable[[str | bytes, str], Path], capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_policy(GOOD.replace("  default: office\n", ""), "nodefault.yaml")
    assert main(["policy", "check", str(path)]) == 2
    (error,) = _errors(capsys.readouterr().err)
    assert "schedules.default" in error and "needed with applies_to: all" in error


def test_off_is_not_a_schedule_name(write_policy: Callable[[str | bytes, str], Path]) -> None:
    text = GOOD.replace("    office:\n", "    'off':\n").replace(
        "default: office", "default: 'off'"
    )
    with pytest.raises(PolicyFileError) as caught:
        load_policy_file(write_policy(text, "off.yaml"), split=split_url)
    assert "'off' is reserved" in str(caught.value)


def test_holidays_come_from_a_file_beside_the_policy(tmp_path: Path) -> None:
    (tmp_path / "holidays.txt").write_text(
        "# Berlin public holidays\n2026-12-31\n\n2027-01-01  # New Year\n", encoding="utf-8"
    )
    policy_path = tmp_path / "p.yaml"
    policy_path.write_text(GOOD + "      holidays_file: holidays.txt\n", encoding="utf-8")
    office = load_policy_file(policy_path, split=split_url).schedules.named["office"]
    assert office.holidays == ["2026-12-24", "2026-12-25", "2026-12-31", "2027-01-01"]


def test_a_bad_holiday_file_names_its_own_line(tmp_path: Path) -> None:
    (tmp_path / "holidays.txt").write_text("2026-12-31\n2026-13-45\n", encoding="utf-8")
    policy_path = tmp_path / "p.yaml"
    policy_path.write_text(GOOD + "      holidays_file: holidays.txt\n", encoding="utf-8")
    with pytest.raises(PolicyFileError) as caught:
        load_policy_file(policy_path, split=split_url)
    assert str(caught.value) == (
        f"{tmp_path / 'holidays.txt'}:2: expected a date such as 2026-12-25, got '2026-13-45'"
    )


def test_a_holiday_file_that_is_not_one_is_never_printed(tmp_path: Path) -> None:
    """A policy naming a credentials file as its holidays must not print it into a log:
    only date-shaped lines are quoted."""
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    lines = ["[default]", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE"]
    lines += [f"aws_secret_access_key = {secret}"] * 7
    (tmp_path / "credentials").write_text("\n".join(lines) + "\n", encoding="utf-8")
    policy_path = tmp_path / "p.yaml"
    policy_path.write_text(GOOD + "      holidays_file: credentials\n", encoding="utf-8")
    with pytest.raises(PolicyFileError) as caught:
        load_policy_file(policy_path, split=split_url)
    said = str(caught.value)
    assert "AKIA" not in said and secret[:8] not in said and "default" not in said
    assert said.splitlines()[0].endswith(
        "credentials:1: expected a date such as 2026-12-25, got a line of 9 characters that "
        "is not a date (not shown)"
    )


def test_a_missing_or_huge_holiday_file_is_refused_at_its_key(tmp_path: Path) -> None:
    policy_path = tmp_path / "p.yaml"
    policy_path.write_text(GOOD + "      holidays_file: nowhere.txt\n", encoding="utf-8")
    with pytest.raises(PolicyFileError) as caught:
        load_policy_file(policy_path, split=split_url)
    assert ":16:" in str(caught.value) and "file not found" in str(caught.value)
    (tmp_path / "big.txt").write_text("2026-12-31\n" * 7000, encoding="utf-8")
    policy_path.write_text(GOOD + "      holidays_file: big.txt\n", encoding="utf-8")
    with pytest.raises(PolicyFileError) as caught:
        load_policy_file(policy_path, split=split_url)
    assert "too large for a holiday file" in str(caught.value)


def test_policy_show_writes_times_that_read_back(
    write_policy: Callable[[str | bytes, str], Path],
) -> None:
    policy = load_policy_file(write_policy(GOOD, "p.yaml"), split=split_url)
    shown = policy.schedules.model_dump(mode="json")
    assert shown["named"]["office"]["on_hours"] == "08:00"
    assert Schedules.model_validate(shown) == policy.schedules
