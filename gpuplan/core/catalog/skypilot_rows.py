"""The rows of a SkyPilot ``vms.csv``, as the importer and a cloud's own rules read them.

SkyPilot lists one row per instance type and zone (v6-v8 columns). Most clouds' rows are
offers as they are; a cloud whose rows need joining or filtering first says how in its
facts (:attr:`gpuplan.core.clouds.CloudFacts.skypilot_rows`, ``outside_region``), so the
importer (:mod:`gpuplan.loaders.skypilot`) names no cloud.

Pure: values only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class VmRow:
    """One row of a vms.csv: an instance type in a zone (or a cloud's part of one)."""

    instance_type: str
    gpu: str
    count: float
    vcpus: float
    memory: float
    price: Decimal | None
    spot: Decimal | None
    region: str
    zone: str
    host_price: Decimal | None = None
    host_spot: Decimal | None = None


NAME_FIXES = {"A100": "A100-40GB", "V100": "V100-16GB", "H100-MEGA": "H100"}
"""SkyPilot's bare names for the smaller memory variants."""

RowRules = Callable[[list[VmRow]], tuple[list[VmRow], list[str]]]
"""A cloud's rows -> the rows that are offers, and notes on what could not be made one."""
