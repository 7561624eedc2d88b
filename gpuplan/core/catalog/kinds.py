"""The catalog's enums, the provider value type and buying rules, free of pydantic.

``Precision``, ``Provider``, ``PricingModel`` and the block-sold models'
:class:`ReservationRules` live here so that the estimate path (which needs them, and no
validation models) imports no pydantic. :mod:`gpuplan.core.catalog.gpus` and
:mod:`gpuplan.core.catalog.offers` re-export them: import from either place.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any


class Precision(StrEnum):
    """Numeric precision of the training math."""

    FP32 = "fp32"
    TF32 = "tf32"
    BF16 = "bf16"
    FP16 = "fp16"
    FP8 = "fp8"
    FP4 = "fp4"
    """NVFP4 / MXFP4 training recipes (Blackwell, CDNA 4)."""


class _Providers(type):
    """Iterating over :class:`Provider` gives every defined cloud, built-in ones first."""

    def __iter__(cls) -> Iterator[Provider]:
        return iter(tuple(_DEFINED.values()))

    def __len__(cls) -> int:
        return len(_DEFINED)

    def __getattr__(cls, name: str) -> Provider:
        """``Provider.<NAME>``: the defined provider of that name, upper-cased (what the
        enum's members read as); AttributeError before the cloud's facts are registered.
        A cloud's own package uses the constant of its facts module instead."""
        found = _DEFINED.get(name.lower()) if name.isupper() else None
        if found is None:
            raise AttributeError(name)
        return found


class Provider(str, metaclass=_Providers):
    """A cloud's identity, as offers, instances and the registry name it.

    An open value type, not a closed enum, and no cloud is built into it: each cloud's
    facts module holds a :meth:`named` value, and registering the facts (or the entry)
    defines it (the list of entries is the one place naming the clouds).
    It reads like the enum it replaces: ``Provider(name)`` is the defined object, so is
    ``Provider.<NAME>``, with ``.value`` and ``.name``, iteration over the defined clouds
    (in registration order), ``ValueError`` for an unknown name, and it compares and
    serialises as its string value.
    """

    __slots__ = ()

    def __new__(cls, value: str) -> Provider:
        found = _DEFINED.get(value)
        if found is None:
            raise ValueError(f"{value!r} is not a valid Provider")
        return found

    @classmethod
    def define(cls, value: str) -> Provider:
        """The provider named ``value`` (lower-case letters and digits), made if new; a
        :class:`Provider` given is defined again as that very object (after :meth:`forget`)."""
        name = str.__str__(value)
        if name in _DEFINED:
            return _DEFINED[name]
        made = value if isinstance(value, Provider) else cls.named(name)
        _DEFINED[name] = made
        return made

    @classmethod
    def named(cls, value: str) -> Provider:
        """A new cloud's provider value, not defined yet: a registry entry holds it, and
        registering the entry defines it (so importing an entry changes nothing)."""
        if value in _DEFINED:
            return _DEFINED[value]
        if not (value.isascii() and value.isalnum() and value.islower()):
            raise ValueError(f"a provider name is lower-case letters and digits, got {value!r}")
        return str.__new__(cls, value)

    @classmethod
    def forget(cls, value: str) -> None:
        """Undefine a provider defined at run time (a cloud a test registered); the
        registry refuses to unregister a listed cloud."""
        _DEFINED.pop(value, None)

    @property
    def value(self) -> str:
        return str.__str__(self)

    @property
    def name(self) -> str:
        return self.value.upper()

    def __repr__(self) -> str:
        return f"<Provider.{self.name}: {self.value!r}>"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __reduce__(self) -> tuple[type[Provider], tuple[str]]:
        return (Provider, (self.value,))

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """Validates a defined provider's name (the enum's error otherwise), dumps its name."""
        from pydantic_core import PydanticCustomError, core_schema

        def validate(value: Any) -> Provider:
            if isinstance(value, Provider):
                return value
            if isinstance(value, str) and value in _DEFINED:
                return _DEFINED[value]
            names = [repr(p.value) for p in _DEFINED.values()]
            expected = f"{', '.join(names[:-1])} or {names[-1]}" if len(names) > 1 else names[0]
            raise PydanticCustomError("enum", "Input should be {expected}", {"expected": expected})

        return core_schema.no_info_plain_validator_function(
            validate,
            json_schema_input_schema=core_schema.literal_schema(
                [p.value for p in _DEFINED.values()]
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                lambda p: p.value, when_used="json"
            ),
        )


_DEFINED: dict[str, Provider] = {}


class PricingModel(StrEnum):
    ON_DEMAND = "on_demand"
    SPOT = "spot"
    RESERVED_1Y = "reserved_1y"
    RESERVED_3Y = "reserved_3y"
    CAPACITY_BLOCK = "capacity_block"
    """AWS EC2 Capacity Blocks for ML: a block of days bought ahead, paid up front."""
    FLEX_START = "flex_start"
    """GCP Dynamic Workload Scheduler Flex-start: queued until capacity frees, 7 days at most."""
    DWS_CALENDAR = "dws_calendar"
    """GCP Dynamic Workload Scheduler calendar mode: a reservation of whole days, booked ahead."""

    @property
    def rules(self) -> ReservationRules | None:
        """How this model is bought (block lengths, lead time), None for plain hourly use."""
        return RESERVATION_RULES.get(self)

    @property
    def term_hours(self) -> int | None:
        """Hours in the commitment term (365-day years), None when nothing is committed."""
        return TERM_HOURS.get(self)


TERM_HOURS: dict[PricingModel, int] = {
    PricingModel.RESERVED_1Y: 365 * 24,
    PricingModel.RESERVED_3Y: 3 * 365 * 24,
}
"""Hours in each commitment term (365-day years)."""

BASE_MODELS = frozenset(
    {PricingModel.ON_DEMAND, PricingModel.SPOT, PricingModel.RESERVED_1Y, PricingModel.RESERVED_3Y}
)
"""The models every price API refresh reads; block-sold ones are curated in the bundle."""


@dataclass(frozen=True)
class ReservationRules:
    """The buying rules of a pricing model sold in blocks rather than by the hour.

    ``step_hours`` is what a block is rounded up to (a job of 30 h in 24-h steps buys
    48 h); ``min_hours``/``max_hours`` bound one block; ``lead_days`` is how far ahead it
    can (or must) be booked, ``None`` when it is not booked but queued.
    """

    min_hours: int
    max_hours: int
    step_hours: int
    lead_days: int | None
    paid_upfront: bool
    summary: str
    source: str

    def billed_hours(self, hours: float) -> int:
        """Hours paid for a job of ``hours``: whole steps, at least one minimum block.

        A job longer than ``max_hours`` needs several blocks; they are rounded the same way.
        """
        steps = max(math.ceil(hours / self.step_hours - 1e-9), 1)
        return max(steps * self.step_hours, self.min_hours)


RESERVATION_RULES: dict[PricingModel, ReservationRules] = {}
"""How each block-sold model is bought: the cloud that sells it states its rules in its
facts (:attr:`gpuplan.core.clouds.CloudFacts.reservations`), registered with them."""


def whole_count(value: float) -> int | float:
    """A GPU count as people write it: ``8`` for 8.0, fractions (0.1667) as they are."""
    return int(value) if float(value).is_integer() else value
