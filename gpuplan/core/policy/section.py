"""The base of every policy section: unknown keys are errors, values are frozen, and each
field's docstring is its reference text (the JSON Schema and docs/policy.md).

Two sections also take keys that registry entries add (a cloud's ``scope.<name>``, a
metrics source's ``idle.metrics.<name>``): :func:`split_registered` checks those with the
model the entry names, and leaves every other unknown key an error. A cloud's section
model may take :class:`CloudSection` as its base to bring its own rules: the problems
across its keys, and why it leaves an instance out of scope (the policy rules ask every
section; none names a cloud).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, ValidatorFunctionWrapHandler, create_model

if TYPE_CHECKING:
    from gpuplan.core.lifecycle.instances import GpuInstance

SubPath = tuple[str | int, ...]
"""A key path inside one section (``("accounts",)``, ``("zones", 2)``)."""


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)


class OpenSection(Section):
    """A section that also takes the keys registry entries add (``scope``,
    ``idle.metrics``): :meth:`registered_models` names them, for the loader's
    "did you mean" and the reference."""

    @classmethod
    def registered_models(cls) -> Mapping[str, type[BaseModel]]:
        """The keys registry entries added here, with the model that checks each."""
        return {}


class CloudSection(Section):
    """A cloud's ``scope.<name>`` section with rules of its own (a registry entry's model;
    a plain pydantic model is a section too, without these rules)."""

    def problems(self) -> list[tuple[SubPath, str]]:
        """What is wrong across this section's keys (each at its path inside the section);
        the policy's problems put them at ``scope.<name>.<path>``."""
        return []

    def out_of_scope(self, instance: GpuInstance) -> str | None:
        """Why this section does not govern ``instance`` of its cloud (a region, an
        account it leaves out), or None when it does."""
        return None


def split_registered(
    section: type[BaseModel],
    data: Any,
    handler: ValidatorFunctionWrapHandler,
    model_of: Callable[[str], type[BaseModel] | None],
) -> tuple[Any, dict[str, BaseModel]]:
    """For a ``mode="wrap"`` model validator: the section built from its own fields, and
    each registered key's value checked by ``model_of(key)`` (errors at
    ``<section>.<key>.<field>``, as for a field). Keys nobody registered stay errors."""
    if not isinstance(data, dict):
        return handler(data), {}
    models = {
        key: model
        for key in data
        if key not in section.model_fields and (model := model_of(key)) is not None
    }
    built = handler({k: v for k, v in data.items() if k not in models})
    if not models:
        return built, {}
    fields: Any = {key: (model, ...) for key, model in models.items()}
    checked = create_model("RegisteredSections", __config__=Section.model_config, **fields)
    values = checked.model_validate({key: data[key] for key in models})
    return built, {key: getattr(values, key) for key in models}


def splice_sections(
    schema: dict[str, Any],
    owner: str,
    sections: Mapping[str, type[BaseModel]],
    defaulted: Collection[str] = (),
) -> dict[str, Any]:
    """``schema`` (a policy's JSON Schema) with each registered section as an optional
    property of the ``$defs`` model ``owner`` (``Scope``, ``MetricsSettings``), checked
    by its model's own schema, first and in the order given (registration order): what
    validation accepts, the schema accepts too, so an editor does not flag a registered
    cloud's ``scope.<name>`` as an unknown key. A ``defaulted`` section (present with
    its defaults when omitted) is its model, never null; the others default to null."""
    defs: dict[str, Any] = schema.setdefault("$defs", {})
    own: dict[str, Any] = defs[owner].get("properties", {})
    properties: dict[str, Any] = {}
    for key, model in sections.items():
        sub = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(sub.pop("$defs", {}))
        defs[model.__name__] = sub
        ref = {"$ref": f"#/$defs/{model.__name__}"}
        properties[key] = (
            ref if key in defaulted else {"anyOf": [ref, {"type": "null"}], "default": None}
        )
    defs[owner]["properties"] = {**properties, **own}
    return schema
