"""The policy file as typed values: what a team may spend, plan on, and call idle.

Every section except ``version`` and ``name`` is optional and has a safe default;
unknown keys are errors everywhere. The docstrings below are the reference text of the
generated JSON Schema (``policies/policy.schema.json``) and of ``docs/policy.md``.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from decimal import Decimal
from enum import StrEnum
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    Field,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    StrictBool,
    ValidatorFunctionWrapHandler,
    WithJsonSchema,
    model_serializer,
    model_validator,
)

from gpuplan.core.catalog.offers import PricingModel, Provider
from gpuplan.core.clouds import Feature, catalog_only, registered, scope_section
from gpuplan.core.lifecycle.actions import provider_action
from gpuplan.core.lifecycle.idle_signals import IdleRule
from gpuplan.core.lifecycle.instances import Action
from gpuplan.core.policy.bill_settings import BillSettings
from gpuplan.core.policy.fields import (
    AlertPercent,
    EnvName,
    Identifier,
    Minutes,
    Percent,
    PolicyName,
    PositiveInt,
    TagName,
    TagValue,
    Usd,
    WebhookUrl,
    describe,
)
from gpuplan.core.policy.lifetime_settings import Exemptions, Lifetimes, Owners
from gpuplan.core.policy.metrics_settings import (
    MetricsSettings,
)
from gpuplan.core.policy.schedules import Schedules
from gpuplan.core.policy.section import OpenSection, split_registered
from gpuplan.core.policy.section import Section as _Section

POLICY_VERSION = 1


def _version(value: Any) -> int:
    if isinstance(value, bool) or value != POLICY_VERSION:
        raise ValueError(
            f"unsupported policy version {describe(value)}; this gpuplan reads version 1"
        )
    return POLICY_VERSION


Version = Annotated[int, BeforeValidator(_version), WithJsonSchema({"const": POLICY_VERSION})]


class IdleAction(StrEnum):
    """What to do with an idle instance. Azure's ``stop`` is carried out as deallocate."""

    STOP = "stop"
    HIBERNATE = "hibernate"
    SUSPEND = "suspend"
    TERMINATE = "terminate"
    NOTIFY = "notify"

    def for_provider(self, provider: Provider) -> Action:
        """The provider action this policy action becomes (Azure stop = deallocate), as
        :data:`gpuplan.core.lifecycle.actions.ACTIONS` says."""
        return provider_action(provider, Action(self.value))


def _cloud_section_model(key: str) -> type[BaseModel] | None:
    found = scope_section(key)
    if found is None and (facts := catalog_only(key)) is not None:
        return _refused_section(facts.unsupported[Feature.FLEET])
    return found[1] if found else None


@functools.cache
def _refused_section(reason: str) -> type[BaseModel]:
    """``scope.<name>`` of a catalog-only cloud: refused, with the entry's reason."""

    class CatalogOnlyScope(_Section):
        @model_validator(mode="before")
        @classmethod
        def _refuse(cls, data: Any) -> Any:
            raise ValueError(f"{reason}; remove this section (fleet, stop-idle and audit)")

    return CatalogOnlyScope


class Scope(OpenSection):
    """Which instances this policy governs. No provider section: nothing is in scope."""

    # Each cloud's section (scope.aws, scope.gcp, scope.<name>) is checked by the model
    # its registry entry names, built in or not; any other unknown key stays an error.

    match_labels: dict[TagName, TagValue] = Field(default_factory=dict)
    """Tags (AWS, Azure) or labels (GCP) an instance must carry; empty: all GPU instances."""
    _registered: dict[Provider, BaseModel] = PrivateAttr(default_factory=dict)
    """The clouds' sections, each checked by the model its registry entry names."""

    @classmethod
    def registered_models(cls) -> dict[str, type[BaseModel]]:
        """Each registered cloud's section model (a catalog-only cloud has none)."""
        return {
            provider.value: found[1]
            for provider in registered()
            if (found := scope_section(provider.value)) is not None
        }

    @model_validator(mode="wrap")
    @classmethod
    def _registered_clouds(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """``scope.<name>`` of a registered cloud is checked by that cloud's section
        model; any other unknown key stays an error ("extra inputs")."""
        scope, sections = split_registered(cls, data, handler, _cloud_section_model)
        for key, value in sections.items():
            found = scope_section(key)
            assert found is not None  # split_registered only returns registered keys
            scope._registered[found[0]] = value
        return scope

    @model_serializer(mode="wrap")
    def _with_sections(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """The clouds' sections first (in registration order), then the other keys."""
        dumped: dict[str, Any] = handler(self)
        mode = "json" if info.mode_is_json() else "python"
        sections = {p.value: self._registered[p].model_dump(mode=mode) for p in self.providers}
        return {**sections, **dumped}

    @property
    def providers(self) -> list[Provider]:
        """The clouds with a section here, in the order they were registered (the
        built-in ones first)."""
        return [p for p in Provider if p in self._registered]

    def section(self, provider: Provider) -> BaseModel | None:
        """The policy's section for ``provider`` (``scope.aws``, ``scope.<name>`` ...)."""
        return self._registered.get(provider)


class Budget(_Section):
    """What the team may spend."""

    monthly_usd: Usd | None = None
    """Monthly budget in USD; none: no monthly limit and no alerts."""
    alert_at_percent: list[AlertPercent] = Field(default_factory=lambda: [50.0, 80.0, 100.0])
    """Alert once per month when month-to-date spend crosses each share of ``monthly_usd``."""
    max_hourly_usd: Usd | None = None
    """No single planned option or instance may cost more than this per hour."""


class Planning(_Section):
    """What the planner may propose. Empty lists mean no restriction."""

    allowed_gpus: list[str] = Field(default_factory=list)
    """Canonical GPU names (``H100``, ``A100-80GB``, ``L4``); checked against the GPU table."""
    allowed_pricing: list[PricingModel] = Field(default_factory=list)
    """Pricing models: ``on_demand``, ``spot``, ``reserved_1y``, ``reserved_3y``."""
    allowed_regions: list[Identifier] = Field(default_factory=list)
    """Regions of any provider, e.g. ``us-east-1``, ``us-central1``, ``eastus``."""


_RULE = IdleRule()
"""The idle thresholds' defaults (one definition, in the pure core)."""


class IdleSettings(_Section):
    """When an instance counts as idle and what then happens to it."""

    # The thresholds' defaults are IdleRule's (core.idle_signals), and ``rule()`` gives
    # that one type to the decision; this model only reads the policy file's keys.

    threshold_percent: Percent = _RULE.threshold_percent
    """GPU utilisation; per period, the busiest GPU of the instance counts."""
    window_minutes: Minutes = _RULE.window_minutes
    """Idle only if below the threshold for the whole window (``60``, ``90m``, ``2h``)."""
    period_minutes: Minutes = _RULE.period_minutes
    """Length of one sample period; the window must be a whole number of periods."""
    min_coverage_percent: Percent = _RULE.min_coverage_percent
    """Share of the window's periods in which every GPU reported; less: unknown, never idle."""
    live_process_window_minutes: Minutes = _RULE.live_process_window_minutes
    """GPUs quiet this long count as idle even while a process holds GPU memory or the CPU
    is busy; with neither, ``window_minutes`` applies (docs/lifecycle.md, idle decision)."""
    gpu_memory_floor_percent: Percent = _RULE.gpu_memory_floor_percent
    """GPU memory in use at or above this share of a GPU's total means a live process."""
    cpu_busy_percent: Percent = _RULE.cpu_busy_percent
    """Instance CPU at or above this means work goes on with idle GPUs (a CPU phase)."""
    fault_hold_minutes: Minutes = _RULE.fault_hold_minutes
    """Suspect metrics (zeros several instances step into or out of at once while a
    process holds GPU memory or the CPU works; every signal dropping to exactly 0) make
    the verdict unknown while they last and this long after (docs/simulation.md)."""
    grace_minutes: Minutes = _RULE.grace_minutes
    """Never idle this soon after launch or start."""
    notice_minutes: Minutes = 0
    """Above 0: the first run tags and notifies; a later run acts only if still idle then."""
    action: IdleAction = IdleAction.STOP
    """``stop``, ``hibernate``, ``suspend`` (GCP only), ``terminate`` or ``notify``."""
    allow_data_loss: StrictBool = False
    """Instances with local storage that the action erases (AWS instance store on any
    device, GCP local SSD, Azure temporary disk) are skipped unless true; ``terminate``
    is refused unless true. ``policy check`` requires it written (true or false) when the
    action stops, hibernates or suspends instances of a cloud in scope."""
    exempt_tag: TagName = _RULE.exempt_tag
    """Any value exempts an instance; ``gpuplan-snooze-until`` is honoured too."""
    max_actions_per_run: PositiveInt = 10
    """Act on at most this many instances per run, most dollars at stake first; the rest
    are deferred to the next run, each with the reason (exit 0)."""
    breaker_percent: Percent = 80.0
    """Circuit breaker: when the would-be actions of one run (before the cap) exceed this
    share of the surveyed running GPU instances, nothing is done and the run exits 1 (the
    signature of broken metrics or a wrong rule; docs/simulation.md for the default)."""
    breaker_min_actions: PositiveInt = 3
    """The breaker ignores runs with fewer would-be actions than this (two instances of a
    small fleet going idle in the same run are not an anomaly)."""
    metrics: MetricsSettings = Field(default_factory=MetricsSettings)
    """Where GPU utilisation is read from."""

    def rule(
        self, match_labels: Mapping[str, str] | None = None, *, exempt_max_days: int | None = None
    ) -> IdleRule:
        """The thresholds the idle decision reads, with the scope's ``match_labels`` and the
        longest exemption allowed (``exemptions.max_days``)."""
        return IdleRule(
            threshold_percent=self.threshold_percent,
            window_minutes=self.window_minutes,
            period_minutes=self.period_minutes,
            min_coverage_percent=self.min_coverage_percent,
            grace_minutes=self.grace_minutes,
            exempt_tag=self.exempt_tag,
            match_labels=dict(match_labels or {}),
            live_process_window_minutes=self.live_process_window_minutes,
            gpu_memory_floor_percent=self.gpu_memory_floor_percent,
            cpu_busy_percent=self.cpu_busy_percent,
            fault_hold_minutes=self.fault_hold_minutes,
            exempt_max_days=exempt_max_days,
        )


class Notify(_Section):
    """Where messages go."""

    webhook_url: WebhookUrl | None = None
    """Slack-compatible incoming webhook: a literal URL or ``${ENV_VAR}``; https to a
    public host unless ``allow_insecure_webhook``; shown redacted (origin only)."""
    allow_insecure_webhook: StrictBool = False
    """Allow ``http://`` and loopback or private hosts for the webhook (a lab or an
    internal chat server). Link-local addresses (cloud metadata) are refused even then."""


class AuditSettings(_Section):
    """``gpuplan audit``: low-utilisation alerts, one webhook message per instance and period."""

    alerts: StrictBool = False
    """Send alerts from ``gpuplan audit --policy`` (to ``notify.webhook_url``)."""
    utilisation_floor_percent: Percent = 30.0
    """Alert when busy dollars are below this share of the dollars paid over the period."""
    period_days: PositiveInt = 7
    """Length of the audit period an alert covers; one alert per instance per period."""
    min_usd: Usd = Decimal(100)
    """Only instances that cost at least this much over the period are alerted on."""
    restartable_label: TagName = "gpuplan-restartable"
    """Label (tag) marking a job that restarts cheaply from checkpoints (spot advice)."""


class Policy(_Section):
    """One team's GPU policy (``version: 1``)."""

    version: Version
    """Policy file format version; always 1."""
    name: PolicyName
    """The policy's name: ledger entries and alerts carry it."""
    scope: Scope = Field(default_factory=Scope)
    budget: Budget = Field(default_factory=Budget)
    planning: Planning = Field(default_factory=Planning)
    idle: IdleSettings = Field(default_factory=IdleSettings)
    notify: Notify = Field(default_factory=Notify)
    env_allow: list[EnvName] = Field(default_factory=list)
    """Environment variables ``${NAME}`` may expand (in ``notify.webhook_url`` and
    ``idle.metrics.prometheus.url``) besides ``GPUPLAN_*``; any other name is refused."""
    audit: AuditSettings = Field(default_factory=AuditSettings)
    schedules: Schedules = Field(default_factory=Schedules)
    """Off-hours and on-hours (``gpuplan schedule``); none defined: nothing is scheduled."""
    lifetimes: Lifetimes = Field(default_factory=Lifetimes)
    exemptions: Exemptions = Field(default_factory=Exemptions)
    owners: Owners = Field(default_factory=Owners)
    bill: BillSettings = Field(default_factory=BillSettings)
