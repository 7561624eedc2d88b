"""Where a policy may send things: the URL rules that span keys of a policy.

The webhook must be https to a public host unless ``notify.allow_insecure_webhook``
opts in (see :mod:`gpuplan.core.urls`); every problem message shows URLs redacted.
"""

from __future__ import annotations

from gpuplan.core.policy.models import Policy
from gpuplan.core.policy.rules import PolicyProblem
from gpuplan.core.urls import webhook_problem


def url_problems(policy: Policy) -> list[PolicyProblem]:
    """Problems with the policy's outgoing URLs; empty when every one is allowed."""
    notify = policy.notify
    if notify.webhook_url is None:
        return []
    problem = webhook_problem(notify.webhook_url, allow_insecure=notify.allow_insecure_webhook)
    return [] if problem is None else [PolicyProblem(("notify", "webhook_url"), problem)]
