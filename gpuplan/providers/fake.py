"""An in-memory provider for tests, demos and the UI: a list of instances, nothing else.

It implements :class:`~gpuplan.providers.base.CloudProvider` and records every call
in ``calls`` so tests can assert what was asked; ``failures`` makes a method raise
:class:`~gpuplan.providers.base.ProviderError` (fault injection). The lifecycle work
extends it with metrics and actions; keep each ability a plain method over
``self.instances`` that starts with ``self._called(name, *args)``.

``load_fake_fleet`` reads a JSON file of instances (the ``GPUPLAN_FAKE_FLEET`` demo
and test hook): a list of objects with :class:`~gpuplan.core.fleet.GpuInstance`'s
fields, e.g. ``{"provider": "aws", "account": "123456789012", "region":
"us-east-1", "instance_id": "i-0abc", "instance_type": "p5.48xlarge", "state":
"running", "started_at": "2026-12-01T08:00:00Z", "labels": {"team": "research"},
"hourly_usd": "55.04"}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from gpuplan.core.errors import DataError
from gpuplan.core.fleet import Capability, GpuInstance
from gpuplan.core.offers import Provider
from gpuplan.providers.base import ProviderError


@dataclass(frozen=True)
class Call:
    """One call made on the fake: the method name and its arguments."""

    method: str
    args: tuple[Any, ...] = ()


class FakeProvider:
    """One cloud's instances held in memory; lists only those of its own provider."""

    def __init__(
        self,
        provider: Provider,
        instances: Iterable[GpuInstance] = (),
        *,
        capabilities: Iterable[Capability] = (Capability.LIST,),
    ) -> None:
        self._provider = provider
        self._capabilities = frozenset(capabilities)
        self.instances: dict[str, GpuInstance] = {
            i.instance_id: i for i in instances if i.provider is provider
        }
        self.calls: list[Call] = []
        self.failures: dict[str, str] = {}
        """Method name -> message: that method raises ProviderError with it."""

    @property
    def provider(self) -> Provider:
        return self._provider

    @property
    def capabilities(self) -> frozenset[Capability]:
        return self._capabilities

    def list_instances(self) -> list[GpuInstance]:
        self._called("list_instances")
        return list(self.instances.values())

    def _called(self, method: str, *args: Any) -> None:
        """Record the call, then fail it if the test asked for that."""
        self.calls.append(Call(method, args))
        message = self.failures.get(method)
        if message is not None:
            raise ProviderError(message)

    def calls_to(self, method: str) -> list[Call]:
        """The calls made to ``method``, in order."""
        return [c for c in self.calls if c.method == method]


def load_fake_fleet(path: str | Path) -> list[GpuInstance]:
    """Instances from a JSON file (see the module docstring); :class:`DataError` if bad."""
    shown = str(path)
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
    if isinstance(raw, dict) and "instances" in raw:
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
    return fleet
