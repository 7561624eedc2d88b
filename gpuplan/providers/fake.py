"""An in-memory provider for tests, demos and the UI: a list of instances, nothing else.

It implements :class:`~gpuplan.providers.base.CloudAdapter` (listing,
utilisation, re-read, ``act``, tags) and ``snapshot`` (the first step of a composite
action, :mod:`gpuplan.core.lifecycle.actions`), and records every call in ``calls`` so
tests can assert what was asked; ``failures`` makes a method raise
:class:`~gpuplan.providers.base.ProviderError` (fault injection). Each ability is a
plain method over ``self.instances`` that starts with ``self._called(name, *args)``.
Samples come from ``samples`` (instance id ->
:class:`~gpuplan.core.lifecycle.instances.HostSamples`:
utilisation, GPU memory and CPU), else from ``utilisation`` (instance id -> GPU ->
period start -> percent; no memory or CPU) or, for demos, from ``flat_percent``
(instance id -> one percent for every GPU and every period asked for).

For benchmarks, ``latency_s`` makes every API-like call (each recorded call) sleep that
long, as a cloud round trip would; ``metrics_batch`` splits ``fetch_utilisation`` into
one call per that many instances (CloudWatch answers at most 500 queries per
``GetMetricData``); ``scope`` names the fake (default ``<cloud> (in-memory fake)``).
By default none of this changes anything.

``load_fake_fleet`` reads a JSON file of instances (the ``GPUPLAN_FAKE_FLEET`` demo
and test hook): a list of objects with :class:`~gpuplan.core.lifecycle.instances.GpuInstance`'s
fields, e.g. ``{"provider": "aws", "account": "123456789012", "region":
"us-east-1", "instance_id": "i-0abc", "instance_type": "p5.48xlarge", "state":
"running", "started_at": "2026-12-01T08:00:00Z", "labels": {"team": "research"},
"hourly_usd": "55.04"}``; or an object ``{"instances": [...], "utilisation_percent":
{"i-0abc": 0.5}}`` whose second key gives each instance a flat utilisation.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.errors import DataError
from gpuplan.core.lifecycle.instances import (
    NEEDS,
    Action,
    Capability,
    GpuInstance,
    GpuSeries,
    HostSamples,
    InstanceState,
)
from gpuplan.providers.base import MetricsSource, ProviderError, unsupported


@dataclass(frozen=True)
class Call:
    """One call made on the fake: the method name and its arguments."""

    method: str
    args: tuple[Any, ...] = ()


class FakeAdapter:
    """One cloud's instances held in memory; lists only those of its own provider."""

    def __init__(
        self,
        provider: Provider,
        instances: Iterable[GpuInstance] = (),
        *,
        capabilities: Iterable[Capability] = (Capability.LIST,),
        metrics: MetricsSource | None = None,
        latency_s: float = 0.0,
        metrics_batch: int | None = None,
        scope: str | None = None,
    ) -> None:
        if latency_s < 0 or (metrics_batch is not None and metrics_batch < 1):
            raise ValueError("latency_s must be >= 0 and metrics_batch >= 1")
        self._provider = provider
        self._scope = scope or f"{provider.value} (in-memory fake)"
        self.latency_s = latency_s
        self.metrics_batch = metrics_batch
        self._metrics = metrics
        self._capabilities = frozenset(capabilities)
        self.instances: dict[str, GpuInstance] = {
            i.instance_id: i for i in instances if i.provider is provider
        }
        self.calls: list[Call] = []
        self.failures: dict[str, str] = {}
        """Method name -> message: that method raises ProviderError with it."""
        self.samples: dict[str, HostSamples] = {}
        self.utilisation: dict[str, GpuSeries] = {}
        self.flat_percent: dict[str, float] = {}
        self.notices: list[str] = []
        self.snapshots: dict[str, list[str]] = {}
        """Instance id -> the snapshots taken of it, in order."""
        self.snapshot_labels: dict[str, str] = {}
        """Snapshot id -> the label it was taken with."""

    @property
    def scope(self) -> str:
        return self._scope

    @property
    def provider(self) -> Provider:
        return self._provider

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self._capabilities

    def list_instances(self) -> list[GpuInstance]:
        self._called("list_instances")
        return list(self.instances.values())

    def drain_notices(self) -> list[str]:
        out, self.notices = self.notices, []
        return out

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, HostSamples]:
        ids = tuple(i.instance_id for i in instances)
        size = self.metrics_batch or max(1, len(ids))  # default: one call for the batch
        for first in range(0, max(1, len(ids)), size):
            self._called("fetch_utilisation", ids[first : first + size])
        if self._metrics is not None:  # e.g. Prometheus, as for the real clouds
            return self._metrics.fetch_utilisation(
                instances, start=start, end=end, period_minutes=period_minutes
            )
        out: dict[str, HostSamples] = {}
        for inst in instances:
            if inst.instance_id in self.samples:
                out[inst.instance_id] = self.samples[inst.instance_id]
            elif inst.instance_id in self.utilisation:
                out[inst.instance_id] = HostSamples(utilisation=self.utilisation[inst.instance_id])
            elif inst.instance_id in self.flat_percent:
                out[inst.instance_id] = _flat(
                    self.flat_percent[inst.instance_id], inst, start, end, period_minutes
                )
        return out

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        self._called("refresh", instance.instance_id)
        current = self.instances.get(instance.instance_id)
        if current is None:
            raise ProviderError(f"{instance.instance_id}: not found")
        return current

    def act(self, instance: GpuInstance, action: Action) -> InstanceState:
        """Records ``stop`` (with ``hibernate``) or the action's own name, then sets the
        state the cloud would answer; refuses actions outside ``capabilities``."""
        if NEEDS.get(action) not in self._capabilities:
            raise unsupported(self.scope, action)
        if action in (Action.STOP, Action.HIBERNATE):
            self._called("stop", instance.instance_id, action is Action.HIBERNATE)
        else:
            self._called(action.value, instance.instance_id)
        return self._set_state(instance, _ANSWERS[action])

    def snapshot(self, instance: GpuInstance, label: str) -> str:
        """Records a snapshot of ``instance``'s disks labelled ``label`` (a composite
        action's first step, :mod:`gpuplan.core.lifecycle.actions`); its id. The instance keeps
        running."""
        self._called("snapshot", instance.instance_id)
        taken = self.snapshots.setdefault(instance.instance_id, [])
        taken.append(f"snap-{instance.instance_id}-{len(taken) + 1}")
        self.snapshot_labels[taken[-1]] = label
        return taken[-1]

    def snapshots_labelled(self, instance: GpuInstance, label: str) -> list[str]:
        """The ids of ``instance``'s snapshots labelled ``label``, oldest first."""
        self._called("snapshots_labelled", instance.instance_id, label)
        taken = self.snapshots.get(instance.instance_id, [])
        return [s for s in taken if self.snapshot_labels.get(s) == label]

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        self._called("tag", instance.instance_id, dict(tags))
        current = self.refresh_quietly(instance)
        labels = {**current.labels, **tags}
        self.instances[instance.instance_id] = current.model_copy(update={"labels": labels})

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        self._called("untag", instance.instance_id, tuple(keys))
        current = self.refresh_quietly(instance)
        labels = {k: v for k, v in current.labels.items() if k not in keys}
        self.instances[instance.instance_id] = current.model_copy(update={"labels": labels})

    def refresh_quietly(self, instance: GpuInstance) -> GpuInstance:
        """The held copy of ``instance`` without recording a call."""
        return self.instances.get(instance.instance_id, instance)

    def _set_state(self, instance: GpuInstance, state: InstanceState) -> InstanceState:
        current = self.refresh_quietly(instance)
        self.instances[instance.instance_id] = current.model_copy(update={"state": state})
        return state

    def _called(self, method: str, *args: Any) -> None:
        """Record the call (after ``latency_s``), then fail it if the test asked for that."""
        if self.latency_s:
            time.sleep(self.latency_s)
        self.calls.append(Call(method, args))
        message = self.failures.get(method)
        if message is not None:
            raise ProviderError(message)

    def calls_to(self, method: str) -> list[Call]:
        """The calls made to ``method``, in order."""
        return [c for c in self.calls if c.method == method]


_ANSWERS = {
    Action.STOP: InstanceState.STOPPED,
    Action.HIBERNATE: InstanceState.STOPPED,
    Action.SUSPEND: InstanceState.SUSPENDED,
    Action.DEALLOCATE: InstanceState.DEALLOCATED,
    Action.TERMINATE: InstanceState.TERMINATED,
    Action.START: InstanceState.RUNNING,
}


def _flat(
    percent: float, inst: GpuInstance, start: datetime, end: datetime, period_minutes: int
) -> HostSamples:
    step = timedelta(minutes=period_minutes)
    periods: list[datetime] = []
    moment = start
    while moment < end:
        periods.append(moment)
        moment += step
    gpus = max(1, math.ceil(inst.gpu_count))
    return HostSamples(utilisation={str(g): dict.fromkeys(periods, percent) for g in range(gpus)})


def fake_providers(path: str | Path, providers: Iterable[Provider]) -> list[FakeAdapter]:
    """Lifecycle-capable fakes for ``providers`` from a fleet file (``GPUPLAN_FAKE_FLEET``)."""
    fleet, flat = load_fake_fleet_file(path)
    out: list[FakeAdapter] = []
    for provider in providers:
        fake = FakeAdapter(provider, fleet, capabilities=tuple(Capability))
        fake.flat_percent = dict(flat)
        out.append(fake)
    return out


def load_fake_fleet(path: str | Path) -> list[GpuInstance]:
    """Instances from a JSON file (see the module docstring); :class:`DataError` if bad."""
    return load_fake_fleet_file(path)[0]


def load_fake_fleet_file(path: str | Path) -> tuple[list[GpuInstance], dict[str, float]]:
    """Instances and flat utilisation percents from a fleet file; :class:`DataError` if bad."""
    shown = str(path)
    if Path(path).exists() and (not Path(path).is_file() or Path(path).stat().st_size > 2**24):
        raise DataError(shown, "not a regular file of at most 16 MiB (GPUPLAN_FAKE_FLEET)")
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(shown, "file not found (GPUPLAN_FAKE_FLEET)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(shown, f"cannot read: {exc}") from None
    except json.JSONDecodeError as exc:
        raise DataError(
            shown, f"not valid JSON: {exc.msg}", line=exc.lineno, column=exc.colno
        ) from None
    flat: dict[str, float] = {}
    if isinstance(raw, dict) and "instances" in raw:
        flat = _percents(shown, raw.get("utilisation_percent", {}))
        raw = raw["instances"]
    if not isinstance(raw, list):
        raise DataError(shown, "expected a list of instances")
    fleet: list[GpuInstance] = []
    for index, item in enumerate(raw):
        try:
            fleet.append(GpuInstance.model_validate(item))
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise DataError(shown, err["msg"], field=f"[{index}].{loc}") from None
    return fleet, flat


def _percents(shown: str, raw: object) -> dict[str, float]:
    if not isinstance(raw, dict):
        raise DataError(
            shown, "expected an object of instance id -> percent", field="utilisation_percent"
        )
    out: dict[str, float] = {}
    for key, value in raw.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 100:
            raise DataError(
                shown,
                f"expected a percent 0-100, got {value!r}",
                field=f"utilisation_percent.{key}",
            )
        out[str(key)] = float(value)
    return out
