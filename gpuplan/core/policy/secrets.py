"""Where a policy may send things: the URL rules that span keys of a policy.

The webhook must be https to a public host unless ``notify.allow_insecure_webhook``
opts in (see :mod:`gpuplan.core.urls`). No URL of a policy (cloud API endpoints,
Prometheus) may point at a link-local address: the cloud metadata service lives there,
and credentials or tokens sent to it, or answers read from it, are never wanted. Every
problem message shows URLs redacted. The URLs are split by the edge's parser, handed in
as a function (the core imports no HTTP library): the parser that fetches them.
"""

from __future__ import annotations

from pydantic import BaseModel

from gpuplan.core.policy.bill_settings import registered_keys as registered_bill_keys
from gpuplan.core.policy.metrics_settings import registered_sections as registered_metrics
from gpuplan.core.policy.models import Policy
from gpuplan.core.policy.rules import KeyPath, PolicyProblem
from gpuplan.core.urls import Split, is_link_local, redacted, redacted_webhook, webhook_url_problem


def url_problems(policy: Policy, split: Split) -> list[PolicyProblem]:
    """Problems with the policy's outgoing URLs; empty when every one is allowed.

    ``split`` is the edge's parser (httpx's, the one that fetches these URLs:
    :func:`gpuplan.providers.url_parts.split_url`): a URL it refuses is a problem with
    its reason, and the rules here judge the parts it returns, the host connected to.
    """
    problems: list[PolicyProblem] = []
    notify = policy.notify
    if notify.webhook_url is not None:
        where = ("notify", "webhook_url")
        try:
            hook = split(notify.webhook_url)
        except ValueError as exc:
            problems.append(PolicyProblem(where, str(exc)))
        else:
            shown = redacted_webhook(hook)
            allow = notify.allow_insecure_webhook
            problem = webhook_url_problem(hook, shown, allow_insecure=allow)
            if problem is not None:
                problems.append(PolicyProblem(where, problem))
    for path, url in _other_urls(policy):
        try:
            parts = split(url)
        except ValueError as exc:
            problems.append(PolicyProblem(path, str(exc)))
            continue
        if is_link_local(parts):
            problems.append(
                PolicyProblem(
                    path,
                    f"{redacted(parts)}: a link-local address (cloud metadata service) is "
                    "never called",
                )
            )
    return problems


def _other_urls(policy: Policy) -> list[tuple[KeyPath, str]]:
    found: list[tuple[KeyPath, str | None]] = []
    # Every cloud with a section, built in or registered: an endpoint field of any of
    # them (``*_endpoint``) is an outgoing URL, whoever defined the section.
    for provider in policy.scope.providers:
        found.extend(_endpoints(policy.scope.section(provider), ("scope", provider.value)))
    # The same for the keys clouds register in ``bill`` and ``idle.metrics`` (a private
    # BigQuery endpoint, a monitoring endpoint): any ``*_endpoint`` is an outgoing URL.
    for name in registered_bill_keys():
        keys = policy.bill.section(name)
        found.extend(_endpoints(keys, ("bill",)))
    for name in registered_metrics():
        settings = policy.idle.metrics.section(name)
        found.extend(_endpoints(settings, ("idle", "metrics", name)))
    prometheus = policy.idle.metrics.prometheus
    if prometheus is not None:
        found.append((("idle", "metrics", "prometheus", "url"), prometheus.url))
    return [(path, url) for path, url in found if url is not None]


def _endpoints(section: BaseModel | None, where: KeyPath) -> list[tuple[KeyPath, str | None]]:
    if section is None:
        return []
    out: list[tuple[KeyPath, str | None]] = []
    for key in type(section).model_fields:
        if key.endswith("_endpoint"):
            value = getattr(section, key)
            out.append(((*where, key), None if value is None else str(value)))
    return out
