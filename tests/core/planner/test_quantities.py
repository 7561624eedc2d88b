"""Parsing what people type: 7B, 2T, 36h, 14d, 8-512, fractions."""

from __future__ import annotations

import pytest

from gpuplan.core.errors import InputError
from gpuplan.core.planner.quantities import (
    parse_amount,
    parse_duration_hours,
    parse_fraction,
    parse_gpu_counts,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [("7B", 7e9), ("7e9", 7e9), ("2T", 2e12), ("1.5t", 1.5e12), ("350M", 350e6), ("42M", 42e6)],
)
def test_amounts(text: str, value: float) -> None:
    assert parse_amount(text, "--params") == pytest.approx(value)
    assert parse_amount("42", "--layers") == 42.0  # no floor where none is plausible


@pytest.mark.parametrize(
    ("flag", "text"), [("--params", "0.5"), ("--params", "42"), ("--tokens", "10")]
)
def test_implausibly_small_amounts_are_refused_with_the_range(flag: str, text: str) -> None:
    with pytest.raises(InputError, match=f"{flag}: {text} is implausibly small.*expected 1M to"):
        parse_amount(text, flag)


@pytest.mark.parametrize("text", ["-1", "lots", "7X", "", "0", "nan"])
def test_bad_amounts_name_the_flag(text: str) -> None:
    with pytest.raises(InputError, match="--params"):
        parse_amount(text, "--params")


@pytest.mark.parametrize(
    ("text", "hours"),
    [("36h", 36.0), ("14d", 336.0), ("2w", 336.0), ("90m", 1.5), ("1h30m", 1.5), ("1.5d", 36.0)],
)
def test_durations(text: str, hours: float) -> None:
    assert parse_duration_hours(text, "--deadline") == pytest.approx(hours)


@pytest.mark.parametrize("text", ["soon", "-3h", "0h", "3y", "12", "14", "\u0661h", ""])
def test_bad_durations(text: str) -> None:
    with pytest.raises(InputError, match="--deadline"):
        parse_duration_hours(text, "--deadline")


@pytest.mark.parametrize(
    ("text", "counts"),
    [
        ("64", (64.0,)),
        ("8,16,64", (8.0, 16.0, 64.0)),
        ("8-512", (8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0)),
        ("6-20", (8.0, 16.0)),
        ("0.5", (0.5,)),
    ],
)
def test_gpu_counts(text: str, counts: tuple[float, ...]) -> None:
    assert parse_gpu_counts(text) == counts


@pytest.mark.parametrize("text", ["512-8", "12.5", "x", "-4", "5-7"])
def test_bad_gpu_counts(text: str) -> None:
    with pytest.raises(InputError, match="--gpus"):
        parse_gpu_counts(text)


def test_fraction_refuses_percentages_with_a_hint() -> None:
    assert parse_fraction("0.4", "--mfu") == 0.4
    with pytest.raises(InputError, match=r"did you mean 0\.4"):
        parse_fraction("40", "--mfu")
    with pytest.raises(InputError, match="fraction"):
        parse_fraction("40%", "--mfu")


@pytest.mark.parametrize("text", ["1_000", "1e3", "8,1_024", "+8", "0x10", " 1 000 "])
def test_gpu_counts_are_ascii_digits_only(text: str) -> None:
    """``float`` takes ``1_000`` and ``1e3``; a GPU count does not (issue 37)."""
    with pytest.raises(InputError, match="--gpus: expected a GPU count written in digits"):
        parse_gpu_counts(text)


@pytest.mark.parametrize("text", ["1e-400", "2.5e-999", "5e-330k"])
def test_an_amount_that_underflows_to_zero_is_refused(text: str) -> None:
    """``1e-400`` is not zero, though ``float`` makes it so: refused even where zero is
    allowed (a budget), never taken as ``0``."""
    with pytest.raises(InputError, match=r"--budget: .* is too small"):
        parse_amount(text, "--budget", allow_zero=True)
    assert parse_amount("0", "--budget", allow_zero=True) == 0


@pytest.mark.parametrize("text", ["1e-400", "0.001", "$0.009"])
def test_an_amount_under_a_cent_is_a_typo_in_every_money_flag(text: str) -> None:
    from gpuplan.core.planner.quantities import parse_usd

    with pytest.raises(InputError, match="less than a cent"):
        parse_usd(text, "--budget")
    assert parse_usd("0", "--budget") == 0 and parse_usd("0.01", "--budget") > 0
