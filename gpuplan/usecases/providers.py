"""Builds the provider adapters a policy's scope needs, through a typed registry.

Each cloud registers a factory ``(policy) -> CloudProvider``; nothing dispatches by
module name. Factories import their SDK inside themselves, so building the registry
loads no SDK. ``GPUPLAN_FAKE_FLEET=path.json`` replaces every adapter with the
in-memory :class:`~gpuplan.providers.fake.FakeProvider` holding that file's instances:
a test and demo hook, never needed in production.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from gpuplan.core.errors import GpuplanError
from gpuplan.core.offers import Provider
from gpuplan.core.policy import Policy
from gpuplan.providers.base import CloudProvider

FAKE_FLEET_ENV = "GPUPLAN_FAKE_FLEET"

ProviderFactory = Callable[[Policy], CloudProvider]


@dataclass(frozen=True)
class ProviderProblem:
    """A provider in scope that could not be built or listed, and why."""

    provider: Provider
    message: str

    def __str__(self) -> str:
        return f"{self.provider.value}: {self.message}"


class ProviderRegistry:
    """Factories per cloud; ``build`` returns adapters for a policy's scope."""

    def __init__(self) -> None:
        self._factories: dict[Provider, ProviderFactory] = {}

    def register(self, provider: Provider, factory: ProviderFactory) -> None:
        self._factories[provider] = factory

    def __contains__(self, provider: object) -> bool:
        return provider in self._factories

    def build(
        self, policy: Policy, environ: Mapping[str, str]
    ) -> tuple[list[CloudProvider], list[ProviderProblem]]:
        """Adapters for every provider in scope; a problem line for each that failed."""
        fake_path = environ.get(FAKE_FLEET_ENV)
        if fake_path:
            return _fake_providers(policy, fake_path), []
        adapters: list[CloudProvider] = []
        problems: list[ProviderProblem] = []
        for provider in policy.scope.providers:
            factory = self._factories.get(provider)
            if factory is None:
                problems.append(ProviderProblem(provider, "adapter not available yet"))
                continue
            try:
                adapters.append(factory(policy))
            except GpuplanError as exc:
                problems.append(ProviderProblem(provider, exc.message))
        return adapters, problems


def _fake_providers(policy: Policy, path: str) -> list[CloudProvider]:
    from gpuplan.providers.fake import fake_providers

    return list(fake_providers(path, policy.scope.providers))


def default_registry() -> ProviderRegistry:
    """The registry with every real adapter this installation has.

    The lifecycle work registers AWS, GCP and Azure here, each factory importing its
    SDK inside itself.
    """
    from gpuplan.usecases.cloud_adapters import azure_from_policy, gcp_from_policy
    from gpuplan.usecases.fleet import aws_from_policy

    registry = ProviderRegistry()
    registry.register(Provider.AWS, aws_from_policy)
    registry.register(Provider.GCP, gcp_from_policy)
    registry.register(Provider.AZURE, azure_from_policy)
    return registry
