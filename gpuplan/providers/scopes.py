"""Several scopes of one cloud (GCP projects, Azure subscriptions) behind one adapter.

The provider registry builds one adapter per cloud; a policy may name several projects
or subscriptions. :class:`ScopeSet` fans calls out to one adapter per scope and routes
per-instance calls by ``instance.account``. One scope failing does not hide the others:
its error becomes a notice (``drain_notices``) and the rest is listed; only when every
scope fails does the call raise. Utilisation that cannot be read for a scope leaves its
instances without samples, which the idle rule reads as ``unknown``, never idle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from gpuplan.core.fleet import Capability, GpuInstance, GpuSamples, InstanceState
from gpuplan.core.offers import Provider
from gpuplan.providers.base import LifecycleProvider, ProviderError


class ScopeSet:
    """One adapter per account (project, subscription) of a single cloud."""

    def __init__(self, provider: Provider, members: Mapping[str, LifecycleProvider]) -> None:
        if not members:
            raise ProviderError(f"{provider.value}: no projects or subscriptions in scope")
        self._provider = provider
        self._members = dict(members)
        self._notices: list[str] = []

    @property
    def provider(self) -> Provider:
        return self._provider

    @property
    def capabilities(self) -> frozenset[Capability]:
        sets = [m.capabilities for m in self._members.values()]
        return frozenset.intersection(*sets)

    @property
    def scope(self) -> str:
        return ", ".join(m.scope for m in self._members.values())

    def drain_notices(self) -> list[str]:
        out, self._notices = self._notices, []
        for member in self._members.values():
            out.extend(member.drain_notices())
        return out

    def list_instances(self) -> list[GpuInstance]:
        found: list[GpuInstance] = []
        failures: list[str] = []
        for member in self._members.values():
            try:
                found.extend(member.list_instances())
            except ProviderError as exc:
                failures.append(exc.message)
        if failures and len(failures) == len(self._members):
            raise ProviderError("; ".join(failures))
        self._notices.extend(f"not listed: {message}" for message in failures)
        return found

    def fetch_utilisation(
        self,
        instances: Sequence[GpuInstance],
        *,
        start: datetime,
        end: datetime,
        period_minutes: int,
    ) -> dict[str, GpuSamples]:
        out: dict[str, GpuSamples] = {}
        for account, member in self._members.items():
            mine = [i for i in instances if i.account == account]
            if not mine:
                continue
            try:
                out.update(
                    member.fetch_utilisation(
                        mine, start=start, end=end, period_minutes=period_minutes
                    )
                )
            except ProviderError as exc:
                self._notices.append(f"no utilisation: {exc.message}")
        return out

    def refresh(self, instance: GpuInstance) -> GpuInstance:
        return self._member(instance).refresh(instance)

    def stop(self, instance: GpuInstance, *, hibernate: bool = False) -> InstanceState:
        return self._member(instance).stop(instance, hibernate=hibernate)

    def terminate(self, instance: GpuInstance) -> InstanceState:
        return self._member(instance).terminate(instance)

    def tag(self, instance: GpuInstance, tags: Mapping[str, str]) -> None:
        self._member(instance).tag(instance, tags)

    def untag(self, instance: GpuInstance, keys: Sequence[str]) -> None:
        self._member(instance).untag(instance, keys)

    def _member(self, instance: GpuInstance) -> LifecycleProvider:
        member = self._members.get(instance.account)
        if member is None:
            raise ProviderError(
                f"{self._provider.value}: {instance.account} is not in this policy's scope"
            )
        return member
