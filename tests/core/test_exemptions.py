"""Exemptions that end: the exempt tag's value judged against ``now`` and the policy's
longest exemption, as a table (pure core)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gpuplan.core.lifecycle.exemptions import VOID_AFTER_TAG, ExemptionState, ends_at, judge
from gpuplan.core.lifecycle.idle import format_tag_time

NOW = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)
TAG = "gpuplan-keep"


@pytest.mark.parametrize(
    ("value", "max_days", "state"),
    [
        ("2026-12-31", None, ExemptionState.VALID),
        ("2026-12-31", 30, ExemptionState.VALID),  # 29.6 days from now
        ("2027-01-02", 30, ExemptionState.TOO_LONG),
        ("2026-12-02", 30, ExemptionState.VALID),  # through today, until midnight UTC
        ("2026-12-01", None, ExemptionState.EXPIRED),  # a date that passed never exempts
        ("7d@2026-12-01", 30, ExemptionState.VALID),
        ("36h@2026-11-30", 30, ExemptionState.EXPIRED),
        ("45d@2026-12-01", 30, ExemptionState.TOO_LONG),
        ("45D@2026-12-01", 30, ExemptionState.TOO_LONG),  # case does not matter
        ("yes", None, ExemptionState.OPEN),  # the old meaning, without a limit
        ("", None, ExemptionState.OPEN),
        ("yes", 30, ExemptionState.UNREADABLE),
        ("2026-02-30", 30, ExemptionState.UNREADABLE),  # no such day
        ("7w@2026-12-01", 30, ExemptionState.UNREADABLE),
        ("x" * 500, 30, ExemptionState.UNREADABLE),
    ],
)
def test_values(value: str, max_days: int | None, state: ExemptionState) -> None:
    assert judge({TAG: value}, TAG, NOW, max_days).state is state


def test_no_tag_is_no_exemption() -> None:
    found = judge({"other": "2026-12-31"}, TAG, NOW, 30)
    assert found.state is ExemptionState.NONE and not found.state.exempts


def test_a_refused_value_exempts_until_its_notice_runs_out() -> None:
    labels = {TAG: "2099-01-01"}
    first = judge(labels, TAG, NOW, 30)
    assert first.state is ExemptionState.TOO_LONG and first.state.exempts
    assert "exempt until a notice runs out" in first.reason
    noticed = {**labels, VOID_AFTER_TAG: format_tag_time(NOW + timedelta(hours=24))}
    held = judge(noticed, TAG, NOW + timedelta(hours=23), 30)
    assert held.state is ExemptionState.TOO_LONG and "no longer exempt after" in held.reason
    void = judge(noticed, TAG, NOW + timedelta(hours=24), 30)
    assert void.state is ExemptionState.VOID and not void.state.exempts


def test_ends_at_says_when_it_was_set_and_when_it_ends() -> None:
    assert ends_at("7d@2026-12-01") == (
        datetime(2026, 12, 1, tzinfo=UTC),
        datetime(2026, 12, 8, tzinfo=UTC),
    )
    assert ends_at("2026-12-31") == (None, datetime(2027, 1, 1, tzinfo=UTC))
    assert ends_at("soon") == (None, None)
