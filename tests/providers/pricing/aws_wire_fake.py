"""A loopback AWS endpoint for what moto lacks: the Price List API and spot price history.

It speaks the wire protocols boto3 uses: the Price List's JSON 1.1 protocol
(``X-Amz-Target: AWSPriceListService.GetProducts``, filters applied, ``NextToken`` paging)
and EC2's Query protocol for ``DescribeSpotPriceHistory`` (XML, ``nextToken`` paging).
EC2's instance-type listing comes from moto's server, which holds AWS's own data (moto
5.2 lists p6-b300.48xlarge with 8 B300). Real boto3 clients reach both by
``endpoint_url``; nothing in the SDK is replaced.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

EC2_NS = "http://ec2.amazonaws.com/doc/2016-11-15/"


@dataclass
class AwsWireFake:
    entries: list[str] = field(default_factory=list)
    """Price List entries (JSON strings, see aws_fixtures.price_list_entry)."""
    spot: list[dict[str, Any]] = field(default_factory=list)
    """Spot records as aws_fixtures.spot_history builds them."""
    page_size: int = 2
    endless: bool = False
    """Always answer GetProducts with a NextToken (the attack run's 3,080 requests)."""
    calls: list[str] = field(default_factory=list)

    def products(self, request: dict[str, Any]) -> dict[str, Any]:
        self.calls.append("GetProducts")
        wanted = {f["Field"]: f["Value"] for f in request.get("Filters", [])}
        types = set(wanted.pop("instanceType", "").split(","))
        rows = []
        for raw in self.entries:
            attrs = json.loads(raw)["product"]["attributes"]
            if attrs["instanceType"] in types and all(attrs.get(k) == v for k, v in wanted.items()):
                rows.append(raw)
        start = int(request.get("NextToken") or 0)
        body: dict[str, Any] = {
            "FormatVersion": "aws_v1",
            "PriceList": rows[start : start + self.page_size],
        }
        if start + self.page_size < len(rows) or self.endless:
            body["NextToken"] = str(start + self.page_size)
        return body

    def spot_history(self, form: dict[str, list[str]], region: str) -> str:
        """The region's records (EC2 is regional: the signature's scope names the region)."""
        self.calls.append("DescribeSpotPriceHistory")
        types = {v for k, vs in form.items() if k.startswith("InstanceType.") for v in vs}
        items = "".join(
            "<item>"
            f"<instanceType>{escape(r['InstanceType'])}</instanceType>"
            f"<productDescription>{escape(r['ProductDescription'])}</productDescription>"
            f"<spotPrice>{escape(r['SpotPrice'])}</spotPrice>"
            f"<timestamp>{_iso(r['Timestamp'])}</timestamp>"
            f"<availabilityZone>{escape(r['AvailabilityZone'])}</availabilityZone>"
            f"<availabilityZoneId>{escape(r['AvailabilityZoneId'])}</availabilityZoneId>"
            "</item>"
            for r in self.spot
            if r["InstanceType"] in types and r["AvailabilityZone"][:-1] == region
        )
        return (
            f'<?xml version="1.0" encoding="UTF-8"?>\n<DescribeSpotPriceHistoryResponse '
            f'xmlns="{EC2_NS}"><requestId>req-1</requestId><spotPriceHistorySet>{items}'
            "</spotPriceHistorySet><nextToken></nextToken></DescribeSpotPriceHistoryResponse>"
        )


def _iso(stamp: datetime) -> str:
    return stamp.strftime("%Y-%m-%dT%H:%M:%S.000Z")


@contextmanager
def serve(fake: AwsWireFake) -> Iterator[str]:
    """Serve the fake on 127.0.0.1; yields ``http://127.0.0.1:PORT``."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            target = self.headers.get("X-Amz-Target", "")
            if target == "AWSPriceListService.GetProducts":
                data = json.dumps(fake.products(json.loads(body))).encode()
                kind = "application/x-amz-json-1.1"
            else:
                form = parse_qs(body.decode())
                if form.get("Action") != ["DescribeSpotPriceHistory"]:
                    self.send_error(400, "unsupported action")
                    return
                auth = self.headers["Authorization"]
                scope = re.search(r"Credential=[^/]+/\d+/([^/]+)/ec2/", auth)
                region = scope.group(1) if scope else ""
                data, kind = fake.spot_history(form, region).encode(), "text/xml"
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
