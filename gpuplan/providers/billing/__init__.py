"""Actual spend, read-only, from each cloud's own cost API (one module per cloud).

Each source answers :class:`~gpuplan.providers.billing.base.CostSource`: daily
:class:`~gpuplan.core.bill.lines.CostLine` rows for a date range, mapped at the edge
from the cloud's own words (usage types, SKUs, meters) to kinds the reconciliation
explains. SDKs are imported inside these modules only.
"""
