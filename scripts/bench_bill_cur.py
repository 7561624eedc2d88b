import csv, gzip, io, os, sys, time
sys.path.insert(0, ".")
for k in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
    os.environ.pop(k, None)
os.environ.update(AWS_ACCESS_KEY_ID="x", AWS_SECRET_ACCESS_KEY="x", AWS_DEFAULT_REGION="us-east-1")
import boto3
from moto import mock_aws
from datetime import date
from tests.fakes import bill_world as w
from gpuplan.providers.billing.aws_cur import CurExportSource
N = int(sys.argv[1])
buf = io.StringIO(); wr = csv.writer(buf); wr.writerow(w.CUR_COLUMNS)
for i in range(N):
    r = list(w.CUR_ROWS[i % 10]); r[0] = str(i); r[1] = f"2026-12-{1 + i % 28:02d}T{i % 24:02d}:00:00Z"; r[5] = f"i-{i % 5000:05d}"
    wr.writerow(r)
body = gzip.compress(buf.getvalue().encode())
with mock_aws():
    s = boto3.Session(region_name="us-east-1"); c = s.client("s3"); c.create_bucket(Bucket="cur-bench")
    c.put_object(Bucket="cur-bench", Key="p/e/data/BILLING_PERIOD=2026-12/e-00001.csv.gz", Body=body)
    t = time.perf_counter()
    lines = CurExportSource(s, "s3://cur-bench/p/e").daily_costs(date(2026, 12, 1), date(2027, 1, 1), "team")
    dt = time.perf_counter() - t
print(f"{N} line items, {len(body)/1e6:.1f} MB gz -> {len(lines)} cost lines in {dt:.2f} s ({N/dt:,.0f} rows/s)")
