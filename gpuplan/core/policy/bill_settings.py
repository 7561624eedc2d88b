"""The policy's ``bill`` section: where each cloud's bill is read, whose team, and when
the gap between estimate and bill is a problem (``gpuplan bill``).

The keys that say where one cloud's bill is (an export, a table, an endpoint) are not
fields here: the cloud's registry entry names a model of them (``bill_keys``), and the
registry calls :func:`register_keys`. They sit in ``bill`` beside the common keys, as
before, and are checked with them in one pass (errors at ``bill.<key>``, in the order
of the keys); :meth:`BillSettings.section` gives a cloud its own keys.
"""

from __future__ import annotations

import functools
from decimal import Decimal
from typing import Any, ClassVar

from pydantic import (
    BaseModel,
    PrivateAttr,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    ValidatorFunctionWrapHandler,
    create_model,
    model_serializer,
    model_validator,
)

from gpuplan.core.policy.fields import Percent, TagName, Usd
from gpuplan.core.policy.section import OpenSection, Section

_REGISTERED: dict[str, type[BaseModel]] = {}
"""Each cloud's model of its ``bill`` keys, by the cloud's name, in registration order."""


def register_keys(name: str, model: type[BaseModel]) -> None:
    """Accept ``model``'s fields as keys of ``bill`` (every one with a default), for the
    cloud called ``name`` (the cloud registry calls this for an entry's ``bill_keys``)."""
    _REGISTERED[name] = model


def unregister_keys(name: str) -> None:
    """Stop accepting the cloud ``name``'s ``bill`` keys (a cloud a test registered)."""
    _REGISTERED.pop(name, None)


def registered_keys() -> dict[str, type[BaseModel]]:
    """Each cloud's model of its ``bill`` keys, by the cloud's name."""
    return dict(_REGISTERED)


@functools.cache
def _checked(models: tuple[type[BaseModel], ...]) -> type[BaseModel]:
    """One model with BillSettings' own fields and every registered key, in that order:
    a file's ``bill`` is checked in one pass, every error reported at once."""
    every: tuple[type[BaseModel], ...] = (BillSettings, *models)
    fields: Any = {
        key: (info.annotation, info) for model in every for key, info in model.model_fields.items()
    }
    return create_model("BillSettings", __config__=Section.model_config, **fields)


class BillSettings(OpenSection):
    """``gpuplan bill``: actual spend from each cloud's cost API beside gpuplan's estimate."""

    registered_first: ClassVar[bool] = False

    team_label: TagName = "team"
    """Tag or label whose value names the team on the bill (on AWS an activated cost
    allocation tag; on GCP a resource label; on Azure a tag)."""
    gap_percent: Percent = 10.0
    """``gpuplan bill reconcile``: an unexplained or unseen amount for one instance type and
    day is a problem when over this share of the estimate (and over ``gap_min_usd``)."""
    gap_min_usd: Usd = Decimal(25)
    """...and over this many dollars, so that small types do not page anyone."""
    _clouds: dict[str, BaseModel] = PrivateAttr(default_factory=dict)
    """Each registered cloud's keys, checked by its model (defaults where not written)."""

    @model_validator(mode="wrap")
    @classmethod
    def _cloud_keys(cls, data: Any, handler: ValidatorFunctionWrapHandler) -> Any:
        """The registered clouds' keys are checked with the common ones (one pass, one
        list of errors); any other unknown key stays an error."""
        if not isinstance(data, dict) or not _REGISTERED:
            return handler(data)
        _checked(tuple(_REGISTERED.values())).model_validate(data)
        theirs = {k for model in _REGISTERED.values() for k in model.model_fields}
        settings = handler({k: v for k, v in data.items() if k not in theirs})
        for name, model in _REGISTERED.items():
            own = {k: v for k, v in data.items() if k in model.model_fields}
            settings._clouds[name] = model.model_validate(own)
        return settings

    @model_serializer(mode="wrap")
    def _with_clouds(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """The common keys, then each cloud's (in registration order)."""
        dumped: dict[str, Any] = handler(self)
        mode = "json" if info.mode_is_json() else "python"
        for keys in self._clouds.values():
            dumped.update(keys.model_dump(mode=mode))
        return dumped

    @classmethod
    def registered_keys(cls) -> dict[str, type[BaseModel] | None]:
        return {k: None for model in _REGISTERED.values() for k in model.model_fields}

    def section(self, name: str) -> BaseModel | None:
        """The ``bill`` keys of the cloud called ``name`` (None: it registered none)."""
        return self._clouds.get(name)
