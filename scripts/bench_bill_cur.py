"""How fast ``gpuplan bill sync`` reads a CUR 2.0 export (CSV, gzip) from S3 (moto).

Usage: ``python scripts/bench_bill_cur.py [LINE_ITEMS]`` (default 200000). Writes one
synthetic month of line items (the test story's ten rows, repeated over 28 days and 5,000
instance ids) to moto's S3 in-process, then times ``CurExportSource.daily_costs``.
Results are written down in docs/bill.md.
"""

from __future__ import annotations

import csv
import gzip
import io
import os
import sys
import time
from datetime import date
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main(count: int) -> None:
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
        os.environ.pop(name, None)
    os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x",
                      AWS_DEFAULT_REGION="us-east-1")  # fmt: skip
    import boto3
    from moto import mock_aws

    from gpuplan.providers.aws.cur_export import CurExportSource
    from tests.fakes import bill_world as w

    text = io.StringIO()
    writer = csv.writer(text)
    writer.writerow(w.CUR_COLUMNS)
    for i in range(count):
        row = list(w.CUR_ROWS[i % 10])
        row[0], row[5] = str(i), f"i-{i % 5000:05d}"
        row[1] = f"2026-12-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"
        writer.writerow(row)
    body = gzip.compress(text.getvalue().encode())
    with mock_aws():
        session = boto3.Session(region_name="us-east-1")
        s3 = session.client("s3")
        s3.create_bucket(Bucket="cur-bench")
        s3.put_object(Bucket="cur-bench", Key="p/e/data/BILLING_PERIOD=2026-12/e-00001.csv.gz",
                      Body=body)  # fmt: skip
        start = time.perf_counter()
        lines = CurExportSource(session, "s3://cur-bench/p/e").daily_costs(
            date(2026, 12, 1), date(2027, 1, 1), "team"
        )
        took = time.perf_counter() - start
    print(f"{count} line items, {len(body) / 1e6:.1f} MB gzip -> {len(lines)} cost lines "
          f"in {took:.2f} s ({count / took:,.0f} line items/s)")  # fmt: skip


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
