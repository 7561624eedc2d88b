"""stop-idle over many scopes, concurrently: the re-check reads run ahead on workers, but
every action and every ledger row happens on the calling thread, in the serial order,
intent before the call and outcome after."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

from gpuplan.core.lifecycle.instances import Action, GpuInstance, InstanceState
from gpuplan.ledger import Ledger
from gpuplan.providers.fake import FakeAdapter
from gpuplan.usecases.lifecycle.concurrency import SERIAL, Concurrency
from gpuplan.usecases.lifecycle.stop_idle import StopIdleResult, run_stop_idle
from tests.usecases.concurrency.fleets import NOW, counted_scopes, fake_scope, research_policy


class NotingLedger(Ledger):
    """The real ledger, noting which thread wrote each row."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.writers: set[str] = set()

    def record_decision(self, run_id: int, d: Any) -> int:
        self.writers.add(threading.current_thread().name)
        return super().record_decision(run_id, d)

    def record_action(self, run_id: int, a: Any) -> int:
        self.writers.add(threading.current_thread().name)
        return super().record_action(run_id, a)

    def settle_action(self, action_id: int, outcome: str, detail: str, at: Any) -> None:
        self.writers.add(threading.current_thread().name)
        super().settle_action(action_id, outcome, detail, at)


class IntentFirst(FakeAdapter):
    """A fake whose ``act`` checks that the intent is already committed in the ledger,
    and notes the thread it was called on."""

    ledger: Ledger | None = None
    acted_on: ClassVar[list[tuple[str, str]]] = []

    def act(self, instance: GpuInstance, action: Action) -> InstanceState:
        assert self.ledger is not None
        pending = [p.instance_id for p in self.ledger.pending_actions()]
        assert pending == [instance.instance_id], "the intent must be committed first"
        IntentFirst.acted_on.append((instance.instance_id, threading.current_thread().name))
        return super().act(instance, action)


def scopes(count: int, ledger: Ledger, latency_s: float = 0.005) -> list[FakeAdapter]:
    out: list[FakeAdapter] = []
    for s in range(count):
        base = fake_scope(s, 4, latency_s=latency_s * (count - s))
        fake = IntentFirst(
            base.provider,
            base.instances.values(),
            capabilities=base.capabilities,
            latency_s=base.latency_s,
            scope=base.scope,
        )
        fake.flat_percent = base.flat_percent
        fake.ledger = ledger
        out.append(fake)
    return out


def rows(ledger: Ledger) -> list[tuple[Any, ...]]:
    return ledger.select(
        "SELECT instance_id, action, outcome, detail FROM actions ORDER BY id"
    ) + ledger.select("SELECT instance_id, verdict, planned_action FROM decisions ORDER BY id")


def brief(fake: FakeAdapter) -> list[tuple[str, object]]:
    """The calls a fake saw, without the run's random lease token."""
    return [(c.method, c.args[0] if c.args else None) for c in fake.calls]


def applied(tmp_path: Path, name: str, pool: Concurrency) -> tuple[
    StopIdleResult, list[tuple[Any, ...]], set[str], Sequence[FakeAdapter]
]:  # fmt: skip
    IntentFirst.acted_on = []
    with NotingLedger(tmp_path / f"{name}.db") as ledger:
        fakes = scopes(6, ledger)
        result = run_stop_idle(
            research_policy(), fakes, apply=True, now=NOW, ledger=ledger, concurrency=pool
        )
        return result, rows(ledger), ledger.writers, fakes


def test_the_ledger_and_the_cloud_see_the_serial_order_from_one_thread(tmp_path: Path) -> None:
    serial, serial_rows, _, serial_fakes = applied(tmp_path, "serial", SERIAL)
    serial_acts = [iid for iid, _ in IntentFirst.acted_on]
    result, got_rows, writers, fakes = applied(tmp_path, "concurrent", Concurrency(6))
    assert not result.failed and not serial.failed
    assert got_rows == serial_rows  # every row, in the same order
    assert len([r for r in got_rows if r[2] == "stopped"]) == 12
    assert [iid for iid, _ in IntentFirst.acted_on] == serial_acts
    main = threading.current_thread().name
    assert writers == {main}
    assert {thread for _, thread in IntentFirst.acted_on} == {main}
    assert [brief(f) for f in fakes] == [brief(f) for f in serial_fakes]  # calls per scope
    assert all(i.state.value == "stopped" for f in fakes for i in f.instances.values()
               if f.flat_percent[i.instance_id] < 5)  # fmt: skip


def test_the_re_check_reads_of_the_scopes_run_at_once(tmp_path: Path) -> None:
    fakes, source = counted_scopes(8, size=2, seconds=0.05)
    result = run_stop_idle(
        research_policy(), fakes, apply=True, now=NOW, concurrency=Concurrency(8)
    )
    assert not result.failed
    rechecks = [(b, e) for ids, b, e, _ in source.fetches if len(ids) == 1]  # idle ones only
    assert len(rechecks) == 8
    overlap = max(sum(1 for b, e in rechecks if b <= t < e) for t, _ in rechecks)
    assert overlap > 1
    stops = [c for f in fakes for c in f.calls if c.method == "stop"]
    assert len(stops) == 8


def test_a_stop_request_leaves_every_scope_alone_without_re_checking(tmp_path: Path) -> None:
    fakes, source = counted_scopes(4, size=2, seconds=0.0)
    result = run_stop_idle(
        research_policy(),
        fakes,
        apply=True,
        now=NOW,
        should_stop=lambda: True,
        concurrency=Concurrency(4),
    )
    assert result.interrupted
    assert len(source.fetches) == 4  # the survey's; no re-check read was made
    assert not [c for f in fakes for c in f.calls if c.method in ("refresh", "stop", "tag")]
    acted = [o for o in result.outcomes if o.item.step.value == "act"]
    assert acted and all(o.detail == "run interrupted: left alone" for o in acted)


def test_a_failed_re_check_in_one_scope_leaves_only_that_scope_alone(tmp_path: Path) -> None:
    with Ledger(tmp_path / "l.db") as ledger:
        fakes = scopes(3, ledger, latency_s=0.0)
        first = fakes[1]
        original = first.fetch_utilisation
        asked: list[int] = []

        def fetch(instances: Sequence[GpuInstance], **kw: Any) -> Any:
            asked.append(len(instances))
            if len(asked) == 2:  # the re-check, after the survey's read
                first.failures["fetch_utilisation"] = "Throttling: rate exceeded"
            return original(instances, **kw)

        first.fetch_utilisation = fetch  # type: ignore[method-assign]
        result = run_stop_idle(
            research_policy(), fakes, apply=True, now=NOW, ledger=ledger,
            concurrency=Concurrency(3),
        )  # fmt: skip
    failed = {o.item.instance.instance_id: o.detail for o in result.outcomes
              if o.outcome.value == "failed"}  # fmt: skip
    assert set(failed) == {"i-00100000", "i-00100002"}
    assert all("re-check failed, left alone" in d for d in failed.values())
    stopped = [o for o in result.outcomes if o.outcome.value == "stopped"]
    assert len(stopped) == 4 and result.failed
