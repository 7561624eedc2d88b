"""Webhook delivery against a local HTTP server: success, HTTP errors, server down, timeout."""

from __future__ import annotations

from gpuplan.providers.webhook import WebhookNotifier, redact_url
from tests.policy.conftest import HookServer


def test_posts_slack_compatible_json(hook_server: HookServer) -> None:
    delivery = WebhookNotifier(hook_server.url).send("budget at 50%", extra={"username": "gp"})
    assert delivery.ok and delivery.status == 200 and delivery.error is None
    [got] = hook_server.received
    assert got["body"] == {"text": "budget at 50%", "username": "gp"}
    assert got["type"] == "application/json"


def test_http_error_is_reported_not_raised(hook_server: HookServer) -> None:
    hook_server.status = 500
    delivery = WebhookNotifier(hook_server.url).send("x")
    assert not delivery.ok and delivery.status == 500
    assert delivery.error is not None and "HTTP 500" in delivery.error
    assert "secret" not in delivery.error  # the URL's token is never printed


def test_server_down_is_reported_not_raised(closed_port_url: str) -> None:
    delivery = WebhookNotifier(closed_port_url, timeout=2).send("x")
    assert not delivery.ok and delivery.status is None
    assert delivery.error is not None and "unreachable" in delivery.error


def test_slow_server_times_out(hook_server: HookServer) -> None:
    hook_server.delay_s = 1.0
    delivery = WebhookNotifier(hook_server.url, timeout=0.2).send("x")
    assert not delivery.ok
    assert delivery.error is not None
    assert "did not answer" in delivery.error or "timed out" in delivery.error


def test_redact_hides_path_and_query() -> None:
    assert (
        redact_url("https://hooks.slack.com/services/T/B/XYZ?a=1") == "https://hooks.slack.com/..."
    )
    assert redact_url("http://127.0.0.1:8080/x") == "http://127.0.0.1:8080/..."
    assert redact_url("not a url") == "<webhook>"
