"""Where a policy may send things: the URL rules that span keys of a policy.

The webhook must be https to a public host unless ``notify.allow_insecure_webhook``
opts in (see :mod:`gpuplan.core.urls`). No URL of a policy (cloud API endpoints,
Prometheus) may point at a link-local address: the cloud metadata service lives there,
and credentials or tokens sent to it, or answers read from it, are never wanted. Every
problem message shows URLs redacted.
"""

from __future__ import annotations

from gpuplan.core.policy.models import Policy
from gpuplan.core.policy.rules import KeyPath, PolicyProblem
from gpuplan.core.urls import is_link_local, parse_url, redact_url, webhook_problem


def url_problems(policy: Policy) -> list[PolicyProblem]:
    """Problems with the policy's outgoing URLs; empty when every one is allowed."""
    problems: list[PolicyProblem] = []
    notify = policy.notify
    if notify.webhook_url is not None:
        problem = webhook_problem(notify.webhook_url, allow_insecure=notify.allow_insecure_webhook)
        if problem is not None:
            problems.append(PolicyProblem(("notify", "webhook_url"), problem))
    for path, url in _other_urls(policy):
        if is_link_local(parse_url(url)):
            problems.append(
                PolicyProblem(
                    path,
                    f"{redact_url(url)}: a link-local address (cloud metadata service) is "
                    "never called",
                )
            )
    return problems


def _other_urls(policy: Policy) -> list[tuple[KeyPath, str]]:
    found: list[tuple[KeyPath, str | None]] = []
    # Every cloud with a section, built in or registered: an endpoint field of any of
    # them (``*_endpoint``) is an outgoing URL, whoever defined the section.
    for provider in policy.scope.providers:
        section = policy.scope.section(provider)
        if section is None:
            continue
        for key in type(section).model_fields:
            if key.endswith("_endpoint"):
                value = getattr(section, key)
                url = None if value is None else str(value)
                found.append((("scope", provider.value, key), url))
    prometheus = policy.idle.metrics.prometheus
    if prometheus is not None:
        found.append((("idle", "metrics", "prometheus", "url"), prometheus.url))
    return [(path, url) for path, url in found if url is not None]
