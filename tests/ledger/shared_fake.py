"""One in-memory fake cloud shared by several processes, with a journal of every call.

:class:`SharedFake` is the :class:`~gpuplan.providers.fake.FakeAdapter` whose
instances (state, labels) and snapshots live in a JSON file, read and written under an
exclusive ``flock`` around each call, so processes that settle one killed action at
once see one cloud, as two runs against AWS would. Every call is appended to a
journal file (one line: ``method instance-id``) before it takes effect: the test
counts the cloud calls of all processes there. ``latency_s`` sleeps before each call,
outside the lock (a cloud round trip), so that two runs overlap.
"""

from __future__ import annotations

import fcntl
import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gpuplan.core.lifecycle.instances import Action, GpuInstance, InstanceState
from gpuplan.providers.fake import FakeAdapter


def seed(state: Path, instances: Sequence[GpuInstance]) -> None:
    """Write the shared cloud's first state: these instances, no snapshots."""
    body = {
        "instances": {
            i.instance_id: {"state": i.state.value, "labels": i.labels} for i in instances
        },
        "snapshots": {},
        "snapshot_labels": {},
    }
    state.write_text(json.dumps(body), encoding="utf-8")


def journal(path: Path) -> list[str]:
    """The calls every process made, in order (``method instance-id``)."""
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


class SharedFake(FakeAdapter):
    """The fake, its cloud in ``state`` (JSON) and every call logged in ``log``."""

    def __init__(
        self, *args: Any, state: Path, log: Path, delay_s: float = 0.0, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        self.state, self.log, self.delay_s = state, log, delay_s

    @contextmanager
    def _shared(self) -> Iterator[None]:
        time.sleep(self.delay_s)  # the round trip, outside the lock: runs overlap
        with open(self.state.with_suffix(".lock"), "a") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            body = json.loads(self.state.read_text(encoding="utf-8"))
            for iid, held in body["instances"].items():
                if iid in self.instances:
                    self.instances[iid] = self.instances[iid].model_copy(
                        update={"state": InstanceState(held["state"]), "labels": held["labels"]}
                    )
            self.snapshots = {k: list(v) for k, v in body["snapshots"].items()}
            self.snapshot_labels = dict(body["snapshot_labels"])
            try:
                yield
            finally:
                self._save()

    def _save(self) -> None:
        body = {
            "instances": {
                iid: {"state": i.state.value, "labels": i.labels}
                for iid, i in self.instances.items()
            },
            "snapshots": self.snapshots,
            "snapshot_labels": self.snapshot_labels,
        }
        self.state.write_text(json.dumps(body), encoding="utf-8")

    def _called(self, method: str, *args: Any) -> None:
        if method in ("snapshot", "stop", "tag", "untag"):  # what changes the cloud
            with open(self.log, "a", encoding="utf-8") as out:
                out.write(f"{method} {args[0]}\n")
        super()._called(method, *args)

    def list_instances(self) -> list[GpuInstance]:
        with self._shared():
            return super().list_instances()

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        with self._shared():
            return super().refresh(instance)

    def act(self, instance: GpuInstance, action: Action) -> InstanceState:
        with self._shared():
            return super().act(instance, action)

    def snapshot(self, instance: GpuInstance, label: str) -> str:
        with self._shared():
            return super().snapshot(instance, label)

    def snapshots_labelled(self, instance: GpuInstance, label: str) -> list[str]:
        with self._shared():
            return super().snapshots_labelled(instance, label)

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        with self._shared():
            super().tag(instance, tags)

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        with self._shared():
            super().untag(instance, keys)
