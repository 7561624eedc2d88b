"""The one HTTP client of gpuplan's own calls: webhook, Prometheus, Azure retail prices.

Built on httpx, with the same guard rails for every caller:

- one parser: a URL is split once, by httpx (the parser that fetches it, and the one
  ``policy check`` uses: :mod:`gpuplan.providers.url_parts`), and those parts
  are judged by :func:`gpuplan.core.urls.checked` (only ``http`` and ``https``, a sane
  host and port) and then fetched; ``file://`` and friends never reach a socket;
- explicit timeouts (connect, read, write, pool) and a bounded number of attempts for
  transient answers only (429, 502, 503, 504, connection errors and timeouts), spaced by
  exponential backoff with full jitter (a random wait between 0 and the backoff, so many
  runs failing together do not come back together), or by the server's ``Retry-After``
  (seconds or an HTTP date) when it sends one; a wait over :data:`MAX_BACKOFF_S` is not
  made: the call fails at once and says why;
- a call that must not arrive twice (``Limits.idempotent=False``: the webhook's POST) is
  tried again only when the connection failed before a byte of it was sent; an answer,
  even a 502/503/504 from a proxy whose upstream may have the message, ends it;
- one connection pool per run (one :class:`httpx.Client` per proxy setting), so pages of
  one API share a TLS session instead of a handshake per attempt and per page;
- redirects are never followed: a 3xx answer is an error;
- the body is read in chunks and refused past ``max_bytes`` (a ``Content-Length``
  above the cap is refused before reading);
- ``public_only`` (the webhook): the host is resolved once, every address must be
  global, and the connection goes to the address that was checked (the Host header and
  TLS server name stay the URL's): no second lookup, so no DNS-rebinding window;
  link-local addresses (cloud metadata services) are refused whatever the setting;
- every message names the URL redacted (:func:`gpuplan.providers.url_parts.redact_url`), so no
  password, query or token ends up on a terminal, in a log or in the ledger.

Environment proxies and ``.netrc`` are ignored unless ``trust_env`` is set (the price
API, which is public, sets it: a corporate proxy is a real need).

Retries are this module's own small loop rather than tenacity or httpx's transport
``retries=``: the transport retries only failed connects, with no status codes and no
``Retry-After``; tenacity would add a dependency and still need our own wait (Retry-After)
and our own rule for what a non-idempotent call may retry.
"""

from __future__ import annotations

import atexit
import email.utils
import ipaddress
import json
import os
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from gpuplan import __version__
from gpuplan.core.urls import Url, is_link_local
from gpuplan.core.wording import plural
from gpuplan.providers.url_parts import redact_url, redact_webhook, target_of

if TYPE_CHECKING:
    import httpx  # imported on the first call: a dry run that calls nothing never loads it

TRANSIENT = frozenset({429, 502, 503, 504})
MAX_BACKOFF_S = 30.0
"""The longest wait between two attempts, whether backoff or the server's Retry-After."""


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
    idempotent: bool = True
    """False: tried again only when nothing of the request was sent (a failed connect)."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes
    content_type: str
    retry_after: str = ""


Sleep = Callable[[float], None]
Jitter = Callable[[float, float], float]
Clock = Callable[[], datetime]


def _now() -> datetime:
    return datetime.now(UTC)


def request(
    method: str,
    url: str,
    *,
    limits: Limits,
    data: Mapping[str, str] | None = None,
    json_body: Any = None,
    headers: Mapping[str, str] | None = None,
    sleep: Sleep = time.sleep,
    jitter: Jitter = random.uniform,
    clock: Clock = _now,
) -> Response:
    """One call with retries for transient trouble; :class:`HttpError` when it fails."""
    shown = _shown(url, limits)
    target, parts = split(url, shown)
    _judge(parts, shown)
    pin = _resolve_public(parts, shown) if limits.public_only else None
    tries = max(1, limits.attempts)
    last, status, attempt = "", None, 0
    for attempt in range(1, tries + 1):
        try:
            response = _once(method, target, pin, limits, data, json_body, headers, shown)
        except _Transient as exc:
            last, status = exc.reason, None
            if attempt == tries or not (limits.idempotent or exc.unsent):
                break
            sleep(backoff(attempt, limits.backoff_s, jitter))
            continue
        if response.status not in TRANSIENT or not limits.idempotent:
            return response
        last, status = f"HTTP {response.status}", response.status
        if attempt == tries:
            break
        sleep(_wait(response, attempt, limits, jitter, clock, shown))
    raise HttpError(f"{shown}: {last} (after {plural(attempt, 'attempt')})", status=status)


def backoff(retry: int, base_s: float, jitter: Jitter = random.uniform) -> float:
    """The wait before retry number ``retry`` (1, 2, ...): full jitter, a random time
    between 0 and ``base_s * 2**(retry-1)``, capped at :data:`MAX_BACKOFF_S`."""
    return jitter(0.0, min(MAX_BACKOFF_S, base_s * 2 ** (retry - 1)))


def retry_after_s(value: str, now: datetime) -> float | None:
    """Seconds a ``Retry-After`` header asks for (delay-seconds or an HTTP date, RFC 9110
    10.2.3); None when it is absent or unreadable. A date in the past is 0."""
    text = value.strip()
    if not text:
        return None
    if text.isascii() and text.isdigit():
        return float(int(text[:12]))
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - now).total_seconds())


def _wait(
    response: Response, retry: int, limits: Limits, jitter: Jitter, clock: Clock, shown: str
) -> float:
    asked = retry_after_s(response.retry_after, clock())
    if asked is None:
        return backoff(retry, limits.backoff_s, jitter)
    if asked > MAX_BACKOFF_S:
        raise HttpError(
            f"{shown}: HTTP {response.status}, and the server asks to wait {asked:.0f}s "
            f"(Retry-After), over the {MAX_BACKOFF_S:g}s this client waits; try later",
            status=response.status,
        )
    return asked


def split(url: str, shown: str) -> tuple[httpx.URL, Url]:
    """``url`` split by httpx (the parser that will fetch it) and its parts, checked by
    :func:`gpuplan.core.urls.checked` (:func:`gpuplan.providers.url_parts.target_of`, the
    split ``policy check`` uses too); :class:`HttpError` when they break a rule."""
    try:
        return target_of(url)
    except ValueError as exc:
        raise HttpError(f"{shown}: {exc}") from None


def origin(url: str) -> str | None:
    """``scheme://host[:port]`` of ``url`` as httpx splits it; None when it is refused."""
    try:
        return split(url, "")[1].origin()
    except HttpError:
        return None


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
    """Connection trouble worth another attempt; ``unsent``: no byte of the request left."""

    def __init__(self, reason: str, *, unsent: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unsent = unsent


def _shown(url: str, limits: Limits) -> str:
    return redact_webhook(url) if limits.hide_path else redact_url(url)


def _judge(parts: Url, shown: str) -> None:
    if is_link_local(parts):
        raise HttpError(f"{shown}: link-local addresses are never called")


def _resolve_public(url: Url, shown: str) -> str:
    """The one address the call will connect to: ``url``'s host resolved once, every
    address it resolves to global (not loopback, private, link-local, multicast ...)."""
    port = url.port or (443 if url.scheme == "https" else 80)
    try:
        infos = socket.getaddrinfo(url.host.strip("[]"), port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise HttpError(f"{shown}: cannot resolve the host ({exc})") from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    for address in addresses:
        if not address.is_global or address.is_multicast:
            raise HttpError(
                f"{shown}: the host resolves to {address}, which is not a public address; "
                "refused (notify.allow_insecure_webhook: true allows it)"
            )
    if not addresses:
        raise HttpError(f"{shown}: cannot resolve the host (no address)")
    return str(addresses[0])


_CLIENTS: dict[tuple[bool, tuple[str | None, ...], str], httpx.Client] = {}
_CLIENTS_LOCK = threading.Lock()
_ENV_SETTINGS = (
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR",
)  # fmt: skip


def client(trust_env: bool, pinned: str = "") -> httpx.Client:
    """The run's shared client (connection pool) for this proxy setting. A client that
    trusts the environment reads its proxies when made, so a changed proxy setting (a
    test's fake proxy) gets a new client and the old one is closed. ``pinned`` (a name
    and the address it was checked at) gets a pool of its own: a pinned connection is
    opened to an address, so a pool shared by two names at one address would send the
    second name over a TLS session verified for the first."""
    settings = (
        tuple(os.environ.get(n) or os.environ.get(n.lower()) for n in _ENV_SETTINGS)
        if trust_env
        else ()
    )
    key = (trust_env, settings, pinned)
    import httpx

    with _CLIENTS_LOCK:
        found = _CLIENTS.get(key)
        if found is None or found.is_closed:
            for old in [k for k in _CLIENTS if k[0] == trust_env and k[1] != settings]:
                _CLIENTS.pop(old).close()
            found = httpx.Client(follow_redirects=False, trust_env=trust_env)
            _CLIENTS[key] = found
        return found


@atexit.register
def close_clients() -> None:
    """Close the shared clients (at exit; a test may call it to start from no pool)."""
    with _CLIENTS_LOCK:
        for each in _CLIENTS.values():
            each.close()
        _CLIENTS.clear()


def _once(
    method: str,
    target: httpx.URL,
    pin: str | None,
    limits: Limits,
    data: Mapping[str, str] | None,
    json_body: Any,
    headers: Mapping[str, str] | None,
    shown: str,
) -> Response:
    import httpx

    timeout = httpx.Timeout(limits.read_s, connect=limits.connect_s)
    sent = {"User-Agent": f"gpuplan/{__version__}", **(headers or {})}
    extensions: dict[str, Any] = {}
    pinned = ""
    if pin is not None:
        # Connect to the checked address; the Host header and TLS name stay the URL's.
        sent["Host"] = target.netloc.decode("ascii")
        # The ASCII name the URL resolves to (IDNA 2008, as the Host header): given the
        # Unicode name, ssl would encode it with IDNA 2003 (straße -> strasse).
        name = target.raw_host.decode("ascii")
        extensions["sni_hostname"] = name
        pinned = f"{name}@{pin}"
        target = target.copy_with(host=pin)
    try:
        with client(limits.trust_env, pinned).stream(
            method,
            target,
            data=data,
            json=json_body,
            headers=sent,
            timeout=timeout,
            extensions=extensions,
        ) as answer:
            if answer.is_redirect or 300 <= answer.status_code < 400:
                raise HttpError(
                    f"{shown}: answered a redirect (HTTP {answer.status_code}); "
                    "redirects are not followed",
                    status=answer.status_code,
                )
            body = _bounded_body(answer, limits.max_bytes, shown)
            return Response(
                answer.status_code,
                body,
                answer.headers.get("content-type", ""),
                answer.headers.get("retry-after", ""),
            )
    except (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout) as exc:
        raise _Transient(_reason(exc, limits), unsent=True) from None
    except (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError) as exc:
        raise _Transient(_reason(exc, limits), unsent=False) from None
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
    import httpx

    if isinstance(exc, httpx.TimeoutException):
        return f"no answer within {limits.read_s:g}s (connect {limits.connect_s:g}s)"
    detail = str(exc)
    if isinstance(exc, httpx.ConnectError):
        return "cannot connect" + (f" ({detail})" if detail and "://" not in detail else "")
    name = type(exc).__name__
    return f"{name} during the call"
