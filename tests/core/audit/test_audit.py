"""The audit over generated per-GPU traces whose truth the generator knows."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.cli.main import main
from gpuplan.core.audit.advice import InstanceAudit
from gpuplan.core.audit.split import AuditRule
from gpuplan.core.catalog.query import Catalog
from gpuplan.core.lifecycle.simulation.audit_traces import (
    AUDIT_CLASSES,
    EXPECTED_ADVICE,
    OVERSIZED,
    generate_audit_fleet,
    truth_of,
)
from gpuplan.core.lifecycle.simulation.traces import Trace
from gpuplan.loaders.catalog import load_catalog
from gpuplan.loaders.traces import read_traces, write_traces
from gpuplan.usecases.audit import usage as uc
from gpuplan.usecases.lifecycle.simulate import catalog_prices


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    loaded = load_catalog()
    return loaded[0] if isinstance(loaded, tuple) else loaded


@pytest.fixture(scope="module")
def fleet(catalog: Catalog) -> list[Trace]:
    price_of = catalog_prices(catalog)
    prices = {t: price_of(t) or Decimal(0) for t, _ in AUDIT_CLASSES.values()}
    return generate_audit_fleet(seed=11, per_class=4, hours=7 * 24, prices=prices)


@pytest.fixture(scope="module")
def audits(fleet: list[Trace], catalog: Catalog) -> dict[str, InstanceAudit]:
    return {a.subject.instance_id: a for a in uc.audit_traces(fleet, catalog, AuditRule())}


def test_dollar_split_per_class_matches_truth_within_5_percent(
    fleet: list[Trace], audits: dict[str, InstanceAudit]
) -> None:
    for trace_class in AUDIT_CLASSES:
        members = [t for t in fleet if t.trace_class == trace_class]
        truths = [truth_of(t) for t in members]
        found = [audits[t.instance_id].split for t in members]
        paid = sum((s.paid for s in found), Decimal(0))
        for bucket in ("busy", "waiting", "idle"):
            truth = sum((getattr(t, bucket) for t in truths), Decimal(0))
            audit = sum((getattr(s, bucket) for s in found), Decimal(0))
            assert abs(audit - truth) <= Decimal("0.05") * paid, (trace_class, bucket)
        # the truth partitions what was paid: nothing lost in the comparison
        assert abs(sum((t.busy + t.waiting + t.idle for t in truths), Decimal(0)) - paid) < 1


def test_every_class_gets_its_advice_and_well_used_none(
    fleet: list[Trace], audits: dict[str, InstanceAudit]
) -> None:
    for t in fleet:
        kinds = {a.kind.value for a in audits[t.instance_id].advice}
        expected = EXPECTED_ADVICE[t.trace_class]
        if not expected:
            assert kinds == set(), t.instance_id
        else:
            assert expected <= kinds, (t.instance_id, t.trace_class, kinds)
        for advice in audits[t.instance_id].advice:
            assert advice.usd_per_month > 0 and advice.evidence


def test_oversized_instances_get_a_fitting_named_offer(
    fleet: list[Trace], audits: dict[str, InstanceAudit], catalog: Catalog
) -> None:
    for t in fleet:
        a = audits[t.instance_id]
        if t.trace_class not in OVERSIZED:
            continue
        assert a.oversized > 0 and a.resize is not None, t.instance_id
        current = next(o for o in catalog.offers if o.instance_type == t.instance_type
                       and o.region == "us-east-1")  # fmt: skip
        peak_gb = truth_of(t).peak_memory_percent / 100 * current.gpu_memory_gb
        assert a.resize.offer.gpu_memory_gb >= peak_gb
        assert a.resize.source and a.resize.as_of
        assert a.resize.hourly_usd < t.hourly_usd


def test_no_recommendation_ever_fails_to_fit(
    audits: dict[str, InstanceAudit], fleet: list[Trace], catalog: Catalog
) -> None:
    by_id = {t.instance_id: t for t in fleet}
    for a in audits.values():
        if a.resize is None:
            continue
        t = by_id[a.subject.instance_id]
        current = next(o for o in catalog.offers if o.instance_type == t.instance_type
                       and o.region == "us-east-1")  # fmt: skip
        peak_gb = truth_of(t).peak_memory_percent / 100 * current.gpu_memory_gb
        busy_gpus = sum(1 for g in t.gpus or () if max(v or 0 for v in g) >= 5)
        assert a.resize.offer.gpu_memory_gb >= peak_gb * 1.1 - 1e-9
        assert a.resize.offer.gpu_count >= busy_gpus
        assert a.resize.offer.region == "us-east-1"


def test_traces_round_trip_with_per_gpu_columns(fleet: list[Trace], tmp_path: Path) -> None:
    write_traces(tmp_path, fleet[:3])
    back = read_traces(tmp_path, price_of=lambda _: None)
    assert [t.gpus for t in back] == [t.gpus for t in fleet[:3]]
    assert [t.utilisation for t in back] == [t.utilisation for t in fleet[:3]]


def test_cli_json_csv_and_table(fleet: list[Trace], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:  # fmt: skip
    write_traces(tmp_path, fleet[::4])
    assert main(["audit", "--traces", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    stakes = [float(r["at_stake_usd_per_month"]) for r in data["instances"]]
    assert stakes == sorted(stakes, reverse=True)
    assert {g["name"] for g in data["groups"]} == set(AUDIT_CLASSES)
    assert main(["audit", "--traces", str(tmp_path), "--csv"]) == 0
    assert capsys.readouterr().out.startswith("instance_id,")
    assert main(["audit", "--traces", str(tmp_path)]) == 0
    assert "$/month at stake" in capsys.readouterr().out


def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "fleet.csv").write_text("instance_id,instance_type,hourly_usd\na,x,1\n")
    (tmp_path / "a.csv").write_text("minute,utilisation,gpu0_utilisation\n0,5,abc\n")
    assert main(["audit", "--traces", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "a.csv" in err and "gpu0_utilisation" in err and "Traceback" not in err
    assert main(["audit", "--traces", str(tmp_path), "--by", "nonsense"]) == 2


def test_metric_gaps_stay_within_5_percent_and_are_never_idle(
    fleet: list[Trace], catalog: Catalog
) -> None:
    """A flaky agent drops 1-10 minutes of every signal every 1-4 hours."""
    import dataclasses
    import random

    rng = random.Random(5)
    gappy: list[Trace] = []
    for t in fleet:
        keep = [True] * t.minutes
        minute = rng.randint(0, 120)
        while minute < t.minutes:
            gap = rng.randint(1, 10)
            keep[minute : minute + gap] = [False] * len(keep[minute : minute + gap])
            minute += gap + rng.randint(60, 240)

        def cut(
            series: tuple[float | None, ...], keep: list[bool] = keep
        ) -> tuple[float | None, ...]:
            return tuple(v if k else None for v, k in zip(series, keep, strict=True))

        gappy.append(dataclasses.replace(
            t, utilisation=cut(t.utilisation), memory=cut(t.memory or ()), cpu=cut(t.cpu or ()),
            gpus=tuple(cut(g) for g in t.gpus or ()),
        ))  # fmt: skip
    audits = {a.subject.instance_id: a for a in uc.audit_traces(gappy, catalog, AuditRule())}
    for trace_class in AUDIT_CLASSES:
        members = [t for t in fleet if t.trace_class == trace_class]
        found = [audits[t.instance_id].split for t in members]
        paid = sum((s.paid for s in found), Decimal(0))
        for bucket in ("busy", "waiting", "idle"):
            truth = sum((getattr(truth_of(t), bucket) for t in members), Decimal(0))
            audit = sum((getattr(s, bucket) for s in found), Decimal(0))
            assert abs(audit - truth) <= Decimal("0.05") * paid, (trace_class, bucket)


def test_the_table_shows_every_column_paid_is_made_of(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Issue 25: main's table hid the unknown column, so "paid $" was not the sum shown.
    (tmp_path / "fleet.csv").write_text("instance_id,instance_type,hourly_usd\ngap,g5.xlarge,6\n")
    rows = ["minute,utilisation,gpu_memory_used_percent,cpu_percent"]
    rows += [f"{m},{'' if m < 600 else 90},50,30" for m in range(1200)]
    (tmp_path / "gap.csv").write_text("\n".join(rows) + "\n")
    assert main(["audit", "--traces", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split()
    assert "unknown" in header
    cells = lines[2].split()
    paid, busy, waiting, idle, unknown = (float(c.replace(",", "")) for c in cells[2:7])
    assert unknown == 60 and paid == busy + waiting + idle + unknown
