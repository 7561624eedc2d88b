"""Slack-compatible webhook messages: a JSON POST of ``{"text": ...}`` with a timeout.

Promise: ``send`` never raises for network or HTTP trouble; it returns a
:class:`Delivery` that says what happened, so a run reports a failed alert and goes on.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from gpuplan import __version__

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
    """The URL with its secret parts hidden: ``https://hooks.slack.com/...``."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.hostname:
        return "<webhook>"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{parts.hostname}{port}/..."


class WebhookNotifier:
    """Posts messages to one incoming-webhook URL (Slack, Mattermost, Teams workflows)."""

    def __init__(self, url: str, *, timeout: float = DEFAULT_TIMEOUT_S) -> None:
        self.url = url
        self.timeout = timeout

    def send(self, text: str, *, extra: dict[str, Any] | None = None) -> Delivery:
        body = json.dumps({"text": text, **(extra or {})}).encode("utf-8")
        request = urllib.request.Request(
            self.url,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": f"gpuplan/{__version__}",
            },
        )
        where = redact_url(self.url)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            return Delivery(False, exc.code, f"{where} answered HTTP {exc.code} {exc.reason}")
        except urllib.error.URLError as exc:
            return Delivery(False, None, f"{where} unreachable: {exc.reason}")
        except TimeoutError:
            return Delivery(False, None, f"{where} did not answer within {self.timeout:g}s")
        except (OSError, ValueError) as exc:
            return Delivery(False, None, f"{where}: {exc}")
        return Delivery(True, status)
