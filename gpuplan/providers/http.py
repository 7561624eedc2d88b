"""The one HTTP client of gpuplan's own calls: webhook, Prometheus, Azure retail prices.

Built on httpx, with the same guard rails for every caller:

- only ``http`` and ``https`` URLs, each parsed completely first
  (:func:`gpuplan.core.urls.parse_url`); ``file://`` and friends never reach a socket;
- explicit timeouts (connect, read, write, pool) and a bounded number of attempts, with
  exponential backoff, for transient answers only (429, 502, 503, 504, connection
  errors and timeouts);
- redirects are never followed: a 3xx answer is an error;
- the body is read in chunks and refused past ``max_bytes`` (a ``Content-Length``
  above the cap is refused before reading);
- ``public_only`` (the webhook): every address the host resolves to must be global;
  link-local addresses (cloud metadata services) are refused whatever the setting;
- every message names the URL redacted (:func:`gpuplan.core.urls.redact_url`), so no
  password, query or token ends up on a terminal, in a log or in the ledger.

Environment proxies and ``.netrc`` are ignored unless ``trust_env`` is set (the price
API, which is public, sets it: a corporate proxy is a real need).
"""

from __future__ import annotations

import ipaddress
import json
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from gpuplan import __version__
from gpuplan.core.urls import Url, is_link_local, parse_url, redact_url, redact_webhook
from gpuplan.core.wording import plural

TRANSIENT = frozenset({429, 502, 503, 504})
MAX_BACKOFF_S = 30.0


class HttpError(Exception):
    """A call that did not give a usable answer; the message is redacted and one line."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


@dataclass(frozen=True)
class Limits:
    """How long, how often and how much one call may take."""

    connect_s: float = 5.0
    read_s: float = 30.0
    attempts: int = 3
    backoff_s: float = 1.0
    max_bytes: int = 16 * 1024 * 1024
    public_only: bool = False
    trust_env: bool = False
    hide_path: bool = False
    """Show only the origin in messages (a webhook URL's whole path is its secret)."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str


Sleep = Callable[[float], None]


def request(
    method: str,
    url: str,
    *,
    limits: Limits,
    data: Mapping[str, str] | None = None,
    json_body: Any = None,
    headers: Mapping[str, str] | None = None,
    sleep: Sleep = time.sleep,
) -> Response:
    """One call with retries for transient trouble; :class:`HttpError` when it fails."""
    shown = _shown(url, limits)
    _checked(url, limits, shown)
    last = ""
    for attempt in range(max(1, limits.attempts)):
        if attempt:
            sleep(min(MAX_BACKOFF_S, limits.backoff_s * 2 ** (attempt - 1)))
        try:
            response = _once(method, url, limits, data, json_body, headers, shown)
        except _Transient as exc:
            last = str(exc)
            continue
        if response.status in TRANSIENT:
            last = f"HTTP {response.status}"
            continue
        return response
    raise HttpError(f"{shown}: {last} (after {plural(max(1, limits.attempts), 'attempt')})")


def decode_json(
    response: Response,
    url: str,
    *,
    ok_only: bool,
    parse_float: Callable[[str], Any] | None = None,
) -> Any:
    """The JSON in ``response``; HTML, truncated or binary bodies are one-line errors."""
    shown = redact_url(url)
    if ok_only and not 200 <= response.status < 300:
        raise HttpError(f"{shown}: answered HTTP {response.status}", status=response.status)
    try:
        return json.loads(response.body.decode("utf-8"), parse_float=parse_float)
    except (UnicodeDecodeError, ValueError, RecursionError):
        kind = response.content_type.split(";")[0].strip() or "no content type"
        raise HttpError(
            f"{shown}: answered HTTP {response.status} with something that is not JSON ({kind})",
            status=response.status,
        ) from None


class _Transient(Exception):
    """Connection trouble worth another attempt."""


def _shown(url: str, limits: Limits) -> str:
    return redact_webhook(url) if limits.hide_path else redact_url(url)


def _checked(url: str, limits: Limits, shown: str) -> Url:
    try:
        parsed = parse_url(url)
    except ValueError as exc:
        raise HttpError(f"{shown}: {exc}") from None
    if is_link_local(parsed):
        raise HttpError(f"{shown}: link-local addresses are never called")
    if limits.public_only:
        _require_public(parsed, shown)
    return parsed


def _require_public(url: Url, shown: str) -> None:
    """Every address ``url``'s host resolves to is global (not loopback, private, ...)."""
    try:
        infos = socket.getaddrinfo(url.host.strip("[]"), url.port or 443, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise HttpError(f"{shown}: cannot resolve the host ({exc})") from None
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if not address.is_global or address.is_multicast:
            raise HttpError(
                f"{shown}: the host resolves to {address}, which is not a public address; "
                "refused (notify.allow_insecure_webhook: true allows it)"
            )


def _once(
    method: str,
    url: str,
    limits: Limits,
    data: Mapping[str, str] | None,
    json_body: Any,
    headers: Mapping[str, str] | None,
    shown: str,
) -> Response:
    timeout = httpx.Timeout(limits.read_s, connect=limits.connect_s)
    sent = {"User-Agent": f"gpuplan/{__version__}", **(headers or {})}
    try:
        with (
            httpx.Client(
                timeout=timeout, follow_redirects=False, trust_env=limits.trust_env
            ) as client,
            client.stream(method, url, data=data, json=json_body, headers=sent) as answer,
        ):
            if answer.is_redirect or 300 <= answer.status_code < 400:
                raise HttpError(
                    f"{shown}: answered a redirect (HTTP {answer.status_code}); "
                    "redirects are not followed",
                    status=answer.status_code,
                )
            body = _bounded_body(answer, limits.max_bytes, shown)
            return Response(answer.status_code, body, answer.headers.get("content-type", ""))
    except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
        raise _Transient(_reason(exc, limits)) from None
    except (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError) as exc:
        raise HttpError(f"{shown}: {_reason(exc, limits)}") from None


def _bounded_body(answer: httpx.Response, cap: int, shown: str) -> bytes:
    declared = answer.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise HttpError(f"{shown}: answer of {declared} bytes is over the {cap}-byte limit")
    chunks: list[bytes] = []
    total = 0
    for chunk in answer.iter_bytes():
        total += len(chunk)
        if total > cap:
            raise HttpError(f"{shown}: answer is over the {cap}-byte limit; not read further")
        chunks.append(chunk)
    return b"".join(chunks)


def _reason(exc: Exception, limits: Limits) -> str:
    if isinstance(exc, httpx.TimeoutException):
        return f"no answer within {limits.read_s:g}s (connect {limits.connect_s:g}s)"
    detail = str(exc)
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect" + (f" ({detail})" if detail and "://" not in detail else "")
    name = type(exc).__name__
    return f"{name} during the call"
