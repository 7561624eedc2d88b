"""The bounded pool: order kept, bound honoured, failures raised in order, caps per service."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable

import pytest

from gpuplan.core.catalog.kinds import Provider
from gpuplan.core.errors import InputError
from gpuplan.usecases.lifecycle.concurrency import (
    Concurrency,
    Service,
    ServiceLimits,
    from_settings,
    parse_service_limits,
    parse_workers,
)


class InFlight:
    """Counts tasks running at once; each sleeps ``seconds(item)``."""

    def __init__(self, seconds: Callable[[int], float]) -> None:
        self.seconds = seconds
        self.now = 0
        self.most = 0
        self.finished: list[int] = []
        self.threads: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, item: int) -> int:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
            self.threads.add(threading.current_thread().name)
        time.sleep(self.seconds(item))
        with self.lock:
            self.now -= 1
            self.finished.append(item)
        return item * 10


def test_results_keep_the_items_order_when_they_finish_in_reverse() -> None:
    task = InFlight(lambda item: 0.01 * (12 - item))
    assert Concurrency(12).map(task, range(12)) == [i * 10 for i in range(12)]
    assert task.finished[0] > task.finished[-1]  # the last item really finished first


@pytest.mark.parametrize("workers", [2, 5, 16])
def test_the_pool_never_runs_more_than_its_bound(workers: int) -> None:
    # Each task waits until the bound is reached (or 10 s): on a loaded machine a 20 ms
    # sleep let the first tasks finish before the 16th thread started (most == 15).
    full = threading.Event()

    def hold(_: int) -> float:
        if task.most >= workers:
            full.set()
        full.wait(10)
        return 0.001

    task = InFlight(hold)
    Concurrency(workers).map(task, range(40))
    assert task.most == workers


def test_one_worker_runs_each_task_on_the_calling_thread_when_asked() -> None:
    task = InFlight(lambda _: 0.0)
    results = Concurrency(1).ordered(task, range(3))
    assert task.finished == []  # nothing ran before the first result was asked for
    assert next(results) == 0
    assert task.finished == [0]
    assert list(results) == [10, 20]
    assert task.threads == {threading.current_thread().name}


def test_a_failing_task_raises_in_order_and_the_rest_is_cancelled() -> None:
    started: list[int] = []

    def task(item: int) -> int:
        started.append(item)
        if item == 1:
            raise RuntimeError("boom in 1")
        time.sleep(0.05)
        return item

    seen: list[int] = []
    with (
        pytest.raises(RuntimeError, match="boom in 1"),
        Concurrency(2).ordered(task, range(30)) as results,
    ):
        seen.extend(results)
    assert seen == [0]  # item 0 came back first, then 1's error, in order
    time.sleep(0.2)
    assert len(started) < 30  # the tasks not yet started were cancelled


def test_a_service_cap_bounds_calls_across_workers() -> None:
    pool = Concurrency(16, ServiceLimits({"aws.cloudwatch": 3}))
    task = InFlight(lambda _: 0.02)

    def capped(item: int) -> int:
        with pool.hold(Provider.AWS, Service.METRICS):
            return task(item)

    pool.map(capped, range(30))
    assert task.most == 3


def test_caps_are_per_cloud_and_service() -> None:
    limits = ServiceLimits({"gcp.monitoring": 2}, default=7)
    assert limits.limit(Provider.GCP, Service.METRICS) == 2
    assert limits.limit(Provider.GCP, Service.LISTING) == 7
    assert limits.limit(Provider.AWS, Service.METRICS) == 7
    aws = limits.semaphore(Provider.AWS, Service.METRICS)
    assert aws is limits.semaphore(Provider.AWS, Service.METRICS)
    assert aws is not limits.semaphore(Provider.AZURE, Service.METRICS)


@pytest.mark.parametrize("text", ["0", "257", "-1", "abc", "1.5", "", " ", "1e2", "٣"])
def test_workers_outside_1_to_256_are_refused(text: str) -> None:
    with pytest.raises(InputError, match=r"--concurrency: expected a whole number from 1 to 256"):
        parse_workers(text)


@pytest.mark.parametrize(("text", "value"), [("1", 1), ("16", 16), (" 256 ", 256)])
def test_workers_in_range_are_read(text: str, value: int) -> None:
    assert parse_workers(text) == value


def test_service_limits_are_read_and_checked() -> None:
    assert parse_service_limits("aws.cloudwatch=8, gcp.monitoring=4,") == {
        "aws.cloudwatch": 8,
        "gcp.monitoring": 4,
    }
    with pytest.raises(InputError, match=r"expected CLOUD\.SERVICE=N"):
        parse_service_limits("aws.s3=4")
    with pytest.raises(InputError, match=r"aws\.ec2: expected a whole number"):
        parse_service_limits("aws.ec2=0")


def test_settings_come_from_the_flag_then_the_environment() -> None:
    assert from_settings(3, {"GPUPLAN_CONCURRENCY": "9"}).workers == 3
    assert from_settings(None, {"GPUPLAN_CONCURRENCY": "9"}).workers == 9
    assert from_settings(None, {}).workers == 16
    pool = from_settings(None, {"GPUPLAN_SERVICE_LIMITS": "azure.monitor=2"})
    assert pool.limits.limit(Provider.AZURE, Service.METRICS) == 2
    with pytest.raises(InputError, match="GPUPLAN_CONCURRENCY: expected"):
        from_settings(None, {"GPUPLAN_CONCURRENCY": "lots"})


def test_an_interrupt_while_waiting_returns_at_once_and_leaves_no_thread_to_join() -> None:
    gate = threading.Event()

    def slow(item: int) -> int:
        gate.wait(10)
        return item

    def ring(*_: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    began = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            Concurrency(4).map(slow, range(8))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - began < 2  # not the 10 s the calls in flight would take
    workers = [t for t in threading.enumerate() if t.name.startswith("gpuplan-scope")]
    assert workers and all(t.daemon for t in workers)  # exit never waits for them
    gate.set()
