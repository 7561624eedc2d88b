"""Toycloud's section of a policy: ``scope.toy``, checked by this model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from tests.fakes.toycloud.listing import REGIONS


class ToyScope(BaseModel):
    """Which Toycloud regions a policy governs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    regions: list[str] = Field(min_length=1)
    """Toycloud regions (``eu-toy1``, ``us-toy1``)."""
    api_endpoint: str | None = None
    """Toycloud's API endpoint (a private deployment); default: the public one."""

    def model_post_init(self, context: object) -> None:
        unknown = [r for r in self.regions if r not in REGIONS]
        if unknown:
            raise ValueError(f"not a Toycloud region: {', '.join(unknown)}")
