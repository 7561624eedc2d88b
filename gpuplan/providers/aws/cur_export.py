"""AWS actual spend from a CUR 2.0 export (AWS Data Exports) in S3, CSV with gzip.

The scalable path for large organisations: Cost Explorer bills each request and pages
through groups, while Data Exports writes the whole month's line items to S3
(``s3://BUCKET/PREFIX/EXPORT/data/BILLING_PERIOD=YYYY-MM/*.csv.gz``, rewritten as the
month is revised). Each line item is mapped exactly as Cost Explorer's groups are
(:func:`~gpuplan.providers.aws.cost_explorer.kind_of` on ``line_item_line_item_type`` and
``line_item_usage_type``; the instance type from ``product_instance_type``; the team
from ``resource_tags``' ``user_<label>``), then summed per day, kind, type, team and
usage type. Parquet exports need pyarrow, which gpuplan does not bring: export as CSV.
Reads are capped (objects, bytes, rows) and every cell is checked.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
from collections import defaultdict
from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from typing import Any

from gpuplan.core.audit.bill.lines import CostKind, CostLine, checked_usd
from gpuplan.providers.aws.cost_explorer import USAGE_RECORDS, instance_type_of, kind_of
from gpuplan.providers.base import ProviderError

PERMISSIONS = ("s3:ListBucket", "s3:GetObject")
MAX_OBJECTS = 500
MAX_BYTES = 2 * 1024**3
"""Uncompressed bytes read per sync, all objects together."""
MAX_ROWS = 20_000_000
TOO_BIG = (
    f"aws: CUR export larger than {MAX_ROWS:,} rows or {MAX_BYTES // 1024**3} GiB in one "
    "sync; sync fewer days (--since)"
)
PARQUET = "aws: CUR export is Parquet; gpuplan reads CSV (gzip) exports: set its format to CSV"
_FIELD_LIMIT = 1024 * 1024


def parse_location(url: str) -> tuple[str, str]:
    """``s3://bucket/prefix/export`` -> (bucket, prefix without a trailing slash)."""
    if not url.startswith("s3://") or "/" not in url[5:]:
        raise ValueError(f"expected s3://BUCKET/PREFIX/EXPORT, got {url[:80]!r}")
    bucket, _, prefix = url[5:].partition("/")
    return bucket, prefix.strip("/")


class CurExportSource:
    """The line items of one CUR 2.0 export (every account the payer bills)."""

    provider = "aws"
    permissions: tuple[str, ...] = PERMISSIONS

    def __init__(self, session: Any, location: str, *, scope: str = "") -> None:
        from gpuplan.providers.aws.session import client_config

        self._s3 = session.client("s3", config=client_config())
        self.bucket, self.prefix = parse_location(location)
        self.scope = scope or self.bucket

    def daily_costs(self, since: date, until: date, team_label: str) -> list[CostLine]:
        from botocore.exceptions import BotoCoreError, ClientError

        sums: dict[tuple[Any, ...], list[Decimal | None]] = defaultdict(lambda: [Decimal(0), None])
        mapper = _Mapper(f"user_{team_label}", self.scope)
        try:
            for row in self._rows(since, until):
                mapper.add(sums, row, since, until)
        except (BotoCoreError, ClientError) as exc:
            code = getattr(exc, "response", {}).get("Error", {}).get("Code", type(exc).__name__)
            raise ProviderError(
                f"aws: CUR export s3://{self.bucket}/{self.prefix}: {code}"
            ) from None
        return [
            CostLine("aws", scope, day, kind, usd or Decimal(0), itype, team, item, hours)
            for (scope, day, kind, itype, team, item), (usd, hours) in sorted(sums.items())
        ]

    def _rows(self, since: date, until: date) -> Iterator[list[str]]:
        """Each line item's :data:`COLUMNS`, in that order ("" where a file lacks one)."""
        read = rows = 0
        for key in self._objects(since, until):
            body = self._s3.get_object(Bucket=self.bucket, Key=key)["Body"]
            raw: Any = gzip.GzipFile(fileobj=body) if key.endswith(".gz") else body
            text = io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline="")
            reader = csv.reader(_capped(text))
            header = next(reader, [])
            where = [header.index(c) if c in header else -1 for c in COLUMNS]
            if where[0] < 0:
                raise ProviderError(f"aws: CUR export file {key[-80:]} has no {COLUMNS[0]}")
            for row in reader:
                rows += 1
                read += sum(map(len, row))
                if rows > MAX_ROWS or read > MAX_BYTES:
                    raise ProviderError(TOO_BIG)
                yield [row[i] if 0 <= i < len(row) else "" for i in where]

    def _objects(self, since: date, until: date) -> Iterator[str]:
        found = 0
        for period in _periods(since, until):
            pages = self._s3.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=f"{self.prefix}/data/BILLING_PERIOD={period}/"
            )
            for page in pages:
                for obj in page.get("Contents", []):
                    key = str(obj["Key"])
                    if key.endswith(".parquet"):
                        raise ProviderError(PARQUET)
                    if not key.endswith((".csv", ".csv.gz")):
                        continue
                    found += 1
                    if found > MAX_OBJECTS:
                        raise ProviderError(f"aws: CUR export has over {MAX_OBJECTS} files")
                    yield key


COLUMNS = ("line_item_usage_start_date", "line_item_usage_account_id",
           "line_item_line_item_type", "line_item_usage_type", "product_instance_type",
           "resource_tags", "line_item_unblended_cost", "line_item_usage_amount")  # fmt: skip
"""The CUR 2.0 columns read, in the order :meth:`CurExportSource._rows` yields them."""


class _Mapper:
    """Line items to sums per (account, day, kind, type, team, item). What a line item
    maps to depends on a few repeating texts: mapped once per distinct text."""

    def __init__(self, tag: str, scope: str) -> None:
        self.tag, self.scope = tag, scope
        self._days: dict[str, date] = {}
        self._kinds: dict[tuple[str, str, str, str], tuple[CostKind, str, str, str]] = {}

    def add(self, sums: dict[tuple[Any, ...], list[Decimal | None]], row: list[str],
            since: date, until: date) -> None:  # fmt: skip
        start, account, record, usage_type, product_type, tags, cost, amount = row
        day = self._day(start[:10])
        if not since <= day < until:
            return
        kind, itype, team, item = self._kind(record, usage_type[:120], product_type, tags)
        cell = sums[(account or self.scope, day, kind, itype, team, item)]
        cell[0] = (cell[0] or Decimal(0)) + checked_usd(cost or "0", "aws: CUR unblended cost")
        if kind is CostKind.INSTANCE:
            used = checked_usd(amount or "0", "aws: CUR usage amount")
            cell[1] = (cell[1] or Decimal(0)) + used

    def _day(self, text: str) -> date:
        day = self._days.get(text)
        if day is None:
            try:
                day = self._days[text] = date.fromisoformat(text)
            except ValueError:
                raise ProviderError(f"aws: CUR usage start date {text!r}: not a date") from None
        return day

    def _kind(self, record: str, usage_type: str, product_type: str,
              tags: str) -> tuple[CostKind, str, str, str]:  # fmt: skip
        key = (record, usage_type, product_type, tags)
        found = self._kinds.get(key)
        if found is None:
            kind = kind_of(record, usage_type)
            usage_like = record in USAGE_RECORDS
            itype = product_type or instance_type_of(usage_type)
            itype = itype if kind in (CostKind.INSTANCE, CostKind.COMMITMENT) else ""
            team = _tags(tags).get(self.tag, "") if usage_like else ""
            item = usage_type if usage_like else f"{record}/{usage_type}"[:120]
            found = (kind, itype[:64], team, item)
            if len(self._kinds) < 100_000:  # bounded: a hostile file cannot grow it forever
                self._kinds[key] = found
        return found


def _capped(text: io.TextIOWrapper) -> Iterator[str]:
    """Lines of at most ``_FIELD_LIMIT`` characters, read at most that far (a hostile file
    cannot make one huge line live in memory)."""
    while line := text.readline(_FIELD_LIMIT + 1):
        if len(line) > _FIELD_LIMIT:
            raise ProviderError("aws: CUR export has a line over 1 MiB: not a CUR export")
        yield line


def _periods(since: date, until: date) -> list[str]:
    out, month = [], date(since.year, since.month, 1)
    while month < until:
        out.append(f"{month:%Y-%m}")
        month = date(month.year + month.month // 12, month.month % 12 + 1, 1)
    return out


def _tags(text: str) -> dict[str, str]:
    """``resource_tags``: a JSON object in CSV exports; anything else: no tags."""
    try:
        raw = json.loads(text) if text else {}
    except ValueError:
        return {}
    return {str(k): str(v)[:256] for k, v in raw.items()} if isinstance(raw, dict) else {}
