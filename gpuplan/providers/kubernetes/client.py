"""The lightkube client of one cluster, and every API call made through :func:`call`.

:func:`call` turns the client's errors into one readable :class:`ProviderError`
(403 names the verb and resource RBAC refused; 409 says the object changed) and retries a
429 or 503 after the server's ``Retry-After`` (at most :data:`MAX_WAIT_S` each time,
:data:`ATTEMPTS` tries). Nothing here prints a token or a kubeconfig's content.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from gpuplan.providers.base import ProviderError

T = TypeVar("T")
ATTEMPTS = 4
MAX_WAIT_S = 30.0
TRANSIENT = (429, 503)
MAX_KUBECONFIG_BYTES = 4 * 1024 * 1024


def make_client(kubeconfig: str | None, context: str | None, *, in_cluster: bool) -> Any:
    """A lightkube ``Client`` for one context (or the service account in a pod)."""
    from lightkube import Client, KubeConfig
    from lightkube.core.exceptions import ConfigError

    try:
        if in_cluster:
            config = KubeConfig.from_service_account()  # type: ignore[no-untyped-call]
        else:
            path = Path(kubeconfig).expanduser() if kubeconfig else _default_path()
            if path.stat().st_size > MAX_KUBECONFIG_BYTES:
                raise ProviderError(f"{path}: kubeconfig larger than 4 MiB")
            config = KubeConfig.from_file(path)  # type: ignore[no-untyped-call]
            config.get(context)  # an unknown context fails here, with its name
        single = config.get(None if in_cluster else context)
        return Client(
            single, trust_env=False, field_manager="gpuplan", transport=_transport(single)
        )
    except (ConfigError, OSError, ValueError) as exc:
        where = "in-cluster service account" if in_cluster else f"context {context or '(current)'}"
        raise ProviderError(f"kubernetes {where}: {str(exc)[:200]}") from None


def kubeconfig_contexts(path: Path) -> tuple[list[str], str]:
    """The context names in the kubeconfig at ``path`` and its ``current-context``.

    OSError when it cannot be read; ValueError (one line) when it is larger than
    :data:`MAX_KUBECONFIG_BYTES` or not a kubeconfig. Nothing of its content but context
    names is said (tokens and keys live in it)."""
    import yaml

    with path.open("rb") as f:
        raw = f.read(MAX_KUBECONFIG_BYTES + 1)
    if len(raw) > MAX_KUBECONFIG_BYTES:
        raise ValueError("larger than 4 MiB")
    try:
        doc = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise ValueError(f"not YAML{where}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("contexts", []), list):
        raise ValueError("not a kubeconfig (expected a mapping with a contexts list)")
    names = [
        str(c["name"])
        for c in doc.get("contexts") or []
        if isinstance(c, dict) and isinstance(c.get("name"), str)
    ]
    current = doc.get("current-context")
    return names, current if isinstance(current, str) else ""


def default_kubeconfig() -> Path:
    """``$KUBECONFIG``'s first file, else ``~/.kube/config``."""
    return _default_path()


def _transport(single: Any) -> Any:
    """The cluster's TLS (its CA, a client certificate) without keep-alive: a run makes a
    few dozen calls, and no connection outlives its answer (none is left open at exit)."""
    import httpx
    from lightkube.config.client_adapter import verify_cluster

    verify = verify_cluster(single.cluster, single.user, single.abs_file, trust_env=False)
    return httpx.HTTPTransport(verify=verify, limits=httpx.Limits(max_keepalive_connections=0))


def _default_path() -> Path:
    import os

    env = os.environ.get("KUBECONFIG", "")
    first = env.split(os.pathsep)[0] if env else ""
    return Path(first) if first else Path.home() / ".kube" / "config"


def call(what: str, fn: Callable[[], T], *, sleep: Callable[[float], None] = time.sleep) -> T:
    """``fn()``, retried on 429/503 after ``Retry-After``; errors as ProviderError."""
    import httpx
    from lightkube.core.exceptions import ApiError

    for attempt in range(ATTEMPTS):
        try:
            return fn()
        except ApiError as exc:
            code = exc.status.code or 0
            if code in TRANSIENT and attempt + 1 < ATTEMPTS:
                sleep(_retry_after(exc.response.headers.get("retry-after"), attempt))
                continue
            raise ProviderError(_message(what, code, exc.status.message or "")) from None
        except httpx.HTTPError as exc:
            raise ProviderError(f"kubernetes: {what}: {type(exc).__name__}: {exc}"[:300]) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _retry_after(header: str | None, attempt: int) -> float:
    try:
        wait = float(header) if header is not None else 2.0**attempt
    except ValueError:
        wait = 2.0**attempt
    return min(max(wait, 0.0), MAX_WAIT_S) if wait == wait else 1.0


def _message(what: str, code: int, message: str) -> str:
    text = message[:200]
    if code == 403:
        return (
            f"kubernetes: {what}: forbidden (RBAC): {text}; see "
            "deploy/kubernetes-gpuplan-clusterrole.yaml"
        )
    if code == 409:
        return f"kubernetes: {what}: conflict: the object changed since it was read ({text})"
    if code == 429:
        return f"kubernetes: {what}: still throttled (429) after {ATTEMPTS} tries"
    return f"kubernetes: {what}: HTTP {code}: {text}"
