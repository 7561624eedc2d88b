"""Webhook delivery against a local HTTP server: success, HTTP errors, server down, timeout,
and the address rules: https to a public host unless opted in, never link-local, no
redirects, a capped answer, and no secret in any message."""

from __future__ import annotations

import pytest

from gpuplan.core.policy import Notify
from gpuplan.providers.http import HttpError, Limits, request
from gpuplan.providers.webhook import WebhookNotifier, notifier_for, redact_url
from tests.fakes.policy_fixtures import HookServer


def lab(url: str, **kwargs: float) -> WebhookNotifier:
    """A notifier for the loopback test server (http, loopback: needs the opt-in)."""
    return WebhookNotifier(url, allow_insecure=True, **kwargs)


def test_posts_slack_compatible_json(hook_server: HookServer) -> None:
    delivery = lab(hook_server.url).send("budget at 50%", extra={"username": "gp"})
    assert delivery.ok and delivery.status == 200 and delivery.error is None
    [got] = hook_server.received
    assert got["body"] == {"text": "budget at 50%", "username": "gp"}
    assert got["type"] == "application/json"


def test_http_error_is_reported_not_raised(hook_server: HookServer) -> None:
    hook_server.status = 500
    delivery = lab(hook_server.url).send("x")
    assert not delivery.ok and delivery.status == 500
    assert delivery.error is not None and "HTTP 500" in delivery.error
    assert "secret" not in delivery.error  # the URL's token is never printed


def test_server_down_is_reported_not_raised(closed_port_url: str) -> None:
    delivery = lab(closed_port_url, timeout=2).send("x")
    assert not delivery.ok and delivery.status is None
    assert delivery.error is not None and "unreachable" in delivery.error


def test_slow_server_times_out(hook_server: HookServer) -> None:
    hook_server.delay_s = 1.0
    delivery = lab(hook_server.url, timeout=0.2).send("x")
    assert not delivery.ok
    assert delivery.error is not None and "no answer within" in delivery.error


def test_redact_hides_path_and_query() -> None:
    assert (
        redact_url("https://hooks.slack.com/services/T/B/XYZ?a=1") == "https://hooks.slack.com/..."
    )
    assert redact_url("http://127.0.0.1:8080/x") == "http://127.0.0.1:8080/..."
    assert redact_url("not a url") == "<webhook>"


def test_without_the_opt_in_http_and_loopback_are_refused_before_any_call(
    hook_server: HookServer,
) -> None:
    delivery = WebhookNotifier(hook_server.url).send("x")
    assert not delivery.ok and hook_server.received == []
    assert delivery.error is not None and "https" in delivery.error
    assert "secret" not in delivery.error
    https_loopback = hook_server.url.replace("http://", "https://")
    delivery = WebhookNotifier(https_loopback).send("x")
    assert delivery.error is not None and "not public" in delivery.error


@pytest.mark.parametrize(
    "url",
    [
        "http://169.254.169.254/latest/meta-data/",
        "https://169.254.169.254/x",
        "http://[fe80::1]/x",
        "http://[::ffff:169.254.169.254]/x",
    ],
)
def test_link_local_is_refused_even_with_the_opt_in(url: str) -> None:
    delivery = WebhookNotifier(url, allow_insecure=True).send("x")
    assert not delivery.ok and delivery.error is not None and "link-local" in delivery.error


def test_a_redirect_is_not_followed(hook_server: HookServer) -> None:
    target = HookServer()
    try:
        hook_server.location = target.url
        delivery = lab(hook_server.url).send("x")
        assert not delivery.ok and delivery.status == 302
        assert delivery.error is not None and "redirect" in delivery.error
        assert target.received == []
    finally:
        target.close()


def test_an_oversized_answer_is_refused(hook_server: HookServer) -> None:
    hook_server.body = b"x" * 100_000
    delivery = lab(hook_server.url).send("x")
    assert not delivery.ok and delivery.error is not None and "limit" in delivery.error


def test_public_only_resolves_and_refuses_private_addresses(hook_server: HookServer) -> None:
    with pytest.raises(HttpError, match="not a public address") as caught:
        request(
            "POST", hook_server.url, limits=Limits(public_only=True, hide_path=True), json_body={}
        )
    assert "secret" not in caught.value.message
    assert hook_server.received == []


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "gopher://example.org/x", "ftp://example.org/x", "http://"]
)
def test_only_http_and_https_ever_reach_a_socket(url: str) -> None:
    with pytest.raises(HttpError):
        request("GET", url, limits=Limits())


def test_notifier_for_carries_the_policy_opt_in() -> None:
    assert notifier_for(Notify()) is None
    made = notifier_for(
        Notify(webhook_url="http://chat.lab:8065/hooks/x", allow_insecure_webhook=True)
    )
    assert made is not None and made.allow_insecure
