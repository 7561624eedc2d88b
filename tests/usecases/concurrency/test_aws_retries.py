"""AWS retries under throttling, at the wire: ``moto_server`` behind a loopback proxy
that answers the first N ``DescribeInstances`` with EC2's ``RequestLimitExceeded``
(HTTP 503). The adapter's clients are built by ``AwsAdapter.from_session`` exactly as
in production; only ``AWS_ENDPOINT_URL`` points them at the proxy."""

from __future__ import annotations

import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import boto3
import pytest
from moto.server import ThreadedMotoServer

from gpuplan.providers.aws.provider import AwsAdapter
from gpuplan.providers.base import ProviderError
from gpuplan.usecases.lifecycle.concurrency import Concurrency
from gpuplan.usecases.lifecycle.survey import idle_rule, survey
from tests.usecases.concurrency.fleets import NOW, research_policy

KEYS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
REGIONS = ("us-east-1", "us-west-2", "eu-west-1")
THROTTLED = (
    b"<Response><Errors><Error><Code>RequestLimitExceeded</Code><Message>Request limit "
    b"exceeded.</Message></Error></Errors><RequestID>throttled</RequestID></Response>"
)


@dataclass
class Throttle:
    """Refuses the first ``times`` requests for ``action``; counts what it saw."""

    action: str
    times: int
    seen: int = 0
    refused: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def refuse(self, body: bytes) -> bool:
        if f"Action={self.action}&".encode() not in body + b"&":
            return False
        with self.lock:
            self.seen += 1
            if self.refused < self.times:
                self.refused += 1
                return True
        return False


@contextmanager
def throttling_proxy(upstream: str, throttle: Throttle) -> Iterator[str]:
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if throttle.refuse(body):
                self._answer(503, "text/xml", THROTTLED)
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            request = urllib.request.Request(
                upstream + self.path, data=body, headers=headers, method="POST"
            )
            try:
                with urllib.request.urlopen(request, timeout=30) as answer:
                    status, payload = answer.status, answer.read()
                    kind = answer.headers.get("content-type", "text/xml")
            except urllib.error.HTTPError as exc:
                status, payload = exc.code, exc.read()
                kind = exc.headers.get("content-type", "text/xml")
            self._answer(status, kind, payload)

        def _answer(self, status: int, kind: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("content-type", kind)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="module")
def moto_url() -> Iterator[str]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    url = f"http://127.0.0.1:{port}"
    for region in REGIONS:  # one GPU instance per region
        ec2 = boto3.client("ec2", region_name=region, endpoint_url=url, **KEYS)
        ec2.run_instances(ImageId="ami-12345678", MinCount=1, MaxCount=1, InstanceType="g5.xlarge")
    try:
        yield url
    finally:
        server.stop()


def providers(proxy: str, monkeypatch: pytest.MonkeyPatch, attempts: int) -> list[AwsAdapter]:
    monkeypatch.setenv("AWS_ENDPOINT_URL", proxy)
    session = boto3.Session(**KEYS)
    return [AwsAdapter.from_session(session, r, max_attempts=attempts) for r in REGIONS]


def test_throttled_listing_is_retried_in_adaptive_mode(
    moto_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    throttle = Throttle("DescribeInstances", times=2)
    with throttling_proxy(moto_url, throttle) as proxy:
        (east, *_) = providers(proxy, monkeypatch, attempts=4)
        listed = east.list_instances()
    assert [i.instance_type for i in listed] == ["g5.xlarge"]
    assert (throttle.refused, throttle.seen) == (2, 3)  # two refusals, then the answer
    # The adapter's clients carry the retry mode this module promises.
    retries = east._ec2.meta.config.retries
    assert (retries["mode"], retries["total_max_attempts"]) == ("adaptive", 5)


def test_throttling_past_the_last_attempt_is_a_named_provider_error(
    moto_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    throttle = Throttle("DescribeInstances", times=10)
    with throttling_proxy(moto_url, throttle) as proxy:
        (east, *_) = providers(proxy, monkeypatch, attempts=2)
        with pytest.raises(ProviderError, match=r"aws us-east-1: DescribeInstances: "
                           r"RequestLimitExceeded: Request limit exceeded"):  # fmt: skip
            east.list_instances()
    assert throttle.seen == 3  # botocore's max_attempts counts the retries: 1 + 2


def test_a_concurrent_survey_rides_out_throttling_in_every_scope(
    moto_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    throttle = Throttle("DescribeInstances", times=3)
    with throttling_proxy(moto_url, throttle) as proxy:
        scopes = providers(proxy, monkeypatch, attempts=5)
        result = survey(scopes, idle_rule(research_policy()), NOW, concurrency=Concurrency(3))
    assert result.problems == []
    assert [s.instance.region for s in result.seen] == list(REGIONS)
    assert throttle.refused == 3 and throttle.seen == 3 + len(REGIONS)
