"""Slack-compatible webhook messages: a JSON POST of ``{"text": ...}`` with a timeout.

Promise: ``send`` never raises for network or HTTP trouble; it returns a
:class:`Delivery` that says what happened, so a run reports a failed alert and goes on.
The call goes through :mod:`gpuplan.providers.http`: https to a public address only
(unless ``allow_insecure``, the policy's ``notify.allow_insecure_webhook``), never a
link-local one, no redirects, explicit timeouts, and every message shows the URL's
origin only (the path of a webhook URL is its secret). The URL is judged on the parts
httpx splits it into (the parts it fetches), and the POST is sent again only when the
first attempt could not connect: an answer, even a 502/503/504, ends it, so one alert
never arrives twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from gpuplan.core.policy import Notify
from gpuplan.core.urls import webhook_url_problem
from gpuplan.providers.http import HttpError, Limits, request, split
from gpuplan.providers.url_parts import redact_webhook

DEFAULT_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Delivery:
    """How sending one message went."""

    ok: bool
    status: int | None = None
    error: str | None = None


class Notifier(Protocol):
    """Anything that can deliver a text message (the webhook, or a test's recorder)."""

    def send(self, text: str, *, extra: dict[str, Any] | None = None) -> Delivery: ...


def redact_url(url: str) -> str:
    """The webhook URL with its secret parts hidden: ``https://hooks.slack.com/...``."""
    return redact_webhook(url)


class WebhookNotifier:
    """Posts messages to one incoming-webhook URL (Slack, Mattermost, Teams workflows)."""

    def __init__(
        self, url: str, *, timeout: float = DEFAULT_TIMEOUT_S, allow_insecure: bool = False
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.allow_insecure = allow_insecure

    def send(self, text: str, *, extra: dict[str, Any] | None = None) -> Delivery:
        where = redact_url(self.url)
        try:
            parts = split(self.url, where)[1]
        except HttpError as exc:
            return Delivery(False, None, f"{where}: not sent: {exc.message}")
        refused = webhook_url_problem(parts, where, allow_insecure=self.allow_insecure)
        if refused is not None:
            return Delivery(False, None, f"{where}: not sent: {refused}")
        limits = Limits(
            connect_s=min(self.timeout, 5.0),
            read_s=self.timeout,
            # A POST is not idempotent: a second attempt only when the first never
            # connected (nothing sent), so one alert never arrives twice.
            attempts=2,
            backoff_s=0.5,
            idempotent=False,
            max_bytes=64 * 1024,
            public_only=not self.allow_insecure,
            hide_path=True,
        )
        try:
            response = request(
                "POST", self.url, limits=limits, json_body={"text": text, **(extra or {})}
            )
        except HttpError as exc:
            detail = exc.message.split(": ", 1)[-1]
            return Delivery(False, exc.status, f"{where} unreachable or refused: {detail}")
        if not 200 <= response.status < 300:
            return Delivery(False, response.status, f"{where} answered HTTP {response.status}")
        return Delivery(True, response.status)


def notifier_for(notify: Notify) -> WebhookNotifier | None:
    """The policy's webhook (with its insecure opt-in), or None when it names none."""
    if notify.webhook_url is None:
        return None
    return WebhookNotifier(notify.webhook_url, allow_insecure=notify.allow_insecure_webhook)
