"""The base of every policy section: unknown keys are errors, values are frozen, and each
field's docstring is its reference text (the JSON Schema and docs/policy.md)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)
