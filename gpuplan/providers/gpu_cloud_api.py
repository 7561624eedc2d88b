"""What the GPU clouds' price APIs share: the key from the environment, one JSON call.

Each GPU cloud's price API (Lambda's instance types, RunPod's GraphQL, Vast.ai's offer
search) answers one JSON document through :mod:`gpuplan.providers.http` (timeouts,
retries, no redirects, a size cap, redacted messages). A key goes in the
``Authorization`` header only, never in a URL, a message or a log; a cloud whose API
needs a key the environment does not give raises
:class:`~gpuplan.core.catalog.refresh.NotConfigured`, which ``catalog refresh`` reports as one
line and a skipped provider, not a failure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuplan.core.catalog.refresh import NotConfigured
from gpuplan.providers import http

LIMITS = http.Limits(read_s=30.0, attempts=3, max_bytes=32 * 1024 * 1024, trust_env=True)


def api_key(environ: Mapping[str, str], variable: str, cloud: str) -> str:
    """The key in ``variable``; :class:`NotConfigured` (naming the variable) without one."""
    key = environ.get(variable, "").strip()
    if not key:
        raise NotConfigured(
            f"{variable} is not set: {cloud}'s price API needs an API key; "
            "the bundled prices stay as they are"
        )
    return key


def call_json(
    method: str,
    url: str,
    *,
    key: str | None = None,
    body: Any = None,
) -> Any:
    """One call answered with JSON; :class:`~gpuplan.providers.http.HttpError` otherwise."""
    headers = {"Accept": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    response = http.request(method, url, limits=LIMITS, json_body=body, headers=headers)
    return http.decode_json(response, url, ok_only=True)


def shape_error(url: str, what: str) -> http.HttpError:
    """An answer of the wrong shape, as one line naming the (redacted) URL."""
    from gpuplan.providers.url_parts import redact_url

    return http.HttpError(f"{redact_url(url)}: unexpected answer: {what}")
