"""A bounded worker pool for per-scope cloud work, and a cap per (cloud, service).

The survey, the pre-action re-checks, ``budget``, ``audit`` and ``snooze`` do the same
blocking SDK work once per scope (an AWS region, a GCP project, an Azure subscription).
:class:`Concurrency` runs that work on at most ``workers`` threads (the SDKs block, so
threads, not processes) and promises:

- **order**: results come back in the order the items were given, whatever finishes
  first, so output, problem lines and ledger rows do not depend on timing;
- **bound**: at most ``workers`` tasks run at once; ``workers == 1`` runs each task on
  the calling thread when its result is asked for, exactly the serial behaviour;
- **no silence**: an exception a task raises is raised again in the caller when its
  result is reached, and the tasks not yet started are dropped;
- **per-service cap**: :meth:`Concurrency.hold` takes a semaphore per (cloud, service),
  so that with many workers, calls to one service (CloudWatch ``GetMetricData`` across
  200 scopes) never all fire at once. Retries with jittered back-off stay the SDKs' own
  (see ``docs/lifecycle.md``, "Organisation-scale runs").

Tasks only read (list, fetch metrics, decide): they must not write the ledger (SQLite
connections belong to the thread that opened them, so callers write from their own
thread, in order, after each result) and must not act on an instance (workers are
daemon threads, which an exiting process does not wait for).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import TracebackType
from typing import Generic, TypeVar

from gpuplan.core.catalog.kinds import Provider
from gpuplan.core.errors import InputError
from gpuplan.providers.cloud_entry import Service as Service  # re-exported: callers' name
from gpuplan.usecases.clouds import registry as cloud_registry

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_CONCURRENCY = 16
"""Scopes surveyed at once by default: at ~150 ms a call, 200 scopes in seconds, while
staying far below any one service's request quota."""
MAX_CONCURRENCY = 256
DEFAULT_SERVICE_LIMIT = 32
"""Calls in flight to one (cloud, service) at once, whatever ``--concurrency`` says."""
CONCURRENCY_ENV = "GPUPLAN_CONCURRENCY"
SERVICE_LIMITS_ENV = "GPUPLAN_SERVICE_LIMITS"


def service_names() -> dict[tuple[Provider, Service], str]:
    """The service behind each kind of call, as named in ``GPUPLAN_SERVICE_LIMITS``
    (``aws.cloudwatch=8``): each registered entry's ``services``. A policy that reads
    Prometheus still counts its queries under the cloud's metrics service."""
    return {
        (e.provider, kind): name
        for e in cloud_registry.entries()
        for kind, name in e.services.items()
    }


def parse_workers(text: str, source: str = "--concurrency") -> int:
    """A whole number from 1 to :data:`MAX_CONCURRENCY`; InputError naming ``source``."""
    raw = text.strip()
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 4) or not (
        1 <= int(raw) <= MAX_CONCURRENCY
    ):
        raise InputError(
            f"{source}: expected a whole number from 1 to {MAX_CONCURRENCY}, got {text[:40]!r}"
        )
    return int(raw)


def parse_service_limits(text: str, source: str = SERVICE_LIMITS_ENV) -> dict[str, int]:
    """``aws.cloudwatch=8,gcp.monitoring=4`` -> {"aws.cloudwatch": 8, ...}; InputError."""
    known = {f"{p.value}.{name}" for (p, _), name in service_names().items()}
    out: dict[str, int] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        key = key.strip().lower()
        if not sep or key not in known:
            raise InputError(
                f"{source}: expected CLOUD.SERVICE=N with CLOUD.SERVICE one of "
                f"{', '.join(sorted(known))}, got {part[:40]!r}"
            )
        out[key] = parse_workers(value, f"{source}: {key}")
    return out


class ServiceLimits:
    """One bounded semaphore per (cloud, service), made on first use."""

    def __init__(
        self, limits: Mapping[str, int] | None = None, default: int = DEFAULT_SERVICE_LIMIT
    ) -> None:
        self.limits = dict(limits or {})
        self.default = default
        self._semaphores: dict[str, threading.BoundedSemaphore] = {}
        self._lock = threading.Lock()

    def limit(self, provider: Provider, service: Service) -> int:
        return self.limits.get(self.key(provider, service), self.default)

    @staticmethod
    def key(provider: Provider, service: Service) -> str:
        entry = cloud_registry.entries_by_provider().get(provider)
        name = entry.services.get(service) if entry is not None else None
        return f"{provider.value}.{name or service.value}"

    def semaphore(self, provider: Provider, service: Service) -> threading.BoundedSemaphore:
        key = self.key(provider, service)
        with self._lock:
            if key not in self._semaphores:
                self._semaphores[key] = threading.BoundedSemaphore(self.limit(provider, service))
            return self._semaphores[key]


class Concurrency:
    """How many scope tasks run at once, and the per-service caps they share."""

    def __init__(self, workers: int = 1, limits: ServiceLimits | None = None) -> None:
        if not 1 <= workers <= MAX_CONCURRENCY:
            raise ValueError(f"workers must be 1..{MAX_CONCURRENCY}, got {workers}")
        self.workers = workers
        self.limits = limits or ServiceLimits()

    def __repr__(self) -> str:
        return f"Concurrency(workers={self.workers})"

    @contextmanager
    def hold(self, provider: Provider, service: Service) -> Iterator[None]:
        """Hold one of the (cloud, service) slots for the call inside the block."""
        with self.limits.semaphore(provider, service):
            yield

    def ordered(self, task: Callable[[T], R], items: Iterable[T]) -> Ordered[R]:
        """``task(item)`` for each item, results in the items' order (see the module)."""
        return Ordered(task, list(items), self.workers)

    def map(self, task: Callable[[T], R], items: Iterable[T]) -> list[R]:
        with self.ordered(task, items) as results:
            return list(results)


SERIAL = Concurrency(1)
"""Today's behaviour: one scope after the other, on the calling thread."""


class Ordered(Generic[R]):
    """An iterator over task results in submission order; close it to cancel the rest.

    Workers are daemon threads: every task is read-only (listing, metrics), so a
    Ctrl-C in ``fleet`` or ``budget`` exits at once instead of waiting for the calls in
    flight, which the interpreter would otherwise join at exit."""

    def __init__(self, task: Callable[[T], R], items: Sequence[T], workers: int) -> None:
        self._lazy: deque[Callable[[], R]] = deque()
        self._slots: deque[_Slot[R]] = deque()
        self._queue: deque[tuple[_Slot[R], Callable[[], R]]] = deque()
        self._lock = threading.Lock()
        if workers == 1 or len(items) <= 1:
            self._lazy.extend(_bind(task, item) for item in items)
            return
        for item in items:
            slot: _Slot[R] = _Slot()
            self._slots.append(slot)
            self._queue.append((slot, _bind(task, item)))
        for n in range(min(workers, len(items))):
            name = f"gpuplan-scope-{n}"
            threading.Thread(target=self._work, name=name, daemon=True).start()

    def _work(self) -> None:
        while True:
            with self._lock:
                if not self._queue:
                    return
                slot, call = self._queue.popleft()
            slot.run(call)

    def __iter__(self) -> Iterator[R]:
        return self

    def __next__(self) -> R:
        try:
            if self._lazy:
                return self._lazy.popleft()()
            if not self._slots:
                raise StopIteration
            return self._slots.popleft().result()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        """Drop the tasks not yet started; those running finish on their own."""
        self._lazy.clear()
        with self._lock:
            self._queue.clear()
        self._slots.clear()

    def __enter__(self) -> Ordered[R]:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


class _Slot(Generic[R]):
    """One task's result or exception, set once by a worker."""

    def __init__(self) -> None:
        self._done = threading.Event()
        self._value: R | None = None
        self._error: BaseException | None = None

    def run(self, call: Callable[[], R]) -> None:
        try:
            self._value = call()
        except BaseException as exc:  # handed to the caller in order, never swallowed
            self._error = exc
        finally:
            self._done.set()

    def result(self) -> R:
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set by run() before _done


def _bind(task: Callable[[T], R], item: T) -> Callable[[], R]:
    return lambda: task(item)


def from_settings(workers: int | None, environ: Mapping[str, str] | None = None) -> Concurrency:
    """The CLI's choice: ``workers`` (``--concurrency``), else ``GPUPLAN_CONCURRENCY``,
    else :data:`DEFAULT_CONCURRENCY`; caps from ``GPUPLAN_SERVICE_LIMITS``. Bad values
    raise InputError (one line, exit 2)."""
    env = os.environ if environ is None else environ
    if workers is None:
        raw = env.get(CONCURRENCY_ENV, "").strip()
        workers = parse_workers(raw, CONCURRENCY_ENV) if raw else DEFAULT_CONCURRENCY
    limits = parse_service_limits(env.get(SERVICE_LIMITS_ENV, ""))
    return Concurrency(workers, ServiceLimits(limits))
