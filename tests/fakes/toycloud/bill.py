"""Toycloud's keys of the policy's ``bill`` section, checked by this model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ToyBill(BaseModel):
    """Where Toycloud's invoices are read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    toy_invoice_days: int = Field(default=30, ge=1, le=90)
    """How many days one Toycloud invoice covers."""
