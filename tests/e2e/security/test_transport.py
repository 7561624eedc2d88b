"""Prometheus and the Azure price API over the shared client: garbage answers are one
line (and ``unknown`` verdicts), credentials never reach a message or the ledger, a
``file://`` or foreign next-page link is not followed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from gpuplan.core.catalog.offers import Provider
from gpuplan.core.lifecycle.instances import Capability, GpuInstance, InstanceState
from gpuplan.core.policy import Policy
from gpuplan.ledger import Ledger
from gpuplan.providers.azure.retail_prices import fetch_azure_prices
from gpuplan.providers.base import ProviderError
from gpuplan.providers.fake import FakeAdapter
from gpuplan.providers.http import HttpError, Limits, request
from gpuplan.providers.prometheus import PrometheusSource
from gpuplan.usecases.lifecycle.stop_idle import run_stop_idle
from tests.e2e.security.conftest import RawServer

NOW = datetime(2026, 12, 2, 12, 0, tzinfo=UTC)
PASSWORD = "pr0m-s3cret"


def _instance() -> GpuInstance:
    return GpuInstance(
        provider=Provider.AWS,
        account="123456789012",
        region="us-east-1",
        instance_id="i-0garbage",
        instance_type="g5.xlarge",
        state=InstanceState.RUNNING,
        started_at=NOW - timedelta(days=2),
        gpu_count=1,
    )


def _with_password(url: str) -> str:
    return url.replace("http://", f"http://gp:{PASSWORD}@") + "/prom?token=tok3n"


def _fetch(url: str) -> None:
    PrometheusSource(url, attempts=2, backoff_s=0.0, timeout_s=5).fetch_utilisation(
        [_instance()], start=NOW - timedelta(hours=1), end=NOW, period_minutes=5
    )


GARBAGE = [
    (200, "text/html", b"<html><body>Sign in</body></html>", "not JSON (text/html)"),
    (200, "application/json", b'{"status": "success", "data": {"result": [{"metric": '
     b'{"instance_id": "i-0garbage"}, "values": [[1, "abc"]]}]}}', "non-numeric sample"),
    (200, "application/json", b'{"status": "success", "data": {"result": [{"metric": '
     b'{"instance_id": "i-0garbage"}, "values": [["x", "1"]]}]}}', "non-numeric sample"),
    (200, "application/json", b'{"status": "success", "data": {"result": [{"metric": '
     b'{"instance_id": "i-0garbage"}, "values": [[1, "-5"]]}]}}', "out of range"),
    (200, "application/json", b'{"status": "success", "data": {"result": [{"metric": '
     b'{"instance_id": "i-0garbage"}, "values": 5}]}}', "without metric labels or values"),
    (200, "application/json", b'{"status": "success", "data": {"result": "x"}}', "no result"),
    (200, "application/json", b"[1, 2]", "not a Prometheus API answer"),
    (200, "application/json", b'{"status": "success", "data": {"result": [[1]]}}', "without"),
    (500, "text/html", b"<h1>oops</h1>", "not JSON"),
    (302, "text/plain", b"", "redirect"),
    (503, "application/json", b"{}", "HTTP 503"),
    (200, "application/json", b"[" * 50_000 + b"]" * 50_000, "not JSON"),
]  # fmt: skip


@pytest.mark.parametrize(("status", "kind", "body", "needle"), GARBAGE)
def test_prometheus_garbage_is_one_redacted_line(
    raw_server: RawServer, status: int, kind: str, body: bytes, needle: str
) -> None:
    raw_server.status, raw_server.body = status, body
    raw_server.headers = {"Content-Type": kind, "Location": "http://169.254.169.254/"}
    with pytest.raises(ProviderError) as caught:
        _fetch(_with_password(raw_server.url))
    message = str(caught.value)
    assert needle in message and "\n" not in message
    assert PASSWORD not in message and "tok3n" not in message


def test_garbage_makes_unknown_verdicts_and_no_secret_in_the_ledger(
    raw_server: RawServer, tmp_path: Path
) -> None:
    raw_server.headers = {"Content-Type": "text/html"}
    raw_server.body = b"<html>login</html>"
    source = PrometheusSource(_with_password(raw_server.url), attempts=1, timeout_s=5)
    fake = FakeAdapter(Provider.AWS, [_instance()], capabilities=tuple(Capability), metrics=source)
    policy = Policy.model_validate(
        {"version": 1, "name": "p", "scope": {"aws": {"regions": ["us-east-1"]}}}
    )
    with Ledger(tmp_path / "l.db") as ledger:
        result = run_stop_idle(policy, [fake], apply=True, now=NOW, ledger=ledger)
        (run,) = ledger.runs()
    assert [o.item.decision.verdict.value for o in result.outcomes] == ["unknown"]
    assert not [c for c in fake.calls if c.method in ("stop", "terminate")]
    stored = json.dumps(run.summary)
    assert "not JSON" in stored and PASSWORD not in stored and "tok3n" not in stored
    assert PASSWORD not in (tmp_path / "l.db").read_bytes().decode("latin-1")


def test_azure_next_page_link_is_followed_only_on_the_endpoint_origin(
    raw_server: RawServer,
) -> None:
    for link in ("file:///etc/passwd", "http://169.254.169.254/latest", "https://evil.example/x"):
        raw_server.body = json.dumps({"Items": [], "NextPageLink": link}).encode()
        raw_server.paths.clear()
        result = fetch_azure_prices(["eastus"], ["Standard_NC6"], endpoint=raw_server.url + "/api")
        assert "eastus" in result.failures and "not followed" in result.failures["eastus"]
        assert len(raw_server.paths) == 1


def test_answers_over_the_size_cap_are_refused(raw_server: RawServer) -> None:
    raw_server.body = b"x" * 100_000
    with pytest.raises(HttpError, match="over the 1000-byte limit"):
        request("GET", raw_server.url, limits=Limits(max_bytes=1000))
