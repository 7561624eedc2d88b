"""The survey and the read-only commands over many scopes, concurrently: same answers,
same order, same calls as one scope after the other; failures stay per scope."""

from __future__ import annotations

from datetime import timedelta

import pytest

from gpuplan.core.audit.split import AuditRule
from gpuplan.core.catalog.offers import Provider
from gpuplan.core.errors import InputError
from gpuplan.core.lifecycle.instances import GpuInstance
from gpuplan.core.policy.models import AuditSettings
from gpuplan.providers.base import CloudAdapter, ProviderError
from gpuplan.providers.fake import FakeAdapter
from gpuplan.usecases.audit.live import audit_fleet
from gpuplan.usecases.lifecycle.concurrency import SERIAL, Concurrency, ServiceLimits
from gpuplan.usecases.lifecycle.survey import Survey, idle_rule, snooze, survey
from tests.usecases.concurrency.fleets import NOW, counted_scopes, fake_scope, research_policy

RULE = idle_rule(research_policy())


def view(result: Survey) -> tuple[list[tuple[str, str, str, str]], list[str], list[str]]:
    rows = [
        (s.adapter.scope, s.instance.instance_id, s.decision.verdict.value, s.decision.reason)
        for s in result.seen
    ]
    return rows, result.problems, result.notices


def reverse_finishing(count: int) -> list[FakeAdapter]:
    """Scopes whose calls get slower the earlier they come: the last finishes first."""
    return [fake_scope(s, 3, latency_s=0.01 * (count - s)) for s in range(count)]


def test_order_is_the_serial_order_when_scopes_finish_in_reverse() -> None:
    serial = survey(reverse_finishing(12), RULE, NOW)
    finished: list[str] = []
    fakes = reverse_finishing(12)
    for fake in fakes:
        fake.notices.append(f"{fake.scope}: a notice")

    def note(adapter: CloudAdapter, part: Survey) -> None:
        finished.append(adapter.scope)

    concurrent = survey(fakes, RULE, NOW, concurrency=Concurrency(12), on_scope=note)
    assert view(concurrent)[0] == view(serial)[0]
    assert [s.instance.instance_id for s in concurrent.seen][:3] == [
        "i-00000000", "i-00000001", "i-00000002"
    ]  # fmt: skip
    assert concurrent.notices == [f"aws fake-{s:03d}: a notice" for s in range(12)]
    assert finished == [f"aws fake-{s:03d}" for s in range(12)]  # reported in order too
    assert {v for _, _, v, _ in view(concurrent)[0]} == {"idle", "busy"}


def test_calls_per_scope_do_not_change_with_concurrency() -> None:
    serial, concurrent = reverse_finishing(8), reverse_finishing(8)
    survey(serial, RULE, NOW)
    survey(concurrent, RULE, NOW, concurrency=Concurrency(8))
    assert [f.calls for f in concurrent] == [f.calls for f in serial]
    assert [c.method for c in serial[0].calls] == ["list_instances", "fetch_utilisation"]


def test_a_scope_failing_mid_survey_is_a_problem_line_and_the_others_complete() -> None:
    fakes = reverse_finishing(6)
    fakes[2].failures["list_instances"] = "aws fake-002: AccessDenied: not authorised"
    fakes[4].failures["fetch_utilisation"] = "Throttling: rate exceeded"
    result = survey(fakes, RULE, NOW, concurrency=Concurrency(6))
    assert result.problems == [
        "aws fake-002: listing failed: AccessDenied: not authorised",
        "aws fake-004: GPU metrics unavailable: Throttling: rate exceeded",
    ]
    scopes = [s.adapter.scope for s in result.seen]
    assert "aws fake-002" not in scopes
    assert scopes.count("aws fake-005") == 3 and scopes.count("aws fake-000") == 3
    unknown = [s for s in result.seen if s.adapter.scope == "aws fake-004"]
    assert {s.decision.verdict.value for s in unknown} == {"unknown"}  # never idle
    assert all("GPU metrics unavailable" in s.decision.reason for s in unknown)


def test_an_unexpected_error_in_one_scope_is_raised_not_swallowed() -> None:
    class Broken(FakeAdapter):
        def list_instances(self) -> list[GpuInstance]:
            raise KeyError("a bug, not a cloud failure")

    fakes: list[FakeAdapter] = [*reverse_finishing(3), Broken(Provider.AWS)]
    with pytest.raises(KeyError, match="a bug"):
        survey(fakes, RULE, NOW, concurrency=Concurrency(4))


def test_the_survey_honours_the_pool_and_the_service_cap() -> None:
    fakes, source = counted_scopes(24)
    survey(fakes, RULE, NOW, concurrency=Concurrency(6))
    assert source.most == 6  # six scopes fetched at once, no more
    fakes, source = counted_scopes(24)
    survey(fakes, RULE, NOW, concurrency=Concurrency(16, ServiceLimits({"aws.cloudwatch": 3})))
    assert source.most == 3  # the CloudWatch cap holds whatever the pool allows
    fakes, source = counted_scopes(6)
    survey(fakes, RULE, NOW)
    assert source.most == 1 and len({t for *_, t in source.fetches}) == 1  # serial


def test_snooze_searches_scopes_in_order_and_tags_the_first_match() -> None:
    fakes = reverse_finishing(5)
    target = "i-00300001"
    found = snooze(fakes, target, NOW, concurrency=Concurrency(5))
    assert found.instance_id == target
    assert [c.method for c in fakes[3].calls] == ["list_instances", "tag"]
    assert all(c.method != "tag" for f in fakes if f is not fakes[3] for c in f.calls)
    serial = reverse_finishing(5)
    snooze(serial, target, NOW, concurrency=SERIAL)
    assert [len(f.calls) for f in serial] == [1, 1, 1, 2, 0]  # stops once found


def test_snooze_names_the_scopes_that_could_not_be_listed() -> None:
    fakes = reverse_finishing(3)
    fakes[1].failures["list_instances"] = "AccessDenied"
    with pytest.raises(ProviderError, match=r"i-x: not found; aws fake-001: listing failed"):
        snooze(fakes, "i-x", NOW, concurrency=Concurrency(3))
    with pytest.raises(InputError, match="not a GPU instance"):
        snooze(reverse_finishing(3), "i-x", NOW, concurrency=Concurrency(3))


def test_live_audit_is_the_same_concurrently() -> None:
    from gpuplan.loaders.catalog import load_catalog

    catalog = load_catalog(None)
    settings = AuditSettings()
    end = NOW.replace(minute=0, second=0)
    start = end - timedelta(days=1)

    def run(pool: Concurrency) -> list[tuple[str, str]]:
        fakes = reverse_finishing(6)
        fakes[1].failures["fetch_utilisation"] = "Throttling"
        result = audit_fleet(fakes, catalog, AuditRule(), settings, start=start, end=end,
                             period_minutes=60, concurrency=pool)  # fmt: skip
        rows = [(a.subject.instance_id, str(a.at_stake_per_month)) for a in result.audits]
        return [*rows, *(("problem", p) for p in result.problems)]

    serial = run(SERIAL)
    assert serial == run(Concurrency(6))
    assert ("problem", "aws fake-001: Throttling") in serial
    assert len(serial) == 5 * 3 + 1
