"""One month of GPU spend, as each cloud's cost API records it, beside gpuplan's ledger.

The same story on every cloud (2026-12-01, team ``ml``): a GPU type gpuplan watched all
day, part of it under a Savings Plan / committed-use / reservation; a second type with
twice the hours gpuplan saw (an instance it never saw); a third type gpuplan never saw
at all; a disk; a discount or credit. Response shapes follow each API's documented and
recorded answers (Cost Explorer ``ResultsByTime``/``Groups``; BigQuery ``jobs.query``
with ``schema`` and ``rows[].f[].v``; Cost Management ``properties.columns``/``rows``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from gpuplan.ledger import DecisionRecord, Ledger

DAY = "2026-12-01"
NOW = datetime(2026, 12, 3, 10, 0, tzinfo=UTC)
SINCE = datetime(2026, 12, 1, tzinfo=UTC)


def seed_ledger(ledger: Ledger, policy: str, provider: str, seen: dict[str, Decimal],
                account: str = "111122223333") -> None:  # fmt: skip
    """Hourly runs on DAY, each seeing one running instance per type in ``seen`` (its
    hourly list price): 24 h of each type."""
    for hour in range(24):
        at = SINCE + timedelta(hours=hour, minutes=30)
        run = ledger.start_run("stop-idle", policy, at, window_minutes=60)
        for n, (itype, price) in enumerate(sorted(seen.items())):
            ledger.record_decision(
                run,
                DecisionRecord(
                    provider,
                    "r1",
                    f"i-{n}",
                    itype,
                    "running",
                    "busy",
                    "busy",
                    "none",
                    at,
                    account=account,
                    hourly_usd=price,
                    labels={"team": "ml"},
                ),
            )


def _ce_group(keys: list[str], cost: str, quantity: str | None = None) -> dict[str, object]:
    metrics: dict[str, object] = {"UnblendedCost": {"Amount": cost, "Unit": "USD"}}
    if quantity is not None:
        metrics["UsageQuantity"] = {"Amount": quantity, "Unit": "Hrs"}
    return {"Keys": keys, "Metrics": metrics}


def _ce_day(groups: list[dict[str, object]]) -> dict[str, object]:
    return {"TimePeriod": {"Start": DAY, "End": "2026-12-02"}, "Total": {}, "Groups": groups,
            "Estimated": False}  # fmt: skip


AWS_PRICES = {"p4d.24xlarge": Decimal("32.7726"), "g5.xlarge": Decimal("1.006")}
CE_USAGE = {
    "GroupDefinitions": [{"Type": "TAG", "Key": "team"},
                         {"Type": "DIMENSION", "Key": "USAGE_TYPE"}],
    "ResultsByTime": [_ce_day([
        _ce_group(["team$ml", "BoxUsage:p4d.24xlarge"], "786.5424", "24"),
        _ce_group(["team$ml", "BoxUsage:g5.xlarge"], "48.288", "48"),
        _ce_group(["team$", "USE1-BoxUsage:g6e.12xlarge"], "104.88", "12"),
        _ce_group(["team$ml", "EBS:VolumeUsage.gp3"], "12.40", "4000"),
        _ce_group(["team$ml", "USE1-DataTransfer-Out-Bytes"], "0.90", "10"),
    ])],
    "DimensionValueAttributes": [],
}  # fmt: skip
CE_OTHER = {
    "GroupDefinitions": [{"Type": "DIMENSION", "Key": "RECORD_TYPE"},
                         {"Type": "DIMENSION", "Key": "USAGE_TYPE"}],
    "ResultsByTime": [_ce_day([
        _ce_group(["SavingsPlanNegation", "BoxUsage:p4d.24xlarge"], "-300.00"),
        _ce_group(["SavingsPlanRecurringFee", "ComputeSP:1yrNoUpfront"], "200.00"),
        _ce_group(["EdpDiscount", "BoxUsage:p4d.24xlarge"], "-45.00"),
    ])],
    "DimensionValueAttributes": [],
}  # fmt: skip


GCP_PRICES = {"a2-highgpu-1g": Decimal("3.6729"), "g2-standard-8": Decimal("0.85208")}
BQ_FIELDS = [("day", "DATE"), ("project", "STRING"), ("team", "STRING"), ("sku", "STRING"),
             ("machine", "STRING"), ("line", "STRING"), ("usd", "NUMERIC")]  # fmt: skip
A100 = "Nvidia Tesla A100 GPU running in Americas"
L4 = "Nvidia L4 GPU running in Americas"
BQ_ROWS = [
    [DAY, "ml-proj", "ml", A100, "a2-highgpu-1g", "COST", "70.42"],
    [DAY, "ml-proj", "ml", "A2 Instance Core running in Americas", "a2-highgpu-1g", "COST",
     "15.12"],
    [DAY, "ml-proj", "ml", "A2 Instance Ram running in Americas", "a2-highgpu-1g", "COST", "2.61"],
    [DAY, "ml-proj", "ml", A100, "a2-highgpu-1g", "COMMITTED_USAGE_DISCOUNT", "-30.00"],
    [DAY, "ml-proj", "ml", L4, "g2-standard-8", "COST", "20.45"],
    [DAY, "ml-proj", "ml", L4, "g2-standard-8", "SUSTAINED_USAGE_DISCOUNT", "-3.50"],
    [DAY, "ml-proj", "", "Nvidia H100 80GB GPU running in Americas", "a3-highgpu-8g", "COST",
     "88.49"],
    [DAY, "ml-proj", "ml", "Balanced PD Capacity", "", "COST", "5.00"],
]  # fmt: skip


AZ_SUB = "00000000-0000-0000-0000-0000000000a1"
AZURE_PRICES = {
    "Standard_NC24ads_A100_v4": Decimal("3.675"),
    "Standard_NV36ads_A10_v5": Decimal("3.20"),
}
AZ_USAGE = (["CostUSD", "UsageQuantity", "UsageDate", "TagKey", "TagValue", "Meter", "Currency"], [
    [44.10, 12, 20261201, "team", "ml", "NC24ads A100 v4", "USD"],
    [153.60, 48, 20261201, "team", "ml", "NV36ads A10 v5", "USD"],
    [61.44, 16, 20261201, "team", "", "ND96isr H100 v5 Spot", "USD"],
    [4.80, 1, 20261201, "team", "ml", "P30 LRS Disk", "USD"],
])  # fmt: skip
AZ_COVERED = (["CostUSD", "UsageQuantity", "UsageDate", "PricingModel", "Meter", "Currency"], [
    [24.00, 12, 20261201, "SavingsPlan", "NC24ads A100 v4", "USD"],
])  # fmt: skip
AZ_OTHER = (["CostUSD", "UsageQuantity", "UsageDate", "ChargeType", "MeterCategory", "Currency"], [
    [-12.50, 0, 20261201, "Refund", "Virtual Machines", "USD"],
])  # fmt: skip


CUR_COLUMNS = ["identity_line_item_id", "line_item_usage_start_date",
               "line_item_usage_account_id", "line_item_line_item_type", "line_item_usage_type",
               "line_item_resource_id", "line_item_usage_amount", "line_item_unblended_cost",
               "product_instance_type", "resource_tags"]  # fmt: skip
_ML = '{"user_team": "ml", "user_owner": "ana"}'
_T0 = f"{DAY}T00:00:00Z"
CUR_ROWS = [
    ["1", _T0, "111122223333", "SavingsPlanCoveredUsage", "BoxUsage:p4d.24xlarge", "i-0p4d",
     "12", "393.2712", "p4d.24xlarge", _ML],
    ["2", _T0, "111122223333", "Usage", "BoxUsage:p4d.24xlarge", "i-0p4d", "12", "393.2712",
     "p4d.24xlarge", _ML],
    ["3", _T0, "111122223333", "SavingsPlanNegation", "BoxUsage:p4d.24xlarge", "i-0p4d", "12",
     "-300.00", "p4d.24xlarge", _ML],
    ["4", _T0, "111122223333", "Usage", "BoxUsage:g5.xlarge", "i-0g5a", "24", "24.144",
     "g5.xlarge", _ML],
    ["5", _T0, "111122223333", "Usage", "BoxUsage:g5.xlarge", "i-0g5b", "24", "24.144",
     "g5.xlarge", _ML],
    ["6", _T0, "111122223333", "Usage", "USE1-BoxUsage:g6e.12xlarge", "i-0g6e", "12", "104.88",
     "g6e.12xlarge", "{}"],
    ["7", _T0, "111122223333", "Usage", "EBS:VolumeUsage.gp3", "vol-1", "4000", "12.40", "",
     _ML],
    ["8", _T0, "111122223333", "Usage", "USE1-DataTransfer-Out-Bytes", "i-0p4d", "10", "0.90",
     "", _ML],
    ["9", _T0, "111122223333", "SavingsPlanRecurringFee", "ComputeSP:1yrNoUpfront", "arn:sp",
     "24", "200.00", "", ""],
    ["10", _T0, "111122223333", "EdpDiscount", "BoxUsage:p4d.24xlarge", "", "0", "-45.00",
     "p4d.24xlarge", ""],
    ["11", "2026-11-30T23:00:00Z", "111122223333", "Usage", "BoxUsage:g5.xlarge", "i-0old",
     "1", "1.006", "g5.xlarge", _ML],
]  # fmt: skip
