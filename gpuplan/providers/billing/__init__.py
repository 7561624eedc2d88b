"""Actual spend, read-only, from each cloud's own cost API: the source type they share.

The sources live in their clouds' packages (:mod:`gpuplan.providers.aws.cost_explorer`,
:mod:`gpuplan.providers.aws.cur_export`, :mod:`gpuplan.providers.gcp.billing_export`,
:mod:`gpuplan.providers.azure.cost_management`). Each source answers
:class:`~gpuplan.providers.billing.base.CostSource`: daily
:class:`~gpuplan.core.audit.bill.lines.CostLine` rows for a date range, mapped at the edge
from the cloud's own words (usage types, SKUs, meters) to kinds the reconciliation explains.
SDKs are imported inside these modules only.
"""
